/**
 * The signals a liquidity computation detects (docs/signals.md): one `arbitrage` signal per open
 * arbitrage, and `price_move` when a position's consensus moved by at least 0.05 within 5 minutes.
 * Pure: the compute worker runs it after the contest's consensus and arbitrage, on what the stored
 * snapshot remembers of the last 5 minutes.
 */
import type { Arbitrage } from '../domain/arbitrage.js';
import type { PositionDefinition } from '../domain/catalog.js';
import { CALIBRATION_VERSION, scaled, signalId, signalPosition, SIGNAL_DEFINITION, type Confidence, type SerializedSignal, type Signal, type SignalVenue } from '../domain/signals.js';
import type { PartnerLiquidity } from '../domain/stream.js';
import { liquidityDigest } from './digest.js';
import { round6 } from './precision.js';
import { isActionable } from './quotes.js';

/** price_move: the smallest consensus move published, and the window it is measured over. */
export const PRICE_MOVE_MIN = 0.05;
export const PRICE_MOVE_WINDOW_MS = 300_000;
/** A position keeps one consensus sample per this many ms (the newest replaces a closer one): at most 11 in the window. */
export const SAMPLE_SPACING_MS = 30_000;
/** A published signal is written again when less than this is left of its life, so it never lapses while it holds. */
export const REFRESH_BEFORE_EXPIRY_MS = 60_000;

/** One consensus sample: [unix ms, price, venues quoting]. */
export type ConsensusSample = [number, number, number];

export interface ContestFacts {
  contest_id: string;
  label: string | null;
  league_id: string | null;
}

