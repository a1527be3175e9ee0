import { describe, expect, it } from 'vitest';
import { arbitrageId, contestArbitrages, groupArbitrage, type ArbitrageSideInput } from '../../../src/compute/arbitrage.js';
import { computeContest } from '../../../src/compute/contest.js';
import type { VenueQuote } from '../../../src/compute/types.js';
import { NOW_MS, position, quote } from './helpers.js';

const NOW = new Date(NOW_MS).toISOString();
const ctx = { contest: { id: 'ct1', label: 'Home v Away', league_id: 'lg1' }, nowIso: NOW, detectedBefore: {} };

/** A moneyline: `home` and `away` positions with the given quotes, nothing withheld or stale unless said. */
function sides(home: VenueQuote[], away: VenueQuote[], flags: { withheld?: [boolean[], boolean[]]; stale?: [boolean[], boolean[]] } = {}): [ArbitrageSideInput, ArbitrageSideInput] {
  return [
    { position: position('h', home, { side_key: 'home' }), withheld: flags.withheld?.[0] ?? home.map(() => false), stale: flags.stale?.[0] ?? home.map(() => false) },
    { position: position('a', away, { side_key: 'away' }), withheld: flags.withheld?.[1] ?? away.map(() => false), stale: flags.stale?.[1] ?? away.map(() => false) },
  ];
}
const away = (partner: string, price: number, available: number, over: Partial<VenueQuote> = {}) => quote(partner, price, available, { venue_side_key: 'away', ...over });

