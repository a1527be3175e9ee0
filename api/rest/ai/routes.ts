/**
 * The AI pass-through (spec "AI pass-through"; docs/ai.md). Every route needs ai:invoke and is
 * exempt from the daily budget but throttled per minute (spec "Limits").
 *
 * - GET|POST /flow/v1/ai/anthropic/* and /flow/v1/ai/openai/v1/*: the provider's own API at the
 *   provider's own paths (an SDK pointed at the prefix works as is). The request goes on with the
 *   provider key this call runs on; the answer comes back as the provider gave it, a streamed one
 *   chunk by chunk as it arrives.
 * - POST /flow/v1/ai/inferences: one shape for both providers ({provider, model, messages,
 *   max_tokens, stream?, temperature?} → {provider, model, output_text, usage, stop_reason}),
 *   streamed as `delta` events and a final `done` when asked to.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import { Type, type Static } from 'typebox';
import {
  AI_PROVIDERS,
  DEFAULT_ANTHROPIC_VERSION,
  FORWARDED_REQUEST_HEADERS,
  INFERENCE_ROLES,
  ProviderAnswerError,
  providerPath,
  providerRequest,
  resultFromAnswer,
  sseFrame,
  SseParser,
  StreamFold,
  type AiProvider,
  type InferenceRequest,
  type InferenceResult as InferenceResultT,
} from '../../../src/domain/ai.js';
import { ApiError, badRequest } from '../../../src/errors.js';
import type { AppContext } from '../context.js';
import { BAD_REQUEST_CODES, Errors, errorsWith, Ok, orProviderBody, ProviderBody } from '../openapi/responses.js';
import { Meta } from '../openapi/shapes.js';
import type { Agrees, Same } from '../openapi/shapes.js';
import { sendEnvelope } from '../reply.js';
import { abortOnHangUp, answerHeaders, callProvider, credentialFor, drained, modelAnswerFailure, providerFailure, refund, relay, type Credential } from './upstream.js';

const AI_ROUTE = { entitlements: ['ai:invoke'], dayExempt: true };
const closed = { additionalProperties: false } as const;

/** The pass-through prefixes; what follows is the provider path (providerPath). */
const PREFIX: Record<AiProvider, string> = { anthropic: '/flow/v1/ai/anthropic/', openai: '/flow/v1/ai/openai/v1/' };
const NAME: Record<AiProvider, string> = { anthropic: 'Anthropic', openai: 'OpenAI' };

const Sse = Type.String({ description: 'server-sent events, written to the caller as they arrive' });

const AI_ERRORS = {
  402: errorsWith(['credits_exhausted'], 'No own key for the provider and this month’s reasoning credits are spent (or the plan includes none)'),
  403: errorsWith(['entitlement_required', 'provider_key_required', 'provider_key_rejected', 'account_forbidden'], 'The key lacks ai:invoke; or no provider key is linked and the service has no managed key; or the provider refused the linked key; or X-Service-Account names an account the key may not act for'),
  502: errorsWith(['provider_unreachable', 'provider_error', 'provider_auth_failed'], 'The provider could not be reached, failed (5xx), or refused the service’s own key'),
};

const PassParams = Type.Object({ '*': Type.String({ maxLength: 300, description: 'the provider path, e.g. v1/messages' }) }, closed);

function passThroughSchema(provider: AiProvider, method: 'GET' | 'POST') {
  return {
    tags: ['ai'],
    summary: `${NAME[provider]}’s API, passed through (${method})`,
    description: `The provider’s request and answer shapes. ${provider === 'anthropic' ? 'Point an Anthropic SDK’s base URL at /flow/v1/ai/anthropic' : 'Point an OpenAI SDK’s base URL at /flow/v1/ai/openai/v1'} and send the Flow key as X-API-Key.`,
    operationId: `proxy${provider === 'anthropic' ? 'Anthropic' : 'OpenAi'}${method === 'GET' ? 'Get' : 'Post'}`,
    params: PassParams,
    ...(method === 'POST' ? { body: Type.Object({}, { additionalProperties: true, description: 'the provider’s request body' }) } : {}),
    response: {
      200: { description: 'The provider’s answer, as it gave it', content: { 'application/json': { schema: ProviderBody }, 'text/event-stream': { schema: Sse } } },
      400: orProviderBody(Errors.badRequest, `Invalid input (${BAD_REQUEST_CODES.join(', ')}), or the provider’s own 400`),
      429: orProviderBody(Errors.rateLimited, 'The workspace’s minute budget is spent, or the provider’s own 429 (with its Retry-After)'),
      '4xx': { ...ProviderBody, description: 'Another 4xx of the provider (404, 409, 413, 422, ...), its body passed through' },
      ...AI_ERRORS,
    },
  };
}

