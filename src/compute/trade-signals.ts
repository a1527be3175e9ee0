/**
 * Trade-derived market signals (spec "Signal type catalog"; docs/signals.md "Trade-derived types"):
 * whale_trade, block_trade, flow_imbalance, trade_through, volume_spike, and trade_burst (computed,
 * never published). Pure: the trade-signal consumer (pipelines/signals/trades.ts) hands a compute
 * thread each position's new prints with the position's recent print window, the venues' cached
 * quotes and the contest's facts, and gets back the signals to upsert and the window to keep.
 *
 * Deterministic in its inputs: every instant comes from the print (executed_at) or from when it
 * reached the event log (seen_ms), never from a clock. A batch examined again after a crash yields
 * the same signals with the same ids, and the window counts each print once (keyed by venue and
 * venue_trade_id), so a redelivered print neither doubles a count nor fires twice.
 */
import type { PositionDefinition } from '../domain/catalog.js';
import {
  CALIBRATION_VERSION,
  expiresAt,
  logScaled,
  scaled,
  SIGNAL_DEFINITION,
  signalId,
  signalPosition,
  type Confidence,
  type Signal,
  type SignalPosition,
  type SignalType,
  type SignalVenue,
} from '../domain/signals.js';
import type { TradePrint } from '../domain/stream.js';
import { medianInPlace } from './median.js';

// ---- the published thresholds (SIGNAL_CATALOG's descriptions) and our own rules --------------------

/** whale_trade: a print of at least MIN_MULTIPLE × the threshold, max(FLOOR_USD, MEDIAN_MULTIPLE × median). */
export const WHALE = {
  floorUsd: 500,
  medianMultiple: 8,
  minMultiple: 2,
  /** The median is taken over the position's last this many prints (before the one examined). */
  medianPrints: 100,
  /** Prints the median rests on for high, and for medium, confidence. */
  highConfidencePrints: 20,
  mediumConfidencePrints: 5,
} as const;

/** flow_imbalance: unanimous one-direction flow in the last minute. */
export const FLOW = { windowMs: 60_000, minPrints: 5, minUsd: 1_000, maxShare: 0.5, highConfidencePrints: 10 } as const;

/** trade_through: a buy at least MIN_THROUGH above the venue's cached best price. */
export const THROUGH = { minThrough: 0.02, freshQuoteMs: 5_000, usableQuoteMs: 30_000 } as const;

/** volume_spike: prints in the last 5 minutes against the position's baseline per 5 minutes. */
export const VOLUME = { windowMs: 300_000, baselineMs: 3_600_000, minBaselineMs: 900_000, mediumBaselineMs: 1_800_000, minPrints: 8, minMultiple: 4 } as const;

/** trade_burst (never published): many prints on one venue within a few seconds. */
export const BURST = { windowMs: 10_000, minPrints: 6 } as const;

/** How far back a window keeps prints: the volume baseline and the last 5 minutes. */
export const WINDOW_HORIZON_MS = VOLUME.baselineMs + VOLUME.windowMs;
/** Most prints a window keeps (the oldest go first; the baseline then starts after them). */
export const WINDOW_MAX_PRINTS = 1_000;

// ---- inputs and outputs ------------------------------------------------------------------------------

/** What the catalog says of the contest. */
export interface TradeContestFacts {
  label: string | null;
  league_id: string | null;
  /** Scheduled start (unix ms); null when unknown. */
  starts_at_ms: number | null;
}

/** A venue's cached quote of a position, as ingest last stored it. */
export interface QuoteFact {
  partner_id: string;
  position_hash: string;
  /** Best price a buyer pays (0-1), kept when the book is empty. */
  price: number;
  /** USD at the best price; 0 when the book is empty. */
  available: number;
  /** USD on every level of the book the venue showed. */
  book_usd: number;
  /** When ingest took the quote (unix ms). */
  as_of_ms: number;
  /** When it stops counting as confirmed (unix ms); null for a venue without a freshness bound. */
  stale_after_ms: number | null;
}

/** A print to examine and when it reached the event log (the id of its trades event, unix ms). */
export interface NewPrint {
  print: TradePrint;
  seen_ms: number;
}

/** One held print: venue, its trade id, executed_at (unix ms), notional (USD), side ('b' buy, 's' sell). */
export type WindowPrint = [partner_id: string, venue_trade_id: string, executed_ms: number, notional_usd: number, side: 'b' | 's'];

