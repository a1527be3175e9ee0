/**
 * The API process's caches stay bounded: the catalog read cache evicts least recently used entries
 * (instead of wiping everything at its cap), and the in-process liquidity copies drop a contest
 * whose hot state has expired and are capped by contest count. Real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiquidityCopies } from '../../../api/rest/liquidity/copies.js';
import { ReadCache } from '../../../api/rest/read-cache.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
beforeAll(async () => {
  s = await startStack({ catalog: null });
});
afterAll(async () => s?.close());

describe('catalog read cache', () => {
  it('at its cap evicts the least recently used entry, keeping the hot ones', async () => {
    const cache = new ReadCache(s.rt.redis, s.rt.ks, 3);
    await cache.refresh();
    for (const k of ['a', 'b', 'c']) await cache.get(k, async () => k.toUpperCase());
    expect(cache.peek('a')).toBe('A'); // a is read again: b is now the least recently used
    await cache.get('d', async () => 'D');
    expect(cache.size).toBe(3);
    expect(cache.peek('a')).toBe('A');
    expect(cache.peek('d')).toBe('D');
    expect(cache.peek('b')).toBeUndefined();
  });
});

describe('liquidity copies', () => {
  it('drop a closed contest once its hot state has expired, and hold at most maxContests', async () => {
    const hot = new HotState(s.rt.redis, s.rt.ks, { closedRetentionMs: 150 });
    let t = 1_000_000;
    const copies = new LiquidityCopies(hot, { maxContests: 2, revalidateMs: 10, idleMs: 60_000, now: () => t });
    for (const c of ['c1', 'c2', 'c3']) await hot.writeComputed(c, 1, `[${JSON.stringify(c)}]`, '{}', []);
    expect((await copies.get('c1'))!.fragment.toString()).toBe('["c1"]');
    await copies.get('c2');
    await copies.get('c3');
    expect(copies.size).toBe(2);

    await hot.closeContest('c3');
    await new Promise((r) => setTimeout(r, 250));
    t += 20; // past revalidation: the copy is checked against Redis, where c3 is gone
    expect(await copies.get('c3')).toBeNull();
    expect(copies.size).toBe(1);

    // A copy nobody reads ages out on the sweep.
    t += 61_000;
    copies.sweep();
    expect(copies.size).toBe(0);
  });
});
