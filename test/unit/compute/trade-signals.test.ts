/**
 * The trade-derived detectors (src/compute/trade-signals.ts) at and around each published threshold,
 * with exact evidence: whale_trade (median with few prints, the floor, the pre-start cap),
 * block_trade, trade_through, flow_imbalance (one print over half → none; a continuing run keeps its
 * id), volume_spike (baseline per 5 minutes), trade_burst (computed, never published), and the
 * window: each print counted once, bounded by age and count, the same batch giving the same signals.
 */
import { describe, expect, it } from 'vitest';
import {
  detectTradeSignals,
  parseWindow,
  runTradeSignalTask,
  WINDOW_HORIZON_MS,
  WINDOW_MAX_PRINTS,
  type NewPrint,
  type PositionTradeInput,
  type QuoteFact,
  type TradeWindow,
  type WindowPrint,
} from '../../../src/compute/trade-signals.js';
import type { PositionDefinition } from '../../../src/domain/catalog.js';
import { signalId, type Signal, type SignalType } from '../../../src/domain/signals.js';
import type { TradePrint } from '../../../src/domain/stream.js';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const S = 1_000;
const M = 60_000;
const HASH = 'ct1:mk1:home:0:p1:ft';
const POS: PositionDefinition = {
  position_hash: HASH,
  contest_id: 'ct1',
  title: 'Home',
  market_id: 'mk1',
  market_key: 'moneyline',
  side_key: 'home',
  variable: 0,
  participant_id: 'p1',
  participant_name: 'Home',
  participant_image_url: null,
  timeframe: 'ft',
  group_key: 'g1',
  ladder_key: null,
};
/** Started an hour before T0: prints are in play unless a test says otherwise. */
const IN_PLAY = { label: 'Home v Away', league_id: 'lg1', starts_at_ms: T0 - 3_600_000 };
const iso = (ms: number) => new Date(ms).toISOString();

let seq = 0;
/** A print of `notional` USD (size × price at 0.5) executed at `at`, on venue vx unless said. */
function print(at: number, notional: number, over: Partial<TradePrint> = {}): TradePrint {
  const price = over.price ?? 0.5;
  const partner = over.partner_id ?? 'vx';
  return {
    partner_id: partner,
    partner_name: `Venue ${partner.toUpperCase()}`,
    venue_trade_id: over.venue_trade_id ?? `t${++seq}`,
    venue_market_id: 'vm1',
    liquidity_hash: `${partner}:lh1`,
    position_hash: HASH,
    router_contest_id: 'ct1',
    router_market_id: 'mk1',
    taker_action: 'buy',
    price,
    size_contracts: notional / price,
    notional_usd: notional,
    is_block: false,
    trader_id: null,
    trader_id_kind: null,
    executed_at: iso(at),
    ...over,
  };
}
/** Seen by the log when it executed, unless said. */
const at = (p: TradePrint, seen = Date.parse(p.executed_at)): NewPrint => ({ print: p, seen_ms: seen });

function detect(prints: NewPrint[], over: Partial<PositionTradeInput> = {}) {
  return detectTradeSignals({ position: POS, contest: IN_PLAY, window: null, prints, quotes: {}, ...over });
}
const ofType = (signals: Signal[], type: SignalType) => signals.filter((s) => s.signal_type === type);
const one = (signals: Signal[], type: SignalType) => {
  const list = ofType(signals, type);
  expect(list).toHaveLength(1);
  return list[0]!;
};

/** A window already holding `prints` (complete from `from`). */
function windowOf(prints: WindowPrint[], from = prints[0]?.[2] ?? T0): TradeWindow {
  return { v: 1, complete_from_ms: from, prints, names: { vx: 'Venue VX', vy: 'Venue VY' }, runs: {} };
}
/** n held prints of `notional`, alternating sides (no one-way flow), spread evenly over [from, to). */
function history(n: number, notional: number, from: number, to: number, partner = 'vx'): WindowPrint[] {
  return Array.from({ length: n }, (_, i) => [partner, `h${partner}${i}`, from + Math.floor(((to - from) * i) / n), notional, i % 2 ? 's' : 'b'] as WindowPrint);
}

