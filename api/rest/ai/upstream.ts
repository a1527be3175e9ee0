/**
 * One AI call to its provider (docs/ai.md): the credential it runs on, the request, the mapping of
 * what the provider answers, and the relay of a streamed answer chunk by chunk.
 *
 * Credentials: the acting account's own linked key when it has one for the provider (no credits
 * spent); otherwise the service's key for the provider (FLOW_<PROVIDER>_API_KEY), a call that runs a
 * model (a POST) spending one reasoning credit of the workspace, refunded when the provider does not
 * answer with a success.
 * Keys never leave this module except in the one header the provider reads; nothing logs them.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FORWARDED_RESPONSE_HEADERS, providerAuthHeaders, providerErrorMessage, type AiProvider } from '../../../src/domain/ai.js';
import { ApiError } from '../../../src/errors.js';
import { ownAiKey } from '../../../src/store/pg/ai-keys.js';
import { creditsExhausted, refundCredits, spendCredits, type CreditSpend } from '../../../src/store/pg/credits.js';
import type { Principal } from '../../../src/domain/principal.js';
import { actingAccountOf, SERVICE_ACCOUNT_HEADER } from '../account/acting.js';
import type { AppContext } from '../context.js';

export interface Credential {
  kind: 'own' | 'managed';
  key: string;
  /** The credit a managed call spent (refunded when the call fails). */
  spend: CreditSpend | null;
}

const envName = (provider: AiProvider) => `FLOW_${provider.toUpperCase()}_API_KEY`;

/** Who a call is made for: the key's principal and the X-Service-Account it names (a REST request's, or an MCP request's). */
export interface AiCaller {
  principal: Principal;
  serviceAccount: string | string[] | undefined;
}

/**
 * The key this call runs on, after spending its credit when it is the service's and the call runs a
 * model (`costs`: a POST; a GET lists or reads what the provider holds, and costs nothing).
 */
export function credentialFor(req: FastifyRequest, ctx: AppContext, provider: AiProvider, costs: boolean): Promise<Credential> {
  return credentialOf({ principal: req.principal, serviceAccount: req.headers[SERVICE_ACCOUNT_HEADER] }, ctx, provider, costs);
}

/** credentialFor, for a caller that is not a REST request (the MCP `ask` tool's provider planner). */
export async function credentialOf(caller: AiCaller, ctx: AppContext, provider: AiProvider, costs: boolean): Promise<Credential> {
  const account = await actingAccountOf(caller.principal, caller.serviceAccount, ctx.pool);
  const own = await ownAiKey(ctx.pool, ctx.config.aiKeySecret, account, provider);
  if (own.kind === 'key') return { kind: 'own', key: own.key, spend: null };
  if (own.kind === 'unreadable') {
    throw new ApiError(403, 'provider_key_rejected', `the ${provider} key linked to this account can no longer be read (the service's key secret changed); link it again`, { provider });
  }
  const managed = ctx.config.ai[provider].apiKey;
  if (!managed) {
    throw new ApiError(403, 'provider_key_required', `this account has no ${provider} key linked and the service offers no managed ${provider} credits; link your own key (docs/ai.md)`, { provider });
  }
  if (!costs) return { kind: 'managed', key: managed, spend: null };
  const p = caller.principal;
  const spent = await spendCredits(ctx.pool, { workspaceId: p.workspace_id, plan: p.plan, amount: 1, nowMs: ctx.clock.now() });
  if (!spent.ok) throw creditsExhausted(spent.credits);
  return { kind: 'managed', key: managed, spend: spent.spend };
}

export async function refund(ctx: AppContext, cred: Credential): Promise<void> {
  if (!cred.spend) return;
  const spend = cred.spend;
  cred.spend = null;
  await refundCredits(ctx.pool, spend).catch((err: unknown) => ctx.log.warn({ err, workspace_id: spend.workspaceId }, 'could not refund an AI call’s credit'));
}

/** Aborts the provider call when the caller goes away before the answer is complete. */
export function abortOnHangUp(reply: FastifyReply): AbortController {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac;
}

/** Sends the request; a provider out of reach is 502 provider_unreachable. Redirects are not followed: the key must not travel on. */
export async function callProvider(
  ctx: AppContext,
  provider: AiProvider,
  cred: Credential,
  req: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
): Promise<Response> {
  const url = `${ctx.config.ai[provider].baseUrl}${req.path}`;
  try {
    return await fetch(url, {
      method: req.method,
      headers: { ...req.headers, ...providerAuthHeaders(provider, cred.key) },
      body: req.body,
      signal: req.signal,
      redirect: 'manual',
    });
  } catch (err) {
    await refund(ctx, cred);
    if (req.signal.aborted) throw abortedCall(provider, req.signal);
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    ctx.log.warn({ provider, cause }, 'AI provider unreachable');
    throw new ApiError(502, 'provider_unreachable', `${provider} could not be reached (${cause}); retry later`, { provider });
  }
}