/** A position's recent prints (kept in Redis between batches, bounded by WINDOW_HORIZON_MS and WINDOW_MAX_PRINTS). */
export interface TradeWindow {
  v: 1;
  /** Every print of the position executed at or after this instant is held (the baseline starts no earlier). */
  complete_from_ms: number;
  /** In the order they were examined. */
  prints: WindowPrint[];
  /** partner_id → partner_name of the venues held. */
  names: Record<string, string>;
  /** Continuing signals (flow_imbalance, volume_spike) by dedupe_key: [detected ms, expires ms]. */
  runs: Record<string, [detected_ms: number, expires_ms: number]>;
}

export interface PositionTradeInput {
  /** null when the catalog does not list the position: its prints are still counted, no signal is made. */
  position: PositionDefinition | null;
  contest: TradeContestFacts | null;
  window: TradeWindow | null;
  /** In log order. */
  prints: readonly NewPrint[];
  /** Cached quotes by liquidity_hash (a print's venue listing); absent when ingest holds none. */
  quotes: Readonly<Record<string, QuoteFact>>;
}

export interface PositionTradeOutput {
  /** Published types, the latest of each dedupe_key, to upsert. */
  signals: Signal[];
  /** Computed and never published (trade_burst): for logs and metrics only. */
  computed: Signal[];
  /** null when there was no window and nothing was counted. */
  window: TradeWindow | null;
  counted: number;
  duplicates: number;
  /** Executed before the window's horizon when they reached the log: not examined. */
  tooOld: number;
}

// ---- small helpers -------------------------------------------------------------------------------------

/** Rounds away binary floating-point noise (0.62 − 0.6) without moving real digits. */
const round = (n: number, decimals: number): number => {
  const f = 10 ** decimals;
  return Math.round(n * f) / f;
};
const iso = (ms: number) => new Date(ms).toISOString();
const sumNotional = (prints: readonly WindowPrint[]) => prints.reduce((s, x) => s + x[3], 0);

/** "$1,250" or "$1,250.50". */
export function usd(n: number): string {
  const whole = Number.isInteger(round(n, 2));
  return `$${n.toLocaleString('en-US', { minimumFractionDigits: whole ? 0 : 2, maximumFractionDigits: 2 })}`;
}
const num = (n: number, decimals = 2) => n.toLocaleString('en-US', { maximumFractionDigits: decimals });
const sideWord = (s: 'b' | 's' | 'buy' | 'sell') => (s === 'b' || s === 'buy' ? 'buy' : 'sell');

interface Context {
  position: PositionDefinition;
  block: SignalPosition;
  contest: TradeContestFacts;
}

function makeSignal(
  type: SignalType,
  dedupeKey: string,
  ctx: Context,
  detectedMs: number,
  nowMs: number,
  body: { strength: number; confidence: Confidence; venues: SignalVenue[]; headline: string; explanation: string; evidence: Record<string, unknown> },
): Signal {
  const def = SIGNAL_DEFINITION[type];
  const detectedAt = iso(detectedMs);
  return {
    signal_id: signalId(dedupeKey, detectedAt),
    dedupe_key: dedupeKey,
    signal_type: type,
    schema_version: def.schema_version,
    status: def.status,
    position: ctx.block,
    related_positions: [],
    headline: body.headline,
    explanation: body.explanation,
    strength: body.strength,
    confidence: body.confidence,
    calibration_version: CALIBRATION_VERSION,
    detected_at: detectedAt,
    // A continuing signal lives its typical life from its latest detection.
    expires_at: expiresAt(type, nowMs),
    venues: body.venues,
    evidence: body.evidence,
  };
}

/** A continuing signal keeps the instant of its first detection while it is live; a new run starts now. */
function runStart(w: TradeWindow, dedupeKey: string, type: SignalType, nowMs: number): number {
  const run = w.runs[dedupeKey];
  const detected = run && run[1] > nowMs ? run[0] : nowMs;
  w.runs[dedupeKey] = [detected, Date.parse(expiresAt(type, nowMs))];
  return detected;
}