const quote = (over: Partial<QuoteFact> = {}): Record<string, QuoteFact> => ({
  'vx:lh1': { partner_id: 'vx', position_hash: HASH, price: 0.6, available: 1_000, book_usd: 4_000, as_of_ms: T0 - 2 * S, stale_after_ms: T0 + 28 * S, ...over },
});

describe('whale_trade', () => {
  it('without earlier prints the threshold is the USD 500 floor: a print of 1,000 is a whale, 999.99 is not', () => {
    expect(ofType(detect([at(print(T0, 999.99))]).signals, 'whale_trade')).toEqual([]);
    const p = print(T0, 1_000, { venue_trade_id: 'w1', trader_id: '0xabc', trader_id_kind: 'wallet' });
    const s = one(detect([at(p, T0 + 150)]).signals, 'whale_trade');
    expect(s).toEqual({
      signal_id: signalId('whale_trade:vx:w1', iso(T0 + 150)),
      dedupe_key: 'whale_trade:vx:w1',
      signal_type: 'whale_trade',
      schema_version: 1,
      status: 'beta',
      position: {
        position_hash: HASH,
        router_contest_id: 'ct1',
        router_league_id: 'lg1',
        router_market_id: 'mk1',
        market_key: 'moneyline',
        market_side_id: 'mk1:home',
        market_variable_id: null,
        participant_id: 'p1',
        timeframe_id: 'ft',
        title: 'Home',
        contest_label: 'Home v Away',
      },
      related_positions: [],
      headline: 'Whale buy of $1,000 on Home at Venue VX',
      explanation: 'A buy of 2,000 contracts at 0.5 ($1,000) on Venue VX is 2× the whale threshold of $500: the $500 floor (no earlier print of this position to take a median of).',
      strength: 40,
      // No print to take a median of.
      confidence: 'low',
      calibration_version: 1,
      detected_at: iso(T0 + 150),
      expires_at: iso(T0 + 150 + 600 * S),
      venues: [{ partner_id: 'vx', partner_name: 'Venue VX' }],
      evidence: {
        notional_usd: 1_000,
        size_multiple: 2,
        threshold_usd: 500,
        baseline_median_notional_usd: null,
        depth_ratio: null,
        contest_phase: 'in_play',
        trader_id: '0xabc',
        is_block: false,
        partner_id: 'vx',
      },
    });
  });

  it('with few prints the median is of what there is (odd and even counts), the new print left out', () => {
    // 100, 300, 200 → median 200 → threshold 1,600 → a whale from 3,200.
    const three = windowOf([
      ['vx', 'a', T0 - 3 * M, 100, 'b'],
      ['vx', 'b', T0 - 2 * M, 300, 's'],
      ['vx', 'c', T0 - M, 200, 'b'],
    ]);
    expect(ofType(detect([at(print(T0, 3_199.99))], { window: three }).signals, 'whale_trade')).toEqual([]);
    const w = one(detect([at(print(T0, 3_200))], { window: three }).signals, 'whale_trade');
    expect(w.evidence).toMatchObject({ size_multiple: 2, threshold_usd: 1_600, baseline_median_notional_usd: 200 });
    expect(w.confidence).toBe('low');
    expect(w.explanation).toContain("the greater of $500 and 8 × the position's median print of $200 over its last 3 prints");
    // 100 and 200 → median 150 → threshold 1,200.
    const two = windowOf([
      ['vx', 'a', T0 - 2 * M, 100, 'b'],
      ['vx', 'b', T0 - M, 200, 's'],
    ]);
    expect(ofType(detect([at(print(T0, 2_399))], { window: two }).signals, 'whale_trade')).toEqual([]);
    expect(one(detect([at(print(T0, 2_400))], { window: two }).signals, 'whale_trade').evidence).toMatchObject({ threshold_usd: 1_200, baseline_median_notional_usd: 150 });
    // One earlier print of 20: 8 × 20 = 160 is under the floor, so the floor stands.
    expect(one(detect([at(print(T0, 1_000))], { window: windowOf([['vx', 'a', T0 - M, 20, 'b']]) }).signals, 'whale_trade').evidence).toMatchObject({
      threshold_usd: 500,
      baseline_median_notional_usd: 20,
    });
  });

  it('confidence follows the prints the median rests on: medium from 5, high from 20; the multiple sets the strength', () => {
    const med = one(detect([at(print(T0, 1_000))], { window: windowOf(history(5, 50, T0 - 10 * M, T0)) }).signals, 'whale_trade');
    expect(med.confidence).toBe('medium');
    expect(ofType(detect([at(print(T0, 1_000))], { window: windowOf(history(4, 50, T0 - 10 * M, T0)) }).signals, 'whale_trade')[0]!.confidence).toBe('low');
    // 20 prints of 100: threshold 800; 4,800 is 6× → 40 + 60 × 4/8 = 70.
    const high = one(detect([at(print(T0, 4_800))], { window: windowOf(history(20, 100, T0 - 30 * M, T0)) }).signals, 'whale_trade');
    expect(high).toMatchObject({ confidence: 'high', strength: 70 });
    expect(high.evidence).toMatchObject({ size_multiple: 6, threshold_usd: 800, baseline_median_notional_usd: 100 });
    expect(one(detect([at(print(T0, 8_000))], { window: windowOf(history(20, 100, T0 - 30 * M, T0)) }).signals, 'whale_trade').strength).toBe(100);
    expect(one(detect([at(print(T0, 20_000))], { window: windowOf(history(20, 100, T0 - 30 * M, T0)) }).signals, 'whale_trade').strength).toBe(100);
  });

  it('before the scheduled start confidence is at most medium and the phase says pre_start', () => {
    const pre = { ...IN_PLAY, starts_at_ms: T0 + 1 };
    const s = one(detect([at(print(T0, 4_800))], { window: windowOf(history(20, 100, T0 - 30 * M, T0)), contest: pre }).signals, 'whale_trade');
    expect(s.confidence).toBe('medium');
    expect(s.evidence.contest_phase).toBe('pre_start');
    expect(s.explanation).toContain('before the scheduled start');
    // At the scheduled start it is in play.
    const onTime = one(detect([at(print(T0, 4_800))], { window: windowOf(history(20, 100, T0 - 30 * M, T0)), contest: { ...IN_PLAY, starts_at_ms: T0 } }).signals, 'whale_trade');
    expect(onTime).toMatchObject({ confidence: 'high', evidence: { contest_phase: 'in_play' } });
    // A low confidence stays low.
    expect(one(detect([at(print(T0, 1_000))], { contest: pre }).signals, 'whale_trade').confidence).toBe('low');
  });

  it('depth_ratio: the print against the USD the venue showed on every level of its book; null without a book', () => {
    expect(one(detect([at(print(T0, 2_000))], { quotes: quote() }).signals, 'whale_trade').evidence.depth_ratio).toBe(0.5);
    expect(one(detect([at(print(T0, 1_000))], { quotes: quote({ book_usd: 3_000 }) }).signals, 'whale_trade').evidence.depth_ratio).toBe(0.3333);
    expect(one(detect([at(print(T0, 1_000))], { quotes: quote({ book_usd: 0, available: 0 }) }).signals, 'whale_trade').evidence.depth_ratio).toBeNull();
    // Another venue's quote, or the venue's quote of another position, is not this book.
    expect(one(detect([at(print(T0, 1_000))], { quotes: quote({ partner_id: 'vy' }) }).signals, 'whale_trade').evidence.depth_ratio).toBeNull();
    expect(one(detect([at(print(T0, 1_000))], { quotes: quote({ position_hash: 'other' }) }).signals, 'whale_trade').evidence.depth_ratio).toBeNull();
  });

  it('the median is of the last 100 prints only', () => {
    // 50 old prints of 10, then 100 of 1,000: the median is 1,000 (threshold 8,000).
    const w = windowOf([...history(50, 10, T0 - 50 * M, T0 - 40 * M), ...history(100, 1_000, T0 - 40 * M, T0, 'vy')]);
    expect(ofType(detect([at(print(T0, 15_999))], { window: w }).signals, 'whale_trade')).toEqual([]);
    expect(one(detect([at(print(T0, 16_000))], { window: w }).signals, 'whale_trade').evidence).toMatchObject({ threshold_usd: 8_000, baseline_median_notional_usd: 1_000 });
  });
});

