import { describe, expect, it } from 'vitest';
import { groupArbitrage } from '../../../src/compute/arbitrage.js';
import { runLiquidityJob } from '../../../src/compute/job.js';
import { arbitrageSignal, priceMoveSignal, takeSample, type ConsensusSample, type PositionNow } from '../../../src/compute/market-signals.js';
import type { Signal } from '../../../src/domain/signals.js';
import { NOW_MS, position, quote } from './helpers.js';

const NOW = new Date(NOW_MS).toISOString();
const facts = { contest_id: 'ct1', label: 'Home v Away', league_id: 'lg1' };
const def = position('h', []);
const at = (p: Omit<PositionNow, 'def' | 'venueList'>): PositionNow => ({ def, venueList: [{ partner_id: 'A', partner_name: 'A' }], ...p });

describe('takeSample', () => {
  it('keeps one sample per 30 s, drops those before the window but keeps the window’s start', () => {
    let s: ConsensusSample[] = [];
    s = takeSample(s, [0, 0.5, 2]);
    s = takeSample(s, [10_000, 0.51, 2]);
    expect(s).toEqual([
      [0, 0.5, 2],
      [10_000, 0.51, 2],
    ]);
    s = takeSample(s, [20_000, 0.52, 2]);
    // Closer than 30 s to the newest: it replaces it (the first stays as the window's start).
    expect(s).toEqual([
      [0, 0.5, 2],
      [20_000, 0.52, 2],
    ]);
    s = takeSample(s, [320_000, 0.6, 3]);
    expect(s).toEqual([
      [20_000, 0.52, 2],
      [320_000, 0.6, 3],
    ]);
  });
});

describe('priceMoveSignal', () => {
  it('a move of 0.05 within 5 minutes is published with its evidence; 0.049 is not', () => {
    const samples: ConsensusSample[] = [
      [NOW_MS - 240_000, 0.45, 2],
      [NOW_MS - 120_000, 0.47, 3],
      [NOW_MS, 0.5, 3],
    ];
    const s = priceMoveSignal(at({ consensus: 0.5, venues: 3, available: 2_500 }), samples, facts, NOW_MS, {})!;
    expect(s).toMatchObject({
      dedupe_key: 'price_move:h:up',
      signal_type: 'price_move',
      status: 'beta',
      strength: 25,
      confidence: 'high',
      detected_at: NOW,
      expires_at: new Date(NOW_MS + 300_000).toISOString(),
      evidence: { from_price: 0.45, to_price: 0.5, move: 0.05, direction: 'up', window_ms: 240_000, venues_now: 3, venues_before: 2, total_available_usd: 2_500 },
    });
    expect(s.position).toMatchObject({ position_hash: 'h', router_contest_id: 'ct1', router_league_id: 'lg1', contest_label: 'Home v Away', market_side_id: 'mk1:home' });
    const small: ConsensusSample[] = [
      [NOW_MS - 240_000, 0.451, 2],
      [NOW_MS, 0.5, 3],
    ];
    expect(priceMoveSignal(at({ consensus: 0.5, venues: 3, available: 2_500 }), small, facts, NOW_MS, {})).toBeNull();
  });

  it('down moves, strength on its scale, confidence by breadth, detected_at kept while it goes on', () => {
    const samples: ConsensusSample[] = [
      [NOW_MS - 60_000, 0.6, 1],
      [NOW_MS, 0.4, 1],
    ];
    const s = priceMoveSignal(at({ consensus: 0.4, venues: 1, available: 50 }), samples, facts, NOW_MS, { 'price_move:h:down': '2026-03-01T11:58:00.000Z' })!;
    expect(s).toMatchObject({ dedupe_key: 'price_move:h:down', strength: 100, confidence: 'low', detected_at: '2026-03-01T11:58:00.000Z', evidence: { move: -0.2, direction: 'down' } });
    // 0.11 is 40 % of the way from 0.05 (25) to 0.20 (100): 25 + 0.4 × 75 = 55.
    const mid = priceMoveSignal(at({ consensus: 0.51, venues: 2, available: 50 }), [[NOW_MS - 60_000, 0.4, 2], [NOW_MS, 0.51, 2]], facts, NOW_MS, {})!;
    expect(mid).toMatchObject({ strength: 55, confidence: 'medium' });
  });
});

