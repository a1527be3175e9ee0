import { describe, expect, it } from 'vitest';
import { partnerDepth, positionDepth } from '../../../src/compute/depth.js';
import { NOW_MS, quote } from './helpers.js';

describe('partnerDepth', () => {
  it('keeps levels best first, drops empty ones, sums the rest', () => {
    const d = partnerDepth(
      quote('a', 0.5, 100, {
        levels: [
          { price: 0.5, available: 100 },
          { price: 0.52, available: 200.5 },
          { price: 0.55, available: 0 },
          { price: 0.6, available: 1000 },
        ],
      }),
    );
    expect(d.levels).toEqual([
      { price: 0.5, available: 100 },
      { price: 0.52, available: 200.5 },
      { price: 0.6, available: 1000 },
    ]);
    expect(d.total_available).toBe(1300.5);
    expect(d.best_price).toBe(0.5);
    expect(d.partner_id).toBe('a');
    expect(d.partner_name).toBe('A');
    expect(d.fetched_at).toBe('2026-03-01T11:59:59.000Z');
  });

  it('orders a book that arrives out of order', () => {
    const d = partnerDepth(
      quote('a', 0.5, 20, {
        levels: [
          { price: 0.55, available: 10 },
          { price: 0.5, available: 20 },
          { price: 0.53, available: 30 },
        ],
      }),
    );
    expect(d.levels.map((l) => l.price)).toEqual([0.5, 0.53, 0.55]);
    expect(d.best_price).toBe(0.5);
    expect(d.total_available).toBe(60);
  });

  it('shows the top of book as one level when the venue sends no levels', () => {
    const d = partnerDepth(quote('a', 0.47, 300, { levels: [] }));
    expect(d.levels).toEqual([{ price: 0.47, available: 300 }]);
    expect(d.total_available).toBe(300);
    expect(d.best_price).toBe(0.47);
  });

  it('a quote without a book has no levels and no best price', () => {
    const d = partnerDepth(quote('sb', 0.47, 0, { real_book: false, levels: [] }));
    expect(d.levels).toEqual([]);
    expect(d.total_available).toBe(0);
    expect(d.best_price).toBeNull();
  });
});

describe('positionDepth', () => {
  it('skips withheld quotes and stamps the newest fetch', () => {
    const d = positionDepth(
      'ph1',
      [
        quote('a', 0.5, 100, { as_of: '2026-03-01T11:59:50.000Z' }),
        quote('b', 0.51, 100, { as_of: '2026-03-01T11:59:58.000Z' }),
        quote('c', 0.49, 100, { as_of: '2026-03-01T11:59:59.500Z' }),
      ],
      [false, false, true],
      new Date(NOW_MS).toISOString(),
    );
    expect(d.position_hash).toBe('ph1');
    expect(d.partners.map((p) => p.partner_id)).toEqual(['a', 'b']);
    expect(d.fetched_at).toBe('2026-03-01T11:59:58.000Z');
  });

  it('uses the compute clock when nothing quotes', () => {
    const d = positionDepth('ph1', [], [], '2026-03-01T12:00:00.000Z');
    expect(d).toEqual({ position_hash: 'ph1', partners: [], fetched_at: '2026-03-01T12:00:00.000Z' });
  });
});
