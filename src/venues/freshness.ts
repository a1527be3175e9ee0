/**
 * Quote freshness: how long after its last confirmation (ts_init) a venue's quote still counts as
 * current. Each venue declares its bound as data (`capabilities.quotes.freshness_ms`); this module
 * holds the rule those bounds follow and the one computation callers need from them.
 *
 * Why the bounds are what they are: ingest passes an unchanged quote on (re-confirms it) at most
 * every QUOTE_RECONFIRM_MS, so an unchanged polled quote can wait that long plus one poll interval
 * between confirmations; a streaming quote is re-confirmed when a message for it arrives once that
 * interval has passed. A bound must exceed the longest such gap, with room for missed polls or a
 * late message, or a quiet but healthy venue would flap stale.
 */
import type { VenueDescription } from './types.js';

/** Ingest re-confirms an unchanged quote at the latest this long after its last confirmation
 *  (the ingester's REFRESH_MS: keep the two equal; it spreads quotes between half of it and it). */
export const QUOTE_RECONFIRM_MS = 20_000;

/** Slack on top of the re-confirm gap for a streaming venue: its message may arrive late. */
export const STREAM_SLACK_MS = 10_000;

/** Polls a polling venue may miss in a row before its quotes count as stale. */
export const MISSED_POLLS = 3;

/**
 * The freshness bound the rule gives a venue: QUOTE_RECONFIRM_MS plus MISSED_POLLS poll intervals,
 * and at least STREAM_SLACK_MS on top of it (the whole slack of a streaming venue). Venues declare
 * their bound as a literal; the conformance suite checks it is no tighter than the re-confirm gap.
 */
export function ruleFreshnessMs(pollIntervalMs: number | null): number {
  return QUOTE_RECONFIRM_MS + Math.max(STREAM_SLACK_MS, MISSED_POLLS * (pollIntervalMs ?? 0));
}

/**
 * When a quote confirmed at `tsInit` (unix ms) stops counting as confirmed: the compute input's
 * `stale_after_ms`. Undefined for a venue that declares no bound (it has no quotes), which the
 * compute reads as "judge by the default age policy".
 */
export function quoteStaleAfterMs(tsInit: number, freshnessMs: number | null): number | undefined {
  return freshnessMs === null ? undefined : tsInit + freshnessMs;
}

/** partner_id → declared freshness bound, for the venues that quote (one lookup per quote after). */
export function freshnessByVenue(venues: readonly Pick<VenueDescription, 'partner' | 'capabilities'>[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const v of venues) {
    const ms = v.capabilities.quotes.freshness_ms;
    if (ms !== null) out.set(v.partner.partner_id, ms);
  }
  return out;
}
