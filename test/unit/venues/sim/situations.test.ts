/**
 * Market situations (src/sim/situations.ts): the signal types of the spec, forced exactly
 * (forceSituation, behind POST /sim/v1/situations) and produced on the venues' own now and then.
 * Each is checked on what the venues' feeds carried, through the adapters, against the thresholds
 * Flow publishes (src/domain/signals.ts), measured here independently of the simulator's own figures.
 */
import { describe, expect, it } from 'vitest';
import { SIGNAL_DEFINITION } from '../../../../src/domain/signals.js';
import { VenueError } from '../../../../src/venues/errors.js';
import { createSimAdapter } from '../../../../src/venues/sim/index.js';
import { PUBLISHED_THRESHOLDS, SimMarket, SIM_PARTNER_IDS, type SimPartnerId, type SituationResult } from '../../../../src/sim/index.js';
import { Rng } from '../../../../src/sim/rng.js';
import { startSituation } from '../../../../src/sim/situations.js';
import type { NormalizedQuote, NormalizedTrade } from '../../../../src/venues/types.js';
import { NOW, complementOf, newMarket } from './support.js';

const MIN = 60_000;
const usd = (t: { price: number; size_contracts: number }) => Math.round(t.price * t.size_contracts * 1e6) / 1e6;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** A frozen market (nothing moves but what a test does) with every venue's feeds recorded through its adapter. */
async function watched(seed = 42, opts: { frozen?: boolean; activity?: number } = {}) {
  const m = new SimMarket({ seed, now: NOW, ...(opts.activity !== undefined ? { activity: opts.activity } : {}) });
  if (opts.frozen ?? true) m.freeze(true);
  const trades: NormalizedTrade[] = [];
  const quotes: NormalizedQuote[] = [];
  const adapters = new Map<SimPartnerId, ReturnType<typeof createSimAdapter>>();
  for (const id of SIM_PARTNER_IDS) {
    const a = createSimAdapter(m, id, { clock: () => m.nowMs() });
    await a.connect();
    adapters.set(id, a);
    const caps = a.describe().capabilities;
    if (caps.trades) a.subscribeTrades((t) => trades.push(t));
    if (caps.quotes.streaming) a.subscribeQuotes((q) => quotes.push(q));
  }
  /** The book a venue shows now (polled venues are read as the ingester reads them). */
  const best = async (id: SimPartnerId, hash: string) => (await adapters.get(id)!.fetchQuotes({ position_hashes: [hash] }))[0]?.levels[0]?.price;
  return { m, trades, quotes, best };
}

function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof VenueError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('not refused');
}

// ---- independent detectors: the published thresholds applied to what the feeds carried -------------

function flowCrosses(prints: NormalizedTrade[], at: number): boolean {
  const f = PUBLISHED_THRESHOLDS.flow_imbalance;
  const win = prints.filter((t) => t.executed_at > at - f.window_ms && t.executed_at <= at);
  const total = win.reduce((s, t) => s + usd(t), 0);
  const oneWay = new Set(win.map((t) => t.taker_action)).size === 1;
  return oneWay && win.length >= 5 && total >= 1000 && win.every((t) => usd(t) <= total / 2);
}

function spikeCrosses(prints: NormalizedTrade[], at: number): boolean {
  const recent = prints.filter((t) => t.executed_at > at - 5 * MIN && t.executed_at <= at).length;
  const before = prints.filter((t) => t.executed_at > at - 65 * MIN && t.executed_at <= at - 5 * MIN).length;
  return recent >= 8 && recent >= 4 * (before / 12);
}