/** Per-venue totals of some held prints, the largest first (notional, then count, then id). */
function byVenue(prints: readonly WindowPrint[], names: Record<string, string>): { partner_id: string; partner_name: string; trades: number; notional_usd: number }[] {
  const m = new Map<string, { trades: number; notional: number }>();
  for (const p of prints) {
    const v = m.get(p[0]) ?? { trades: 0, notional: 0 };
    v.trades++;
    v.notional += p[3];
    m.set(p[0], v);
  }
  return [...m]
    .map(([id, v]) => ({ partner_id: id, partner_name: names[id] ?? id, trades: v.trades, notional_usd: round(v.notional, 6) }))
    .sort((a, b) => b.notional_usd - a.notional_usd || b.trades - a.trades || (a.partner_id < b.partner_id ? -1 : 1));
}

// ---- the detectors ---------------------------------------------------------------------------------------

/** whale_trade for print `p` against the prints held before it (null when under the threshold). */
export function detectWhale(ctx: Context, w: TradeWindow, p: TradePrint, executedMs: number, nowMs: number, quote: QuoteFact | null): Signal | null {
  const prior = w.prints.slice(-WHALE.medianPrints).map((x) => x[3]);
  const median = medianInPlace(prior);
  const threshold = Math.max(WHALE.floorUsd, median === null ? 0 : WHALE.medianMultiple * median);
  const multiple = p.notional_usd / threshold;
  if (!(multiple >= WHALE.minMultiple)) return null;
  const preStart = ctx.contest.starts_at_ms !== null && executedMs < ctx.contest.starts_at_ms;
  let confidence: Confidence = prior.length >= WHALE.highConfidencePrints ? 'high' : prior.length >= WHALE.mediumConfidencePrints ? 'medium' : 'low';
  // Published rule: before the scheduled start a whale says less (thin books, early positioning).
  if (preStart && confidence === 'high') confidence = 'medium';
  const depthRatio = quote && quote.book_usd > 0 ? round(p.notional_usd / quote.book_usd, 4) : null;
  const sizeMultiple = round(multiple, 4);
  const venue = { partner_id: p.partner_id, partner_name: p.partner_name };
  const basis =
    median === null
      ? `the ${usd(WHALE.floorUsd)} floor (no earlier print of this position to take a median of)`
      : `the greater of ${usd(WHALE.floorUsd)} and ${WHALE.medianMultiple} × the position's median print of ${usd(median)} over its last ${prior.length} print${prior.length === 1 ? '' : 's'}`;
  return makeSignal('whale_trade', `whale_trade:${p.partner_id}:${p.venue_trade_id}`, ctx, nowMs, nowMs, {
    strength: scaled(multiple, WHALE.minMultiple, 10, 40),
    confidence,
    venues: [venue],
    headline: `Whale ${p.taker_action} of ${usd(p.notional_usd)} on ${ctx.position.title} at ${p.partner_name}`,
    explanation:
      `A ${p.is_block ? 'block ' : ''}${p.taker_action} of ${num(p.size_contracts)} contracts at ${p.price} (${usd(p.notional_usd)}) on ${p.partner_name} ` +
      `is ${num(sizeMultiple)}× the whale threshold of ${usd(threshold)}: ${basis}.` +
      (depthRatio !== null ? ` It is ${num(depthRatio)}× the USD the venue's book showed.` : '') +
      (preStart ? ' It printed before the scheduled start, so confidence is at most medium.' : ''),
    evidence: {
      notional_usd: p.notional_usd,
      size_multiple: sizeMultiple,
      threshold_usd: round(threshold, 6),
      baseline_median_notional_usd: median === null ? null : round(median, 6),
      depth_ratio: depthRatio,
      contest_phase: preStart ? 'pre_start' : 'in_play',
      trader_id: p.trader_id,
      is_block: p.is_block,
      partner_id: p.partner_id,
    },
  });
}

/** block_trade for a print the venue flagged as a negotiated block (null otherwise). */
export function detectBlock(ctx: Context, p: TradePrint, nowMs: number): Signal | null {
  if (!p.is_block) return null;
  return makeSignal('block_trade', `block_trade:${p.partner_id}:${p.venue_trade_id}`, ctx, nowMs, nowMs, {
    strength: logScaled(p.notional_usd, 1_000, 50_000, 20),
    // The venue states it: nothing is inferred.
    confidence: 'high',
    venues: [{ partner_id: p.partner_id, partner_name: p.partner_name }],
    headline: `Block ${p.taker_action} of ${usd(p.notional_usd)} on ${ctx.position.title} at ${p.partner_name}`,
    explanation: `${p.partner_name} reports a negotiated off-book block: a ${p.taker_action} of ${num(p.size_contracts)} contracts at ${p.price} (${usd(p.notional_usd)})${p.trader_id ? ` by ${p.trader_id}` : ''}.`,
    evidence: { notional_usd: p.notional_usd, price: p.price, trader_id: p.trader_id, partner_id: p.partner_id },
  });
}

