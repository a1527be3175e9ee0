/** The price a practice leg fills at (spec rule 11): the best live quote of a real venue with at least USD 1 behind it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestPaperQuote } from '../../../src/domain/order-checks.js';
import type { PartnerLiquidity } from '../../../src/domain/stream.js';

const q = (partner_id: string, price: number, available: number, is_stale = false): PartnerLiquidity => ({
  partner_id,
  partner_name: partner_id,
  price,
  american_odds: '+100',
  available,
  liquidity_hash: `${partner_id}:x`,
  fee_packet: null,
  as_of: '2026-01-01T00:00:00.000Z',
  is_stale,
});
const internal = (x: PartnerLiquidity) => x.partner_id === 'practice';
const paperQuote = bestPaperQuote<PartnerLiquidity>;

describe('bestPaperQuote (the practice price of the buy and of preflight)', () => {
  it('takes the lowest price among fresh real-venue quotes with at least USD 1, whatever else is cheaper', () => {
    const best = paperQuote([q('a', 0.55, 500), q('b', 0.52, 1), q('c', 0.4, 0.99), q('d', 0.45, 800, true), q('practice', 0.3, 1000), q('e', 0, 100), q('f', 1, 100)], internal);
    expect(best?.partner_id).toBe('b');
    expect(paperQuote([q('c', 0.4, 0.5), q('practice', 0.3, 1000)], internal)).toBeNull();
    expect(paperQuote([], internal)).toBeNull();
  });

  it('never depends on the order quotes come in: ties go to the larger size, then the venue id', () => {
    const quote = fc.record({ partner_id: fc.constantFrom('a', 'b', 'c', 'practice'), price: fc.constantFrom(0.4, 0.5, 0.6), available: fc.constantFrom(0.5, 1, 10), is_stale: fc.boolean() });
    fc.assert(
      fc.property(fc.array(quote, { maxLength: 8 }), (specs) => {
        const quotes = specs.map((s) => q(s.partner_id, s.price, s.available, s.is_stale));
        const best = paperQuote(quotes, internal);
        expect(paperQuote([...quotes].reverse(), internal)).toEqual(best);
        const eligible = quotes.filter((x) => !x.is_stale && x.available >= 1 && x.partner_id !== 'practice');
        if (eligible.length === 0) expect(best).toBeNull();
        else expect(best!.price).toBe(Math.min(...eligible.map((x) => x.price)));
      }),
    );
  });
});
