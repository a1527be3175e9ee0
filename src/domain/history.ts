/**
 * Price-history rules (spec "Liquidity, depth, history, state", price-history rules), as pure
 * functions: which bucket a window gets, how an explicit resolution degrades, and how the point
 * limit is shared between series. The bucketing itself runs in ClickHouse; this module only decides.
 */

/** One quote change of one venue, as the `ticks` table stores it (live pipeline and imports alike). */
export interface TickRow {
  /** Unix ms: when the quote was as of. */
  ts: number;
  contest_id: string;
  position_hash: string;
  partner_id: string;
  price: number;
  available: number;
  liquidity_hash: string;
  source?: 'streaming' | 'polling';
  outlier?: boolean;
}

export const RESOLUTIONS = ['tick', '1m', '5m', '1h', '4h', '1d'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];
export type RequestedResolution = Resolution | 'auto';
export const REQUESTED_RESOLUTIONS: readonly RequestedResolution[] = ['auto', ...RESOLUTIONS];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Bucket width of every bucketed resolution, in ms. Buckets are aligned to the unix epoch (UTC). */
export const BUCKET_MS: Readonly<Record<Exclude<Resolution, 'tick'>, number>> = {
  '1m': MINUTE,
  '5m': 5 * MINUTE,
  '1h': HOUR,
  '4h': 4 * HOUR,
  '1d': DAY,
};

/** Raw rows (tick) and 1m buckets are served only for windows up to this span. */
export const TICK_WINDOW_MS = 6 * HOUR;

/** Window when `from` is not given: one hour before `to`. */
export const DEFAULT_HISTORY_WINDOW_MS = HOUR;
/** Spec "Limits": price-history points max 50000. The default is the maximum (see docs/history.md). */
export const MAX_HISTORY_POINTS = 50_000;
export const DEFAULT_HISTORY_POINTS = MAX_HISTORY_POINTS;
/** Largest number of position hashes one request may name. */
export const MAX_HISTORY_POSITIONS = 100;
/** Largest accepted unix-ms timestamp (2286-11-20); DateTime64(3) holds it. */
export const MAX_UNIX_MS = 9_999_999_999_999;

export const isRequestedResolution = (s: string): s is RequestedResolution =>
  (REQUESTED_RESOLUTIONS as readonly string[]).includes(s);

/** The auto rule: tick ≤ 6 h, 5m ≤ 24 h, 1h ≤ 7 d, 4h ≤ 90 d, 1d beyond (bounds inclusive). */
export function autoResolution(spanMs: number): Resolution {
  if (spanMs <= TICK_WINDOW_MS) return 'tick';
  if (spanMs <= DAY) return '5m';
  if (spanMs <= 7 * DAY) return '1h';
  if (spanMs <= 90 * DAY) return '4h';
  return '1d';
}

/**
 * The resolution actually served. Explicit values are honoured, except 1m, which is computed from
 * raw rows and only inside the 6-hour window: beyond it, it degrades to 5m.
 */
export function effectiveResolution(requested: RequestedResolution, spanMs: number): Resolution {
  if (requested === 'auto') return autoResolution(spanMs);
  if (requested === '1m' && spanMs > TICK_WINDOW_MS) return '5m';
  return requested;
}

/** Width in ms of a resolution's bucket; null for tick (raw rows). */
export function bucketWidthMs(resolution: Resolution): number | null {
  return resolution === 'tick' ? null : BUCKET_MS[resolution];
}

/** Start of the epoch-aligned bucket holding `tMs` (the `t` a bucketed point carries). */
export function bucketStart(tMs: number, resolution: Resolution): number {
  const w = bucketWidthMs(resolution);
  return w === null ? tMs : Math.floor(tMs / w) * w;
}

export interface SeriesBudget {
  /** Points each served series may return. */
  perSeries: number;
  /** How many series are served (the first ones in position_hash order). */
  seriesServed: number;
  /** True when the window held more series than the limit covers (one point each). */
  truncated: boolean;
}

/**
 * The limit is budgeted evenly across series: each of S series gets floor(limit / S) points. When
 * S exceeds the limit, only the first `limit` series (position_hash order) are served, one point
 * each, and the response says series_truncated.
 */
export function seriesBudget(seriesCount: number, limit: number): SeriesBudget {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (seriesCount <= 0) return { perSeries: limit, seriesServed: 0, truncated: false };
  if (seriesCount > limit) return { perSeries: 1, seriesServed: limit, truncated: true };
  return { perSeries: Math.floor(limit / seriesCount), seriesServed: seriesCount, truncated: false };
}

export type WindowResult = { ok: true; from: number; to: number } | { ok: false; parameter: 'from' | 'to'; message: string };

/** Parses one unix-ms query value: digits only, no sign, no fraction, at most MAX_UNIX_MS. */
export function parseUnixMs(raw: string): number | null {
  if (!/^[0-9]{1,16}$/.test(raw)) return null;
  const n = Number(raw);
  return n <= MAX_UNIX_MS ? n : null;
}

/** from/to with the spec's defaults (to = now, from = 1 hour before to); from > to is refused. */
export function resolveHistoryWindow(rawFrom: string | undefined, rawTo: string | undefined, nowMs: number): WindowResult {
  let to = Math.min(Math.max(0, Math.floor(nowMs)), MAX_UNIX_MS);
  if (rawTo !== undefined) {
    const v = parseUnixMs(rawTo);
    if (v === null) return { ok: false, parameter: 'to', message: `to must be unix milliseconds: a non-negative integer up to ${MAX_UNIX_MS}` };
    to = v;
  }
  let from = Math.max(0, to - DEFAULT_HISTORY_WINDOW_MS);
  if (rawFrom !== undefined) {
    const v = parseUnixMs(rawFrom);
    if (v === null) return { ok: false, parameter: 'from', message: `from must be unix milliseconds: a non-negative integer up to ${MAX_UNIX_MS}` };
    from = v;
  }
  if (from > to) return { ok: false, parameter: 'from', message: `from (${from}) is later than to (${to})` };
  return { ok: true, from, to };
}