/**
 * trade_through: a buy above the venue's cached best price of the position by at least 0.02. Only
 * buys (the cache holds the price a buyer pays, not the bid), never a venue-flagged block (negotiated
 * off the book, so not a trade through it), and only against a book that showed something.
 */
export function detectThrough(ctx: Context, p: TradePrint, executedMs: number, nowMs: number, quote: QuoteFact | null): Signal | null {
  if (p.taker_action !== 'buy' || p.is_block || !quote || !(quote.available > 0)) return null;
  const through = round(p.price - quote.price, 6);
  if (!(through >= THROUGH.minThrough)) return null;
  // Negative when the cached quote was taken after the print (it may already show the book the print left).
  const age = executedMs - quote.as_of_ms;
  const stale = quote.stale_after_ms !== null && quote.stale_after_ms <= executedMs;
  const confidence: Confidence = stale || age > THROUGH.usableQuoteMs ? 'low' : age > THROUGH.freshQuoteMs ? 'medium' : 'high';
  return makeSignal('trade_through', `trade_through:${p.partner_id}:${p.venue_trade_id}`, ctx, nowMs, nowMs, {
    strength: scaled(through, THROUGH.minThrough, 0.1, 20),
    confidence,
    venues: [{ partner_id: p.partner_id, partner_name: p.partner_name }],
    headline: `Buy through the quote on ${ctx.position.title} at ${p.partner_name}: ${p.price} against ${quote.price}`,
    explanation:
      `A buy of ${usd(p.notional_usd)} printed at ${p.price}, ${through} above the best price ${p.partner_name} showed (${quote.price}, ` +
      `cached ${num(Math.abs(age) / 1000, 1)} s ${age >= 0 ? 'before' : 'after'} the print${stale ? ', past its freshness bound' : ''}).`,
    evidence: { price: p.price, cached_price: quote.price, through, quote_age_ms: age, partner_id: p.partner_id },
  });
}

/** flow_imbalance over the prints held in the minute before `nowMs` (null unless every published condition holds). */
export function detectFlow(ctx: Context, w: TradeWindow, nowMs: number): Signal | null {
  const recent = w.prints.filter((x) => x[2] > nowMs - FLOW.windowMs);
  if (recent.length < FLOW.minPrints) return null;
  const side = recent[0]![4];
  if (recent.some((x) => x[4] !== side)) return null;
  const total = round(sumNotional(recent), 6);
  const largest = Math.max(...recent.map((x) => x[3]));
  if (!(total >= FLOW.minUsd) || largest > total * FLOW.maxShare) return null;
  const venues = byVenue(recent, w.names);
  const direction = sideWord(side);
  const key = `flow_imbalance:${ctx.position.position_hash}:${direction}`;
  const detected = runStart(w, key, 'flow_imbalance', nowMs);
  const confidence: Confidence =
    venues.length >= 2 && recent.length >= FLOW.highConfidencePrints ? 'high' : venues.length >= 2 || recent.length >= FLOW.highConfidencePrints ? 'medium' : 'low';
  return makeSignal('flow_imbalance', key, ctx, detected, nowMs, {
    strength: logScaled(total, FLOW.minUsd, 20_000, 30),
    confidence,
    venues: venues.map((v) => ({ partner_id: v.partner_id, partner_name: v.partner_name })),
    headline: `One-way ${direction} flow on ${ctx.position.title}: ${recent.length} ${direction}s, ${usd(total)} in a minute`,
    explanation:
      `Every print of the last minute was a ${direction}: ${recent.length} prints for ${usd(total)}, the largest ${usd(largest)}, ` +
      `on ${venues.map((v) => `${v.partner_name} (${v.trades}, ${usd(v.notional_usd)})`).join(', ')}.`,
    evidence: {
      buy_notional_usd: side === 'b' ? total : 0,
      sell_notional_usd: side === 's' ? total : 0,
      imbalance: side === 'b' ? 1 : -1,
      venues,
      partner_id: venues[0]!.partner_id,
    },
  });
}