describe('block_trade', () => {
  it('every venue-flagged block, strength on a log scale of its notional, confidence high', () => {
    const b = one(detect([at(print(T0, 1_000, { venue_trade_id: 'b1', is_block: true, trader_id: 'desk7', price: 0.4 }), T0 + 40)]).signals, 'block_trade');
    expect(b).toMatchObject({
      dedupe_key: 'block_trade:vx:b1',
      strength: 20,
      confidence: 'high',
      headline: 'Block buy of $1,000 on Home at Venue VX',
      explanation: 'Venue VX reports a negotiated off-book block: a buy of 2,500 contracts at 0.4 ($1,000) by desk7.',
      venues: [{ partner_id: 'vx', partner_name: 'Venue VX' }],
      expires_at: iso(T0 + 40 + 900 * S),
    });
    expect(b.evidence).toEqual({ notional_usd: 1_000, price: 0.4, trader_id: 'desk7', partner_id: 'vx' });
    expect(one(detect([at(print(T0, 50_000, { is_block: true }))]).signals, 'block_trade').strength).toBe(100);
    // Under USD 1,000 the log scale continues below 20: ln 500 / ln 1000 × 20 = 17.99.
    expect(one(detect([at(print(T0, 500, { is_block: true }))]).signals, 'block_trade').strength).toBe(18);
    expect(ofType(detect([at(print(T0, 50_000))]).signals, 'block_trade')).toEqual([]);
  });

  it('a large block is also a whale, and says so', () => {
    const out = detect([at(print(T0, 5_000, { is_block: true }))]);
    expect(one(out.signals, 'whale_trade').evidence.is_block).toBe(true);
    expect(one(out.signals, 'block_trade').evidence.notional_usd).toBe(5_000);
  });
});

