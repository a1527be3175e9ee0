import type { QuoteAgePolicy, VenueQuote } from './types.js';

/** Below this many USD a quote cannot take an order (spec: "at least USD 1 available"). */
export const MIN_QUOTE_USD = 1;

/**
 * Default maximum age of a quote's as_of. Pollers confirm every few seconds, so a minute without a
 * confirmation means several missed polls; streaming ingest refreshes as_of on each message and
 * on the venue's heartbeat, and gets more room because quiet books legitimately go silent.
 */
export const DEFAULT_MAX_QUOTE_AGE_MS: QuoteAgePolicy = { streaming: 120_000, polling: 60_000 };

/** A probability a buyer can actually pay: strictly between 0 and 1 (spec order rule). */
export function isTradablePrice(price: number): boolean {
  return price > 0 && price < 1;
}

/** The as_of before which a quote is stale, per source, as unix ms and as canonical ISO text, and
 *  the clock a quote's own `stale_after_ms` is compared with. */
export interface StaleCutoffs {
  now_ms: number;
  streaming: { ms: number; iso: string };
  polling: { ms: number; iso: string };
}

/** Computes the cutoffs once per run so each quote costs a string comparison, not a date parse. */
export function staleCutoffs(nowMs: number, policy: QuoteAgePolicy): StaleCutoffs {
  const s = nowMs - policy.streaming;
  const p = nowMs - policy.polling;
  return { now_ms: nowMs, streaming: { ms: s, iso: isoOrEmpty(s) }, polling: { ms: p, iso: isoOrEmpty(p) } };
}

function isoOrEmpty(ms: number): string {
  return Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : '';
}

/** Length of `Date.prototype.toISOString()` output for years 0000-9999, e.g. 2026-01-01T00:00:00.000Z. */
const CANONICAL_ISO_LENGTH = 24;

/**
 * True when ingest flagged the quote, or it was not confirmed within its venue's freshness bound
 * (the clock is past `stale_after_ms`), or, for a quote without that bound, its as_of is older than
 * the cutoff for its source. The venue's own bound replaces the default policy rather than adding
 * to it, so a venue whose documented bound is looser than the default is judged by its bound.
 */
export function isStaleAt(quote: VenueQuote, cutoffs: StaleCutoffs): boolean {
  if (quote.stale === true) return true;
  const staleAfter = quote.stale_after_ms;
  if (staleAfter !== undefined) return cutoffs.now_ms > staleAfter;
  const cutoff = cutoffs[quote.source];
  const asOf = quote.as_of;
  // Canonical UTC ISO strings of equal length sort in time order: compare text, skip the parse.
  if (cutoff.iso.length === CANONICAL_ISO_LENGTH && asOf.length === CANONICAL_ISO_LENGTH && asOf.charCodeAt(23) === 90 /* Z */) {
    return asOf < cutoff.iso;
  }
  const seen = Date.parse(asOf);
  // An unparseable as_of is not evidence of age; the ingest flag covers broken feeds.
  return seen === seen && seen < cutoff.ms;
}

/**
 * The instant after which isStaleAt holds for `quote` under `policy`: stale at clock `now` exactly
 * when now > staleInstant (−∞: flagged by ingest; +∞: never by age). NaN when that cannot be told
 * without the clock (an as_of that only looks canonical, a stale_after_ms that is not a number):
 * ask isStaleAt then. Lets a run that keeps a contest between changes find the quotes the clock
 * turned stale by comparing numbers instead of reading every quote again.
 */
export function staleInstant(quote: VenueQuote, policy: QuoteAgePolicy): number {
  if (quote.stale === true) return Number.NEGATIVE_INFINITY;
  const staleAfter = quote.stale_after_ms;
  if (staleAfter !== undefined) return typeof staleAfter === 'number' && !Number.isNaN(staleAfter) ? staleAfter : Number.NaN;
  const asOf = quote.as_of;
  const age = policy[quote.source];
  if (typeof asOf !== 'string' || !Number.isInteger(age)) return Number.NaN;
  const seen = Date.parse(asOf);
  const canonical = asOf.length === CANONICAL_ISO_LENGTH && asOf.charCodeAt(23) === 90; /* Z */
  if (seen !== seen) return canonical ? Number.NaN : Number.POSITIVE_INFINITY;
  // isStaleAt compares canonical strings as text: the same as comparing their instants when the
  // text is the instant's own (Date.parse also reads 2026-02-30 as March 2nd; text order does not).
  if (canonical && new Date(seen).toISOString() !== asOf) return Number.NaN;
  return seen + age;
}

/** isStaleAt with the cutoffs computed for this one call. */
export function isStale(quote: VenueQuote, nowMs: number, policy: QuoteAgePolicy): boolean {
  return isStaleAt(quote, staleCutoffs(nowMs, policy));
}

/** Tick `actionable`: price in (0, 1), at least USD 1 available, not stale. */
export function isActionable(price: number, available: number, stale: boolean): boolean {
  return isTradablePrice(price) && available >= MIN_QUOTE_USD && !stale;
}
