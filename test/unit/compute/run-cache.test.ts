/** The per-thread cache of contest runs: bounded by count, by bytes and by idleness on the jobs' clock. */
import { describe, expect, it } from 'vitest';
import { RunCache } from '../../../src/compute/run-cache.js';

const T0 = 1_000_000;
const cache = (maxEntries: number, maxBytes: number, idleMs: number) => new RunCache<{ id: string; bytes: number }>({ maxEntries, maxBytes, idleMs }, (v) => v.bytes);
const v = (id: string, bytes = 10) => ({ id, bytes });

describe('RunCache', () => {
  it('keeps at most maxEntries, dropping the least recently used', () => {
    const c = cache(2, 1_000, 60_000);
    c.set('a', v('a'), T0);
    c.set('b', v('b'), T0);
    expect(c.get('a', T0)?.id).toBe('a'); // a is now the most recent
    c.set('c', v('c'), T0);
    expect([c.get('a', T0)?.id, c.get('b', T0)?.id, c.get('c', T0)?.id]).toEqual(['a', undefined, 'c']);
    expect([c.size, c.evicted]).toEqual([2, 1]);
  });

  it('keeps at most maxBytes as each entry was last sized, and keeps nothing bigger than that', () => {
    const c = cache(10, 100, 60_000);
    c.set('a', v('a', 40), T0);
    c.set('b', v('b', 40), T0);
    expect(c.bytes).toBe(80);
    // Re-stored grown: the oldest goes.
    c.set('b', v('b', 70), T0);
    expect([c.get('a', T0), c.bytes]).toEqual([undefined, 70]);
    c.set('huge', v('huge', 101), T0);
    expect([c.get('huge', T0), c.get('b', T0), c.size, c.bytes]).toEqual([undefined, undefined, 0, 0]);
  });

  it('drops an entry idle past idleMs on the jobs’ clock, when read and when another is stored', () => {
    const c = cache(10, 1_000, 60_000);
    c.set('a', v('a'), T0);
    c.set('b', v('b'), T0 + 30_000);
    expect(c.get('a', T0 + 60_000)?.id).toBe('a'); // exactly at the lifetime: kept, and used again now
    c.set('c', v('c'), T0 + 90_001); // b was last used 60,001 ms before: gone
    expect([c.get('b', T0 + 90_001), c.size]).toEqual([undefined, 2]);
    expect(c.get('a', T0 + 120_001)).toBeUndefined();
    expect(c.bytes).toBe(10);
  });
});