/** A position as the signals see it now. */
export interface PositionNow {
  def: PositionDefinition;
  consensus: number | null;
  /** Venues with a usable quote now, and the USD at their best prices. */
  venues: number;
  available: number;
  /** Those venues, named. */
  venueList: SignalVenue[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The arbitrage signal of an arbitrage (its evidence as the catalog lists it). */
export function arbitrageSignal(a: Arbitrage, positions: ReadonlyMap<string, PositionDefinition>, contest: ContestFacts, nowMs: number): Signal | null {
  const [sa, sb] = a.sides;
  const legA = sa?.options[0];
  const legB = sb?.options[0];
  const def = legA ? positions.get(legA.position_hash) : undefined;
  if (!legA || !legB || !def) return null;
  const dedupe = `arbitrage:${a.arbitrage_id}`;
  const unprofitable = a.profitable_after_fees === false;
  const s = scaled(a.roi_pct, 1, 5, 20);
  const confidence: Confidence = unprofitable ? 'low' : a.profitable_after_fees === null || a.max_investment < 100 ? 'medium' : 'high';
  const fees = a.after_fee_roi_pct === null ? 'fees unknown on a leg' : `${a.after_fee_roi_pct.toFixed(2)} % after fees`;
  return {
    signal_id: signalId(dedupe, a.detected_at),
    dedupe_key: dedupe,
    signal_type: 'arbitrage',
    schema_version: SIGNAL_DEFINITION.arbitrage.schema_version,
    status: SIGNAL_DEFINITION.arbitrage.status,
    position: signalPosition(def, contest),
    related_positions: [legB.position_hash],
    headline: `Arbitrage ${a.roi_pct.toFixed(2)} %: ${legA.title} on ${legA.partner_name} + ${legB.title} on ${legB.partner_name} at ${a.combined_price}`,
    explanation: `Buying both sides costs ${a.combined_price} per USD 1 of payout (${fees}); up to USD ${a.max_investment} at the best prices.`,
    strength: unprofitable ? Math.round(s / 2) : s,
    confidence,
    calibration_version: CALIBRATION_VERSION,
    detected_at: a.detected_at,
    expires_at: iso(nowMs + SIGNAL_DEFINITION.arbitrage.typical_ttl_seconds! * 1000),
    venues: [
      { partner_id: legA.partner_id, partner_name: legA.partner_name },
      { partner_id: legB.partner_id, partner_name: legB.partner_name },
    ],
    evidence: {
      arbitrage_id: a.arbitrage_id,
      best_combined_price: a.combined_price,
      best_guaranteed_profit_pct: a.roi_pct,
      after_fee_roi: a.after_fee_roi_pct,
      profitable_after_fees: a.profitable_after_fees,
      best_max_investment: a.max_investment,
      sides: a.sides.map((side) => side.options.map((o) => ({ partner_id: o.partner_id, price: o.price, after_fee_price: o.after_fee_price, available: o.available, position_hash: o.position_hash }))),
      // Deprecated (spec): the two venues as bare ids; read `venues` instead.
      venues: [legA.partner_id, legB.partner_id],
    },
  };
}

/**
 * A position's samples with `now` taken in: the newest sample replaced when it is closer than
 * SAMPLE_SPACING_MS, samples older than the window dropped (the newest such one kept as the
 * window's start, so a move is measured over at most the window).
 */
export function takeSample(samples: readonly ConsensusSample[], now: ConsensusSample): ConsensusSample[] {
  const out = samples.filter((x) => x[0] >= now[0] - PRICE_MOVE_WINDOW_MS);
  const last = out[out.length - 1];
  if (last && now[0] - last[0] < SAMPLE_SPACING_MS && out.length > 1) out[out.length - 1] = now;
  else out.push(now);
  return out;
}

/**
 * The price_move of a position from its samples in the window (the newest is now): the largest
 * move from any earlier sample to now, if at least PRICE_MOVE_MIN. `detectedBefore` keeps the
 * detection time of a move that goes on (same position and direction).
 */
export function priceMoveSignal(p: PositionNow, samples: readonly ConsensusSample[], contest: ContestFacts, nowMs: number, detectedBefore: Readonly<Record<string, string>>): Signal | null {
  const now = samples[samples.length - 1];
  if (!now || p.consensus === null) return null;
  let from: ConsensusSample | null = null;
  for (const x of samples) {
    if (x === now || x[0] < nowMs - PRICE_MOVE_WINDOW_MS) continue;
    if (from === null || Math.abs(now[1] - x[1]) > Math.abs(now[1] - from[1])) from = x;
  }
  if (from === null) return null;
  const move = round6(now[1] - from[1]);
  if (!(Math.abs(move) >= PRICE_MOVE_MIN - 1e-9)) return null;
  const direction = move > 0 ? 'up' : 'down';
  const dedupe = `price_move:${p.def.position_hash}:${direction}`;
  const detected = detectedBefore[dedupe] ?? iso(nowMs);
  const windowMs = nowMs - from[0];
  // Broad moves (several venues agreeing) with money behind them are the ones to trust.
  const confidence: Confidence = p.venues >= 3 && p.available >= 1_000 ? 'high' : p.venues >= 2 ? 'medium' : 'low';
  return {
    signal_id: signalId(dedupe, detected),
    dedupe_key: dedupe,
    signal_type: 'price_move',
    schema_version: SIGNAL_DEFINITION.price_move.schema_version,
    status: SIGNAL_DEFINITION.price_move.status,
    position: signalPosition(p.def, contest),
    related_positions: [],
    headline: `${p.def.title}: consensus ${direction} ${Math.abs(move).toFixed(3)} to ${now[1]} in ${Math.round(windowMs / 1000)} s`,
    explanation: `The consensus price moved from ${from[1]} to ${now[1]} across ${p.venues} venue(s) (${from[2]} before), with USD ${round6(p.available)} at the best prices now.`,
    strength: scaled(Math.abs(move), PRICE_MOVE_MIN, 0.2, 25),
    confidence,
    calibration_version: CALIBRATION_VERSION,
    detected_at: detected,
    expires_at: iso(nowMs + SIGNAL_DEFINITION.price_move.typical_ttl_seconds! * 1000),
    venues: p.venueList,
    evidence: {
      from_price: from[1],
      to_price: now[1],
      move,
      direction,
      window_ms: windowMs,
      venues_now: p.venues,
      venues_before: from[2],
      total_available_usd: round6(p.available),
    },
  };
}

/** What a position's live quotes (actionable: tradable, USD 1 behind them, fresh) tell the signals. */
export interface LiveQuotes {
  venues: number;
  /** USD at their best prices. */
  available: number;
  venueList: SignalVenue[];
}

export function liveQuotes(liquidities: readonly PartnerLiquidity[]): LiveQuotes {
  const live = liquidities.filter((q) => isActionable(q.price, q.available, q.is_stale));
  return {
    venues: live.length,
    available: live.reduce((s, q) => s + q.available, 0),
    venueList: live.map((q) => ({ partner_id: q.partner_id, partner_name: q.partner_name })),
  };
}

/** The JSON of a signal with its expiry left out (`"expires_at":""`): what the signals digest reads. */
export const withoutExpiry = (s: Signal): string => JSON.stringify({ ...s, expires_at: '' });

/** Digest of a contest's signals, their expiry aside (each given as withoutExpiry's text, in order). */
export const signalsDigest = (texts: readonly string[]): number => liquidityDigest(`[${texts.join(',')}]`);

const EXPIRY_MEMBER = '"expires_at":""';

/**
 * A signal's JSON split where its expiry goes, so a run that finds it again writes it with a new
 * expiry by joining strings instead of serializing it again. Inside a JSON string every `"` is
 * escaped, so the first `"expires_at":""` is the member itself (the position block before it has
 * no such key).
 */
export class SignalText {
  readonly dedupe_key: string;
  readonly signal_type: Signal['signal_type'];
  /** withoutExpiry's text. */
  readonly bare: string;
  private readonly before: string;
  private readonly after: string;
  /** Its life from the run that found it (its expiry is that much after each run that finds it again). */
  private readonly lifeMs: number;

  /** `s` as found by the run at `nowMs`. */
  constructor(s: Signal, nowMs: number) {
    this.lifeMs = Date.parse(s.expires_at) - nowMs;
    this.dedupe_key = s.dedupe_key;
    this.signal_type = s.signal_type;
    this.bare = withoutExpiry(s);
    const at = this.bare.indexOf(EXPIRY_MEMBER);
    if (at === -1) throw new Error(`signal ${s.dedupe_key} has no expires_at member`);
    this.before = this.bare.slice(0, at + EXPIRY_MEMBER.length - 1);
    this.after = this.bare.slice(at + EXPIRY_MEMBER.length - 1);
  }

  /** When the signal expires as found again by the run at `nowMs`. */
  expiresMs(nowMs: number): number {
    return Date.parse(iso(nowMs + this.lifeMs));
  }

  /** serializeSignal's answer for the signal as found again by the run at `nowMs`. */
  serialized(nowMs: number): SerializedSignal {
    const at = iso(nowMs + this.lifeMs);
    return { dedupe_key: this.dedupe_key, signal_type: this.signal_type, expires_ms: Date.parse(at), json: this.before + at + this.after };
  }
}

/**
 * When the signals are written: now when they changed (expiry aside) or the planned refresh came,
 * and the next refresh a minute before the soonest expiry; otherwise the plan stands. So a signal
 * that holds never lapses and an unchanged set is not rewritten on every liquidity change.
 */
export function signalSchedule(digest: number, soonestMs: number, nowMs: number, prev: { signals_digest?: number; signals_refresh_ms?: number } | undefined): { due: boolean; refreshMs: number | undefined } {
  const due = digest !== prev?.signals_digest || (prev?.signals_refresh_ms !== undefined && nowMs >= prev.signals_refresh_ms);
  const refreshMs = due ? (Number.isFinite(soonestMs) ? soonestMs - REFRESH_BEFORE_EXPIRY_MS : undefined) : prev?.signals_refresh_ms;
  return { due, refreshMs };
}
