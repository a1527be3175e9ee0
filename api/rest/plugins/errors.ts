/**
 * Every failure leaves as {error: {code, message, details?}} with a spec code. Validation and
 * transport errors from Fastify are mapped to codes a caller can branch on; anything unexpected is a
 * 500 `internal_error` whose details stay in the log.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../src/errors.js';
import { asStoreUnavailable } from '../../../src/store/unavailable.js';

export interface AjvErrorLike {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fromValidation(err: FastifyError & { validation: AjvErrorLike[]; validationContext?: string }): ApiError {
  return validationError(err.validation, err.validationContext ?? 'request');
}

/** The 400 of input a schema refused (Ajv's errors), naming the parameter; `where`: querystring, body, arguments (an MCP tool's). */
export function validationError(errors: readonly AjvErrorLike[], where: string): ApiError {
  const first = errors[0]!;
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

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    let api: ApiError | null = null;
    if (err instanceof ApiError) api = err;
    else if ((err as { validation?: unknown }).validation) api = fromValidation(err as never);
    else api = fromFastify(err) ?? asStoreUnavailable(err);
    if (!api) {
      request.log.error({ err, request_id: request.id, url: request.url }, 'unhandled error');
      api = new ApiError(500, 'internal_error', 'internal error; the request id is in the log', { request_id: request.id });
    }
    sendError(reply, api);
  });
}

function sendError(reply: FastifyReply, api: ApiError): void {
  if (api.headers) reply.headers(api.headers);
  void reply.code(api.status).type(JSON_TYPE).send(api.toBody());
}

const JSON_TYPE = 'application/json; charset=utf-8';

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;
const pass: Hook = (_req, _reply, done) => done();

/** Every /flow/v1 request needs a key, whether or not a route matches it. */
const GATED = /^\/flow\/v1(?:[/?]|$)/;

/**
 * Requests no route claims: unknown routes (404) and what Fastify refuses before routing (a path that
 * is not percent-encoded UTF-8, a path parameter over maxParamLength). Under /flow/v1 they pass the
 * same gate as a route, so a keyed caller is counted and gets the six rate-limit headers on the 404
 * or 400 as on any other answer, and a caller without a valid key gets the 401 every /flow/v1 path
 * gives. The gate and the response counter are set once the app has built them.
 */
export class UnroutedRequests {
  gate: Hook = pass;
  count: Hook = pass;

  constructor(private readonly log: { debug(obj: object, msg: string): void }) {}

  /** Fastify's `frameworkErrors` option. */
  readonly frameworkErrors = (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const api =
      err.code === 'FST_ERR_BAD_URL'
        ? new ApiError(400, 'invalid_parameter', 'the path is not valid percent-encoded UTF-8; encode each reserved or non-ASCII byte as %XX', { in: 'path' })
        : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new ApiError(414, 'uri_too_long', 'a path segment is longer than 500 characters; no id is that long', { in: 'path' })
          : new ApiError(400, 'invalid_request', 'the request could not be routed');
    this.answer(request, reply, () => sendError(reply, api));
  };

  /** Registers the 404 handler in its own scope, whose hooks run for unknown routes only. */
  async installNotFound(app: FastifyInstance): Promise<void> {
    await app.register(async (scope) => {
      // onRequest, before the body is parsed: an unknown route with a broken body is gated as well.
      scope.addHook('onRequest', (request, reply, done) => (GATED.test(request.url) ? this.gate(request, reply, done) : done()));
      scope.addHook('onResponse', (request, reply, done) => this.count(request, reply, done));
      scope.setNotFoundHandler((request, reply) => {
        sendError(reply, new ApiError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}; the routes are listed at /flow/v1/openapi.json`));
      });
    });
  }

  /** Fastify's `clientErrorHandler`: the request never became one (headers too large, not HTTP). */
  readonly clientErrorHandler = (err: Error & { code?: string }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, code, message] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'header_fields_too_large', 'the request line and headers exceed 16 KiB; shorten the URL or the headers']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'request_timeout', 'the request was not received in time; send it again']
          : [400, 'invalid_request', 'the request is not valid HTTP/1.1'];
    this.log.debug({ err, status }, 'client error');
    // A response already on this socket must not be cut into; otherwise answer, then close, and say so.
    if (socket.writable && !(socket as { _httpMessage?: unknown })._httpMessage) {
      const body = JSON.stringify(new ApiError(status, code, message).toBody());
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };

  private answer(request: FastifyRequest, reply: FastifyReply, send: () => void): void {
    const finish = (err?: Error) => {
      if (err instanceof ApiError) sendError(reply, err);
      else if (err) {
        request.log.error({ err, request_id: request.id, url: request.url }, 'unhandled error');
        sendError(reply, new ApiError(500, 'internal_error', 'internal error; the request id is in the log', { request_id: request.id }));
      }
      else send();
      this.count(request, reply, () => undefined);
    };
    if (GATED.test(request.url)) this.gate(request, reply, finish);
    else finish();
  }
}