describe('trade_through', () => {
  it('a buy at least 0.02 above the cached best price of that position on that venue', () => {
    expect(ofType(detect([at(print(T0, 100, { price: 0.619 }))], { quotes: quote() }).signals, 'trade_through')).toEqual([]);
    const s = one(detect([at(print(T0, 100, { price: 0.62, venue_trade_id: 'x1' }), T0 + 30)], { quotes: quote() }).signals, 'trade_through');
    expect(s).toMatchObject({
      dedupe_key: 'trade_through:vx:x1',
      strength: 20,
      confidence: 'high',
      headline: 'Buy through the quote on Home at Venue VX: 0.62 against 0.6',
      explanation: 'A buy of $100 printed at 0.62, 0.02 above the best price Venue VX showed (0.6, cached 2 s before the print).',
      expires_at: iso(T0 + 30 + 300 * S),
    });
    expect(s.evidence).toEqual({ price: 0.62, cached_price: 0.6, through: 0.02, quote_age_ms: 2_000, partner_id: 'vx' });
    // 0.57 − 0.55 is 0.0199999… in binary: still 0.02 through.
    expect(one(detect([at(print(T0, 100, { price: 0.57 }))], { quotes: quote({ price: 0.55 }) }).signals, 'trade_through').evidence.through).toBe(0.02);
    expect(one(detect([at(print(T0, 100, { price: 0.7 }))], { quotes: quote() }).signals, 'trade_through').strength).toBe(100);
  });

  it('not for sells, blocks, an empty book, or a quote of another venue or position', () => {
    const p = { price: 0.7 };
    expect(ofType(detect([at(print(T0, 100, { ...p, taker_action: 'sell' }))], { quotes: quote() }).signals, 'trade_through')).toEqual([]);
    expect(ofType(detect([at(print(T0, 100, { ...p, is_block: true }))], { quotes: quote() }).signals, 'trade_through')).toEqual([]);
    expect(ofType(detect([at(print(T0, 100, p))], { quotes: quote({ available: 0 }) }).signals, 'trade_through')).toEqual([]);
    expect(ofType(detect([at(print(T0, 100, p))], { quotes: quote({ partner_id: 'vy' }) }).signals, 'trade_through')).toEqual([]);
    expect(ofType(detect([at(print(T0, 100, p))], { quotes: quote({ position_hash: 'x' }) }).signals, 'trade_through')).toEqual([]);
    expect(ofType(detect([at(print(T0, 100, p))]).signals, 'trade_through')).toEqual([]);
  });

  it('confidence follows the age of the cached quote: 5 s high, 30 s medium, older or past its freshness bound low', () => {
    const conf = (asOf: number, staleAfter: number | null = null) =>
      one(detect([at(print(T0, 100, { price: 0.65 }))], { quotes: quote({ as_of_ms: asOf, stale_after_ms: staleAfter }) }).signals, 'trade_through');
    expect(conf(T0 - 5_000).confidence).toBe('high');
    expect(conf(T0 - 5_001).confidence).toBe('medium');
    expect(conf(T0 - 30_000).confidence).toBe('medium');
    expect(conf(T0 - 30_001).confidence).toBe('low');
    expect(conf(T0 - 1_000, T0).confidence).toBe('low');
    // Taken after the print: a negative age (it may already show the book the print left).
    const after = conf(T0 + 1_500);
    expect(after.evidence.quote_age_ms).toBe(-1_500);
    expect(after.explanation).toContain('cached 1.5 s after the print');
  });
});

