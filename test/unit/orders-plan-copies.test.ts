/**
 * The copies a practice buy plans on (api/rest/orders/contest-quotes.ts, plan-catalog.ts): a
 * contest's quotes are what the hot state holds at the read (a changed document is parsed again, the
 * same one is not), bounded by size; the catalog copies keep what they read, for a bounded time, and
 * drop it when told.
 */
import { describe, expect, it } from 'vitest';
import { ContestQuotes } from '../../api/rest/orders/contest-quotes.js';
import { CatalogCopies } from '../../api/rest/orders/plan-catalog.js';
import type { Pool } from '../../src/store/pg/pool.js';

const doc = (price: number) => JSON.stringify([{ position_hash: 'p1', partner_liquidities: [{ partner_id: 'v', price, available: 10, is_stale: false }] }]);

describe('ContestQuotes', () => {
  it('answers what the hot state holds now: a changed document is parsed again, the same one is served from its parse', async () => {
    let stored: string | null = doc(0.5);
    const reads: string[] = [];
    const q = new ContestQuotes({ liquidity: async (c) => (reads.push(c), stored) });
    const first = await q.of('c1');
    expect(first.get('p1')?.[0]?.price).toBe(0.5);
    expect(await q.of('c1')).toBe(first);
    stored = doc(0.6);
    expect((await q.of('c1')).get('p1')?.[0]?.price).toBe(0.6);
    stored = null;
    expect((await q.of('c1')).size).toBe(0);
    // Every call read the hot state.
    expect(reads).toEqual(['c1', 'c1', 'c1', 'c1']);
  });

  it('keeps at most its size in documents, least recently read out first', async () => {
    const q = new ContestQuotes({ liquidity: async () => doc(0.5) }, doc(0.5).length * 3 * 2);
    for (const c of ['a', 'b', 'c', 'd']) await q.of(c);
    expect(q.size).toBe(2);
  });
});

describe('CatalogCopies', () => {
  /** A pool answering the two catalog reads, counting them. */
  function fakePool() {
    const calls = { positions: 0, books: 0 };
    const pool = {
      query: async (text: string, values: [string[]]) => {
        if (/FROM positions/.test(text)) {
          calls.positions++;
          return { rows: [{ position_hash: values[0][0], contest_id: 'c1', title: `t${calls.positions}`, open: true }] };
        }
        calls.books++;
        return { rows: [{ partner_id: `book${calls.books}` }] };
      },
    } as unknown as Pool;
    return { pool, calls };
  }

  it('reads a position once and keeps it for its lifetime; drop() forgets it and the internal books', async () => {
    let now = 10_000;
    const { pool, calls } = fakePool();
    const c = new CatalogCopies({ positionTtlMs: 1_000, booksTtlMs: 500, now: () => now });
    expect(await c.position(pool, 'p1')).toEqual({ contest_id: 'c1', title: 't1' });
    expect(await c.position(pool, 'p1')).toEqual({ contest_id: 'c1', title: 't1' });
    expect([...(await c.internalBooks(pool))]).toEqual(['book1']);
    expect([...(await c.internalBooks(pool))]).toEqual(['book1']);
    expect(calls).toEqual({ positions: 1, books: 1 });
    now = 10_600;
    expect([...(await c.internalBooks(pool))]).toEqual(['book2']);
    now = 11_100;
    expect(await c.position(pool, 'p1')).toEqual({ contest_id: 'c1', title: 't2' });
    c.drop(['p1']);
    expect(await c.position(pool, 'p1')).toEqual({ contest_id: 'c1', title: 't3' });
    expect([...(await c.internalBooks(pool))]).toEqual(['book3']);
  });

  it('holds at most maxPositions positions', async () => {
    const { pool } = fakePool();
    const c = new CatalogCopies({ maxPositions: 2 });
    for (const h of ['p1', 'p2', 'p3']) await c.position(pool, h);
    expect(c.size).toBe(2);
  });
});
