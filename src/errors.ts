/**
 * Errors that reach a caller carry a stable spec code and an HTTP status. Anything else is a bug
 * and becomes a 500 `internal_error` with the details logged, never shown.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): { error: { code: string; message: string; details?: Record<string, unknown> } } {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const badRequest = (code: string, message: string, details?: Record<string, unknown>) =>
  new ApiError(400, code, message, details);
export const notFound = (what: string, id: string) =>
  new ApiError(404, 'not_found', `${what} ${JSON.stringify(id)} was not found`, { [`${what}_id`]: id });
export const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);
export const entitlementRequired = (missing: string[]) =>
  new ApiError(403, 'entitlement_required', `this key's plan lacks: ${missing.join(', ')}`, { missing });

/**
 * A store the request needs (Redis, PostgreSQL) cannot be reached: the service's state, not the
 * caller's fault and not a bug, so 503 `service_unavailable` with when to retry, never a 500.
 */
export class StoreUnavailable extends ApiError {
  constructor(
    readonly store: 'redis' | 'postgres',
    what = 'this request',
    readonly retryAfterSeconds = 1,
    /** What is known: the store is unreachable, or it did not answer in time (unreachable, or every connection busy). */
    state: 'unreachable' | 'no_answer' = 'unreachable',
  ) {
    super(
      503,
      'service_unavailable',
      `${what} cannot be served right now (${store === 'redis' ? 'Redis' : 'PostgreSQL'} ${state === 'unreachable' ? 'is unreachable' : 'did not answer in time: unreachable, or every connection is busy'}); retry in ${retryAfterSeconds} s`,
      { retry_after_seconds: retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    );
    this.name = 'StoreUnavailable';
  }
}