export const InferenceBody = Type.Object(
  {
    provider: Type.Enum([...AI_PROVIDERS]),
    model: Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$', description: 'the provider’s model id' }),
    messages: Type.Array(
      Type.Object({ role: Type.Enum([...INFERENCE_ROLES]), content: Type.String({ maxLength: 200_000 }) }, closed),
      { minItems: 1, maxItems: 500, description: 'the conversation; system messages go to Anthropic as its system text' },
    ),
    max_tokens: Type.Integer({ minimum: 1, maximum: 200_000 }),
    stream: Type.Optional(Type.Boolean({ description: 'answer as server-sent events: `delta` {text} as text arrives, then `done` (the result) or `error`' })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  },
  { ...closed, $id: 'InferenceRequest' },
);

export const InferenceResult = Type.Object(
  {
    provider: Type.Enum([...AI_PROVIDERS]),
    model: Type.String({ description: 'the model that answered, as the provider names it' }),
    output_text: Type.String(),
    usage: Type.Object({ input_tokens: Type.Integer({ minimum: 0 }), output_tokens: Type.Integer({ minimum: 0 }) }, closed),
    stop_reason: Type.Union([Type.String(), Type.Null()], { description: 'the provider’s own reason (end_turn, max_tokens, stop, length, ...)' }),
  },
  { ...closed, $id: 'InferenceResult' },
);

export type InferenceShapesAgree = [Agrees<Same<Static<typeof InferenceResult>, InferenceResultT>>, Agrees<Same<Static<typeof InferenceBody>, InferenceRequest>>];

const ProviderRejected = errorsWith(['provider_rejected', 'provider_error'], 'The provider refused the request (its 4xx status kept; details.provider_error holds its body), or answered a 4xx that is not JSON (provider_error)');

export function aiRoutes(app: FastifyInstance, ctx: AppContext): void {
  const calls = new Counter({
    name: 'flow_ai_calls_total',
    help: 'AI pass-through calls that reached the provider, by provider, credential (own, managed) and outcome (the provider’s status)',
    labelNames: ['provider', 'credential', 'outcome'] as const,
    registers: [ctx.metrics],
  });
  const count = (provider: AiProvider, cred: Credential, outcome: string) => calls.inc({ provider, credential: cred.kind, outcome });

  for (const provider of AI_PROVIDERS) {
    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: `${PREFIX[provider]}*`,
        schema: passThroughSchema(provider, method),
        config: AI_ROUTE,
        handler: async (req, reply) => passThrough(req, reply, provider, method),
      });
    }
  }

  async function passThrough(req: FastifyRequest, reply: FastifyReply, provider: AiProvider, method: 'GET' | 'POST'): Promise<void> {
    // The raw path, not the decoded parameter: the provider gets what the caller encoded.
    const raw = req.raw.url ?? '';
    const q = raw.indexOf('?');
    const rest = (q < 0 ? raw : raw.slice(0, q)).slice(PREFIX[provider].length);
    const path = providerPath(provider, rest);
    if (path === null) throw badRequest('invalid_parameter', 'the provider path may not contain . or .. segments, nor an encoded slash or backslash', { parameter: 'path' });
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS[provider]) {
      const v = req.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    if (provider === 'anthropic') headers['anthropic-version'] ??= DEFAULT_ANTHROPIC_VERSION;
    const cred = await credentialFor(req, ctx, provider, method === 'POST');
    const ac = abortOnHangUp(reply);
    const res = await callProvider(ctx, provider, cred, {
      method,
      path: path + (q < 0 ? '' : raw.slice(q)),
      headers,
      body: method === 'POST' ? JSON.stringify(req.body) : undefined,
      signal: ac.signal,
    });
    count(provider, cred, String(res.status));
    const failure = await providerFailure(ctx, provider, cred, res);
    if (failure) throw failure;
    // A 4xx passed through means the provider did not run the request: its credit comes back.
    if (!res.ok) await refund(ctx, cred);
    await relay(reply, res, ac.signal);
  }

  app.post<{ Body: InferenceRequest }>(
    '/flow/v1/ai/inferences',
    {
      schema: {
        tags: ['ai'],
        summary: 'One inference, the same shape for every provider',
        operationId: 'createInference',
        body: InferenceBody,
        response: {
          200: {
            description: 'The inference; with stream: true, server-sent events (delta {text}, then done {the result} or error {error})',
            content: { 'application/json': { schema: Ok(InferenceResult, 'The inference', Meta) }, 'text/event-stream': { schema: Sse } },
          },
          400: errorsWith([...BAD_REQUEST_CODES, 'provider_rejected', 'provider_error'], 'Invalid input; or the provider refused the request (provider_rejected, or provider_error when its answer is not JSON)'),
          429: orProviderRejected(),
          '4xx': ProviderRejected,
          ...AI_ERRORS,
        },
      },
      config: AI_ROUTE,
    },
    async (req, reply) => {
      const body = req.body;
      const provider = body.provider;
      const upstream = providerRequest(body);
      const cred = await credentialFor(req, ctx, provider, true);
      const ac = abortOnHangUp(reply);
      const res = await callProvider(ctx, provider, cred, {
        method: 'POST',
        path: upstream.path,
        headers: { 'content-type': 'application/json', ...(provider === 'anthropic' ? { 'anthropic-version': DEFAULT_ANTHROPIC_VERSION } : {}) },
        body: JSON.stringify(upstream.body),
        signal: ac.signal,
      });
      count(provider, cred, String(res.status));
      const failure = await modelAnswerFailure(ctx, provider, cred, res);
      if (failure) throw failure;
      if (body.stream) return streamInference(reply, provider, body.model, res, ac.signal);
      let result: InferenceResultT;
      try {
        result = resultFromAnswer(provider, body.model, await res.json());
      } catch (err) {
        if (ac.signal.aborted) throw new ApiError(499, 'client_closed', 'the caller closed the connection');
        throw new ApiError(502, 'provider_error', `${provider} gave an answer that could not be read: ${err instanceof ProviderAnswerError ? err.message : 'not JSON'}`, { provider });
      }
      return sendEnvelope(reply, ctx.clock.now(), result);
    },
  );
}