describe('flow_imbalance', () => {
  /** n buys of `each` USD a few seconds apart ending at T0, examined one by one. */
  const buys = (amounts: number[], over: Partial<TradePrint> = {}) => amounts.map((n, i) => at(print(T0 - (amounts.length - 1 - i) * 5 * S, n, over)));

  it('five one-way prints and USD 1,000 in the last minute: one signal with exact evidence', () => {
    expect(ofType(detect(buys([200, 200, 200, 200])).signals, 'flow_imbalance')).toEqual([]);
    expect(ofType(detect(buys([200, 200, 200, 200, 199.99])).signals, 'flow_imbalance')).toEqual([]);
    const s = one(detect(buys([200, 200, 200, 200, 200])).signals, 'flow_imbalance');
    expect(s).toMatchObject({
      dedupe_key: `flow_imbalance:${HASH}:buy`,
      signal_id: signalId(`flow_imbalance:${HASH}:buy`, iso(T0)),
      detected_at: iso(T0),
      expires_at: iso(T0 + 180 * S),
      strength: 30,
      // Five prints on one venue.
      confidence: 'low',
      headline: 'One-way buy flow on Home: 5 buys, $1,000 in a minute',
      explanation: 'Every print of the last minute was a buy: 5 prints for $1,000, the largest $200, on Venue VX (5, $1,000).',
      venues: [{ partner_id: 'vx', partner_name: 'Venue VX' }],
    });
    expect(s.evidence).toEqual({
      buy_notional_usd: 1_000,
      sell_notional_usd: 0,
      imbalance: 1,
      venues: [{ partner_id: 'vx', partner_name: 'Venue VX', trades: 5, notional_usd: 1_000 }],
      partner_id: 'vx',
    });
  });

  it('no single print more than half of the total: one over half → none, exactly half → a signal', () => {
    expect(ofType(detect(buys([100, 100, 100, 100, 600])).signals, 'flow_imbalance')).toEqual([]);
    expect(ofType(detect(buys([125, 125, 125, 125, 500])).signals, 'flow_imbalance')).toHaveLength(1);
  });

  it('one print the other way, or a print older than a minute not counting, and there is none', () => {
    const mixed = buys([300, 300, 300, 300, 300]);
    mixed[2] = at(print(T0 - 10 * S, 10, { taker_action: 'sell' }));
    expect(ofType(detect(mixed).signals, 'flow_imbalance')).toEqual([]);
    // The first of five is 60 s old at the fifth: outside the last minute.
    const spread = [0, 1, 2, 3, 4].map((i) => at(print(T0 - 60 * S + i * 15 * S, 300)));
    expect(ofType(detect(spread).signals, 'flow_imbalance')).toEqual([]);
  });

  it('sells across two venues: the larger venue is evidence.partner_id, confidence medium (high from 10 prints)', () => {
    const sells = [...buys([100, 100, 100], { taker_action: 'sell', partner_id: 'vy' }), ...buys([400, 400], { taker_action: 'sell' })];
    const s = one(detect(sells).signals, 'flow_imbalance');
    expect(s).toMatchObject({ dedupe_key: `flow_imbalance:${HASH}:sell`, confidence: 'medium', venues: [{ partner_id: 'vx' }, { partner_id: 'vy' }] });
    expect(s.evidence).toMatchObject({ buy_notional_usd: 0, sell_notional_usd: 1_100, imbalance: -1, partner_id: 'vx' });
    const ten = [...buys([100, 100, 100, 100, 100], { partner_id: 'vy' }), ...buys([100, 100, 100, 100, 100])];
    expect(one(detect(ten).signals, 'flow_imbalance').confidence).toBe('high');
    expect(one(detect(buys(Array(10).fill(100))).signals, 'flow_imbalance').confidence).toBe('medium');
  });

  it('a continuing imbalance updates one signal, keeping detected_at and signal_id; after it expired a new run starts', () => {
    const first = detect(buys([200, 200, 200, 200, 200]));
    const s1 = one(first.signals, 'flow_imbalance');
    const next = detect([at(print(T0 + 30 * S, 200))], { window: first.window });
    const s2 = one(next.signals, 'flow_imbalance');
    expect(s2.signal_id).toBe(s1.signal_id);
    expect(s2.detected_at).toBe(iso(T0));
    expect(s2.expires_at).toBe(iso(T0 + 30 * S + 180 * S));
    expect(s2.evidence.buy_notional_usd).toBe(1_200);
    // Past the run's expiry (nothing re-detected it), the next imbalance is a new signal.
    const late = T0 + 30 * S + 181 * S;
    const again = detect(
      [0, 1, 2, 3, 4].map((i) => at(print(late + i * S, 200))),
      { window: next.window },
    );
    const s3 = one(again.signals, 'flow_imbalance');
    expect(s3.detected_at).toBe(iso(late + 4 * S));
    expect(s3.signal_id).not.toBe(s1.signal_id);
  });
});

