/**
 * Kalshi's error responses → VenueError, as data. REST errors are
 * `{"error":{"code","message","details"?,"service"?}}`; a 429 body is the bare string
 * `{"error":"too many requests"}` with no Retry-After. Codes absent from the map fall back on the
 * HTTP status: 5xx/408 retryable, 401/403 fatal (the key is wrong or revoked), 404 unknown, other
 * 4xx non-retryable.
 *
 * Order refusals that are the caller's business (no money, market closed) become a `rejected`
 * VenueOrder with the spec's code instead of an error (KALSHI_REJECT_MAP).
 */
import { VenueError, VenueErrorCodes, type VenueErrorKind, type VenueErrorMap } from '../errors.js';
import type { VenueRejectCode } from '../types.js';
import type { KalshiErrorBody } from './messages.js';
import { PARTNER_ID } from './units.js';

export const KALSHI_ERROR_MAP: VenueErrorMap = {
  service_unavailable: { kind: 'retryable', code: VenueErrorCodes.unavailable },
  exchange_closed: { kind: 'retryable', code: VenueErrorCodes.unavailable },
  trading_is_paused: { kind: 'retryable', code: VenueErrorCodes.unavailable },
  internal_server_error: { kind: 'retryable', code: VenueErrorCodes.unavailable },
  too_many_requests: { kind: 'retryable', code: VenueErrorCodes.rateLimited },
  unauthorized: { kind: 'fatal', code: VenueErrorCodes.authFailed },
  authentication_error: { kind: 'fatal', code: VenueErrorCodes.authFailed },
  market_not_found: { kind: 'non_retryable', code: VenueErrorCodes.unknownPosition },
  order_not_found: { kind: 'non_retryable', code: VenueErrorCodes.unknownOrder },
  not_found: { kind: 'non_retryable', code: 'not_found' },
  invalid_parameters: { kind: 'non_retryable', code: VenueErrorCodes.invalidRequest },
  bad_request: { kind: 'non_retryable', code: VenueErrorCodes.invalidRequest },
  invalid_price: { kind: 'non_retryable', code: VenueErrorCodes.invalidPrice },
  order_already_exists: { kind: 'non_retryable', code: 'order_already_exists' },
};

/** Kalshi order-refusal codes → the spec's per-leg rejected_code. */
export const KALSHI_REJECT_MAP: Readonly<Record<string, VenueRejectCode>> = {
  insufficient_balance: 'insufficient_balance',
  market_closed: 'venue_disabled',
  market_not_open: 'venue_disabled',
  trading_halted: 'venue_disabled',
};

/** The venue's error code and message from a body (either shape); nulls when absent. */
export function errorOf(body: unknown): { code: string | null; message: string | null } {
  const e = (body as KalshiErrorBody | null)?.error;
  if (typeof e === 'string') return { code: e.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_'), message: e };
  if (e && typeof e === 'object') return { code: typeof e.code === 'string' ? e.code : null, message: typeof e.message === 'string' ? e.message : null };
  return { code: null, message: null };
}

function byStatus(status: number): { kind: VenueErrorKind; code: string } {
  if (status === 429) return { kind: 'retryable', code: VenueErrorCodes.rateLimited };
  if (status >= 500 || status === 408) return { kind: 'retryable', code: VenueErrorCodes.unavailable };
  if (status === 401 || status === 403) return { kind: 'fatal', code: VenueErrorCodes.authFailed };
  if (status === 404) return { kind: 'non_retryable', code: 'not_found' };
  return { kind: 'non_retryable', code: VenueErrorCodes.invalidRequest };
}

/** An HTTP error response → VenueError (status wins for 429 and 5xx whatever the code says). */
export function kalshiHttpError(status: number, body: unknown, what: string, retryAfterMs: number | null = null): VenueError {
  const { code, message } = errorOf(body);
  const mapped =
    status === 429 || status >= 500
      ? byStatus(status)
      : code !== null && Object.prototype.hasOwnProperty.call(KALSHI_ERROR_MAP, code)
        ? KALSHI_ERROR_MAP[code]!
        : byStatus(status);
  return new VenueError(mapped.kind, mapped.code, `kalshi ${what}: HTTP ${status}${message ? ` ${message}` : ''}`, {
    partner_id: PARTNER_ID,
    retry_after_ms: mapped.kind === 'retryable' ? retryAfterMs : null,
    details: { status, venue_code: code },
  });
}
