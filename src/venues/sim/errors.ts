/**
 * The simulated venues' error map, as data: the venue's own codes → our error kinds/codes
 * (faults raised by the venue) and → the spec's per-leg rejected_code values (order refusals).
 */
import { VenueError, VenueErrorCodes, mapVenueError, type VenueErrorMap } from '../errors.js';
import type { VenueRejectCode } from '../types.js';
import { SimFault } from '../../sim/engine.js';

/** Venue fault codes (a request the venue refused to process) → VenueError. */
export const SIM_ERROR_MAP: VenueErrorMap = {
  UNKNOWN_INSTRUMENT: { kind: 'non_retryable', code: VenueErrorCodes.unknownPosition },
  INVALID_SIZE: { kind: 'non_retryable', code: VenueErrorCodes.invalidAmount },
  INVALID_PRICE: { kind: 'non_retryable', code: VenueErrorCodes.invalidPrice },
  PRICE_TICK: { kind: 'non_retryable', code: VenueErrorCodes.invalidPrice },
  INVALID_ORDER: { kind: 'non_retryable', code: VenueErrorCodes.invalidRequest },
  UNKNOWN_ORDER: { kind: 'non_retryable', code: VenueErrorCodes.unknownOrder },
  NOT_CANCELLABLE: { kind: 'non_retryable', code: VenueErrorCodes.orderNotCancellable },
  CANCEL_UNSUPPORTED: { kind: 'non_retryable', code: VenueErrorCodes.capabilityNotSupported },
  ACCOUNT_UNKNOWN: { kind: 'non_retryable', code: VenueErrorCodes.unknownAccount },
  RATE_LIMITED: { kind: 'retryable', code: VenueErrorCodes.rateLimited },
  TIMEOUT: { kind: 'retryable', code: VenueErrorCodes.timeout },
  MAINTENANCE: { kind: 'retryable', code: VenueErrorCodes.unavailable },
  AUTH_REVOKED: { kind: 'fatal', code: VenueErrorCodes.authFailed },
};

/** Venue order-refusal reasons → the spec's rejected_code. */
export const SIM_REJECT_MAP: Readonly<Record<string, VenueRejectCode>> = {
  READ_ONLY: 'orders_not_supported',
  ORDER_TYPE: 'unsupported_order_type',
  ACCOUNT_NOT_LINKED: 'venue_disabled',
  PRICE_BAND: 'price_out_of_band',
  MIN_NOTIONAL: 'below_min_order',
  MAX_NOTIONAL: 'above_max_order',
  ZERO_CONTRACTS: 'unfillable',
  NO_LIQUIDITY: 'insufficient_live_depth',
  PRICE_LIMIT: 'above_max_price',
  SIZE_LIMIT: 'insufficient_size',
  INSUFFICIENT_FUNDS: 'insufficient_balance',
  NO_PAPER_PRICE: 'no_live_price_for_paper',
};

/** The spec code of a venue refusal, or null for a reason the map does not know. */
export function rejectCodeOf(reason: string | null): VenueRejectCode | null {
  if (reason === null) return null;
  return Object.prototype.hasOwnProperty.call(SIM_REJECT_MAP, reason) ? SIM_REJECT_MAP[reason]! : null;
}

/** Any error thrown by a sim venue call → VenueError (faults mapped; VenueErrors pass through). */
export function toVenueError(partnerId: string, e: unknown): VenueError {
  if (e instanceof VenueError) return e;
  if (e instanceof SimFault) return mapVenueError(SIM_ERROR_MAP, partnerId, e.venueCode, e.message);
  return new VenueError('fatal', VenueErrorCodes.internal, e instanceof Error ? e.message : String(e), { partner_id: partnerId, cause: e });
}