describe('volume_spike', () => {
  const NOW = T0 + 65 * M;
  /** `n` prints of USD 10 in the last 5 minutes before NOW (alternating sides: no flow). */
  const recent = (n: number) => Array.from({ length: n }, (_, i) => at(print(NOW - 4 * M + i * S, 10, { taker_action: i % 2 ? 'sell' : 'buy' }), NOW - 4 * M + i * S));
  const lastAt = (list: NewPrint[]) => list.map((p, i) => (i === list.length - 1 ? { ...p, seen_ms: NOW } : p));

  it('8 prints in 5 minutes against a baseline of 2 per 5 minutes over the hour: 4×', () => {
    // 24 prints over the hour [T0, T0 + 60 min]: 2 per 5 minutes.
    const w = windowOf(history(24, 10, T0, T0 + 60 * M), T0);
    const s = one(detect(lastAt(recent(8)), { window: w }).signals, 'volume_spike');
    expect(s).toMatchObject({
      dedupe_key: `volume_spike:${HASH}`,
      strength: 40,
      confidence: 'high',
      detected_at: iso(NOW),
      expires_at: iso(NOW + 600 * S),
      headline: 'Volume spike on Home: 8 prints in 5 minutes, 4× normal',
      explanation: '8 prints in the last 5 minutes against a baseline of 2 per 5 minutes (over the previous 60 minutes): 4×, on Venue VX (8).',
    });
    expect(s.evidence).toEqual({ trades_last_5m: 8, baseline_per_5m: 2, multiple: 4, partner_id: 'vx' });
    // 7 prints: under the 8-print minimum, however quiet the baseline.
    expect(ofType(detect(lastAt(recent(7)), { window: windowOf(history(1, 10, T0, T0 + M), T0) }).signals, 'volume_spike')).toEqual([]);
  });

  it('at and around 4× the baseline; 10× or more is strength 100', () => {
    // 36 prints over the hour: 3 per 5 minutes. 11 prints is 3.67×, 12 is 4×.
    const w = windowOf(history(36, 10, T0, T0 + 60 * M), T0);
    expect(ofType(detect(lastAt(recent(11)), { window: w }).signals, 'volume_spike')).toEqual([]);
    expect(one(detect(lastAt(recent(12)), { window: w }).signals, 'volume_spike').evidence).toEqual({ trades_last_5m: 12, baseline_per_5m: 3, multiple: 4, partner_id: 'vx' });
    expect(one(detect(lastAt(recent(30)), { window: w }).signals, 'volume_spike').strength).toBe(100);
  });

  it('the baseline covers what the window holds completely: under 15 minutes none, then low, medium from 30, high at the full hour', () => {
    const conf = (from: number) => ofType(detect(lastAt(recent(8)), { window: windowOf([['vx', 'h', from, 10, 'b']], from) }).signals, 'volume_spike')[0]?.confidence;
    const end = NOW - 5 * M;
    expect(conf(end - 15 * M + 1)).toBeUndefined();
    expect(conf(end - 15 * M)).toBe('low');
    expect(conf(end - 30 * M)).toBe('medium');
    expect(conf(end - 60 * M)).toBe('high');
    // Over 20 minutes one print is 0.25 per 5 minutes: 8 prints are 32×.
    const s = one(detect(lastAt(recent(8)), { window: windowOf([['vx', 'h', end - 20 * M, 10, 'b']], end - 20 * M) }).signals, 'volume_spike');
    expect(s.evidence).toMatchObject({ baseline_per_5m: 0.25, multiple: 32 });
  });

  it('a baseline without a print counts as one', () => {
    // Held completely from T0, but its one print aged out: one print per hour is assumed.
    const w: TradeWindow = { ...windowOf([], T0), complete_from_ms: T0 };
    const s = one(detect(lastAt(recent(8)), { window: w }).signals, 'volume_spike');
    expect(s.evidence).toMatchObject({ baseline_per_5m: 0.0833, multiple: 96 });
  });
});