describe('arbitrageSignal', () => {
  const h = position('h', [quote('A', 0.45, 450)], { side_key: 'home' });
  const a = position('a', [quote('B', 0.52, 520, { venue_side_key: 'away' })], { side_key: 'away' });
  const defs = new Map([
    ['h', h],
    ['a', a],
  ]);
  const arb = (fee?: { kind: 'unknown' }) =>
    groupArbitrage(
      { position: fee ? { ...h, quotes: [quote('A', 0.45, 450, { fee })] } : h, withheld: [false], stale: [false] },
      { position: a, withheld: [false], stale: [false] },
      { contest: { id: 'ct1', label: 'Home v Away', league_id: 'lg1' }, nowIso: NOW, detectedBefore: {} },
    )!;

  it('carries the catalog’s evidence, both venues, the other leg as related, strength by ROI', () => {
    const s = arbitrageSignal(arb(), defs, facts, NOW_MS)!;
    expect(s).toMatchObject({
      dedupe_key: `arbitrage:${arb().arbitrage_id}`,
      status: 'active',
      related_positions: ['a'],
      venues: [
        { partner_id: 'A', partner_name: 'A' },
        { partner_id: 'B', partner_name: 'B' },
      ],
      // 3.092784 % gross: 20 + 80 × (3.092784 − 1) / 4 = 61.86 → 62.
      strength: 62,
      confidence: 'high',
      expires_at: new Date(NOW_MS + 120_000).toISOString(),
      evidence: { arbitrage_id: arb().arbitrage_id, best_combined_price: 0.97, best_guaranteed_profit_pct: 3.092784, after_fee_roi: 3.092784, profitable_after_fees: true, best_max_investment: 970, venues: ['A', 'B'] },
    });
    expect((s.evidence.sides as unknown[][])[0]).toEqual([{ partner_id: 'A', price: 0.45, after_fee_price: 0.45, available: 450, position_hash: 'h' }]);
    expect(arbitrageSignal(arb({ kind: 'unknown' }), defs, facts, NOW_MS)).toMatchObject({ confidence: 'medium', evidence: { after_fee_roi: null } });
  });
});

describe('runLiquidityJob signals', () => {
  const input = (nowMs: number, homeA: number) => ({
    contest_id: 'ct1',
    now_ms: nowMs,
    label: 'Home v Away',
    league_id: 'lg1',
    positions: [
      position('h', [quote('A', homeA, 450, { as_of: new Date(nowMs - 1_000).toISOString() }), quote('B', 0.5, 500, { as_of: new Date(nowMs - 1_000).toISOString() })], { side_key: 'home' }),
      position('a', [quote('A', 0.58, 580, { venue_side_key: 'away', as_of: new Date(nowMs - 1_000).toISOString() }), quote('B', 0.52, 520, { venue_side_key: 'away', as_of: new Date(nowMs - 1_000).toISOString() })], { side_key: 'away' }),
    ],
  });
  const types = (o: { signals: { signal_type: string }[] }) => o.signals.map((s) => s.signal_type).sort();

  it('writes when the signals change, not on an unchanged set, and again a minute before the soonest expiry', () => {
    const first = runLiquidityJob({ input: input(NOW_MS, 0.45), prevJson: null });
    expect(first.signalsDue).toBe(true);
    expect(types(first)).toEqual(['arbitrage']);
    const same = runLiquidityJob({ input: input(NOW_MS + 10_000, 0.45), prevJson: first.snapshotJson });
    expect(same.signalsDue).toBe(false);
    // 60 s after the write, the 120 s arbitrage signal has a minute left: written again, its expiry moved on.
    const refresh = runLiquidityJob({ input: input(NOW_MS + 60_000, 0.45), prevJson: same.snapshotJson });
    expect(refresh.signalsDue).toBe(true);
    expect(refresh.signals[0]!.expires_ms).toBe(NOW_MS + 180_000);
    expect((JSON.parse(refresh.signals[0]!.json) as Signal).detected_at).toBe(NOW);
  });

  it('a consensus move of the position publishes price_move alongside', () => {
    const first = runLiquidityJob({ input: input(NOW_MS, 0.45), prevJson: null });
    // Venue A's home price from 0.45 to 0.2: the consensus goes from 0.464246 to 0.376381.
    const moved = runLiquidityJob({ input: input(NOW_MS + 60_000, 0.2), prevJson: first.snapshotJson });
    expect(moved.signalsDue).toBe(true);
    const move = moved.signals.map((s) => JSON.parse(s.json) as Signal).find((s) => s.signal_type === 'price_move' && s.position.position_hash === 'h');
    expect(move).toBeDefined();
    expect(move!.evidence).toMatchObject({ from_price: 0.464246, to_price: 0.376381, move: -0.087865, direction: 'down', window_ms: 60_000 });
  });
});
