import { describe, expect, it } from 'vitest';
import { groupConsensus, liquidityWeight, type ConsensusQuote } from '../../../src/compute/consensus.js';

function cq(partner_id: string, price: number, available: number, stale = false): ConsensusQuote {
  return { partner_id, price, available, stale };
}

describe('liquidityWeight', () => {
  it('is the square root of the USD clamped to [100, 100000]', () => {
    expect(liquidityWeight(0)).toBe(10);
    expect(liquidityWeight(100)).toBe(10);
    expect(liquidityWeight(2500)).toBe(50);
    expect(liquidityWeight(100_000)).toBeCloseTo(316.227766, 6);
    expect(liquidityWeight(5_000_000)).toBeCloseTo(316.227766, 6);
  });
});

describe('groupConsensus (hand-computed example, docs/pricing.md)', () => {
  // Home/away moneyline.
  // V1: home 0.52 (USD 900), away 0.50 (USD 400) → devig /1.02 → 26/51, 25/51; weight √min(900,400) = 20.
  // V2: home 0.55 (USD 2500), away 0.47 (USD 2500) → /1.02 → 55/102, 47/102; weight √2500 = 50.
  // V3: home 0.54 only (USD 1600) → raw 0.54; weight 0.5·√1600 = 20.
  // home = (20·26/51 + 50·55/102 + 20·0.54) / 90 = 47.95686275 / 90 = 0.53285403
  // away = (20·25/51 + 50·47/102) / 70 = 32.84313725 / 70 = 0.46918768
  // sum = 1.00204171 → home 0.53176832, away 0.46823168.
  const home = [cq('v1', 0.52, 900), cq('v2', 0.55, 2500), cq('v3', 0.54, 1600)];
  const away = [cq('v1', 0.5, 400), cq('v2', 0.47, 2500)];

  it('devigs, weights by liquidity and renormalizes the group', () => {
    const [h, a] = groupConsensus([home, away]);
    expect(h.price).toBeCloseTo(0.5317683162, 9);
    expect(a.price).toBeCloseTo(0.4682316838, 9);
    expect(h.weight).toBeCloseTo(90, 12);
    expect(a.weight).toBeCloseTo(70, 12);
  });

  it('is the same whatever the order of venues and quotes', () => {
    const [h] = groupConsensus([[...home].reverse(), [...away].reverse()]);
    expect(h.price).toBeCloseTo(0.5317683162, 9);
  });

  it('with only two-sided venues the mixture already sums to 1', () => {
    // (20·26/51 + 50·55/102)/70 = 37.15686275/70 = 0.53081232
    const [h, a] = groupConsensus([home.slice(0, 2), away]);
    expect(h.price).toBeCloseTo(0.5308123249, 9);
    expect((h.price as number) + (a.price as number)).toBeCloseTo(1, 12);
  });

  it('ignores a stale venue on a member a fresh one prices, however deep the stale book', () => {
    // V2 stale is dropped: home = V1 devigged alone = 26/51 = 0.50980392, weight w(400) = 20.
    const [h, a] = groupConsensus([
      [cq('v1', 0.52, 900), cq('v2', 0.55, 100_000, true)],
      [cq('v1', 0.5, 400), cq('v2', 0.47, 100_000, true)],
    ]);
    expect(h.price).toBeCloseTo(26 / 51, 12);
    expect(a.price).toBeCloseTo(25 / 51, 12);
    expect(h.weight).toBeCloseTo(20, 12);
  });

  it('falls back to stale quotes on a member nothing fresh prices, at a tenth of the weight', () => {
    // away: only V2 (stale) → one-sided raw 0.47, weight 0.5·50·0.1 = 2.5; home: V1 fresh only
    // (V2 dropped there), one-sided 0.52 at 0.5·30 = 15. Σ 0.99 → 0.52/0.99, 0.47/0.99.
    const [h, a] = groupConsensus([[cq('v1', 0.52, 900), cq('v2', 0.55, 2500, true)], [cq('v2', 0.47, 2500, true)]]);
    expect(h.price).toBeCloseTo(0.52 / 0.99, 12);
    expect(a.price).toBeCloseTo(0.47 / 0.99, 12);
    expect(h.weight).toBeCloseTo(15, 12);
    expect(a.weight).toBeCloseTo(2.5, 12);
  });

  it('a group priced by stale quotes alone is devigged like a fresh one, at a tenth of the weight', () => {
    const [h, a] = groupConsensus([[cq('v2', 0.55, 2500, true)], [cq('v2', 0.47, 2500, true)]]);
    expect(h.price).toBeCloseTo(55 / 102, 12);
    expect(a.price).toBeCloseTo(47 / 102, 12);
    expect(h.weight).toBeCloseTo(5, 12);
  });

  it('one-sided venues on both members are devigged across venues by the renormalization', () => {
    // home: 0.55 raw (w 0.5·10 = 5); away: 0.48 raw (w 5). Σ 1.03 → 0.55/1.03, 0.48/1.03.
    const [h, a] = groupConsensus([[cq('v1', 0.55, 0)], [cq('v2', 0.48, 50)]]);
    expect(h.price).toBeCloseTo(0.5339805825, 9);
    expect(a.price).toBeCloseTo(0.4660194175, 9);
  });

  it('a one-member group is the weighted mean of raw prices, never devigged to 1', () => {
    // 0.30 at w 0.5·10 = 5, 0.36 at w 0.5·20 = 10 → (1.5 + 3.6)/15 = 0.34.
    const [only] = groupConsensus([[cq('v1', 0.3, 100), cq('v2', 0.36, 400)]]);
    expect(only.price).toBeCloseTo(0.34, 12);
  });

  it('a member nobody quotes has no consensus and the group is not renormalized', () => {
    const [h, a] = groupConsensus([[cq('v3', 0.54, 1600)], []]);
    expect(h.price).toBeCloseTo(0.54, 12);
    expect(a.price).toBeNull();
    expect(a.weight).toBe(0);
  });
});