describe('groupArbitrage', () => {
  it('selects the cheapest cross-venue pair and prices it exactly', () => {
    const [h, a] = sides([quote('A', 0.45, 450), quote('B', 0.5, 500)], [away('A', 0.58, 580), away('B', 0.52, 520), away('C', 0.53, 530)]);
    const arb = groupArbitrage(h, a, ctx)!;
    expect(arb).toMatchObject({
      contest: { id: 'ct1', label: 'Home v Away', league_id: 'lg1' },
      market: { id: 'mk1', variable_id: null },
      combined_price: 0.97,
      roi_pct: 3.092784,
      after_fee_roi_pct: 3.092784,
      profitable_after_fees: true,
      // 1,000 contracts on each side (450 / 0.45 and 520 / 0.52) at 0.97.
      max_investment: 970,
      detected_at: NOW,
    });
    expect(arb.sides.map((s) => s.options.map((o) => o.partner_id))).toEqual([
      ['A', 'B'],
      ['B', 'C', 'A'],
    ]);
    expect(arb.sides[0]).toMatchObject({ market_side_id: 'mk1:home', title: 'title h' });
    expect(arb.sides[1]!.options[0]).toEqual({ partner_id: 'B', partner_name: 'B', price: 0.52, after_fee_price: 0.52, available: 520, title: 'title a', position_hash: 'a', source: 'polling' });
    expect(arb.arbitrage_id).toBe(arbitrageId('h', 'A', 'a', 'B'));
  });

  it('no pair under 1.0, or only one venue on both sides: no arbitrage', () => {
    expect(groupArbitrage(...sides([quote('A', 0.5, 500)], [away('B', 0.5, 500)]), ctx)).toBeNull();
    expect(groupArbitrage(...sides([quote('A', 0.4, 500)], [away('A', 0.4, 500)]), ctx)).toBeNull();
  });

  it('after fees: the taker fee of each leg, and the pair cheapest after fees is selected', () => {
    // A charges pq 7%: 0.45 costs 0.467325 all in. With B's 0.52 that is 0.987325; C's 0.46 with B is 0.98 gross and after fees.
    const pq = { kind: 'pq', taker_rate: 0.07, maker_rate: 0 } as const;
    const [h, a] = sides([quote('A', 0.45, 450, { fee: pq }), quote('C', 0.46, 460)], [away('B', 0.52, 520)]);
    const arb = groupArbitrage(h, a, ctx)!;
    expect(arb.sides[0]!.options.map((o) => [o.partner_id, o.after_fee_price])).toEqual([
      ['C', 0.46],
      ['A', 0.467325],
    ]);
    expect(arb).toMatchObject({ combined_price: 0.98, after_fee_roi_pct: 2.040816, profitable_after_fees: true });

    const only = groupArbitrage(...sides([quote('A', 0.45, 450, { fee: pq })], [away('B', 0.52, 520)]), ctx)!;
    expect(only).toMatchObject({ combined_price: 0.97, roi_pct: 3.092784, after_fee_roi_pct: 1.283772, profitable_after_fees: true });
  });

  it('a gross arb that fees eat is reported, not profitable after fees', () => {
    const pq = { kind: 'pq', taker_rate: 0.1, maker_rate: 0 } as const;
    // 0.49 + 0.1·0.49·0.51 = 0.51499 and 0.5 + 0.1·0.25 = 0.525: 1.03999 after fees.
    const arb = groupArbitrage(...sides([quote('A', 0.49, 490, { fee: pq })], [away('B', 0.5, 500, { fee: pq })]), ctx)!;
    expect(arb).toMatchObject({ combined_price: 0.99, roi_pct: 1.010101, after_fee_roi_pct: -3.845229, profitable_after_fees: false });
  });

  it('unknown fees: after-fee figures null (unknown, not free), and a pair with known fees is preferred', () => {
    const unknown = { kind: 'unknown' } as const;
    const u = groupArbitrage(...sides([quote('A', 0.4, 400, { fee: unknown })], [away('B', 0.5, 500)]), ctx)!;
    expect(u).toMatchObject({ combined_price: 0.9, after_fee_roi_pct: null, profitable_after_fees: null });
    expect(u.sides[0]!.options[0]!.after_fee_price).toBeNull();

    const mixed = groupArbitrage(...sides([quote('A', 0.4, 400, { fee: unknown }), quote('C', 0.45, 450)], [away('B', 0.5, 500)]), ctx)!;
    expect(mixed.sides[0]!.options.map((o) => o.partner_id)).toEqual(['C', 'A']);
    expect(mixed).toMatchObject({ combined_price: 0.95, after_fee_roi_pct: 5.263158 });
  });

  it('never from a withheld, stale, untradable or empty quote', () => {
    const h = [quote('A', 0.3, 300), quote('B', 0.5, 500)];
    const a = [away('B', 0.55, 550), away('A', 0.6, 600)];
    expect(groupArbitrage(...sides(h, a), ctx)?.combined_price).toBe(0.85);
    expect(groupArbitrage(...sides(h, a, { withheld: [[true, false], [false, false]] }), ctx)).toBeNull();
    expect(groupArbitrage(...sides(h, a, { stale: [[true, false], [false, false]] }), ctx)).toBeNull();
    expect(groupArbitrage(...sides([quote('A', 0.3, 0.99), quote('B', 0.5, 500)], a), ctx)).toBeNull();
  });

  it('the classic false arb: two venues listing their participants on opposite venue sides never pair', () => {
    // B has the teams swapped: its "home" position quote is listed on its away side and the other way round.
    const h = [quote('A', 0.3, 300), quote('B', 0.3, 300, { venue_side_key: 'away' })];
    const a = [away('A', 0.7, 700), away('B', 0.65, 650, { venue_side_key: 'home' })];
    expect(groupArbitrage(...sides(h, a), ctx)).toBeNull();
  });

  it('the id is stable across repricings and distinct per venue pair; detected_at is kept while the arb persists', () => {
    const first = groupArbitrage(...sides([quote('A', 0.45, 450)], [away('B', 0.52, 520)]), ctx)!;
    const later = groupArbitrage(...sides([quote('A', 0.44, 440)], [away('B', 0.53, 530)]), { ...ctx, nowIso: '2026-03-01T12:00:30.000Z', detectedBefore: { [first.arbitrage_id]: NOW } })!;
    expect(later.arbitrage_id).toBe(first.arbitrage_id);
    expect(later.detected_at).toBe(NOW);
    const other = groupArbitrage(...sides([quote('C', 0.45, 450)], [away('B', 0.52, 520)]), ctx)!;
    expect(other.arbitrage_id).not.toBe(first.arbitrage_id);
    expect(arbitrageId('h', 'A', 'a', 'B')).toBe(arbitrageId('a', 'B', 'h', 'A'));
    expect(first.arbitrage_id).toMatch(/^arb_[0-9a-f]{16}$/);
  });

  it('walks both books: the deployable stake stops where the next contract pair costs 1.0 or more', () => {
    const h = [quote('A', 0.45, 450, { levels: [{ price: 0.45, available: 450 }, { price: 0.48, available: 480 }] })];
    const a = [away('B', 0.52, 260, { levels: [{ price: 0.52, available: 260 }, { price: 0.53, available: 530 }] })];
    const arb = groupArbitrage(...sides(h, a), ctx)!;
    // Best level only: min(1,000, 500) contracts at 0.97.
    expect(arb.max_investment).toBe(485);
    // 500 pairs at 0.97, then 500 at 0.45 + 0.53 = 0.98; 0.48 + 0.53 = 1.01 ends it.
    expect(arb.depth_walk).toEqual({ contracts: 1000, deployable_stake: 975, profit_usd: 25, after_fee_edge_pct: 2.564103, fees_known: true });
  });

  it('contestArbitrages takes groups of exactly two positions', () => {
    const [h, a] = sides([quote('A', 0.45, 450)], [away('B', 0.52, 520)]);
    expect(contestArbitrages([[h, a]], ctx)).toHaveLength(1);
    expect(contestArbitrages([[h, a, { ...a, position: position('d', [away('C', 0.01, 100)], { side_key: 'draw' }) }]], ctx)).toEqual([]);
  });
});

describe('computeContest with arbitrage', () => {
  it('finds the arbitrage of a moneyline and carries detected_at in the snapshot', () => {
    const input = {
      contest_id: 'ct1',
      now_ms: NOW_MS,
      label: 'Home v Away',
      league_id: 'lg1',
      positions: [position('h', [quote('A', 0.45, 450), quote('B', 0.5, 500)], { side_key: 'home' }), position('a', [away('A', 0.58, 580), away('B', 0.52, 520)], { side_key: 'away' })],
    };
    const first = computeContest(input);
    expect(first.arbitrages).toHaveLength(1);
    expect(first.snapshot.arbs).toEqual({ [first.arbitrages[0]!.arbitrage_id]: NOW });
    const next = computeContest({ ...input, now_ms: NOW_MS + 10_000 }, first.snapshot);
    expect(next.arbitrages[0]!.detected_at).toBe(NOW);
  });
});
