/**
 * Every failure leaves as {error: {code, message, details?}} with a spec code. Validation and
 * transport errors from Fastify are mapped to codes a caller can branch on; anything unexpected is a
 * 500 `internal_error` whose details stay in the log.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../src/errors.js';
import { asStoreUnavailable } from '../../../src/store/unavailable.js';

interface AjvErrorLike {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fromValidation(err: FastifyError & { validation: AjvErrorLike[]; validationContext?: string }): ApiError {
  const where = err.validationContext ?? 'request';
  const first = err.validation[0]!;
  if (first.keyword === 'additionalProperties') {
    const name = String(first.params.additionalProperty);
    const at = first.instancePath ? `${first.instancePath}/${name}` : `/${name}`;
    return new ApiError(400, 'unknown_parameter', `${where} field ${at} is not part of the contract`, { parameter: at, in: where });
  }
  const field = first.instancePath || (first.params.missingProperty ? `/${String(first.params.missingProperty)}` : '');
  const name = field.replace(/^\//, '').replace(/\//g, '.');
  return new ApiError(400, 'invalid_parameter', `${where} ${name || 'value'} ${first.message ?? 'is invalid'}`.trim(), {
    in: where,
    parameter: name || null,
    rule: first.keyword,
    ...(first.params.allowedValues ? { allowed: first.params.allowedValues } : {}),
  });
}

function fromFastify(err: FastifyError): ApiError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_body', 'the body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'invalid_body', 'content-length does not match the body');
    default:
      break;
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ApiError(400, 'invalid_body', 'the body is not valid JSON');
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError(err.statusCode, 'invalid_request', err.message);
  }
  return null;
}

/** `onNotFound` sees every 404 for an unknown route (no route-level hook runs for those). */
export function installErrorHandling(app: FastifyInstance, onNotFound?: (req: FastifyRequest, reply: FastifyReply) => void): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    let api: ApiError | null = null;
    if (err instanceof ApiError) api = err;
    else if ((err as { validation?: unknown }).validation) api = fromValidation(err as never);
    else api = fromFastify(err) ?? asStoreUnavailable(err);
    if (!api) {
      request.log.error({ err, request_id: request.id, url: request.url }, 'unhandled error');
      api = new ApiError(500, 'internal_error', 'internal error; the request id is in the log', { request_id: request.id });
    }
    if (api.headers) reply.headers(api.headers);
    void reply.code(api.status).type('application/json; charset=utf-8').send(api.toBody());
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404);
    onNotFound?.(request, reply);
    void reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send(new ApiError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`).toBody());
  });
}
