/**
 * Venue errors, split by whether a retry can help (Temporal/Fastify style):
 * - `retryable`: transient (timeout, rate limit, connection dropped, not yet connected). Retry
 *   with backoff; `retry_after_ms` when the venue said how long.
 * - `non_retryable`: this request is wrong or refused (unknown position, bad price, order not
 *   cancellable). Retrying the same request gives the same answer.
 * - `fatal`: the adapter or the account cannot work at all (credentials revoked, protocol
 *   mismatch). Stop using the adapter/connection until an operator acts.
 *
 * `code` is a stable snake_case string: callers branch on it, never on `message`. The error
 * survives threads and processes as a plain object (`toJSON` / `venueErrorFromJSON`), and
 * `structuredClone`-safe data goes through piscina and BullMQ unchanged.
 */

export type VenueErrorKind = 'retryable' | 'non_retryable' | 'fatal';

export const VENUE_ERROR_KINDS: readonly VenueErrorKind[] = ['retryable', 'non_retryable', 'fatal'];

/** Codes every adapter may use; venues add their own (still snake_case). */
export const VenueErrorCodes = {
  capabilityNotSupported: 'capability_not_supported',
  notConnected: 'not_connected',
  closed: 'adapter_closed',
  timeout: 'timeout',
  rateLimited: 'rate_limited',
  unavailable: 'venue_unavailable',
  authFailed: 'auth_failed',
  invalidRequest: 'invalid_request',
  invalidPrice: 'invalid_price',
  invalidAmount: 'invalid_amount',
  unknownPartner: 'unknown_partner',
  unknownPosition: 'unknown_position',
  unknownContest: 'unknown_contest',
  unknownOrder: 'unknown_order',
  unknownAccount: 'unknown_account',
  orderNotCancellable: 'order_not_cancellable',
  internal: 'internal_error',
} as const;

/** Plain-object form of a VenueError (JSON- and structuredClone-safe). */
export interface SerializedVenueError {
  name: 'VenueError';
  kind: VenueErrorKind;
  code: string;
  message: string;
  partner_id: string | null;
  retry_after_ms: number | null;
  details: Record<string, unknown> | null;
}

export interface VenueErrorOptions {
  partner_id?: string | null;
  retry_after_ms?: number | null;
  details?: Record<string, unknown> | null;
  cause?: unknown;
}

const CODE_RE = /^[a-z][a-z0-9_]*$/;

export class VenueError extends Error {
  override readonly name = 'VenueError';
  readonly kind: VenueErrorKind;
  readonly code: string;
  readonly partner_id: string | null;
  readonly retry_after_ms: number | null;
  readonly details: Record<string, unknown> | null;

  constructor(kind: VenueErrorKind, code: string, message: string, opts: VenueErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    if (!VENUE_ERROR_KINDS.includes(kind)) throw new TypeError(`unknown venue error kind: ${String(kind)}`);
    if (!CODE_RE.test(code)) throw new TypeError(`venue error code must be snake_case: ${JSON.stringify(code)}`);
    this.kind = kind;
    this.code = code;
    this.partner_id = opts.partner_id ?? null;
    this.retry_after_ms = opts.retry_after_ms ?? null;
    this.details = opts.details ?? null;
  }

  get retryable(): boolean {
    return this.kind === 'retryable';
  }

  toJSON(): SerializedVenueError {
    return {
      name: 'VenueError',
      kind: this.kind,
      code: this.code,
      message: this.message,
      partner_id: this.partner_id,
      retry_after_ms: this.retry_after_ms,
      details: this.details,
    };
  }
}

export function isVenueError(e: unknown): e is VenueError {
  return e instanceof VenueError;
}

/** Type guard for the plain-object form (e.g. a piscina result or a BullMQ failed reason). */
export function isSerializedVenueError(v: unknown): v is SerializedVenueError {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    o.name === 'VenueError' &&
    typeof o.kind === 'string' &&
    (VENUE_ERROR_KINDS as readonly string[]).includes(o.kind) &&
    typeof o.code === 'string' &&
    typeof o.message === 'string'
  );
}

/**
 * Any thrown value as a serialized venue error. A foreign error (a bug, a library throw) becomes
 * `internal_error`, kind fatal: we do not know that a retry helps, and silently retrying a bug
 * hides it.
 */
export function serializeVenueError(e: unknown): SerializedVenueError {
  if (e instanceof VenueError) return e.toJSON();
  if (isSerializedVenueError(e)) return { ...e };
  const message = e instanceof Error ? e.message : String(e);
  return {
    name: 'VenueError',
    kind: 'fatal',
    code: VenueErrorCodes.internal,
    message,
    partner_id: null,
    retry_after_ms: null,
    details: null,
  };
}

/** Rebuilds a VenueError from its plain-object form (the inverse of `toJSON`). */
export function venueErrorFromJSON(obj: SerializedVenueError): VenueError {
  if (!isSerializedVenueError(obj)) throw new TypeError('not a serialized VenueError');
  return new VenueError(obj.kind, obj.code, obj.message, {
    partner_id: obj.partner_id ?? null,
    retry_after_ms: obj.retry_after_ms ?? null,
    details: obj.details ?? null,
  });
}

/** The kind of any thrown value (foreign errors count as fatal, as in serializeVenueError). */
export function errorKind(e: unknown): VenueErrorKind {
  return serializeVenueError(e).kind;
}

/** Shorthand for the error a method raises when the venue does not declare the capability. */
export function notSupported(partnerId: string, capability: string): VenueError {
  return new VenueError('non_retryable', VenueErrorCodes.capabilityNotSupported, `${partnerId} does not support ${capability}`, {
    partner_id: partnerId,
    details: { capability },
  });
}

/**
 * A venue's error map as data (CCXT style): the venue's own error code → our kind and code.
 * Codes absent from the map fall back to `fallback`.
 */
export type VenueErrorMap = Readonly<Record<string, { kind: VenueErrorKind; code: string }>>;

export function mapVenueError(
  map: VenueErrorMap,
  partnerId: string,
  venueCode: string,
  message: string,
  fallback: { kind: VenueErrorKind; code: string } = { kind: 'fatal', code: VenueErrorCodes.internal },
): VenueError {
  const hit = Object.prototype.hasOwnProperty.call(map, venueCode) ? map[venueCode]! : fallback;
  return new VenueError(hit.kind, hit.code, message, { partner_id: partnerId, details: { venue_code: venueCode } });
}
