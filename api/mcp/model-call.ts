/**
 * One model call of the `ask` provider planner, on the AI pass-through's own path
 * (api/rest/ai/upstream.ts): the account's own provider key when it has one linked, else the
 * service's managed key, spending one reasoning credit as a pass-through POST does; the same base
 * URL, the same error mapping, the credit given back when the provider does not answer with a
 * success or its answer cannot be read (the question got nothing from it).
 */
import { DEFAULT_ANTHROPIC_VERSION, ProviderAnswerError, type AiProvider } from '../../src/domain/ai.js';
import { TOOL_USE_PATH } from '../../src/domain/ai-tool-use.js';
import { ApiError } from '../../src/errors.js';
import type { AppContext } from '../rest/context.js';
import { abortedCall, callProvider, credentialOf, modelAnswerFailure, refund } from '../rest/ai/upstream.js';
import type { Asker } from './planner.js';

export interface ModelCallLimits {
  /** The provider has this long to answer a call, body included. */
  timeoutMs: number;
  /** An answer longer than this is not read (a model's answer within max_tokens is far shorter). */
  maxAnswerBytes: number;
}

/** What a call gave: the answer as `read` made it, and the credits it spent (1 on managed credits, 0 on the account's own key). */
export interface ModelCallResult<T> {
  value: T;
  credits: number;
}

/**
 * Sends `body` to the provider's tool-use endpoint and reads the answer with `read` (which throws
 * ProviderAnswerError for a shape that is not the provider's). Throws an ApiError in the
 * pass-through's codes (credits_exhausted, provider_key_required, provider_key_rejected,
 * provider_unreachable, provider_timeout, provider_error, provider_auth_failed, provider_rejected).
 */
export async function callModel<T>(ctx: AppContext, provider: AiProvider, asker: Asker, body: unknown, limits: ModelCallLimits, read: (answer: unknown) => T): Promise<ModelCallResult<T>> {
  const cred = await credentialOf(asker.caller, ctx, provider, true);
  const signal = AbortSignal.any([asker.signal, AbortSignal.timeout(limits.timeoutMs)]);
  const res = await callProvider(ctx, provider, cred, {
    method: 'POST',
    path: TOOL_USE_PATH[provider],
    headers: { 'content-type': 'application/json', ...(provider === 'anthropic' ? { 'anthropic-version': DEFAULT_ANTHROPIC_VERSION } : {}) },
    body: JSON.stringify(body),
    signal,
  });
  const failure = await modelAnswerFailure(ctx, provider, cred, res);
  if (failure) throw failure;
  try {
    const text = await readCapped(res, limits.maxAnswerBytes);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ProviderAnswerError('not JSON');
    }
    const value = read(json);
    return { value, credits: cred.spend?.amount ?? 0 };
  } catch (err) {
    await refund(ctx, cred);
    throw unreadable(provider, err, signal);
  }
}

function unreadable(provider: AiProvider, err: unknown, signal: AbortSignal): ApiError {
  if (signal.aborted) return abortedCall(provider, signal);
  const why = err instanceof ProviderAnswerError ? err.message : 'it broke off';
  return new ApiError(502, 'provider_error', `${provider} gave an answer that could not be read (${why}); retry later`, { provider });
}

/** The body as text, refusing one longer than `max` bytes without holding more than that. */
async function readCapped(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    // Leaving the loop cancels the body: nothing more is read.
    if (size > max) throw new ProviderAnswerError(`longer than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