function orProviderRejected() {
  return orProviderBody(Errors.rateLimited, 'The workspace’s minute budget is spent, or the provider’s 429 as provider_rejected');
}

/**
 * The normalized stream: each piece of text the provider sends is written as a `delta` event when it
 * arrives; then `done` with the whole result, or `error` when the provider reported one or broke off.
 */
async function streamInference(reply: FastifyReply, provider: AiProvider, model: string, res: Response, signal: AbortSignal): Promise<void> {
  const out = reply.raw;
  reply.hijack();
  out.writeHead(200, { ...answerHeaders(reply, res), 'content-type': 'text/event-stream; charset=utf-8' });
  out.flushHeaders();
  const write = async (frame: string) => {
    if (!out.write(frame)) await drained(out, signal);
  };
  const parser = new SseParser();
  const fold = new StreamFold(provider, model);
  const decoder = new TextDecoder();
  try {
    if (res.body) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const e of parser.push(decoder.decode(chunk, { stream: true }))) {
          const text = fold.apply(e);
          if (text !== null) await write(sseFrame('delta', { text }));
        }
        if (fold.error !== null) break;
      }
    }
    if (fold.error !== null) await write(sseFrame('error', { error: { code: 'provider_error', message: fold.error } }));
    else if (!fold.done) await write(sseFrame('error', { error: { code: 'provider_error', message: `${provider} ended the stream before its end` } }));
    else await write(sseFrame('done', fold.result()));
    out.end();
  } catch {
    if (signal.aborted) {
      out.destroy();
      return;
    }
    // The provider broke off: say so in the stream, then end it.
    out.end(sseFrame('error', { error: { code: 'provider_error', message: `${provider} broke off the stream` } }));
  }
}