/**
 * volume_spike: prints in the last 5 minutes against the baseline per 5 minutes over the hour before
 * them (or as much of it as the window holds completely: at least 15 minutes, else no baseline yet).
 * A baseline without a print counts as one, so a quiet position's spike is measured against one
 * print over the baseline rather than against nothing.
 */
export function detectVolume(ctx: Context, w: TradeWindow, nowMs: number): Signal | null {
  const end = nowMs - VOLUME.windowMs;
  const recent = w.prints.filter((x) => x[2] > end);
  if (recent.length < VOLUME.minPrints) return null;
  const start = Math.max(w.complete_from_ms, nowMs - WINDOW_HORIZON_MS);
  const span = end - start;
  if (span < VOLUME.minBaselineMs) return null;
  const base = Math.max(1, w.prints.filter((x) => x[2] >= start && x[2] <= end).length);
  // multiple = recent / (base × window / span), compared in integers to stay exact at the threshold.
  if (recent.length * span < VOLUME.minMultiple * base * VOLUME.windowMs) return null;
  const perWindow = (base * VOLUME.windowMs) / span;
  const multiple = recent.length / perWindow;
  const key = `volume_spike:${ctx.position.position_hash}`;
  const detected = runStart(w, key, 'volume_spike', nowMs);
  const venues = byVenue(recent, w.names).sort((a, b) => b.trades - a.trades || b.notional_usd - a.notional_usd || (a.partner_id < b.partner_id ? -1 : 1));
  const confidence: Confidence = span >= VOLUME.baselineMs ? 'high' : span >= VOLUME.mediumBaselineMs ? 'medium' : 'low';
  return makeSignal('volume_spike', key, ctx, detected, nowMs, {
    strength: scaled(multiple, VOLUME.minMultiple, 10, 40),
    confidence,
    venues: venues.map((v) => ({ partner_id: v.partner_id, partner_name: v.partner_name })),
    headline: `Volume spike on ${ctx.position.title}: ${recent.length} prints in 5 minutes, ${num(multiple, 1)}× normal`,
    explanation:
      `${recent.length} prints in the last 5 minutes against a baseline of ${num(perWindow, 2)} per 5 minutes ` +
      `(over the previous ${num(span / 60_000, 1)} minutes): ${num(multiple, 2)}×, on ${venues.map((v) => `${v.partner_name} (${v.trades})`).join(', ')}.`,
    evidence: { trades_last_5m: recent.length, baseline_per_5m: round(perWindow, 4), multiple: round(multiple, 4), partner_id: venues[0]!.partner_id },
  });
}

/** trade_burst (never published): at least 6 prints of one venue on the position within 10 s. */
export function detectBurst(ctx: Context, w: TradeWindow, partnerId: string, nowMs: number): Signal | null {
  const recent = w.prints.filter((x) => x[0] === partnerId && x[2] > nowMs - BURST.windowMs);
  if (recent.length < BURST.minPrints) return null;
  const total = round(sumNotional(recent), 6);
  const largest = Math.max(...recent.map((x) => x[3]));
  const name = w.names[partnerId] ?? partnerId;
  return makeSignal('trade_burst', `trade_burst:${ctx.position.position_hash}:${partnerId}`, ctx, nowMs, nowMs, {
    strength: scaled(recent.length, BURST.minPrints, 30, 20),
    confidence: 'low',
    venues: [{ partner_id: partnerId, partner_name: name }],
    headline: `Trade burst on ${ctx.position.title} at ${name}: ${recent.length} prints in ${BURST.windowMs / 1000} s`,
    explanation: `${recent.length} prints for ${usd(total)} (largest ${usd(largest)}) within ${BURST.windowMs / 1000} s on ${name}.`,
    evidence: { trades: recent.length, total_notional_usd: total, largest_print_usd: largest, window_ms: BURST.windowMs, partner_id: partnerId },
  });
}

// ---- one position -----------------------------------------------------------------------------------------

const printKey = (partnerId: string, tradeId: string) => `${partnerId}\u0000${tradeId}`;

