/**
 * Kalshi's units → exact micros (src/domain/money.ts): prices and counts as integer millionths in a
 * bigint, so "1 − best NO bid" and "price × count" are exact (0.88 → 880000; 1 − 0.88 = 0.12 with no
 * binary-float residue).
 *
 * A price arrives as a dollar string ("0.8800", up to 6 decimals) or, in legacy payloads, integer
 * cents (88). A count arrives as a fixed-point string ("1967.33") or a legacy integer (1967). The
 * caller says which field it read, so a number in a `*_dollars` field is never mistaken for cents.
 */
import { UNIT, fromMicros, mulMicros, parseMicros, type Micros } from '../../domain/money.js';
import { VenueError } from '../errors.js';
import type { Decimal } from './messages.js';

export const PARTNER_ID = 'kalshi';

export const malformed = (what: string, details?: Record<string, unknown>) =>
  new VenueError('non_retryable', 'malformed_message', `kalshi: malformed ${what}`, { partner_id: PARTNER_ID, details: details ?? null });

/** Exact micros of a decimal text; throws malformed when it is not a plain decimal or has more than 6 places. */
export function decimalMicros(x: unknown, what: string): Micros {
  if (typeof x !== 'string' || x.trim() === '') throw malformed(what, { value: x });
  let r: { micros: Micros; exact: boolean };
  try {
    r = parseMicros(x.trim());
  } catch {
    throw malformed(what, { value: x });
  }
  if (!r.exact) throw malformed(what, { value: x });
  return r.micros;
}

/** A price in dollars (string) or legacy cents (integer) → micro-dollars. */
export function priceMicros(x: Decimal | undefined | null, what: string): Micros {
  if (typeof x === 'number') {
    if (!Number.isInteger(x)) throw malformed(what, { value: x });
    return BigInt(x) * 10_000n;
  }
  return decimalMicros(x, what);
}

/** A contract count (fixed-point string or legacy integer) → micro-contracts. */
export function countMicros(x: Decimal | undefined | null, what: string): Micros {
  if (typeof x === 'number') {
    if (!Number.isFinite(x)) throw malformed(what, { value: x });
    return decimalMicros(String(x), what);
  }
  return decimalMicros(x, what);
}

/** Integer cents → micro-dollars. */
export function centsMicros(x: unknown, what: string): Micros {
  if (typeof x !== 'number' || !Number.isInteger(x)) throw malformed(what, { value: x });
  return BigInt(x) * 10_000n;
}

/** The first field present: current `*_dollars`/`*_fp` first, then the legacy one. */
export function pick(...xs: (Decimal | undefined | null)[]): Decimal | undefined {
  for (const x of xs) if (x !== undefined && x !== null && x !== '') return x;
  return undefined;
}

/** price × count in micro-USD, floored to the micro (what a buyer can spend at that level). */
export const notionalMicros = (price: Micros, count: Micros): Micros => mulMicros(price, count, 'floor');

/** The complement price: 1 − p. */
export const complement = (p: Micros): Micros => UNIT - p;

export const num = (m: Micros): number => fromMicros(m);

/** Unix ms of an ISO-8601 string; throws malformed when unparseable. */
export function isoMs(x: unknown, what: string): number {
  const t = typeof x === 'string' ? Date.parse(x) : Number.NaN;
  if (!Number.isFinite(t)) throw malformed(what, { value: x });
  return t;
}

/** A venue time, never after our ts_init: a venue clock ahead of ours must not make an event look from the future. */
export const clampEvent = (tsEvent: number, tsInit: number): number => Math.min(tsEvent, tsInit);