describe('trade_burst (computed, never published)', () => {
  it('6 prints of one venue within 10 s are a burst, returned apart from the published signals', () => {
    const five = [0, 1, 2, 3, 4].map((i) => at(print(T0 + i * S, 10 + i, { taker_action: i % 2 ? 'sell' : 'buy' })));
    expect(detect(five).computed).toEqual([]);
    const six = [...five, at(print(T0 + 5 * S, 15))];
    const out = detect(six);
    expect(out.signals.filter((s) => s.signal_type === 'trade_burst')).toEqual([]);
    expect(out.computed).toHaveLength(1);
    expect(out.computed[0]).toMatchObject({ signal_type: 'trade_burst', dedupe_key: `trade_burst:${HASH}:vx` });
    expect(out.computed[0]!.evidence).toEqual({ trades: 6, total_notional_usd: 75, largest_print_usd: 15, window_ms: 10_000, partner_id: 'vx' });
    // Split between two venues, or spread past 10 s: no burst.
    expect(detect([...five, at(print(T0 + 5 * S, 15, { partner_id: 'vy' }))]).computed).toEqual([]);
    expect(detect([...five, at(print(T0 + 10 * S, 15))]).computed).toEqual([]);
  });
});

describe('the window', () => {
  it('a print examined twice is counted once and fires nothing the second time, in one batch or the next', () => {
    const whale = print(T0, 5_000, { venue_trade_id: 'dup' });
    const out = detect([at(whale), at(whale)]);
    expect(out).toMatchObject({ counted: 1, duplicates: 1 });
    expect(out.window!.prints).toHaveLength(1);
    const again = detect([at(whale, T0 + S)], { window: out.window });
    expect(again).toMatchObject({ counted: 0, duplicates: 1, signals: [] });
    // The same trade id on another venue is another print.
    expect(detect([at({ ...whale, partner_id: 'vy', liquidity_hash: 'vy:lh1' })], { window: out.window }).counted).toBe(1);
  });

  it('the same batch against the same stored window gives the same signals (a redelivery after a crash)', () => {
    const w = JSON.stringify(windowOf(history(20, 100, T0 - 30 * M, T0)));
    const prints = [at(print(T0, 4_800, { venue_trade_id: 'r1' })), at(print(T0 + S, 300, { venue_trade_id: 'r2', is_block: true }))];
    const task = { positions: [{ position_hash: HASH, position: POS, contest: IN_PLAY, window_json: w, prints, quotes: quote() }] };
    const a = runTradeSignalTask(task);
    const b = runTradeSignalTask(task);
    expect(b).toEqual(a);
    expect(a.results[0]!.signals.map((s) => s.dedupe_key)).toEqual(['whale_trade:vx:r1', 'block_trade:vx:r2']);
    // Examined against the window it left: nothing new.
    const c = runTradeSignalTask({ positions: [{ ...task.positions[0]!, window_json: a.results[0]!.window_json }] });
    expect(c.results[0]).toMatchObject({ counted: 0, duplicates: 2, signals: [], window_json: null });
  });

  it('bounded: prints older than the horizon go, at most WINDOW_MAX_PRINTS stay and the baseline then starts after the dropped ones', () => {
    const old = windowOf(history(10, 10, T0 - WINDOW_HORIZON_MS - 10 * M, T0 - WINDOW_HORIZON_MS - M), T0 - 2 * WINDOW_HORIZON_MS);
    const out = detect([at(print(T0, 10))], { window: old });
    expect(out.window!.prints).toHaveLength(1);
    const full = windowOf(history(WINDOW_MAX_PRINTS, 10, T0 - 10 * M, T0), T0 - 10 * M);
    const more = detect([at(print(T0, 10)), at(print(T0, 10))], { window: full });
    expect(more.window!.prints).toHaveLength(WINDOW_MAX_PRINTS);
    expect(more.window!.complete_from_ms).toBe(full.prints[1]![2] + 1);
    // A print that executed before the horizon when it reached the log is not examined.
    expect(detect([at(print(T0 - WINDOW_HORIZON_MS - 1, 5_000), T0)])).toMatchObject({ counted: 0, tooOld: 1, signals: [], window: null });
  });

  it('a position the catalog does not list: its prints are counted, no signal is made', () => {
    const out = detect([at(print(T0, 5_000, { is_block: true }))], { position: null });
    expect(out).toMatchObject({ counted: 1, signals: [] });
    expect(out.window!.prints).toHaveLength(1);
  });

  it('a stored window that is not one starts afresh', () => {
    expect(parseWindow('{"v":2}')).toBeNull();
    expect(parseWindow('not json')).toBeNull();
    expect(parseWindow(null)).toBeNull();
    const w = windowOf([['vx', 'a', T0, 1, 'b']]);
    expect(parseWindow(JSON.stringify(w))).toEqual(w);
  });

  it('every published signal carries its venue in evidence.partner_id and in venues', () => {
    const w = windowOf(history(12, 10, T0 - 60 * M, T0 - 5 * M), T0 - 60 * M);
    // Seven buys of 250 through the quote, then a block of 1,000: all five published types at once.
    const prints = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => at(print(T0 - 50 * S + i * 5 * S, i === 7 ? 1_000 : 250, { price: 0.7, is_block: i === 7 })));
    const out = detect(prints, { window: w, quotes: quote() });
    expect(new Set(out.signals.map((s) => s.signal_type))).toEqual(new Set(['whale_trade', 'block_trade', 'trade_through', 'flow_imbalance', 'volume_spike']));
    for (const s of out.signals) {
      expect(s.evidence.partner_id).toBe('vx');
      expect(s.venues).toContainEqual({ partner_id: 'vx', partner_name: 'Venue VX' });
    }
  });
});
