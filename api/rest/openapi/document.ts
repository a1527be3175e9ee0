/**
 * The OpenAPI document (/flow/v1/openapi.json): @fastify/swagger's options. The routes' own schemas
 * give paths, parameters, bodies and success shapes; this module adds what follows from a route's
 * config rather than its handler, so it holds for every route without each restating it:
 * - the gate's answers (401, 403 when the route needs entitlements, 429, 503) and the six
 *   X-RateLimit-* headers on every answer the gate has counted (403 only where a route needs more
 *   than the base entitlements every key holds);
 * - validation's 400 on routes that take input, 413/415 on routes with a body, 414 on routes with path parameters;
 * - the error handler's 500 internal_error, which any route gives on a fault of the service;
 * - `security: []` on public routes;
 * - a query parameter with a default is optional to the caller (the validator fills it in; the
 *   handler's type keeps it required, which is why the schema marks it required).
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import { Type } from 'typebox';
import { API_VERSION } from '../../../src/domain/envelope.js';
import { BASE_ENTITLEMENTS } from '../../../src/domain/plans.js';
import { Errors } from './responses.js';

type Json = Record<string, any>;

const integer = (description: string) => ({ description, required: true, schema: { type: 'integer', minimum: 0 } });

/** The headers the gate sets on every counted answer (spec "Limits"). One definition each. */
export const RATE_LIMIT_HEADERS: Record<string, Json> = {
  'X-RateLimit-Limit-Minute': integer('requests allowed per minute for the workspace'),
  'X-RateLimit-Remaining-Minute': integer('requests left in the current minute'),
  'X-RateLimit-Reset-Minute': integer('when the minute window resets, epoch seconds'),
  'X-RateLimit-Limit-Day': integer('requests allowed per UTC day'),
  'X-RateLimit-Remaining-Day': integer('requests left today'),
  'X-RateLimit-Reset-Day': integer('when the day window resets (UTC midnight), epoch seconds'),
};

/** Answers given before the gate has counted the request carry no rate-limit headers. */
const UNCOUNTED = new Set(['401', '500', '503']);

export const TAGS = [
  { name: 'account', description: 'The caller’s own context' },
  { name: 'orders', description: 'Placing, reading and cancelling orders' },
  { name: 'catalog', description: 'Leagues, participants, contests, markets, venues' },
  { name: 'liquidity', description: 'Live prices, depth and game state' },
  { name: 'history', description: 'Price history' },
  { name: 'trades', description: 'Trade prints' },
  { name: 'signals', description: 'Market signals and their type catalog; arbitrages (deprecated)' },
  { name: 'orders', description: 'Orders: preflight (check without placing), buy' },
  { name: 'kits', description: 'Guides to this service, watermarked per key' },
  { name: 'ai', description: 'AI providers’ APIs on the account’s own key or on managed credits' },
  { name: 'service', description: 'Health, readiness, metrics and this document (no key)' },
  { name: 'simulator', description: 'Operator control of the simulated venues (X-Admin-Token)' },
];

export function swaggerOptions(): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Flow API',
        version: API_VERSION,
        description:
          'Market aggregation and order execution. Successful reads answer {data, pagination?, meta}; every error answers {error: {code, message, details?}}.',
      },
      servers: [{ url: '/', description: 'this service: paths are relative to the host that serves this document' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          playerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          adminToken: { type: 'apiKey', in: 'header', name: 'X-Admin-Token', description: 'FLOW_ADMIN_TOKEN; the simulator control API only' },
        },
        headers: RATE_LIMIT_HEADERS as never,
      },
      security: [{ apiKey: [] }, { playerJwt: [] }],
    },
    // Shapes with an $id become components/schemas/<$id>; cloned so hoisting never rewrites them.
    refResolver: { clone: true, buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url, route }) => restOfPath({ schema: documentRoute(schema, route), url }),
    transformObject: (doc) => sharedErrorResponses(withRateLimitHeaders((doc as { openapiObject: Json }).openapiObject)) as never,
  };
}

