/**
 * Market situations: the signal types of the spec (interface.md "Signal type catalog") as things
 * that happen on the simulated venues. Each venue produces them on its own now and then
 * (`spontaneousSituations`, at the per-hour rates of its personality, from the model's seeded
 * situation stream) and the operator forces one exactly, now (`forceSituation`, POST
 * /sim/v1/situations). Each is sized to cross the threshold Flow publishes (src/domain/signals.ts
 * SIGNAL_CATALOG; mirrored in PUBLISHED_THRESHOLDS) with margin, and goes out through the venues'
 * own feeds only: prints on the trade feed, books on the quote feed, as any other print or quote.
 *
 * Forcing draws nothing random: the same market state and request give the same prints and books.
 */
import { VenueError } from '../venues/errors.js';
import { round6 } from '../domain/prices.js';
import type { PriceLevel, TakerAction } from '../venues/types.js';
import { clamp } from './game.js';
import type { SimSituationRates } from './personalities.js';
import type { Rng } from './rng.js';
import type { Listing, PosRt, ScheduledPrint, TapeEntry, VenueRt } from './runtime.js';

const MIN = 60_000;

export const SIM_SITUATIONS = ['arbitrage', 'price_move', 'whale_trade', 'block_trade', 'flow_imbalance', 'trade_through', 'volume_spike', 'trade_burst'] as const;
export type SimSituation = (typeof SIM_SITUATIONS)[number];

const TRADE_SITUATIONS: ReadonlySet<SimSituation> = new Set(['whale_trade', 'block_trade', 'flow_imbalance', 'trade_through', 'volume_spike', 'trade_burst']);

/**
 * The thresholds Flow publishes for each signal type (the SIGNAL_CATALOG descriptions and the
 * spec's paragraph after the catalog), as the simulator sizes its situations against them.
 */
export const PUBLISHED_THRESHOLDS = {
  price_move: { move: 0.05, window_ms: 5 * MIN },
  whale_trade: { floor_usd: 500, median_multiple: 8, threshold_multiple: 2 },
  flow_imbalance: { window_ms: MIN, min_prints: 5, min_usd: 1000, max_share: 0.5 },
  trade_through: { through: 0.02 },
  volume_spike: { window_ms: 5 * MIN, baseline_multiple: 4, min_prints: 8, baseline_window_ms: 60 * MIN },
  /** trade_burst is computed, never published, and has no published threshold: the simulator's burst is this. */
  trade_burst: { min_prints: 10, window_ms: 10_000 },
} as const;

/** What a forced situation does with a knob left out. Each is about twice what the threshold needs. */
export const SITUATION_DEFAULTS = {
  arbitrage: { edge: 0.03 },
  price_move: { move: 0.1 },
  /** The whale's notional: this many times the whale threshold (the signal needs 2). */
  whale_trade: { multiple: 4 },
  block_trade: { notional_usd: 5000 },
  flow_imbalance: { prints: 8, notional_usd: 2400, spacing_ms: 4000 },
  trade_through: { through: 0.04, notional_usd: 100 },
  volume_spike: { prints: 20, notional_usd: 400, window_ms: 4 * MIN },
  trade_burst: { prints: 12, notional_usd: 240, window_ms: 5000 },
} as const;

/**
 * The history a forced situation lays down first when `with_baseline` (the default): small prints
 * before its window, oldest first, so the position has a median (whale) or a rate (volume spike)
 * that is known. `before_ms` is how long before now the newest one is dated.
 */
export const BASELINES = {
  whale_trade: { prints: 9, notional_usd: 25, every_ms: 3 * MIN, before_ms: 6 * MIN },
  volume_spike: { prints: 12, notional_usd: 20, every_ms: 5 * MIN, before_ms: 10 * MIN },
} as const;

/** Sizes of spontaneous situations, drawn uniformly within each range. */
export const SPONTANEOUS = {
  /** Under 0.15, so a venue that has not moved yet does not read as an outlier. */
  price_move: { move: [0.06, 0.1] },
  whale_trade: { multiple: [2.5, 6] },
  block_trade: { notional_usd: [2000, 20_000] },
  flow_imbalance: { prints: [6, 10], notional_usd: [1500, 4000], window_ms: [20_000, 45_000] },
  trade_through: { through: [0.03, 0.08], notional_usd: [50, 400] },
  volume_spike: { prints: [16, 28], print_usd: [10, 40], window_ms: [2 * MIN, 4 * MIN] },
  trade_burst: { prints: [12, 16], print_usd: [10, 40], window_ms: [3000, 8000] },
} as const;

/** How long a forced arbitrage's mispricing lasts on a running market. */
export const ARB_HOLD_MS = 60_000;

/** A price move's offset on fair value fades with this time constant (the market digests the news). */
export const SHIFT_DECAY_MS = 2 * 3_600_000;

/**
 * What a listing's tape remembers (median notional, recent flow, baseline rate): the prints of the
 * last 65 minutes (a volume spike's window and its hour of baseline), at most TAPE_MAX of them.
 */
export const TAPE_MS = 65 * MIN;
export const TAPE_MAX = 256;