/** Examines a position's new prints in log order against its window: the signals, and the window to keep. */
export function detectTradeSignals(input: PositionTradeInput): PositionTradeOutput {
  let w: TradeWindow | null = input.window ? { ...input.window, prints: [...input.window.prints], names: { ...input.window.names }, runs: { ...input.window.runs } } : null;
  const seen = new Set(w?.prints.map((x) => printKey(x[0], x[1])));
  const ctx: Context | null =
    input.position && input.contest ? { position: input.position, contest: input.contest, block: signalPosition(input.position, input.contest) } : null;
  const signals = new Map<string, Signal>();
  const computed = new Map<string, Signal>();
  const out = { counted: 0, duplicates: 0, tooOld: 0 };

  for (const { print: p, seen_ms: now } of input.prints) {
    const key = printKey(p.partner_id, p.venue_trade_id);
    if (seen.has(key)) {
      out.duplicates++;
      continue;
    }
    const executed = Date.parse(p.executed_at);
    const horizon = now - WINDOW_HORIZON_MS;
    if (!(executed >= horizon)) {
      out.tooOld++;
      continue;
    }
    seen.add(key);
    out.counted++;
    if (!w) w = { v: 1, complete_from_ms: executed, prints: [], names: {}, runs: {} };
    // Age out what the horizon passed, and continuing signals past their life.
    if (w.prints.some((x) => x[2] < horizon)) w.prints = w.prints.filter((x) => x[2] >= horizon);
    for (const [k, run] of Object.entries(w.runs)) if (run[1] <= now) delete w.runs[k];

    const q = input.quotes[p.liquidity_hash];
    // The venue's quote of this very position (a complement-linked listing quotes the other side).
    const quote = q && q.partner_id === p.partner_id && q.position_hash === p.position_hash ? q : null;
    const emit = (s: Signal | null) => s && signals.set(s.dedupe_key, s);
    if (ctx) emit(detectWhale(ctx, w, p, executed, now, quote));

    w.prints.push([p.partner_id, p.venue_trade_id, executed, p.notional_usd, p.taker_action === 'buy' ? 'b' : 's']);
    w.names[p.partner_id] = p.partner_name;
    if (w.prints.length > WINDOW_MAX_PRINTS) {
      // The count bound: the oldest go, and the window no longer holds everything before them.
      for (const gone of w.prints.splice(0, w.prints.length - WINDOW_MAX_PRINTS)) w.complete_from_ms = Math.max(w.complete_from_ms, gone[2] + 1);
    }
    if (!ctx) continue;
    emit(detectBlock(ctx, p, now));
    emit(detectThrough(ctx, p, executed, now, quote));
    emit(detectFlow(ctx, w, now));
    emit(detectVolume(ctx, w, now));
    const burst = detectBurst(ctx, w, p.partner_id, now);
    if (burst) computed.set(burst.dedupe_key, burst);
  }
  if (w) for (const id of Object.keys(w.names)) if (!w.prints.some((x) => x[0] === id)) delete w.names[id];
  return { signals: [...signals.values()], computed: [...computed.values()], window: w, ...out };
}

// ---- the compute task (workers/trade-signals.ts) ------------------------------------------------------------

/** One position's share of a batch, with its window as stored (JSON). */
export interface PositionTradeTask extends Omit<PositionTradeInput, 'window'> {
  position_hash: string;
  window_json: string | null;
}

export interface TradeSignalTask {
  positions: PositionTradeTask[];
}

export interface PositionTradeResult extends Omit<PositionTradeOutput, 'window'> {
  position_hash: string;
  /** The window to store; null to leave it as it is (nothing counted and none before). */
  window_json: string | null;
}

export interface TradeSignalTaskOutput {
  results: PositionTradeResult[];
}

/** A stored window, or null when it is missing or not one (a fresh window then starts). */
export function parseWindow(json: string | null): TradeWindow | null {
  if (json === null) return null;
  try {
    const w = JSON.parse(json) as TradeWindow;
    if (w?.v !== 1 || !Array.isArray(w.prints) || typeof w.complete_from_ms !== 'number' || typeof w.names !== 'object' || typeof w.runs !== 'object') return null;
    return w;
  } catch {
    return null;
  }
}

export function runTradeSignalTask(task: TradeSignalTask): TradeSignalTaskOutput {
  return {
    results: task.positions.map(({ position_hash, window_json, ...rest }) => {
      const { window, ...out } = detectTradeSignals({ ...rest, window: parseWindow(window_json) });
      return { position_hash, ...out, window_json: window && out.counted > 0 ? JSON.stringify(window) : null };
    }),
  };
}