describe('the thresholds the simulator sizes its situations against are the ones Flow publishes', () => {
  it('each number is in the signal catalog’s description', () => {
    expect(SIGNAL_DEFINITION.price_move.description).toContain(`(${PUBLISHED_THRESHOLDS.price_move.move})`);
    expect(SIGNAL_DEFINITION.price_move.description).toContain('within 5 minutes');
    expect(SIGNAL_DEFINITION.whale_trade.description).toMatch(/twice the whale threshold: the greater of USD 500 and eight times the position’s median print/);
    expect([PUBLISHED_THRESHOLDS.whale_trade.threshold_multiple, PUBLISHED_THRESHOLDS.whale_trade.floor_usd, PUBLISHED_THRESHOLDS.whale_trade.median_multiple]).toEqual([2, 500, 8]);
    expect(SIGNAL_DEFINITION.flow_imbalance.description).toMatch(/last minute: at least five prints and USD 1,000, no single print more than half of it/);
    expect(PUBLISHED_THRESHOLDS.flow_imbalance).toMatchObject({ window_ms: MIN, min_prints: 5, min_usd: 1000, max_share: 0.5 });
    expect(SIGNAL_DEFINITION.trade_through.description).toContain(`by at least ${PUBLISHED_THRESHOLDS.trade_through.through}`);
    expect(SIGNAL_DEFINITION.volume_spike.description).toMatch(/last 5 minutes at least 4 times the position’s baseline per 5 minutes, and at least 8 prints/);
    expect(PUBLISHED_THRESHOLDS.volume_spike).toMatchObject({ window_ms: 5 * MIN, baseline_multiple: 4, min_prints: 8 });
    expect(SIGNAL_DEFINITION.trade_burst.published).toBe(false);
  });
});