const ROOM = { lo: 0.02, hi: 0.98 } as const;
/** Where an automatically chosen position's best price lies: far from the ends, so every situation fits. */
const PICK = { lo: 0.2, hi: 0.8 } as const;

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

export type SituationDirection = 'up' | 'down' | 'buy' | 'sell';

export interface SituationRequest {
  type: SimSituation;
  partner_id?: string;
  position_hash?: string;
  /** arbitrage: how far under 1.0 the pair sums. */
  edge?: number;
  /** price_move: the size of the move (0-1 price points). */
  move?: number;
  /** price_move: up or down; trade situations: the aggressor's side. */
  direction?: SituationDirection;
  /** The situation's prints together (baseline excluded); whale and block: the one print. */
  notional_usd?: number;
  prints?: number;
  /** trade_through: how far through the best price the print goes. */
  through?: number;
  /** trade_burst: the window the prints fall in. */
  window_ms?: number;
  /** whale_trade, volume_spike: lay down the baseline prints first (default true). */
  with_baseline?: boolean;
}

/** The knobs each situation takes beside type, partner_id and position_hash. */
export const SITUATION_KNOBS: Readonly<Record<SimSituation, readonly (keyof SituationRequest)[]>> = {
  arbitrage: ['edge'],
  price_move: ['move', 'direction'],
  whale_trade: ['notional_usd', 'direction', 'with_baseline'],
  block_trade: ['notional_usd', 'direction'],
  flow_imbalance: ['prints', 'notional_usd', 'direction'],
  trade_through: ['through', 'notional_usd'],
  volume_spike: ['prints', 'notional_usd', 'with_baseline'],
  trade_burst: ['prints', 'notional_usd', 'window_ms'],
};

/** The bounds of each knob: [lowest (exclusive when `open`), highest]. */
const KNOB_RANGES: Record<string, { lo: number; hi: number; open: boolean; integer: boolean }> = {
  edge: { lo: 0, hi: 0.2, open: true, integer: false },
  move: { lo: 0, hi: 0.5, open: true, integer: false },
  notional_usd: { lo: 0, hi: 10_000_000, open: true, integer: false },
  prints: { lo: 1, hi: 200, open: false, integer: true },
  through: { lo: 0, hi: 0.5, open: true, integer: false },
  window_ms: { lo: 1, hi: 60_000, open: false, integer: true },
};

/**
 * The refusals that say the venue or position cannot carry the situation now (409 at the control
 * API): not what was asked being malformed, nor a thing that does not exist.
 */
export const SITUATION_CONFLICTS = [
  'trades_not_supported',
  'quotes_not_supported',
  'indicative_only',
  'contest_settled',
  'not_listed',
  'no_book',
  'not_two_way',
  'no_counterpart',
  'no_room',
  'no_suitable_position',
] as const;

const bad = (code: string, message: string, details?: Record<string, unknown>) => new VenueError('non_retryable', code, message, details ? { details } : {});
/** details as the API's own body validation gives them (api/rest/plugins/errors.ts). */
const invalid = (parameter: string, message: string) => bad('invalid_parameter', message, { in: 'body', parameter });

/**
 * Checks a forcing request strictly: a field the situation does not take is unknown_parameter, a
 * value out of its range invalid_parameter (details.parameter names it).
 */
export function parseSituation(input: unknown): SituationRequest {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('body', 'the body must be an object {type, partner_id?, position_hash?, ...}');
  const o = input as Record<string, unknown>;
  const type = o.type;
  if (typeof type !== 'string' || !(SIM_SITUATIONS as readonly string[]).includes(type)) {
    throw invalid('type', `type must be one of ${SIM_SITUATIONS.join(', ')}`);
  }
  const t = type as SimSituation;
  const knobs = SITUATION_KNOBS[t] as readonly string[];
  for (const k of Object.keys(o)) {
    if (k === 'type' || k === 'partner_id' || k === 'position_hash' || knobs.includes(k)) continue;
    throw bad('unknown_parameter', `${t} takes no ${k}: it takes ${['partner_id', 'position_hash', ...knobs].join(', ')}`, { in: 'body', parameter: `/${k}` });
  }
  const req: SituationRequest = { type: t };
  for (const k of ['partner_id', 'position_hash'] as const) {
    if (o[k] === undefined) continue;
    if (typeof o[k] !== 'string' || o[k].length === 0) throw invalid(k, `${k} must be a non-empty string`);
    req[k] = o[k];
  }
  for (const [k, r] of Object.entries(KNOB_RANGES)) {
    const x = o[k];
    if (x === undefined) continue;
    const ok = typeof x === 'number' && Number.isFinite(x) && (r.open ? x > r.lo : x >= r.lo) && x <= r.hi && (!r.integer || Number.isInteger(x));
    if (!ok) throw invalid(k, `${k} must be ${r.integer ? 'an integer' : 'a number'} ${r.open ? 'above' : 'from'} ${r.lo} ${r.open ? 'up to' : 'to'} ${r.hi}: ${String(x)}`);
    (req as unknown as Record<string, number>)[k] = x;
  }
  if (o.direction !== undefined) {
    const allowed = t === 'price_move' ? ['up', 'down'] : ['buy', 'sell'];
    if (typeof o.direction !== 'string' || !allowed.includes(o.direction)) throw invalid('direction', `direction of ${t} must be ${allowed.join(' or ')}`);
    req.direction = o.direction as SituationDirection;
  }
  if (o.with_baseline !== undefined) {
    if (typeof o.with_baseline !== 'boolean') throw invalid('with_baseline', 'with_baseline must be a boolean');
    req.with_baseline = o.with_baseline;
  }
  return req;
}