function documentRoute(schema: FastifySchema | undefined, route: RouteOptions): FastifySchema {
  const s = { ...(schema ?? {}) } as Json;
  if (s.hide) return s;
  const cfg = route.config ?? {};
  // errors.ts answers anything unexpected with 500 internal_error, on every route.
  const shared: Json = { 500: Errors.internal };
  if (s.params || s.querystring || s.body) shared['400'] = Errors.badRequest;
  if (s.body) Object.assign(shared, { 413: Errors.payloadTooLarge, 415: Errors.unsupportedMediaType });
  // The router refuses a path parameter over maxParamLength before the route runs (errors.ts).
  if (s.params) shared['414'] = Errors.uriTooLong;
  if (cfg.public) {
    s.security ??= [];
  } else {
    shared['401'] = Errors.unauthorized;
    // Every key holds the base entitlements: only a route that needs more can answer 403.
    if (cfg.entitlements?.some((e) => !(BASE_ENTITLEMENTS as readonly string[]).includes(e))) shared['403'] = Errors.entitlementRequired;
    shared['429'] = Errors.rateLimited;
    shared['503'] = Errors.serviceUnavailable;
  }
  // The route's own entry for a status wins: it knows its codes (history's 503, the simulator's 400).
  s.response = { ...shared, ...(s.response ?? {}) };
  if (s.querystring) s.querystring = optionalWhenDefaulted(s.querystring);
  return s;
}

/**
 * A wildcard route (`/flow/v1/ai/anthropic/*`) is documented with a parameter `{path}` for what the
 * star matches: OpenAPI has no wildcard, and `{*}` is no valid parameter name. The parameter's schema
 * says it spans segments (`x-rest-of-path`), so a client (and the contract test) knows it may hold
 * slashes.
 */
export const REST_OF_PATH = 'x-rest-of-path';
function restOfPath(r: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  if (!r.url.endsWith('*')) return r;
  const s = r.schema as Json;
  const params = s.params as Json | undefined;
  const star = params?.properties?.['*'];
  if (!star) return r;
  const { '*': _star, ...others } = params!.properties;
  const required = (params!.required ?? []).filter((n: string) => n !== '*');
  return {
    url: `${r.url.slice(0, -1)}:path`,
    schema: { ...s, params: { ...params, properties: { ...others, path: { ...star, [REST_OF_PATH]: true } }, required: [...required, 'path'] } } as FastifySchema,
  };
}

function optionalWhenDefaulted(q: Json): Json {
  if (!Array.isArray(q.required)) return q;
  const props = q.properties ?? {};
  return { ...q, required: q.required.filter((name: string) => props[name]?.default === undefined) };
}

/** The gate's six headers, by reference, on every answer of a gated operation that it counted. */
function withRateLimitHeaders(doc: Json): Json {
  for (const item of Object.values(doc.paths ?? {}) as Json[]) {
    for (const op of Object.values(item) as Json[]) {
      if (typeof op !== 'object' || !op.responses) continue;
      const gated = op.security === undefined; // inherits the document's key/JWT security
      if (!gated) continue;
      for (const [status, response] of Object.entries(op.responses) as [string, Json][]) {
        if (UNCOUNTED.has(status)) continue;
        response.headers = { ...(response.headers ?? {}) };
        for (const name of Object.keys(RATE_LIMIT_HEADERS)) response.headers[name] = { $ref: `#/components/headers/${name}` };
      }
    }
  }
  return doc;
}

/** GET /flow/v1/openapi.json itself. */
export const OPENAPI_ROUTE = {
  operationId: 'getOpenApiDocument',
  tags: ['service'],
  summary: 'This OpenAPI document',
  response: {
    200: Type.Object(
      { openapi: Type.String(), info: Type.Record(Type.String(), Type.Unknown()), paths: Type.Record(Type.String(), Type.Unknown()) },
      { additionalProperties: true, description: 'An OpenAPI 3.1 document' },
    ),
  },
};

/**
 * Error answers repeat across operations (each with six header references): each distinct one is
 * listed once under components/responses, named after its error schema, and referenced.
 */
function sharedErrorResponses(doc: Json): Json {
  const named = new Map<string, string>();
  const responses: Json = (doc.components.responses ??= {});
  for (const item of Object.values(doc.paths ?? {}) as Json[]) {
    for (const op of Object.values(item) as Json[]) {
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, Json][]) {
        const ref: unknown = response.content?.['application/json']?.schema?.properties?.error?.$ref;
        if (Number(status) < 400 || typeof ref !== 'string') continue;
        const text = JSON.stringify(response);
        let name = named.get(text);
        if (!name) {
          const base = ref.split('/').pop()!.replace(/Error$/, '');
          // The same answer on a route the gate does not count differs only by its headers.
          const onlyHeaders = (a: Json | undefined) => a !== undefined && JSON.stringify({ ...a, headers: undefined }) === JSON.stringify({ ...response, headers: undefined });
          const candidates = [base, ...(onlyHeaders(responses[base]) ? [`${base}WithoutRateLimit`] : []), `${base}${status}`];
          name = candidates.find((c) => responses[c] === undefined) ?? base;
          for (let n = 2; responses[name] !== undefined; n++) name = `${base}${status}_${n}`;
          responses[name] = response;
          named.set(text, name);
        }
        op.responses[status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  return doc;
}
