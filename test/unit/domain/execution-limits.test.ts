/**
 * The execution-limit policy as pure rules, with exact numbers: how a policy is checked
 * (parseLimits), which limit a leg breaks (limitBreach), where the checks sit among a real leg's
 * checks (evaluateLeg) and how a request's legs add up against per-venue and per-league limits
 * (LegBatch). The HTTP behaviour (blocked legs placed nowhere, scope_not_granted) is in
 * test/integration/orders/policy.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import '../../support/fuzz-seed.js';
import {
  limitBreach,
  limitToWire,
  MAX_LIMITS,
  NO_POLICY,
  parseLimits,
  type AccountPolicy,
  type ExecutionLimit,
  type LimitCatalog,
  type LimitInput,
} from '../../../src/domain/execution-limits.js';
import { toMicros } from '../../../src/domain/money.js';
import { evaluateLeg, LegBatch, type LegInput, type LegMarket } from '../../../src/domain/order-checks.js';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { simPartners } from '../../../src/sim/personalities.js';

const m = (usd: number) => toMicros(usd);
const catalog: LimitCatalog = {
  venue: (id) => (id === 'practice' ? 'internal' : id.startsWith('sim_') ? 'real' : null),
  league: (id) => id === 'lg_nfl' || id === 'lg_nba',
};
const parse = (raw: LimitInput[]) => parseLimits(raw, catalog);
const refusal = (raw: LimitInput[]) => {
  const r = parse(raw);
  if (!('refusal' in r)) throw new Error(`accepted: ${JSON.stringify(r.limits, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
  return r.refusal;
};

describe('parseLimits', () => {
  it('takes each type with exactly its params, amounts exact to the micro, in the order given', () => {
    const r = parse([
      { type: 'max_stake_per_venue', params: { partner_id: 'sim_exchange', amount: 250.5 } },
      { type: 'max_stake_per_order', params: { amount: 100.000001 } },
      { type: 'max_stake_per_league', params: { league_id: 'lg_nfl', amount: 1_000 } },
      { type: 'practice_only' },
    ]);
    expect(r).toEqual({
      limits: [
        { type: 'max_stake_per_venue', partner_id: 'sim_exchange', amount: 250_500_000n },
        { type: 'max_stake_per_order', amount: 100_000_001n },
        { type: 'max_stake_per_league', league_id: 'lg_nfl', amount: 1_000_000_000n },
        { type: 'practice_only' },
      ],
    });
    if ('limits' in r) {
      expect(r.limits.map(limitToWire)).toEqual([
        { type: 'max_stake_per_venue', params: { partner_id: 'sim_exchange', amount: 250.5 } },
        { type: 'max_stake_per_order', params: { amount: 100.000001 } },
        { type: 'max_stake_per_league', params: { league_id: 'lg_nfl', amount: 1_000 } },
        { type: 'practice_only', params: {} },
      ]);
    }
    expect(parse([])).toEqual({ limits: [] });
    expect(parse([{ type: 'practice_only', params: {} }])).toEqual({ limits: [{ type: 'practice_only' }] });
  });

  it('refuses, with a code naming why: an unknown type, a missing or foreign param, an inexact or out-of-range amount, an unknown venue or league, the practice book, a duplicate, too many', () => {
    expect(refusal([{ type: 'max_stake_per_order', params: { amount: 5 } }, { type: 'max_loss_per_day', params: { amount: 5 } }])).toMatchObject({ code: 'unknown_limit_type', details: { index: 1, type: 'max_loss_per_day' } });
    expect(refusal([{ type: 'max_stake_per_order' }])).toMatchObject({ code: 'invalid_limit_params', details: { index: 0, parameter: 'params.amount' } });
    expect(refusal([{ type: 'max_stake_per_venue', params: { amount: 5 } }])).toMatchObject({ code: 'invalid_limit_params', details: { parameter: 'params.partner_id' } });
    expect(refusal([{ type: 'max_stake_per_order', params: { amount: 5, partner_id: 'sim_exchange' } }])).toMatchObject({ code: 'invalid_limit_params', details: { parameter: 'params.partner_id' } });
    expect(refusal([{ type: 'practice_only', params: { amount: 5 } }])).toMatchObject({ code: 'invalid_limit_params', details: { parameter: 'params.amount', takes: [] } });
    expect(refusal([{ type: 'max_stake_per_order', params: { amount: 0.0000001 } }]).message).toMatch(/more than 6 decimals/);
    for (const amount of [0, -1, 1e12 + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(refusal([{ type: 'max_stake_per_order', params: { amount } }])).toMatchObject({ code: 'invalid_limit_params', details: { parameter: 'params.amount' } });
    }
    expect(parse([{ type: 'max_stake_per_order', params: { amount: 1e12 } }])).toEqual({ limits: [{ type: 'max_stake_per_order', amount: 10n ** 18n }] });
    expect(refusal([{ type: 'max_stake_per_venue', params: { partner_id: 'nope', amount: 5 } }]).message).toMatch(/not a venue/);
    expect(refusal([{ type: 'max_stake_per_venue', params: { partner_id: 'practice', amount: 5 } }]).message).toMatch(/practice book/);
    expect(refusal([{ type: 'max_stake_per_league', params: { league_id: 'lg_cricket', amount: 5 } }]).message).toMatch(/not a league/);
    expect(refusal([{ type: 'practice_only' }, { type: 'practice_only' }])).toMatchObject({ code: 'duplicate_limit', details: { index: 1, duplicate_of: 0 } });
    expect(
      refusal([
        { type: 'max_stake_per_venue', params: { partner_id: 'sim_exchange', amount: 5 } },
        { type: 'max_stake_per_venue', params: { partner_id: 'sim_book01', amount: 5 } },
        { type: 'max_stake_per_venue', params: { partner_id: 'sim_exchange', amount: 9 } },
      ]),
    ).toMatchObject({ code: 'duplicate_limit', details: { index: 2, duplicate_of: 0 } });
    const many = Array.from({ length: MAX_LIMITS + 1 }, (_, i) => ({ type: 'max_stake_per_venue', params: { partner_id: `sim_${i}`, amount: 1 } }));
    expect(refusal(many)).toMatchObject({ code: 'too_many_limits' });
    expect(parse(many.slice(0, MAX_LIMITS))).toHaveProperty('limits');
  });

  it('never throws: any list of types and params is either limits or a refusal', () => {
    const param = fc.oneof(fc.double(), fc.integer(), fc.string(), fc.constant(undefined));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            type: fc.oneof(fc.constantFrom('max_stake_per_order', 'max_stake_per_venue', 'max_stake_per_league', 'practice_only'), fc.string()),
            params: fc.option(fc.record({ amount: param, partner_id: param, league_id: param }, { requiredKeys: [] }), { nil: undefined }),
          }),
          { maxLength: 60 },
        ),
        (raw) => {
          const r = parseLimits(raw as LimitInput[], catalog);
          if ('limits' in r) {
            expect(r.limits.length).toBe(raw.length);
            for (const l of r.limits) if (l.type !== 'practice_only') expect(l.amount > 0n).toBe(true);
          } else {
            expect(['unknown_limit_type', 'invalid_limit_params', 'duplicate_limit', 'too_many_limits']).toContain(r.refusal.code);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('limitBreach', () => {
  const real = (stake: number | null, partnerId = 'sim_exchange', leagueId: string | null = 'lg_nfl') => ({ mode: 'real' as const, partner_id: partnerId, league_id: leagueId, stake: stake === null ? null : m(stake) });
  const none = { venue: 0n, league: 0n };

  it('max_stake_per_order: a stake exactly at the amount passes, a micro more breaks it', () => {
    const limits: ExecutionLimit[] = [{ type: 'max_stake_per_order', amount: m(100) }];
    expect(limitBreach(limits, real(100), none)).toBeNull();
    expect(limitBreach(limits, real(100.000001), none)).toEqual({ limit: limits[0], stake: 100_000_001n, counted: 0n });
    // Open exposure is not a per-order limit's business.
    expect(limitBreach(limits, real(50), { venue: m(1_000), league: m(1_000) })).toBeNull();
  });

  it('max_stake_per_venue: the stake plus what is open on that venue, other venues untouched', () => {
    const limits: ExecutionLimit[] = [{ type: 'max_stake_per_venue', partner_id: 'sim_exchange', amount: m(100) }];
    expect(limitBreach(limits, real(40), { venue: m(60), league: 0n })).toBeNull();
    expect(limitBreach(limits, real(40.01), { venue: m(60), league: 0n })).toEqual({ limit: limits[0], stake: m(40.01), counted: m(60) });
    expect(limitBreach(limits, real(500, 'sim_book01'), { venue: m(60), league: 0n })).toBeNull();
  });

  it('max_stake_per_league: the same over the league; a leg of unknown league is not counted', () => {
    const limits: ExecutionLimit[] = [{ type: 'max_stake_per_league', league_id: 'lg_nfl', amount: m(75) }];
    expect(limitBreach(limits, real(25), { venue: 0n, league: m(50) })).toBeNull();
    expect(limitBreach(limits, real(25.000001), { venue: 0n, league: m(50) })).toMatchObject({ counted: m(50), stake: 25_000_001n });
    expect(limitBreach(limits, real(500, 'sim_exchange', 'lg_nba'), { venue: 0n, league: m(50) })).toBeNull();
    expect(limitBreach(limits, real(500, 'sim_exchange', null), none)).toBeNull();
  });

  it('practice_only refuses every real leg before its stake is known; practice legs break no limit', () => {
    const limits: ExecutionLimit[] = [{ type: 'max_stake_per_order', amount: m(1) }, { type: 'practice_only' }];
    expect(limitBreach(limits, real(null), none)).toEqual({ limit: { type: 'practice_only' }, stake: null, counted: 0n });
    expect(limitBreach(limits, real(0.5), none)?.limit.type).toBe('practice_only');
    expect(limitBreach(limits, { ...real(5_000), mode: 'paper' }, none)).toBeNull();
    // Without practice_only, an unknown stake breaks nothing yet.
    expect(limitBreach([limits[0]!], real(null), none)).toBeNull();
  });

  it('the first limit broken in the policy’s order is the one named', () => {
    const limits: ExecutionLimit[] = [
      { type: 'max_stake_per_venue', partner_id: 'sim_exchange', amount: m(10) },
      { type: 'max_stake_per_order', amount: m(5) },
    ];
    expect(limitBreach(limits, real(20), none)?.limit.type).toBe('max_stake_per_venue');
    expect(limitBreach(limits, real(20, 'sim_book01'), none)?.limit.type).toBe('max_stake_per_order');
  });
});

// ---- inside the order checks --------------------------------------------------------------------

const partners = simPartners();
const practice = partners.find((p) => p.internal_book)!;
const leg = (over: Partial<ResolvedLeg> = {}): ResolvedLeg => ({
  index: 0,
  partner_id: 'sim_book01',
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
const market = (partnerId: string, over: Partial<LegMarket> = {}): LegMarket => ({
  position_hash: 'ct:moneyline:home:0:tm:ft',
  open: true,
  league_id: 'lg_nfl',
  quote: { partner_id: partnerId, liquidity_hash: `${partnerId}:x`, price: 0.4, available: 10_000, is_stale: false },
  levels: [{ price: 0.4, available: 10_000 }],
  fee: null,
  quotes: [{ partner_id: partnerId, liquidity_hash: `${partnerId}:x`, price: 0.4, available: 10_000, is_stale: false, internal_book: false }],
  ...over,
});
const policy = (limits: ExecutionLimit[], venues: [string, number][] = [], leagues: [string, number][] = []): AccountPolicy => ({
  limits,
  exposure: { venues: new Map(venues.map(([k, v]) => [k, m(v)])), leagues: new Map(leagues.map(([k, v]) => [k, m(v)])) },
});
const input = (l: ResolvedLeg, p: AccountPolicy, over: Partial<LegInput> = {}): LegInput => ({
  leg: l,
  venue: partners.find((x) => x.partner_id === l.partner_id) ?? null,
  practice,
  access: { status: 'active', credential_status: 'connected' },
  market: market(l.partner_id),
  verify: false,
  live: null,
  policy: p,
  ...over,
});

describe('evaluateLeg with a policy', () => {
  it('the stake after the venue’s increment is what a per-order limit sees (20.009 on a cent increment stakes 20.00)', () => {
    const p = policy([{ type: 'max_stake_per_order', amount: m(20) }]);
    const ok = evaluateLeg(input(leg({ amount: 20.009 }), p));
    expect(ok.result).toMatchObject({ accepted: true, warnings: ['amount_off_increment'], normalized: { amount: 20 } });
    const over = evaluateLeg(input(leg({ amount: 20.01 }), p));
    expect(over.plan).toBeNull();
    expect(over.result).toMatchObject({
      accepted: false,
      rejected_code: 'execution_limit_exceeded',
      fix: 'reduce_stake',
      rejected_reason: 'stake 20.01 is above max_stake_per_order 20',
      message_user: 'Your trading limits allow at most $20.00 per order; this one stakes $20.01. Reduce the stake.',
      normalized: { amount: 20.01 },
      total_allocated: 0,
    });
  });

  it('a shares leg stakes its whole contracts at the limit (40.7 shares on a whole-contract venue at 0.50: USD 20)', () => {
    const p = policy([{ type: 'max_stake_per_order', amount: m(20) }]);
    expect(evaluateLeg(input(leg({ partner_id: 'sim_exchange', amount: null, shares: 40.7 }), p)).result.accepted).toBe(true);
    const over = evaluateLeg(input(leg({ partner_id: 'sim_exchange', amount: null, shares: 41 }), p));
    expect(over.result).toMatchObject({ rejected_code: 'execution_limit_exceeded', rejected_reason: 'stake 20.5 is above max_stake_per_order 20' });
  });

  it('a per-venue limit counts the open exposure on that venue; a per-league one on the league', () => {
    const venue = policy([{ type: 'max_stake_per_venue', partner_id: 'sim_book01', amount: m(100) }], [['sim_book01', 90]]);
    expect(evaluateLeg(input(leg({ amount: 10 }), venue)).result.accepted).toBe(true);
    const over = evaluateLeg(input(leg({ amount: 10.01 }), venue));
    expect(over.result).toMatchObject({ rejected_code: 'execution_limit_exceeded', rejected_reason: 'stake 10.01 plus 90 already open on sim_book01 is above max_stake_per_venue 100 (10 left)' });
    const name = partners.find((x) => x.partner_id === 'sim_book01')!.name;
    expect(over.result.message_user).toBe(`Your trading limits allow at most $100.00 in open orders on ${name}; $90.00 is already open, so this order can stake at most $10.00.`);
    const league = policy([{ type: 'max_stake_per_league', league_id: 'lg_nfl', amount: m(30) }], [], [['lg_nfl', 25]]);
    expect(evaluateLeg(input(leg({ amount: 5 }), league)).result.accepted).toBe(true);
    expect(evaluateLeg(input(leg({ amount: 5.01 }), league)).result.rejected_code).toBe('execution_limit_exceeded');
    expect(evaluateLeg(input(leg({ amount: 500 }), league, { market: market('sim_book01', { league_id: 'lg_nba' }) })).result.accepted).toBe(true);
  });

  it('practice_only: after venue_disabled (the spec’s order), before the market is looked at; practice legs pass', () => {
    const p = policy([{ type: 'practice_only' }]);
    const blocked = evaluateLeg(input(leg(), p, { market: market('sim_book01', { position_hash: null, open: false, quote: null, levels: [] }) }));
    expect(blocked.result).toMatchObject({ rejected_code: 'execution_limit_exceeded', fix: 'choose_mode', normalized: null });
    expect(evaluateLeg(input(leg(), p, { access: null })).result.rejected_code).toBe('venue_disabled');
    const paper = evaluateLeg(input(leg({ mode: 'paper', amount: 5_000 }), policy([{ type: 'practice_only' }, { type: 'max_stake_per_order', amount: m(1) }])));
    expect(paper.result).toMatchObject({ accepted: true, currency: 'ATLAS' });
  });

  it('a stake limit comes before the venue’s own bounds and the book (the limit is the fix that helps)', () => {
    const p = policy([{ type: 'max_stake_per_order', amount: m(2) }]);
    // sim_sportsbook's minimum is USD 5 and its book is empty here: the limit is still what is named.
    const r = evaluateLeg(input(leg({ partner_id: 'sim_sportsbook', amount: 3 }), p, { market: market('sim_sportsbook', { levels: [], quote: { partner_id: 'sim_sportsbook', liquidity_hash: 'x', price: 0.4, available: 0, is_stale: false } }) }));
    expect(r.result.rejected_code).toBe('execution_limit_exceeded');
  });
});

describe('LegBatch with a policy', () => {
  const passing = (p: AccountPolicy, index: number, partnerId: string, usd: number, leagueId = 'lg_nfl') => {
    const ev = evaluateLeg(input(leg({ index, partner_id: partnerId, amount: usd }), p, { market: market(partnerId, { league_id: leagueId }) }));
    expect(ev.result.accepted).toBe(true);
    return ev;
  };

  it('a request’s earlier passing legs count on top of the open exposure; a refused leg counts nothing', () => {
    const p = policy([{ type: 'max_stake_per_venue', partner_id: 'sim_book01', amount: m(30) }], [['sim_book01', 10]]);
    const b = new LegBatch(new Map(), { halt: false, checkAllFirst: false }, p);
    expect(b.settle(passing(p, 0, 'sim_book01', 15)).result.accepted).toBe(true);
    const second = b.settle(passing(p, 1, 'sim_book01', 6));
    expect(second.plan).toBeNull();
    expect(second.result).toMatchObject({
      accepted: false,
      rejected_code: 'execution_limit_exceeded',
      fix: 'reduce_stake',
      rejected_reason: 'stake 6 plus 25 already open or staked by earlier orders of this request on sim_book01 is above max_stake_per_venue 30 (5 left)',
    });
    // 10 open + 15 + 5 = 30: exactly the limit.
    expect(b.settle(passing(p, 2, 'sim_book01', 5)).result.accepted).toBe(true);
    expect(b.settle(passing(p, 3, 'sim_p2p', 500)).result.accepted).toBe(true);
  });

  it('per league across venues; a leg refused for funds does not count toward the limits', () => {
    const p = policy([{ type: 'max_stake_per_league', league_id: 'lg_nfl', amount: m(20) }]);
    const b = new LegBatch(new Map([['sim_p2p', { available: m(5), synced: true }]]), { halt: false, checkAllFirst: false }, p);
    expect(b.settle(passing(p, 0, 'sim_book01', 12)).result.accepted).toBe(true);
    // Refused for its balance (USD 5 on sim_p2p): its 8 is not counted.
    expect(b.settle(passing(p, 1, 'sim_p2p', 8)).result.rejected_code).toBe('insufficient_balance');
    expect(b.settle(passing(p, 2, 'sim_exchange', 8)).result.accepted).toBe(true);
    expect(b.settle(passing(p, 3, 'sim_exchange', 1)).result.rejected_code).toBe('execution_limit_exceeded');
    // Another league is its own count.
    expect(b.settle(passing(p, 4, 'sim_exchange', 19, 'lg_nba')).result.accepted).toBe(true);
  });

  it('without a policy nothing changes', () => {
    const b = new LegBatch(new Map(), { halt: false, checkAllFirst: false }, NO_POLICY);
    for (let i = 0; i < 5; i++) expect(b.settle(passing(NO_POLICY, i, 'sim_book01', 1_000)).result.accepted).toBe(true);
  });
});