// ---------------------------------------------------------------------------------------------
// Result
// ---------------------------------------------------------------------------------------------

export interface SituationPrint {
  venue_trade_id: string;
  taker_action: TakerAction;
  price: number;
  size_contracts: number;
  notional_usd: number;
  is_block: boolean;
  trader_id: string | null;
  /** Unix ms. */
  executed_at: number;
}

export interface SituationQuote {
  partner_id: string;
  position_hash: string;
  from_price: number;
  to_price: number;
  levels: readonly PriceLevel[];
  ts_event: number;
}

/** What a forced situation did, with the figures the signal's threshold is measured on. */
export interface SituationDetails {
  /** Whether, by everything the simulator knows of the position (its tape and books), the published threshold is crossed. */
  crosses_threshold: boolean;
  prints?: SituationPrint[];
  baseline_prints?: SituationPrint[];
  quotes?: SituationQuote[];
  total_notional_usd?: number;
  largest_print_usd?: number;
  median_notional_usd?: number;
  threshold_usd?: number;
  size_multiple?: number;
  trades_last_window?: number;
  baseline_per_5m?: number;
  window_ms?: number;
  direction?: SituationDirection;
  move?: number;
  through?: number;
  cached_price?: number;
  edge?: number;
  combined_price?: number;
  counterpart?: { partner_id: string; position_hash: string; price: number };
}

export interface SituationResult {
  type: SimSituation;
  partner_id: string;
  position_hash: string;
  contest_id: string;
  details: SituationDetails;
}

// ---------------------------------------------------------------------------------------------
// What the model lends the situations
// ---------------------------------------------------------------------------------------------

/** What the model's trade feed published (a SimTradeEvent, seen from here). */
export interface PublishedPrint {
  trade_id: string;
  taker_action: TakerAction;
  price: number;
  size_contracts: number;
  is_block: boolean;
  trader_id: string | null;
  executed_at: number;
}

/** What the model's quote feed published (a SimQuoteEvent, seen from here). */
export interface PublishedBook {
  levels: readonly PriceLevel[];
  ts_event: number;
}

export interface SituationCtx {
  now(): number;
  /** The venues that quote (not the practice book), in catalog order. */
  quoting: readonly VenueRt[];
  venue(id: string): VenueRt | undefined;
  position(hash: string): PosRt | undefined;
  /** A price on the venue's grid, rounded as its asks are (up). */
  quantize(l: Listing, p: number): number;
  isStale(v: VenueRt, now: number): boolean;
  /** The trader a venue names on a print (a wallet on sim_book01, else null), fixed by `key`. */
  trader(v: VenueRt, key: string): string | null;
  /** Publishes a print on the venue's trade feed (it goes on the listing's tape). */
  print(l: Listing, action: TakerAction, price: number, size: number, isBlock: boolean, traderId: string | null, at: number): PublishedPrint;
  /** Publishes a listing's changed book on the venue's quote feed (stamped now, resting orders matched). */
  publishBook(l: Listing): PublishedBook;
}

// ---------------------------------------------------------------------------------------------
// Shared pieces (also used by the model's random prints and pricing)
// ---------------------------------------------------------------------------------------------

/** A print's price: a buy lifts the best ask; a sell hits about one spread (the vig) below it. */
export function tradePrice(l: Listing, action: TakerAction): number | null {
  const top = l.levels[0];
  if (!top) return null;
  return action === 'buy' ? top.price : Math.max(0.01, round6(top.price - Math.max(0.01, l.v.pers.dynamics.vig)));
}

/** Contracts for about `usd` at `price`: whole contracts on the exchange, cents of one elsewhere. */
export function contractsFor(l: Listing, price: number, usd: number): number {
  return l.v.pers.wire === 'exchange' ? Math.max(1, Math.round(usd / price)) : Math.max(0.01, Math.round((usd / price) * 100) / 100);
}

