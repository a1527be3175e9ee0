/**
 * The per-leg order checks as pure functions: the book walk's invariants (never above the limit,
 * never more than the stake, exact notional, whole contracts), checks that never throw whatever
 * the leg and venue, and the request-level affordability and halt rules. The codes each check gives
 * are exercised end to end in test/integration/orders/preflight.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { divMicros, floorTo, mulMicros, toMicros, UNIT } from '../../../src/domain/money.js';
import { microLevels, walkBook } from '../../../src/domain/book-walk.js';
import { NO_POLICY } from '../../../src/domain/execution-limits.js';
import { evaluateLeg, LegBatch, needsLiveBook, type LegInput, type LegMarket } from '../../../src/domain/order-checks.js';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { simPartners } from '../../../src/sim/personalities.js';

const partners = simPartners();
const practice = partners.find((p) => p.internal_book)!;
const level = fc.record({ price: fc.integer({ min: 1, max: 999 }).map((n) => n / 1000), available: fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 100) });
const book = fc.array(level, { maxLength: 6 }).map((ls) => [...new Map(ls.map((l) => [l.price, l])).values()].sort((a, b) => a.price - b.price));

describe('walkBook', () => {
  it('never takes above the limit or more than the stake; notional is contracts × price, exactly; whole venues take whole contracts', () => {
    fc.assert(
      fc.property(book, fc.integer({ min: 1, max: 999 }), fc.boolean(), fc.integer({ min: 1, max: 10_000_000 }), (levels, lim, whole, cents) => {
        const limit = BigInt(lim) * 1_000n;
        const usd = BigInt(cents) * 10_000n;
        const w = walkBook(levels, limit, whole, { usd });
        expect(w.notional).toBeLessThanOrEqual(usd);
        let n = 0n;
        for (const f of w.fills) {
          expect(f.price).toBeLessThanOrEqual(limit);
          expect(f.notional).toBe(mulMicros(f.contracts, f.price, 'half'));
          if (whole) expect(f.contracts % UNIT).toBe(0n);
          n += f.notional;
        }
        expect(w.notional).toBe(n);
        // Satisfied means what is left can buy nothing more the book still offers within the limit:
        // on a whole-contract venue, no level within the limit that still holds a whole contract
        // is priced at or below what is left; a fractional venue stops at USD 0.005 of dust.
        if (w.satisfied && w.fills.length > 0) {
          const left = usd - w.notional;
          if (!whole) expect(left < 5_000n).toBe(true);
          else {
            for (const lv of microLevels(levels)) {
              if (lv.price > limit) break;
              const taken = w.fills.filter((f) => f.price === lv.price).reduce((n, f) => n + f.contracts, 0n);
              const wholeLeft = floorTo(divMicros(lv.available, lv.price, 'floor'), UNIT) - taken;
              if (wholeLeft >= UNIT) expect(left < lv.price).toBe(true);
            }
          }
        }
      }),
      // Fixed seed, many runs: CI stays deterministic (FLOW_FUZZ_SEED explores others).
      { seed: Number(process.env.FLOW_FUZZ_SEED ?? 20_261_124), numRuns: 2_000 },
    );
  });

  it('a stake whose rest cannot buy a whole contract at the next level is met (fast-check found this once)', () => {
    const w = walkBook([{ price: 0.001, available: 0.01 }, { price: 0.011, available: 0.01 }], toMicros(0.011), true, { usd: toMicros(0.02) });
    expect(w).toMatchObject({ contracts: 10n * UNIT, notional: toMicros(0.01), satisfied: true });
  });

  it('a share count takes exactly that many contracts when the book holds them', () => {
    const w = walkBook([{ price: 0.4, available: 4 }, { price: 0.45, available: 90 }], toMicros(0.5), true, { contracts: 30n * UNIT });
    expect(w).toMatchObject({ contracts: 30n * UNIT, notional: toMicros(4 + 20 * 0.45), satisfied: true, eligible: true });
  });
});

const leg = (over: Partial<ResolvedLeg> = {}): ResolvedLeg => ({
  index: 0,
  partner_id: 'sim_exchange',
  position_hash: 'ct:moneyline:home:0:tm:ft',
  liquidity_hash: null,
  amount: 10,
  shares: null,
  max_price: 0.5,
  mode: 'real',
  order_type: 'market',
  unplannable: null,
  ...over,
});
const market = (levels: { price: number; available: number }[], partnerId = 'sim_exchange'): LegMarket => ({
  position_hash: 'ct:moneyline:home:0:tm:ft',
  open: true,
  league_id: 'lg_test',
  quote: levels[0] ? { partner_id: partnerId, liquidity_hash: `${partnerId}:x`, price: levels[0].price, available: levels[0].available, is_stale: false } : null,
  levels,
  fee: { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 },
  quotes: levels[0] ? [{ partner_id: partnerId, liquidity_hash: `${partnerId}:x`, price: levels[0].price, available: levels[0].available, is_stale: false, internal_book: false }] : [],
});
const input = (l: ResolvedLeg, m: LegMarket, partnerId = l.partner_id): LegInput => ({
  leg: l,
  venue: partners.find((p) => p.partner_id === partnerId) ?? null,
  practice,
  access: { status: 'active', credential_status: 'connected' },
  market: m,
  verify: false,
  live: null,
  policy: NO_POLICY,
});

describe('evaluateLeg', () => {
  it('never throws, whatever the price, size, venue and book; an accepted leg never pays above max_price', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...partners.map((p) => p.partner_id)),
        fc.double({ min: Number.MIN_VALUE, max: 1, noNaN: true, maxExcluded: true }),
        fc.oneof(fc.double({ min: Number.MIN_VALUE, max: 1e12, noNaN: true }), fc.integer({ min: 1, max: 100_000 })),
        fc.boolean(),
        fc.constantFrom('market', 'limit', 'paper'),
        book,
        (partnerId, maxPrice, size, byShares, kind, levels) => {
          const l = leg({ partner_id: partnerId, max_price: maxPrice, amount: byShares ? null : size, shares: byShares ? size : null, mode: kind === 'paper' ? 'paper' : 'real', order_type: kind === 'limit' ? 'limit' : 'market' });
          const { result, plan } = evaluateLeg(input(l, market(levels, partnerId)));
          expect(result.index).toBe(0);
          if (result.accepted) {
            expect(plan).not.toBeNull();
            expect(plan!.limit).toBeLessThanOrEqual(toMicros(maxPrice, 'ceil'));
            for (const f of plan!.fills) expect(f.price).toBeLessThanOrEqual(plan!.limit);
            expect(result.expected_fill_price!).toBeLessThanOrEqual(maxPrice + 1e-6);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a fresh book deeper than three times the order is not read live; a thinner or stale one is', () => {
    const m = market([{ price: 0.5, available: 30 }]);
    expect(needsLiveBook(leg({ amount: 10 }), m)).toBe(false);
    expect(needsLiveBook(leg({ amount: 10.01 }), m)).toBe(true);
    expect(needsLiveBook(leg(), { ...m, quote: { ...m.quote!, is_stale: true } })).toBe(true);
    expect(needsLiveBook(leg({ mode: 'paper' }), { ...m, quote: { ...m.quote!, is_stale: true } })).toBe(false);
  });
});

describe('LegBatch', () => {
  const evaluated = (index: number, partnerId: string, usd: number) => {
    const ev = evaluateLeg(input(leg({ index, partner_id: partnerId, amount: usd }), market([{ price: 0.5, available: 10_000 }], partnerId)));
    expect(ev.result.accepted).toBe(true);
    return ev;
  };

  it('sums legs per venue against a synced balance; other venues and venues without a figure pass', () => {
    const b = new LegBatch(new Map([['sim_exchange', { available: toMicros(10), synced: true }]]), { halt: false, checkAllFirst: false }, NO_POLICY);
    expect(b.settle(evaluated(0, 'sim_exchange', 4)).result.accepted).toBe(true);
    expect(b.settle(evaluated(1, 'sim_book01', 500)).result.accepted).toBe(true);
    expect(b.settle(evaluated(2, 'sim_exchange', 4)).result.accepted).toBe(true);
    const third = b.settle(evaluated(3, 'sim_exchange', 4));
    expect(third.result).toMatchObject({ accepted: false, rejected_code: 'insufficient_balance' });
    expect(third.plan).toBeNull();
    // A refused leg takes nothing: a smaller one after it still fits.
    expect(b.settle(evaluated(4, 'sim_exchange', 1)).result.accepted).toBe(true);
    expect(b.haltedAtIndex).toBeNull();
  });

  it('a stale balance warns and still counts the leg', () => {
    const b = new LegBatch(new Map([['sim_exchange', { available: toMicros(5), synced: false }]]), { halt: true, checkAllFirst: false }, NO_POLICY);
    const r = b.settle(evaluated(0, 'sim_exchange', 8)).result;
    expect(r).toMatchObject({ accepted: true, warnings: ['insufficient_balance'] });
    expect(b.skipping).toBe(false);
  });

  it('halt: the first failure stops the request, unless check_all_first checked every leg', () => {
    const failing = evaluateLeg(input(leg({ max_price: 0.4 }), market([{ price: 0.5, available: 100 }])));
    for (const checkAllFirst of [false, true]) {
      const b = new LegBatch(new Map(), { halt: true, checkAllFirst }, NO_POLICY);
      b.settle(evaluated(0, 'sim_exchange', 4));
      expect(b.skipping).toBe(false);
      b.settle({ ...failing, result: { ...failing.result, index: 1 } });
      expect(b.haltedAtIndex).toBe(1);
      expect(b.skipping).toBe(!checkAllFirst);
    }
  });
});
