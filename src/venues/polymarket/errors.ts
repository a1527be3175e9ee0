/**
 * Polymarket failures → VenueError kinds. REST errors are `{"error": "<message>"}` with an HTTP
 * status (test/venues/polymarket/fixtures/rest-errors.jsonl); the status decides whether a retry
 * can help. Cloudflare throttles rather than refuses, so a 429 is rare; when it comes it is
 * retryable, with Retry-After when the venue sent one.
 */
import { VenueError, VenueErrorCodes } from '../errors.js';
import { PARTNER_ID, parseErrorBody } from './parse.js';

export function httpError(status: number, bodyText: string, what: string, retryAfterHeader: string | null = null): VenueError {
  const message = `polymarket ${what}: HTTP ${status}: ${parseErrorBody(bodyText)}`;
  const details = { status, venue_message: parseErrorBody(bodyText) };
  if (status === 429) {
    const s = retryAfterHeader === null ? NaN : Number(retryAfterHeader);
    return new VenueError('retryable', VenueErrorCodes.rateLimited, message, { partner_id: PARTNER_ID, retry_after_ms: Number.isFinite(s) && s >= 0 ? s * 1000 : null, details });
  }
  if (status >= 500 || status === 408) return new VenueError('retryable', VenueErrorCodes.unavailable, message, { partner_id: PARTNER_ID, details });
  if (status === 401 || status === 403) return new VenueError('fatal', VenueErrorCodes.authFailed, message, { partner_id: PARTNER_ID, details });
  if (status === 404) return new VenueError('non_retryable', 'not_found', message, { partner_id: PARTNER_ID, details });
  return new VenueError('non_retryable', VenueErrorCodes.invalidRequest, message, { partner_id: PARTNER_ID, details });
}

/** A request that never got an answer (refused, reset, timed out): retryable. */
export function transportError(e: unknown, what: string): VenueError {
  if (e instanceof VenueError) return e;
  const timeout = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
  const msg = e instanceof Error ? (e.cause instanceof Error ? `${e.message} (${e.cause.message})` : e.message) : String(e);
  return new VenueError('retryable', timeout ? VenueErrorCodes.timeout : VenueErrorCodes.unavailable, `polymarket ${what}: ${msg}`, { partner_id: PARTNER_ID, cause: e });
}