/** Remembers a print on the listing's tape in executed_at order, forgetting what is older than TAPE_MS or beyond TAPE_MAX. */
export function recordTape(l: Listing, at: number, usd: number, buy: boolean): void {
  const t = l.tape;
  let i = t.length;
  while (i > 0 && t[i - 1]!.at > at) i--;
  t.splice(i, 0, { at, usd, buy });
  const horizon = t[t.length - 1]!.at - TAPE_MS;
  let drop = Math.max(0, t.length - TAPE_MAX);
  while (drop < t.length && t[drop]!.at < horizon) drop++;
  if (drop > 0) t.splice(0, drop);
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

/** The whale threshold of a median print notional: the greater of USD 500 and eight times it. */
export function whaleThreshold(medianUsd: number): number {
  const w = PUBLISHED_THRESHOLDS.whale_trade;
  return round6(Math.max(w.floor_usd, w.median_multiple * medianUsd));
}

/** The fair-value offset a price move left on a position, faded to `now`. */
export function shiftNow(pr: PosRt, now: number): number {
  if (pr.shift === 0) return 0;
  return pr.shift * Math.exp(-Math.max(0, now - pr.shiftAt) / SHIFT_DECAY_MS);
}

function addShift(pr: PosRt, delta: number, now: number): void {
  pr.shift = shiftNow(pr, now) + delta;
  pr.shiftAt = now;
}

/** The listing's last print time, or -Infinity. */
const lastPrintAt = (l: Listing) => l.tape[l.tape.length - 1]?.at ?? -Infinity;

/** The listing's tape within [from, to). */
const tapeBetween = (l: Listing, from: number, to: number): TapeEntry[] => l.tape.filter((e) => e.at >= from && e.at < to);

/**
 * A listing's book moved by `delta` (each level requantized on the venue's grid, sizes kept), or
 * null when a level would leave [0.02, 0.98].
 */
function shiftedLevels(ctx: SituationCtx, l: Listing, delta: number): PriceLevel[] | null {
  const out: PriceLevel[] = [];
  for (const x of l.levels) {
    const p = ctx.quantize(l, x.price + delta);
    if (out.length === 0 && (p < ROOM.lo || p > ROOM.hi)) return null;
    // Deeper levels past the end of the range are dropped; two that land on one price merge into the first.
    if (p > 0.99 || p <= 0 || (out.length > 0 && p <= out[out.length - 1]!.price)) continue;
    out.push({ price: p, available: x.available });
  }
  return out.length > 0 ? out : null;
}

// ---------------------------------------------------------------------------------------------
// Choosing where a situation happens
// ---------------------------------------------------------------------------------------------

/** How long a listing's tape must have been quiet before a situation is laid on it (when the caller lets the simulator choose). */
const QUIET_MS: Readonly<Record<SimSituation, number>> = {
  arbitrage: 0,
  price_move: 0,
  whale_trade: 0,
  block_trade: 0,
  flow_imbalance: PUBLISHED_THRESHOLDS.flow_imbalance.window_ms,
  trade_through: 0,
  volume_spike: PUBLISHED_THRESHOLDS.volume_spike.window_ms,
  trade_burst: PUBLISHED_THRESHOLDS.trade_burst.window_ms,
};

function canCarry(v: VenueRt, type: SimSituation): string | null {
  if (v.pers.wire === 'internal') return `${v.id} publishes no quotes or trades`;
  if (TRADE_SITUATIONS.has(type) && !v.pers.capabilities.trades) return `${v.id} publishes no trades`;
  if (type === 'arbitrage' && !v.pers.real_book) return `${v.id} quotes indicative prices only: no arbitrage can be taken there`;
  return null;
}

const conflictCode = (v: VenueRt, type: SimSituation) =>
  v.pers.wire === 'internal' ? (TRADE_SITUATIONS.has(type) ? 'trades_not_supported' : 'quotes_not_supported') : TRADE_SITUATIONS.has(type) ? 'trades_not_supported' : 'indicative_only';

/** The best offer on the complement among other real-book venues (an arbitrage's other leg). */
function counterpartOf(l: Listing): Listing | null {
  const comp = l.pr.complement;
  if (!comp) return null;
  let best: Listing | null = null;
  for (const o of comp.listings) {
    if (o.v === l.v || o.closed || !o.v.pers.real_book) continue;
    const top = o.levels[0];
    if (top && top.available > 0 && (best === null || top.price < best.levels[0]!.price)) best = o;
  }
  return best;
}

/** Why a listing cannot carry the situation as asked, or null. */
function unfit(ctx: SituationCtx, l: Listing, req: SituationRequest, now: number, choosing: boolean): { code: string; message: string } | null {
  const where = `${l.v.id} on ${l.pr.pos.position_hash}`;
  if (l.pr.c.settled || l.closed) return { code: 'contest_settled', message: `contest ${l.pr.c.p.contest_id} is settled` };
  const top = l.levels[0];
  if (!top) return { code: 'no_book', message: `${where}: the venue offers nothing to price the situation from` };
  if (choosing && (top.price < PICK.lo || top.price > PICK.hi || top.available < 1)) return { code: 'no_room', message: `${where}: best price ${top.price} too near the ends` };
  if (choosing && now - lastPrintAt(l) < QUIET_MS[req.type]) return { code: 'busy', message: `${where}: printed within the window` };
  switch (req.type) {
    case 'arbitrage':
    case 'price_move':
      if (!l.pr.complement) return { code: 'not_two_way', message: `${l.pr.pos.position_hash} has no complementary position (an outright runner)` };
      if (req.type === 'arbitrage' && !counterpartOf(l)) return { code: 'no_counterpart', message: `no other tradable venue offers the complement of ${l.pr.pos.position_hash}` };
      break;
    case 'trade_through': {
      const through = req.through ?? SITUATION_DEFAULTS.trade_through.through;
      if (ctx.quantize(l, top.price + through) > 0.99) return { code: 'no_room', message: `${where}: best price ${top.price} leaves no room for a print ${through} through it` };
      break;
    }
    default:
  }
  return null;
}

/** The listing the situation happens on: the one asked for, or the first that fits in catalog order. */
function locate(ctx: SituationCtx, req: SituationRequest, now: number): Listing {
  let venues: VenueRt[];
  if (req.partner_id !== undefined) {
    const v = ctx.venue(req.partner_id);
    if (!v) throw bad('unknown_partner', `unknown partner ${req.partner_id}`, { partner_id: req.partner_id });
    const why = canCarry(v, req.type);
    if (why) throw bad(conflictCode(v, req.type), `${why}: it cannot carry ${req.type}`, { partner_id: v.id });
    venues = [v];
  } else {
    venues = ctx.quoting.filter((v) => canCarry(v, req.type) === null);
  }
  if (req.position_hash !== undefined) {
    const pr = ctx.position(req.position_hash);
    if (!pr) throw bad('unknown_position', `unknown position ${req.position_hash}`, { position_hash: req.position_hash });
    if (pr.c.settled) throw bad('contest_settled', `contest ${pr.c.p.contest_id} is settled`, { contest_id: pr.c.p.contest_id });
    let first: { code: string; message: string } | null = null;
    for (const v of venues) {
      const l = v.byPosition.get(pr.pos.position_hash);
      if (!l) continue;
      const why = unfit(ctx, l, req, now, false);
      if (!why) return l;
      first ??= why;
    }
    if (first) throw bad(first.code, first.message, { position_hash: pr.pos.position_hash });
    throw bad('not_listed', `${venues.map((v) => v.id).join(', ') || 'no venue that can carry it'} ${venues.length === 1 ? 'does' : 'do'} not list ${pr.pos.position_hash}`, { position_hash: pr.pos.position_hash });
  }
  for (const v of venues) {
    for (const l of v.listings) if (!unfit(ctx, l, req, now, true)) return l;
  }
  throw bad('no_suitable_position', `no position ${req.partner_id ? `on ${req.partner_id} ` : ''}can carry ${req.type} now (an open book priced 0.2-0.8${QUIET_MS[req.type] ? ', no print in the window' : ''})`);
}

// ---------------------------------------------------------------------------------------------
// Doing it
// ---------------------------------------------------------------------------------------------

interface PlannedPrint {
  action: TakerAction;
  usd: number;
  at: number;
  isBlock?: boolean;
  /** A price other than the book's (trade_through). */
  price?: number;
}

function emit(ctx: SituationCtx, l: Listing, plan: readonly PlannedPrint[], traderKey: string): SituationPrint[] {
  const trader = ctx.trader(l.v, traderKey);
  const out: SituationPrint[] = [];
  for (const p of plan) {
    const price = p.price ?? tradePrice(l, p.action)!;
    const size = contractsFor(l, price, p.usd);
    const ev = ctx.print(l, p.action, price, size, p.isBlock ?? false, trader, p.at);
    out.push({ venue_trade_id: ev.trade_id, taker_action: ev.taker_action, price: ev.price, size_contracts: ev.size_contracts, notional_usd: round6(ev.price * ev.size_contracts), is_block: ev.is_block, trader_id: ev.trader_id, executed_at: ev.executed_at });
  }
  return out;
}

/** `n` prints of `usd` each, evenly over `windowMs` up to `end` (the last at `end`). */
function spread(n: number, usd: number, windowMs: number, end: number, action: (i: number) => TakerAction): PlannedPrint[] {
  const step = n > 1 ? Math.floor(windowMs / (n - 1)) : 0;
  return Array.from({ length: n }, (_, i) => ({ action: action(i), usd, at: end - (n - 1 - i) * step }));
}

const alternate = (i: number): TakerAction => (i % 2 === 0 ? 'buy' : 'sell');
const sum = (xs: readonly number[]) => round6(xs.reduce((a, b) => a + b, 0));

function baseline(ctx: SituationCtx, l: Listing, kind: keyof typeof BASELINES, now: number): SituationPrint[] {
  const b = BASELINES[kind];
  const plan = Array.from({ length: b.prints }, (_, i) => ({ action: alternate(i), usd: b.notional_usd, at: now - b.before_ms - (b.prints - 1 - i) * b.every_ms }));
  return emit(ctx, l, plan, `baseline/${l.inst.instrument_id}`);
}

function flowFigures(l: Listing, now: number): { crosses: boolean; total: number; largest: number; count: number } {
  const f = PUBLISHED_THRESHOLDS.flow_imbalance;
  const win = tapeBetween(l, now - f.window_ms, now + 1);
  const total = sum(win.map((e) => e.usd));
  const largest = win.reduce((m, e) => Math.max(m, e.usd), 0);
  const oneWay = win.every((e) => e.buy) || win.every((e) => !e.buy);
  return { crosses: oneWay && win.length >= f.min_prints && total >= f.min_usd && largest <= total * f.max_share, total, largest, count: win.length };
}

function spikeFigures(l: Listing, now: number): { crosses: boolean; count: number; baselinePer5m: number } {
  const s = PUBLISHED_THRESHOLDS.volume_spike;
  const count = tapeBetween(l, now - s.window_ms, now + 1).length;
  const before = tapeBetween(l, now - s.window_ms - s.baseline_window_ms, now - s.window_ms).length;
  const baselinePer5m = round6(before / (s.baseline_window_ms / s.window_ms));
  return { crosses: count >= s.min_prints && count >= s.baseline_multiple * baselinePer5m, count, baselinePer5m };
}

/** Moves a position's books on every venue listing it, and its complement's the other way. */
function movePosition(ctx: SituationCtx, pr: PosRt, delta: number, now: number, moves: (l: Listing) => boolean): SituationQuote[] {
  const comp = pr.complement!;
  const planned: [Listing, number, PriceLevel[]][] = [];
  for (const [p, d] of [[pr, delta], [comp, -delta]] as const) {
    for (const l of p.listings) {
      if (l.closed || l.levels.length === 0 || !moves(l)) continue;
      const levels = shiftedLevels(ctx, l, d);
      if (!levels) throw bad('no_room', `moving ${l.v.id}'s ${l.levels[0]!.price} on ${p.pos.position_hash} by ${round6(d)} leaves [${ROOM.lo}, ${ROOM.hi}]`, { partner_id: l.v.id, position_hash: p.pos.position_hash });
      planned.push([l, d, levels]);
    }
  }
  // Checked for every venue first: a move that cannot be made whole is not made at all.
  addShift(pr, delta, now);
  addShift(comp, -delta, now);
  return planned.map(([l, d, levels]) => {
    const from = l.levels[0]!.price;
    l.levels = levels;
    l.lag = clamp(l.lag + d, 0.01, 0.99);
    const ev = ctx.publishBook(l);
    return { partner_id: l.v.id, position_hash: l.pr.pos.position_hash, from_price: from, to_price: levels[0]!.price, levels: ev.levels, ts_event: ev.ts_event };
  });
}

/** The largest price on the venue's grid at or under `target` (an arbitrage's price must not round up out of it). */
function priceAtOrUnder(ctx: SituationCtx, l: Listing, target: number): number | null {
  for (let k = 0; k < 200; k++) {
    const p = ctx.quantize(l, target - k * 0.001);
    if (p <= target + 1e-9) return p >= 0.01 ? p : null;
  }
  return null;
}

/** Makes the situation happen now, exactly as asked (see parseSituation for the request). */
export function forceSituation(ctx: SituationCtx, input: unknown): SituationResult {
  const req = parseSituation(input);
  const now = ctx.now();
  const l = locate(ctx, req, now);
  const pr = l.pr;
  const head = { type: req.type, partner_id: l.v.id as string, position_hash: pr.pos.position_hash, contest_id: pr.c.p.contest_id };
  const top = l.levels[0]!;
  const withBaseline = req.with_baseline ?? true;
  const traderKey = `${req.type}/${l.inst.instrument_id}/${now}`;
  switch (req.type) {
    case 'arbitrage': {
      const edge = req.edge ?? SITUATION_DEFAULTS.arbitrage.edge;
      const other = counterpartOf(l)!;
      const otherPrice = other.levels[0]!.price;
      const price = priceAtOrUnder(ctx, l, round6(1 - otherPrice - edge));
      if (price === null || price < ROOM.lo) throw bad('no_room', `the counterpart's ${otherPrice} leaves no price for ${l.v.id} ${edge} under 1.0`, { position_hash: pr.pos.position_hash });
      const levels = shiftedLevels(ctx, l, price - top.price);
      if (!levels) throw bad('no_room', `${l.v.id} cannot quote ${price}`, { position_hash: pr.pos.position_hash });
      l.levels = levels;
      // A running market keeps the mispricing for ARB_HOLD_MS (as its own arbitrage episodes do), then reprices it away.
      l.arbOff = levels[0]!.price - l.lag;
      l.arbUntil = now + ARB_HOLD_MS;
      const ev = ctx.publishBook(l);
      const combined = round6(ev.levels[0]!.price + otherPrice);
      return {
        ...head,
        details: {
          crosses_threshold: combined < 1,
          quotes: [{ partner_id: l.v.id, position_hash: pr.pos.position_hash, from_price: top.price, to_price: ev.levels[0]!.price, levels: ev.levels, ts_event: ev.ts_event }],
          counterpart: { partner_id: other.v.id, position_hash: other.pr.pos.position_hash, price: otherPrice },
          combined_price: combined,
          edge: round6(1 - combined),
        },
      };
    }
    case 'price_move': {
      const move = req.move ?? SITUATION_DEFAULTS.price_move.move;
      const direction = req.direction ?? (top.price <= 0.5 ? 'up' : 'down');
      const quotes = movePosition(ctx, pr, direction === 'up' ? move : -move, now, () => true);
      const mine = quotes.filter((q) => q.position_hash === pr.pos.position_hash);
      const moved = mine.length > 0 ? Math.min(...mine.map((q) => Math.abs(q.to_price - q.from_price))) : 0;
      return { ...head, details: { crosses_threshold: moved >= PUBLISHED_THRESHOLDS.price_move.move - 1e-9, quotes, move, direction } };
    }
    case 'whale_trade': {
      const baselinePrints = withBaseline ? baseline(ctx, l, 'whale_trade', now) : [];
      const med = round6(median(l.tape.map((e) => e.usd)));
      const threshold = whaleThreshold(med);
      const usd = req.notional_usd ?? SITUATION_DEFAULTS.whale_trade.multiple * threshold;
      const prints = emit(ctx, l, [{ action: (req.direction as TakerAction | undefined) ?? 'buy', usd, at: now }], traderKey);
      const multiple = round6(prints[0]!.notional_usd / threshold);
      return {
        ...head,
        details: {
          crosses_threshold: multiple >= PUBLISHED_THRESHOLDS.whale_trade.threshold_multiple,
          prints,
          baseline_prints: baselinePrints,
          median_notional_usd: med,
          threshold_usd: threshold,
          size_multiple: multiple,
          total_notional_usd: prints[0]!.notional_usd,
        },
      };
    }
    case 'block_trade': {
      const usd = req.notional_usd ?? SITUATION_DEFAULTS.block_trade.notional_usd;
      const prints = emit(ctx, l, [{ action: (req.direction as TakerAction | undefined) ?? 'buy', usd, at: now, isBlock: true }], traderKey);
      return { ...head, details: { crosses_threshold: true, prints, total_notional_usd: prints[0]!.notional_usd } };
    }
    case 'flow_imbalance': {
      const d = SITUATION_DEFAULTS.flow_imbalance;
      const n = req.prints ?? d.prints;
      const direction = (req.direction as TakerAction | undefined) ?? 'buy';
      const usd = req.notional_usd ?? d.notional_usd;
      const prints = emit(ctx, l, spread(n, usd / n, d.spacing_ms * (n - 1), now, () => direction), traderKey);
      // The listing's tape stays one-way for the published window: random prints leave it alone.
      l.tapeHeldUntil = Math.max(l.tapeHeldUntil, now + PUBLISHED_THRESHOLDS.flow_imbalance.window_ms);
      const f = flowFigures(l, now);
      return {
        ...head,
        details: { crosses_threshold: f.crosses, prints, direction, total_notional_usd: f.total, largest_print_usd: f.largest, trades_last_window: f.count, window_ms: PUBLISHED_THRESHOLDS.flow_imbalance.window_ms },
      };
    }
    case 'trade_through': {
      const through = req.through ?? SITUATION_DEFAULTS.trade_through.through;
      const price = ctx.quantize(l, top.price + through);
      const usd = req.notional_usd ?? SITUATION_DEFAULTS.trade_through.notional_usd;
      const prints = emit(ctx, l, [{ action: 'buy', usd, at: now, price }], traderKey);
      const actual = round6(price - top.price);
      return {
        ...head,
        details: { crosses_threshold: actual >= PUBLISHED_THRESHOLDS.trade_through.through - 1e-9, prints, cached_price: top.price, through: actual, total_notional_usd: prints[0]!.notional_usd },
      };
    }
    case 'volume_spike': {
      const d = SITUATION_DEFAULTS.volume_spike;
      const baselinePrints = withBaseline ? baseline(ctx, l, 'volume_spike', now) : [];
      const n = req.prints ?? d.prints;
      const usd = req.notional_usd ?? d.notional_usd;
      const prints = emit(ctx, l, spread(n, usd / n, d.window_ms, now, alternate), traderKey);
      const s = spikeFigures(l, now);
      return {
        ...head,
        details: {
          crosses_threshold: s.crosses,
          prints,
          baseline_prints: baselinePrints,
          trades_last_window: s.count,
          baseline_per_5m: s.baselinePer5m,
          window_ms: PUBLISHED_THRESHOLDS.volume_spike.window_ms,
          total_notional_usd: sum(prints.map((p) => p.notional_usd)),
        },
      };
    }
    case 'trade_burst': {
      const d = SITUATION_DEFAULTS.trade_burst;
      const n = req.prints ?? d.prints;
      const windowMs = req.window_ms ?? d.window_ms;
      const usd = req.notional_usd ?? d.notional_usd;
      const prints = emit(ctx, l, spread(n, usd / n, windowMs, now, alternate), traderKey);
      const b = PUBLISHED_THRESHOLDS.trade_burst;
      const span = prints.length > 0 ? prints.at(-1)!.executed_at - prints[0]!.executed_at : 0;
      return {
        ...head,
        details: {
          crosses_threshold: n >= b.min_prints && span <= b.window_ms,
          prints,
          trades_last_window: n,
          window_ms: windowMs,
          total_notional_usd: sum(prints.map((p) => p.notional_usd)),
          largest_print_usd: prints.reduce((m, p) => Math.max(m, p.notional_usd), 0),
        },
      };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Spontaneous production
// ---------------------------------------------------------------------------------------------

const SPONTANEOUS_KINDS: readonly (keyof SimSituationRates)[] = ['price_move', 'whale_trade', 'block_trade', 'flow_imbalance', 'trade_through', 'volume_spike', 'trade_burst'];

/**
 * The situations a venue starts on its own over `dtH` hours (Poisson at its personality's rates),
 * each on one listing drawn at random that can carry it (otherwise that one does not happen).
 * Multi-print situations are scheduled over their window and delivered by deliverScheduled.
 */
export function spontaneousSituations(ctx: SituationCtx, v: VenueRt, now: number, dtH: number, rng: Rng): void {
  const rates = v.pers.dynamics.situations;
  for (const kind of SPONTANEOUS_KINDS) {
    const rate = rates[kind];
    if (!(rate > 0) || v.listings.length === 0) continue;
    const n = rng.poisson(rate * dtH);
    for (let i = 0; i < n; i++) {
      const l = v.listings[Math.floor(rng.next() * v.listings.length)]!;
      if (l.pinned || unfit(ctx, l, { type: kind }, now, true)) continue;
      if (startSituation(ctx, l, kind, now, rng)) v.situationsStarted[kind]++;
    }
  }
}

/**
 * Starts one spontaneous situation of `kind` on `l` (sized from `rng` within SPONTANEOUS); false
 * when it cannot happen there now. Multi-print ones are scheduled over their window.
 */
export function startSituation(ctx: SituationCtx, l: Listing, kind: keyof SimSituationRates, now: number, rng: Rng): boolean {
  const v = l.v;
  const S = SPONTANEOUS;
  const key = `${kind}/${l.inst.instrument_id}/${now}`;
  const draw = (r: readonly [number, number]) => rng.float(r[0], r[1]);
  const drawInt = (r: readonly [number, number]) => rng.int(r[0], r[1]);
  switch (kind) {
    case 'price_move': {
      const move = draw(S.price_move.move);
      const delta = rng.bool(0.5) ? move : -move;
      // The news reaches every venue that is up; a stale one catches up through its lag when it is
      // back. A book the operator pinned (POST /sim/v1/quotes) stays as set, as the dynamics leave it.
      try {
        movePosition(ctx, l.pr, delta, now, (o) => !o.pinned && !ctx.isStale(o.v, now));
        return true;
      } catch (err) {
        if (!(err instanceof VenueError)) throw err;
        return false;
      }
    }
    case 'whale_trade': {
      const usd = draw(S.whale_trade.multiple) * whaleThreshold(median(l.tape.map((e) => e.usd)));
      emit(ctx, l, [{ action: rng.bool(0.6) ? 'buy' : 'sell', usd, at: now }], key);
      return true;
    }
    case 'block_trade':
      emit(ctx, l, [{ action: rng.bool(0.5) ? 'buy' : 'sell', usd: draw(S.block_trade.notional_usd), at: now, isBlock: true }], key);
      return true;
    case 'trade_through': {
      const through = draw(S.trade_through.through);
      const price = ctx.quantize(l, l.levels[0]!.price + through);
      if (price > 0.99) return false;
      emit(ctx, l, [{ action: 'buy', usd: draw(S.trade_through.notional_usd), at: now, price }], key);
      return true;
    }
    case 'flow_imbalance': {
      const n = drawInt(S.flow_imbalance.prints);
      const total = draw(S.flow_imbalance.notional_usd);
      const windowMs = draw(S.flow_imbalance.window_ms);
      const action: TakerAction = rng.bool(0.5) ? 'buy' : 'sell';
      schedule(v, l, n, windowMs, now, () => action, () => total / n);
      // Random prints leave the tape alone until the flow has left the published window.
      l.tapeHeldUntil = now + windowMs + PUBLISHED_THRESHOLDS.flow_imbalance.window_ms;
      return true;
    }
    case 'volume_spike': {
      const n = drawInt(S.volume_spike.prints);
      const windowMs = draw(S.volume_spike.window_ms);
      const usd = draw(S.volume_spike.print_usd);
      schedule(v, l, n, windowMs, now, () => (rng.bool(0.5) ? 'buy' : 'sell'), () => usd);
      return true;
    }
    case 'trade_burst': {
      const n = drawInt(S.trade_burst.prints);
      const windowMs = draw(S.trade_burst.window_ms);
      const usd = draw(S.trade_burst.print_usd);
      schedule(v, l, n, windowMs, now, () => (rng.bool(0.5) ? 'buy' : 'sell'), () => usd);
      return true;
    }
  }
}

/** Plans `n` prints over `windowMs` from now (the first at once), kept in time order on the venue. */
function schedule(v: VenueRt, l: Listing, n: number, windowMs: number, now: number, action: (i: number) => TakerAction, usd: (i: number) => number): void {
  const step = n > 1 ? windowMs / (n - 1) : 0;
  for (let i = 0; i < n; i++) v.scheduled.push({ at: Math.round(now + i * step), listing: l, action: action(i), notional: usd(i) });
  v.scheduled.sort((a, b) => a.at - b.at);
}

/**
 * Publishes the scheduled prints due by `now` at their planned times. A stale venue is silent: what
 * fell due meanwhile is dropped, and so is a print on a listing whose contest settled.
 */
export function deliverScheduled(ctx: SituationCtx, v: VenueRt, now: number): void {
  let k = 0;
  const stale = ctx.isStale(v, now);
  while (k < v.scheduled.length && v.scheduled[k]!.at <= now) {
    const s: ScheduledPrint = v.scheduled[k++]!;
    const l = s.listing;
    if (stale || l.closed) continue;
    const price = tradePrice(l, s.action);
    if (price === null) continue;
    ctx.print(l, s.action, price, contractsFor(l, price, s.notional), false, ctx.trader(v, `scheduled/${l.inst.instrument_id}`), s.at);
  }
  if (k > 0) v.scheduled.splice(0, k);
}