/**
 * Why a call was aborted: the caller went away (499 client_closed), or a deadline the caller set
 * (AbortSignal.timeout) passed first (504 provider_timeout).
 */
export function abortedCall(provider: AiProvider, signal: AbortSignal): ApiError {
  if ((signal.reason as { name?: string } | undefined)?.name === 'TimeoutError') {
    return new ApiError(504, 'provider_timeout', `${provider} did not answer in time; retry later`, { provider });
  }
  return new ApiError(499, 'client_closed', 'the caller closed the connection');
}

/**
 * The error a provider's answer becomes, or null when it passes through as it is (a success, or a
 * 4xx the caller caused and can read in the provider's own words).
 * - 401/403: the key the service chose was refused, never the caller's Flow key: with the account's
 *   own key 403 provider_key_rejected; with the service's key 502 provider_auth_failed (the
 *   operator's to fix; logged).
 * - 3xx (a redirect not followed) and 5xx: 502 provider_error with the provider's status.
 * - another 4xx that is not JSON (a proxy's page): that status, provider_error.
 */
export async function providerFailure(ctx: AppContext, provider: AiProvider, cred: Credential, res: Response): Promise<ApiError | null> {
  if (res.ok) return null;
  const status = res.status;
  const json = (res.headers.get('content-type') ?? '').includes('json');
  if (status >= 400 && status < 500 && status !== 401 && status !== 403 && json) return null;
  await refund(ctx, cred);
  const text = await res.text().catch(() => '');
  if (status === 401 || status === 403) {
    if (cred.kind === 'own') {
      return new ApiError(403, 'provider_key_rejected', `${provider} refused the key linked to this account (HTTP ${status}); link a valid key`, { provider, provider_status: status });
    }
    ctx.log.error({ provider, provider_status: status }, `${provider} refused the service's managed key; check ${envName(provider)}`);
    return new ApiError(502, 'provider_auth_failed', `${provider} refused the service's key; the operator must fix it`, { provider, provider_status: status });
  }
  if (status >= 500 || status < 400) {
    ctx.log.warn({ provider, provider_status: status }, 'AI provider failed');
    return new ApiError(502, 'provider_error', `${provider} answered HTTP ${status}; retry later`, { provider, provider_status: status });
  }
  return new ApiError(status, 'provider_error', `${provider} answered HTTP ${status}: ${text.slice(0, 300)}`, { provider, provider_status: status });
}

/**
 * The error an answer to a model call read here (not relayed) becomes, or null for a success: what
 * providerFailure maps, and any other 4xx as provider_rejected with the provider's status, message
 * and body. The credit of a call that fails is given back.
 */
export async function modelAnswerFailure(ctx: AppContext, provider: AiProvider, cred: Credential, res: Response): Promise<ApiError | null> {
  const failure = await providerFailure(ctx, provider, cred, res);
  if (failure) return failure;
  if (res.ok) return null;
  await refund(ctx, cred);
  const err = await res.json().catch(() => null);
  return new ApiError(res.status, 'provider_rejected', `${provider} refused the request: ${providerErrorMessage(err) ?? `HTTP ${res.status}`}`, { provider, provider_status: res.status, provider_error: err });
}

/** The provider's answer headers a caller may see, with the gate's rate-limit headers. */
export function answerHeaders(reply: FastifyReply, res: Response): Record<string, string | number | string[]> {
  const headers: Record<string, string | number | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v as string | number | string[];
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const v = res.headers.get(name);
    if (v !== null) headers[name] = v;
  }
  // No proxy in between should hold a stream back to buffer it.
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  return headers;
}

/**
 * Writes the provider's answer to the caller as it arrives: each chunk is written when it comes, with
 * no buffering beyond the socket's (a slow caller pauses the provider read, not the other way). A
 * provider stream that breaks off ends the caller's response abruptly (no final chunk), so the
 * caller sees an incomplete answer, never a complete-looking one.
 */
export async function relay(reply: FastifyReply, res: Response, signal: AbortSignal): Promise<void> {
  const out = reply.raw;
  reply.hijack();
  out.writeHead(res.status, answerHeaders(reply, res));
  out.flushHeaders();
  try {
    if (res.body) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        if (!out.write(chunk)) await drained(out, signal);
      }
    }
    out.end();
  } catch {
    out.destroy();
  }
}

/** Resolves when the socket takes more, or rejects when the caller is gone. */
export async function drained(out: Writable, signal: AbortSignal): Promise<void> {
  await once(out, 'drain', { signal });
}