describe('forcing a situation: exactly, now, through the venues’ feeds', () => {
  it('arbitrage: one venue quotes a side so the pair sums 0.03 under 1.0 against the best other tradable venue', async () => {
    const { m, quotes } = await watched();
    const r = m.forceSituation({ type: 'arbitrage' });
    expect(r).toMatchObject({ type: 'arbitrage', partner_id: 'sim_exchange', position_hash: 'ct_sfl_002:moneyline:home:0:tm_sfl_aus:ft', contest_id: 'ct_sfl_002' });
    expect(r.details).toMatchObject({ crosses_threshold: true, combined_price: 0.968, edge: 0.032, counterpart: { partner_id: 'sim_p2p', position_hash: complementOf(m, r.position_hash), price: 0.328 } });
    expect(r.details.quotes!.map((q) => [q.partner_id, q.from_price, q.to_price])).toEqual([['sim_exchange', 0.69, 0.64]]);
    // The exchange's quote feed carried it; the cheapest other real book on the complement makes the pair.
    expect(quotes.filter((q) => q.position_hash === r.position_hash).map((q) => q.price)).toEqual([0.64]);
    const other = SIM_PARTNER_IDS.filter((v) => v !== 'sim_exchange' && v !== 'practice' && v !== 'sim_quotes').map((v) => m.book(v, m.instrumentForPosition(v, complementOf(m, r.position_hash))?.instrument_id ?? '')?.levels[0]?.price ?? 1);
    expect(0.64 + Math.min(...other)).toBeCloseTo(0.968, 9);
  });

  it('price_move: every venue listing the position moves 0.1 the same way, the complement the other way', async () => {
    const { m, quotes, best } = await watched();
    const hash = 'ct_sfl_002:moneyline:home:0:tm_sfl_aus:ft';
    const comp = complementOf(m, hash);
    const venues = ['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'] as const;
    const before = await Promise.all(venues.map((v) => best(v, hash)));
    const compBefore = await Promise.all(venues.map((v) => best(v, comp)));
    const r = m.forceSituation({ type: 'price_move', position_hash: hash });
    expect(r.details).toMatchObject({ crosses_threshold: true, move: 0.1, direction: 'down' });
    expect(r.details.quotes).toHaveLength(10);
    const after = await Promise.all(venues.map((v) => best(v, hash)));
    const compAfter = await Promise.all(venues.map((v) => best(v, comp)));
    for (let i = 0; i < venues.length; i++) {
      // On each venue's grid (american odds on the sportsbook): within a tick of 0.1.
      expect(before[i]! - after[i]!, venues[i]).toBeCloseTo(0.1, 2);
      expect(compAfter[i]! - compBefore[i]!, venues[i]).toBeCloseTo(0.1, 2);
    }
    // The consensus (each venue's pair without its vig, averaged) moves by the same 0.1: twice the published 0.05.
    const fair = (a: (number | undefined)[], b: (number | undefined)[]) => a.reduce<number>((acc, p, i) => acc + p! / (p! + b[i]!), 0) / a.length;
    expect(fair(before, compBefore) - fair(after, compAfter)).toBeGreaterThan(0.095);
    // The streaming venues' feeds carried both sides.
    expect(quotes.filter((q) => q.position_hash === hash).map((q) => [q.partner_id, q.price])).toEqual([
      ['sim_exchange', after[0]],
      ['sim_book01', after[1]],
    ]);
    expect(after.slice(0, 2)).toEqual([0.59, 0.59]);
  });

  it('price_move leaves the market there: a running market keeps the new level instead of snapping back', async () => {
    const { m, best } = await watched(42, { frozen: false });
    const hash = 'ct_sfl_002:moneyline:home:0:tm_sfl_aus:ft';
    const r = m.forceSituation({ type: 'price_move', position_hash: hash, move: 0.12, direction: 'up' });
    const moved = r.details.quotes!.find((q) => q.partner_id === 'sim_exchange' && q.position_hash === hash)!.to_price;
    let t = m.nowMs();
    for (let i = 0; i < 120; i++) m.tick((t += 1000));
    expect(Math.abs((await best('sim_exchange', hash))! - moved)).toBeLessThan(0.03);
  });

  it('whale_trade: nine baseline prints give a median, then one print at four times the whale threshold', async () => {
    const { m, trades } = await watched();
    const r = m.forceSituation({ type: 'whale_trade' });
    // Baseline: 36 contracts at the ask 0.69 and 37 at 0.67 (a sell, one vig under it), alternately.
    expect(r.details.baseline_prints!.map((p) => [p.taker_action, p.price, p.size_contracts, p.notional_usd])).toEqual(
      Array.from({ length: 9 }, (_, i) => (i % 2 === 0 ? ['buy', 0.69, 36, 24.84] : ['sell', 0.67, 37, 24.79])),
    );
    expect(r.details).toMatchObject({ crosses_threshold: true, median_notional_usd: 24.84, threshold_usd: 500, total_notional_usd: 2000.31, size_multiple: 4.00062 });
    expect(r.details.prints).toEqual([expect.objectContaining({ taker_action: 'buy', price: 0.69, size_contracts: 2899, notional_usd: 2000.31, is_block: false })]);
    const mine = trades.filter((t) => t.position_hash === r.position_hash && t.partner_id === 'sim_exchange');
    expect(mine).toHaveLength(10);
    const [whale, ...base] = [mine.at(-1)!, ...mine.slice(0, -1)];
    // Dated before the whale, oldest first, none in the last five minutes.
    expect(base.every((t, i) => t.executed_at < whale.executed_at - 5 * MIN && (i === 0 || t.executed_at > base[i - 1]!.executed_at))).toBe(true);
    const threshold = Math.max(500, 8 * median(base.map(usd)));
    expect(usd(whale) / threshold).toBeGreaterThanOrEqual(2 * 2);
  });

  it('whale_trade on book01 without a baseline: the threshold is the USD 500 floor, the print names a wallet', async () => {
    const { m, trades } = await watched();
    const r = m.forceSituation({ type: 'whale_trade', partner_id: 'sim_book01', with_baseline: false, direction: 'sell', notional_usd: 1500 });
    expect(r.details).toMatchObject({ threshold_usd: 500, baseline_prints: [] });
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({ partner_id: 'sim_book01', taker_action: 'sell', trader_id_kind: 'wallet' });
    expect(usd(trades[0]!)).toBeCloseTo(1500, 0);
    expect(r.details.crosses_threshold).toBe(true);
  });

  it('a knob below the threshold is done as asked and says it does not cross', async () => {
    const { m } = await watched();
    expect(m.forceSituation({ type: 'whale_trade', with_baseline: false, notional_usd: 800 }).details).toMatchObject({ crosses_threshold: false, size_multiple: expect.closeTo(1.6, 2) });
    expect(m.forceSituation({ type: 'price_move', move: 0.03 }).details.crosses_threshold).toBe(false);
    expect(m.forceSituation({ type: 'flow_imbalance', prints: 4 }).details.crosses_threshold).toBe(false);
  });

  it('block_trade: one print flagged is_block', async () => {
    const { m, trades } = await watched();
    const r = m.forceSituation({ type: 'block_trade', notional_usd: 12_000 });
    expect(trades).toEqual([expect.objectContaining({ is_block: true, position_hash: r.position_hash, venue_trade_id: r.details.prints![0]!.venue_trade_id })]);
    expect(usd(trades[0]!)).toBeCloseTo(12_000, -1);
  });

  it('flow_imbalance: eight buys of USD 300 within the minute on a quiet tape; random prints leave it alone for the window', async () => {
    const { m, trades } = await watched(42, { frozen: false, activity: 1 });
    const r = m.forceSituation({ type: 'flow_imbalance' });
    expect(r.details).toMatchObject({ crosses_threshold: true, direction: 'buy', trades_last_window: 8, window_ms: MIN });
    expect(r.details.prints!.map((p) => p.notional_usd)).toEqual(Array(8).fill(r.details.prints![0]!.notional_usd));
    expect(r.details.total_notional_usd).toBeGreaterThan(2390);
    const at = m.nowMs();
    // The market runs on for the rest of the minute: nothing else prints on the listing.
    let t = at;
    for (let i = 0; i < 59; i++) m.tick((t += 1000));
    const mine = trades.filter((x) => x.position_hash === r.position_hash && x.partner_id === r.partner_id);
    expect(mine).toHaveLength(8);
    expect(flowCrosses(mine, at)).toBe(true);
    expect(flowCrosses(mine, at + 30_000)).toBe(true);
  });

  it('trade_through: a buy 0.04 above the best ask the venue shows', async () => {
    const { m, trades, best } = await watched();
    const hash = 'ct_sfl_002:moneyline:home:0:tm_sfl_aus:ft';
    const ask = (await best('sim_exchange', hash))!;
    const r = m.forceSituation({ type: 'trade_through', position_hash: hash });
    expect(r.details).toMatchObject({ crosses_threshold: true, cached_price: ask, through: 0.04 });
    expect(trades).toEqual([expect.objectContaining({ taker_action: 'buy', price: Math.round((ask + 0.04) * 100) / 100 })]);
    expect(trades[0]!.price - ask).toBeGreaterThanOrEqual(PUBLISHED_THRESHOLDS.trade_through.through);
  });

  it('volume_spike: a baseline of one print per 5 minutes over the hour before, then twenty prints in the last four minutes', async () => {
    const { m, trades } = await watched();
    const r = m.forceSituation({ type: 'volume_spike' });
    expect(r.details).toMatchObject({ crosses_threshold: true, trades_last_window: 20, baseline_per_5m: 1 });
    expect(r.details.baseline_prints).toHaveLength(12);
    const mine = trades.filter((x) => x.position_hash === r.position_hash);
    expect(mine).toHaveLength(32);
    expect(spikeCrosses(mine, m.nowMs())).toBe(true);
    // Both directions: not a one-way flow as well.
    expect(new Set(r.details.prints!.map((p) => p.taker_action))).toEqual(new Set(['buy', 'sell']));
    expect(spikeCrosses(mine.slice(12), m.nowMs())).toBe(true);
  });

  it('trade_burst: twelve prints within five seconds', async () => {
    const { m, trades } = await watched();
    const r = m.forceSituation({ type: 'trade_burst' });
    const mine = trades.filter((x) => x.position_hash === r.position_hash);
    expect(mine).toHaveLength(12);
    expect(mine.at(-1)!.executed_at - mine[0]!.executed_at).toBeLessThanOrEqual(5000);
    expect(r.details).toMatchObject({ crosses_threshold: true, trades_last_window: 12, window_ms: 5000 });
  });

  it('the same seed and the same calls give the same situations', async () => {
    const run = async () => {
      const { m } = await watched(9);
      return ['arbitrage', 'price_move', 'whale_trade', 'flow_imbalance', 'volume_spike', 'trade_burst'].map((type): SituationResult => m.forceSituation({ type }));
    };
    expect(await run()).toEqual(await run());
  });

  it('refuses clearly: the body’s own faults, unknown things, and a place that cannot carry it', async () => {
    const { m, trades, quotes } = await watched();
    const outright = m.catalog.positions.find((p) => p.market_key === 'tournament_winner' && m.instrumentForPosition('sim_exchange', p.position_hash))!;
    const settled = m.catalog.positions.find((p) => m.catalog.contests.find((c) => c.id === p.contest_id)!.status === 'closed')!;
    const unlisted = m.catalog.positions.find((p) => p.market_key === 'player_points' && m.instrumentForPosition('sim_exchange', p.position_hash) && !m.instrumentForPosition('sim_p2p', p.position_hash))!;
    const cases: [unknown, string][] = [
      [null, 'invalid_parameter'],
      [{}, 'invalid_parameter'],
      [{ type: 'off_market_price' }, 'invalid_parameter'],
      [{ type: 'whale_trade', move: 0.1 }, 'unknown_parameter'],
      [{ type: 'price_move', notional_usd: 5 }, 'unknown_parameter'],
      [{ type: 'price_move', direction: 'buy' }, 'invalid_parameter'],
      [{ type: 'flow_imbalance', direction: 'up' }, 'invalid_parameter'],
      [{ type: 'flow_imbalance', prints: 2.5 }, 'invalid_parameter'],
      [{ type: 'arbitrage', edge: 0 }, 'invalid_parameter'],
      [{ type: 'whale_trade', notional_usd: Infinity }, 'invalid_parameter'],
      [{ type: 'whale_trade', with_baseline: 'yes' }, 'invalid_parameter'],
      [{ type: 'whale_trade', partner_id: 'nope' }, 'unknown_partner'],
      [{ type: 'whale_trade', position_hash: 'nope' }, 'unknown_position'],
      [{ type: 'whale_trade', partner_id: 'sim_sportsbook' }, 'trades_not_supported'],
      [{ type: 'whale_trade', partner_id: 'practice' }, 'trades_not_supported'],
      [{ type: 'price_move', partner_id: 'practice' }, 'quotes_not_supported'],
      [{ type: 'arbitrage', partner_id: 'sim_quotes' }, 'indicative_only'],
      [{ type: 'price_move', partner_id: 'sim_p2p', position_hash: unlisted.position_hash }, 'not_listed'],
      [{ type: 'price_move', position_hash: outright.position_hash }, 'not_two_way'],
      [{ type: 'block_trade', position_hash: settled.position_hash }, 'contest_settled'],
    ];
    for (const [body, code] of cases) expect(refusal(() => m.forceSituation(body)).code, JSON.stringify(body)).toBe(code);
    expect(refusal(() => m.forceSituation({ type: 'price_move', position_hash: outright.position_hash })).message).toMatch(/no complementary position/);
    // Nothing went out on any feed.
    expect([trades.length, quotes.length]).toEqual([0, 0]);

    const hash = 'ct_sfl_002:moneyline:home:0:tm_sfl_aus:ft';
    m.setQuote({ partner_id: 'sim_exchange', position_hash: hash, price: 0.97, available: 100 });
    expect(refusal(() => m.forceSituation({ type: 'trade_through', partner_id: 'sim_exchange', position_hash: hash })).code).toBe('no_room');
    expect(refusal(() => m.forceSituation({ type: 'price_move', position_hash: hash, direction: 'up' })).code).toBe('no_room');
    m.setQuote({ partner_id: 'sim_exchange', position_hash: hash, price: 0.5, available: 0 });
    expect(refusal(() => m.forceSituation({ type: 'whale_trade', partner_id: 'sim_exchange', position_hash: hash })).code).toBe('no_book');
    // A refused move moved no venue at all.
    expect(trades).toHaveLength(0);
    expect(quotes.filter((q) => q.position_hash === hash).map((q) => q.price)).toEqual([0.97, 0.5]);
  });
});

