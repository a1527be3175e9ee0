/**
 * Response entries for route schemas: the success envelope around a shape, and the error bodies
 * {error: {code, message, details?}} with the codes each status can carry. A route declares its
 * 2xx and the errors only it raises (404 of an unknown id, 503 of its own store); the answers every
 * route shares (the gate's 401/403/429/503, validation's 400, body parsing's 413/415) are added to
 * the document from the route's config by ./document.ts, so they cannot be forgotten on a new route.
 *
 * These schemas describe responses; they never serialize them (app.ts keeps JSON.stringify), so a
 * field missing here is caught by the contract test, not silently dropped from the response.
 */
import { Type, type TSchema } from 'typebox';
import { Meta, Pagination } from './shapes.js';

const closed = { additionalProperties: false } as const;

/** `{data, meta}` (`meta`: a route's own meta shape, e.g. LiquidityMeta). */
export const Ok = (data: TSchema, description: string, meta: TSchema = Meta) => Type.Object({ data, meta }, { ...closed, description });

/** `{data: item[], pagination, meta}`: a cursor-paginated list. */
export const OkPage = (item: TSchema, description: string) =>
  Type.Object({ data: Type.Array(item), pagination: Pagination, meta: Meta }, { ...closed, description });

const Details = Type.Record(Type.String(), Type.Unknown(), { description: 'machine-readable context, e.g. the parameter at fault' });

function errorDetail(id: string, code: TSchema, details: TSchema = Type.Optional(Details)) {
  return Type.Object({ code, message: Type.String({ description: 'what went wrong and what to do next' }), details }, { $id: id, ...closed });
}

const RETRY_AFTER = { 'Retry-After': { type: 'integer', description: 'seconds to wait before retrying' } } as const;

/** A response entry: the body `{error: detail}` with the response's description and headers. */
function errorResponse(detail: TSchema, description: string, headers?: Record<string, unknown>) {
  return { ...Type.Object({ error: detail }, { ...closed, description }), ...(headers ? { headers } : {}) };
}

/** Every 400 code the service answers with; one list, so a new code is added in one place. */
export const BAD_REQUEST_CODES = ['invalid_parameter', 'unknown_parameter', 'invalid_cursor', 'invalid_body', 'invalid_request'] as const;

const BadRequestError = errorDetail('BadRequestError', Type.Enum([...BAD_REQUEST_CODES]));
const UnauthorizedError = errorDetail('UnauthorizedError', Type.Literal('unauthorized'));
const EntitlementRequiredError = errorDetail(
  'EntitlementRequiredError',
  Type.Literal('entitlement_required'),
  Type.Object({ missing: Type.Array(Type.String(), { description: 'the entitlements the key’s plan lacks' }) }, closed),
);
const NotFoundError = errorDetail('NotFoundError', Type.Literal('not_found'));
const PayloadTooLargeError = errorDetail('PayloadTooLargeError', Type.Literal('payload_too_large'));
const UriTooLongError = errorDetail('UriTooLongError', Type.Literal('uri_too_long'));
const UnsupportedMediaTypeError = errorDetail('UnsupportedMediaTypeError', Type.Literal('unsupported_media_type'));
const RateLimitError = errorDetail(
  'RateLimitError',
  Type.Literal('rate_limit_exceeded'),
  Type.Object({ retry_after_seconds: Type.Integer({ minimum: 0 }), window: Type.Enum(['minute', 'day']) }, closed),
);
const RetryDetails = Type.Object({ retry_after_seconds: Type.Integer({ minimum: 0 }) }, closed);
const ServiceUnavailableError = errorDetail('ServiceUnavailableError', Type.Literal('service_unavailable'), RetryDetails);
const HistoryUnavailableError = errorDetail('HistoryUnavailableError', Type.Enum(['service_unavailable', 'history_unavailable']), RetryDetails);
const InternalError = errorDetail(
  'InternalError',
  Type.Literal('internal_error'),
  Type.Object({ request_id: Type.String({ description: 'find the cause in the service log under this id' }) }, closed),
);
const OperatorError = errorDetail('OperatorError', Type.String({ description: 'the simulator’s code, e.g. unknown_position, invalid_price' }));

/**
 * A route's own answers at one status, with every code it can carry there (the account routes'
 * 400 with idempotency_key_required, 409 balance_cap, ...). Give the 400 entry the shared codes too.
 */
export const errorsWith = (codes: readonly string[], description: string) =>
  errorResponse(Type.Object({ code: Type.Enum([...codes]), message: Type.String({ description: 'what went wrong and what to do next' }), details: Type.Optional(Details) }, closed), description);

/** A provider's own body, passed through as the provider wrote it (the AI pass-through). */
export const ProviderBody = Type.Object({}, { additionalProperties: true, description: 'the provider’s own JSON body, passed through unchanged' });

/**
 * An answer at a status both this service and an AI provider give (400, 429 on the pass-through):
 * this service's error body, or the provider's own.
 */
export const orProviderBody = (response: Record<string, unknown>, description: string) => {
  const { headers, description: _d, ...schema } = response as { headers?: unknown; description?: string };
  return { ...Type.Union([schema as TSchema, ProviderBody]), description, ...(headers ? { headers } : {}) };
};

export const Errors = {
  badRequest: errorResponse(BadRequestError, `Invalid input: ${BAD_REQUEST_CODES.join(', ')}; details names the parameter`),
  unauthorized: errorResponse(UnauthorizedError, 'No credential, or one that is not valid (unknown, revoked, expired)'),
  entitlementRequired: errorResponse(EntitlementRequiredError, 'The key’s plan lacks an entitlement this route needs'),
  notFound: errorResponse(NotFoundError, 'No such resource'),
  payloadTooLarge: errorResponse(PayloadTooLargeError, 'The request body is over 1 MiB'),
  uriTooLong: errorResponse(UriTooLongError, 'A path segment is over 500 characters; no id is that long'),
  unsupportedMediaType: errorResponse(UnsupportedMediaTypeError, 'The body is not application/json'),
  rateLimited: errorResponse(RateLimitError, 'The workspace’s minute or day budget is spent', RETRY_AFTER),
  serviceUnavailable: errorResponse(ServiceUnavailableError, 'Authentication and rate limiting are unavailable (a store is unreachable); retry after Retry-After', RETRY_AFTER),
  simulatorUnavailable: errorResponse(
    ServiceUnavailableError,
    'The simulator cannot be reached or did not answer (no ingest process runs it, or a store is unreachable); the message says what to do; retry after Retry-After',
    RETRY_AFTER,
  ),
  historyUnavailable: errorResponse(HistoryUnavailableError, 'The history store or the gate did not answer; retry after Retry-After', RETRY_AFTER),
  internal: errorResponse(InternalError, 'A fault in the service, not in the request; the cause is logged under details.request_id'),
  operator: (description: string) => errorResponse(OperatorError, description),
};