describe('situations the venues produce on their own', () => {
  /** A fresh market (only the dynamics' episodes and contest reactions move it), with one situation started by hand. */
  async function started(kind: Parameters<typeof startSituation>[2], partnerId: SimPartnerId = 'sim_exchange', seed = 42) {
    const w = await watched(seed, { frozen: false, activity: 0 });
    const ctx = w.m._situations();
    const l = w.m._venue(partnerId).listings.find((x) => !x.pr.c.settled && x.levels[0] && x.levels[0].price > 0.3 && x.levels[0].price < 0.7 && x.pr.complement)!;
    const now = w.m.nowMs();
    const before = new Map(await Promise.all((['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'] as const).map(async (v) => [v, await w.best(v, l.pr.pos.position_hash)] as const)));
    expect(startSituation(ctx, l, kind, now, new Rng(7))).toBe(true);
    const mine = () => w.trades.filter((t) => t.position_hash === l.pr.pos.position_hash && t.partner_id === partnerId);
    return { ...w, l, now, mine, before };
  }
  const run = (m: SimMarket, ms: number) => {
    let t = m.nowMs();
    const end = t + ms;
    while (t < end) m.tick((t += 1000));
  };

  it('whale_trade: one print at 2.5-6 times the whale threshold', async () => {
    const { mine } = await started('whale_trade');
    expect(mine()).toHaveLength(1);
    expect(usd(mine()[0]!)).toBeGreaterThanOrEqual(2.5 * 500 - 1);
    expect(usd(mine()[0]!)).toBeLessThanOrEqual(6 * 500 + 1);
  });

  it('block_trade: one flagged print of USD 2,000-20,000', async () => {
    const { mine } = await started('block_trade');
    expect(mine()).toEqual([expect.objectContaining({ is_block: true })]);
    expect(usd(mine()[0]!)).toBeGreaterThan(2000 - 1);
  });

  it('trade_through: a buy 0.03-0.08 through the best ask', async () => {
    const { m, l, mine } = await started('trade_through');
    const ask = m.book('sim_exchange', l.inst.instrument_id)!.levels[0]!.price;
    expect(mine()).toHaveLength(1);
    expect(mine()[0]!.price - ask).toBeGreaterThanOrEqual(0.03 - 1e-9);
  });

  it('flow_imbalance: one-way prints spread over its window, crossing the threshold once they are out', async () => {
    const { m, mine, now } = await started('flow_imbalance', 'sim_book01');
    expect(mine()).toHaveLength(0); // they go out as the market runs
    run(m, 50_000);
    const prints = mine();
    expect(prints.length).toBeGreaterThanOrEqual(6);
    expect(new Set(prints.map((t) => t.taker_action)).size).toBe(1);
    expect(prints.every((t) => t.trader_id_kind === 'wallet')).toBe(true);
    expect(flowCrosses(prints, prints.at(-1)!.executed_at)).toBe(true);
    expect(prints.at(-1)!.executed_at - now).toBeLessThanOrEqual(45_000);
  });

  it('volume_spike: 16 or more prints within four minutes', async () => {
    const { m, mine } = await started('volume_spike');
    run(m, 4 * MIN + 1000);
    expect(mine().length).toBeGreaterThanOrEqual(16);
    expect(spikeCrosses(mine(), m.nowMs())).toBe(true);
  });

  it('trade_burst: 12 or more prints within eight seconds', async () => {
    const { m, mine } = await started('trade_burst');
    run(m, 10_000);
    const prints = mine();
    expect(prints.length).toBeGreaterThanOrEqual(12);
    expect(prints.at(-1)!.executed_at - prints[0]!.executed_at).toBeLessThanOrEqual(8000);
  });

  it('price_move: every venue that is up moves the position 0.06-0.1 one way at once', async () => {
    const { m, l, quotes, before, best } = await started('price_move');
    const hash = l.pr.pos.position_hash;
    expect(quotes.filter((q) => q.position_hash === hash).map((q) => q.partner_id).sort()).toEqual(['sim_book01', 'sim_exchange']);
    const deltas = await Promise.all([...before].map(async ([v, p]) => (await best(v, hash))! - p!));
    expect(deltas).toHaveLength(5);
    // One way on every venue, by 0.06-0.1 (and a grid tick).
    expect(new Set(deltas.map(Math.sign)).size).toBe(1);
    for (const d of deltas) expect(Math.abs(d)).toBeGreaterThanOrEqual(0.06 - 0.005);
    for (const d of deltas) expect(Math.abs(d)).toBeLessThanOrEqual(0.1 + 0.01);
    expect(m.state().venues.find((v) => v.partner_id === 'sim_exchange')!.situations.price_move).toBe(0); // started by hand, not counted
  });

  it('price_move leaves a book the operator pinned as it was set', async () => {
    const w = await watched(42, { frozen: false, activity: 0 });
    const l = w.m._venue('sim_exchange').listings.find((x) => !x.pr.c.settled && x.levels[0] && x.levels[0].price > 0.3 && x.levels[0].price < 0.7 && x.pr.complement)!;
    const hash = l.pr.pos.position_hash;
    w.m.setQuote({ partner_id: 'sim_book01', position_hash: hash, price: 0.5, available: 100 });
    const before = await w.best('sim_exchange', hash);
    expect(startSituation(w.m._situations(), l, 'price_move', w.m.nowMs(), new Rng(7))).toBe(true);
    expect(Math.abs((await w.best('sim_exchange', hash))! - before!)).toBeGreaterThan(0.05);
    expect(await w.best('sim_book01', hash)).toBe(0.5);
  });

  it('a frozen market drops the prints still to come', async () => {
    const { m, mine } = await started('volume_spike');
    m.freeze(true);
    m.freeze(false);
    run(m, 5 * MIN);
    expect(mine()).toHaveLength(0);
  });

  it('over three hours each venue that prints produces each of its situations a few times an hour, and every one crosses its threshold', async () => {
    // Activity 0: no random quotes or prints, so every print on the feeds is a situation's.
    const { m, trades } = await watched(42, { frozen: false, activity: 0 });
    const hours = 3;
    let t = m.nowMs();
    const end = t + hours * 3_600_000;
    while (t < end) m.tick((t += 5000));
    const venues = m.state().venues;
    for (const v of venues) {
      const rates = (await import('../../../../src/sim/personalities.js')).SIM_PERSONALITIES[v.partner_id as SimPartnerId].dynamics.situations;
      for (const [kind, rate] of Object.entries(rates)) {
        const n = v.situations[kind as keyof typeof rates];
        if (rate === 0) expect(n, `${v.partner_id} ${kind}`).toBe(0);
        else {
          expect(n, `${v.partner_id} ${kind}`).toBeGreaterThan(0);
          expect(n, `${v.partner_id} ${kind}`).toBeLessThanOrEqual(rate * hours * 3);
        }
      }
    }
    const ex = venues.find((v) => v.partner_id === 'sim_exchange')!.situations;
    const book = venues.find((v) => v.partner_id === 'sim_book01')!.situations;
    // Blocks and whales on the feed are exactly the situations': nothing else prints that big.
    expect(trades.filter((x) => x.is_block).length).toBe(ex.block_trade + book.block_trade);
    const whales = trades.filter((x) => !x.is_block && usd(x) >= 1000);
    expect(whales.length).toBe(ex.whale_trade + book.whale_trade);
    // Each whale is at least twice the threshold of its listing's prints before it.
    for (const w of whales) {
      const before = trades.filter((x) => x.liquidity_hash === w.liquidity_hash && x.executed_at < w.executed_at && x.executed_at >= w.executed_at - 65 * MIN);
      expect(usd(w)).toBeGreaterThanOrEqual(2 * Math.max(500, 8 * median(before.map(usd))));
    }
  });
});
