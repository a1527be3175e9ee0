/**
 * The AI pass-through (issue 13 item 5; spec "AI pass-through") over a real socket against a local
 * fake provider that streams (test/support/fake-ai-provider.ts):
 * - a streamed answer is relayed chunk by chunk: the first chunk reaches the caller while the
 *   provider still holds the rest, and the caller gets the provider's bytes exactly;
 * - the provider sees the key the call runs on (the account's own, or the service's managed key)
 *   and never the caller's Flow key; managed calls spend a credit shown on /auth/me, refunded when
 *   the provider does not run the request;
 * - the normalized inference, whole and streamed, on both providers;
 * - provider errors: a 4xx passed through with its status, 401/403 and 5xx mapped, an unreachable
 *   provider 502 provider_unreachable;
 * - ai:invoke, provider_key_required, credits_exhausted, X-Service-Account, the day exemption and
 *   the minute throttle; a caller hanging up aborts the provider's stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAiKeysCommand } from '../../../cli/ai-kits.js';
import { linkAiKey } from '../../../src/store/pg/ai-keys.js';
import { creditPeriod, creditsOf, refundCredits, spendCredits } from '../../../src/store/pg/credits.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { accountKey, organizationUser } from '../../support/accounts.js';
import { FAKE_TEXT, startFakeProvider, streamedAnswer, type FakeProvider } from '../../support/fake-ai-provider.js';
import { rawRequest } from '../../support/raw-http.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { createKey } from '../../../src/store/pg/keys.js';

const MANAGED_ANTHROPIC = 'sk-ant-managed-0000-SECRET';
const OWN_OPENAI = 'sk-own-openai-1111-SECRET';
const OWN_ANTHROPIC = 'sk-ant-own-2222-SECRET';
const USER_ANTHROPIC = 'sk-ant-user-3333-SECRET';

let s: TestStack;
let fake: FakeProvider;
let base: string;
/** Pro, no own key: Anthropic on managed credits; OpenAI has no managed key. */
let PRO: CreatedKey;
/** Pro, with its own OpenAI and Anthropic keys. */
let OWN: CreatedKey;
let FREE: CreatedKey;

beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startStack({ env: { FLOW_ANTHROPIC_BASE_URL: fake.url, FLOW_OPENAI_BASE_URL: fake.url, FLOW_ANTHROPIC_API_KEY: MANAGED_ANTHROPIC } });
  await s.built.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(s.built.app.server.address() as { port: number }).port}`;
  PRO = await accountKey(s, 'data', { plan: 'pro' });
  OWN = await accountKey(s, 'data', { plan: 'pro' });
  FREE = await accountKey(s, 'data', { plan: 'free' });
  await linkAiKey(s.rt.pool, s.config.aiKeySecret, { routerAccountId: OWN.router_account_id, provider: 'openai', apiKey: OWN_OPENAI });
  await linkAiKey(s.rt.pool, s.config.aiKeySecret, { routerAccountId: OWN.router_account_id, provider: 'anthropic', apiKey: OWN_ANTHROPIC });
});
afterAll(async () => {
  await s?.close();
  await fake?.close().catch(() => undefined);
});

const messagesBody = (model: string, stream = false) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello' }], ...(stream ? { stream: true } : {}) });
const chatBody = (model: string, stream = false) => ({ model, messages: [{ role: 'user', content: 'Say hello' }], ...(stream ? { stream: true } : {}) });

function call(path: string, key: CreatedKey, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key.api_key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
}

const used = async (k: CreatedKey): Promise<number> => ((await (await call('/flow/v1/auth/me', k)).json()) as any).data.credits.used_this_period;

/** Reads the body until `until` holds of what has arrived; the reader stays open. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: (text: string) => boolean, text = ''): Promise<string> {
  const decoder = new TextDecoder();
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the body ended before the condition held: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

const readAll = (reader: ReadableStreamDefaultReader<Uint8Array>, text: string) =>
  (async () => {
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  })();

/** Every header value the provider received, to look for a key that must not be there. */
const headerText = (i: number) => JSON.stringify(fake.requests[i]!.headers);

describe('provider-compatible paths', () => {
  it('streams Anthropic’s answer chunk by chunk: the first chunk arrives while the provider still holds the rest', async () => {
    const hold = fake.hold();
    const before = await used(PRO);
    const n = fake.requests.length;
    const res = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('claude-test', true), { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('request-id')).toBe('req_fake');
    expect(res.headers.get('x-ratelimit-remaining-minute')).not.toBeNull();
    const reader = res.body!.getReader();
    const first = await readUntil(reader, (t) => t.includes(`"text":"${FAKE_TEXT[0]}"`));
    // The caller has the first piece of text; the provider has not sent the rest, and cannot until released.
    expect(hold.finished).toBe(false);
    expect(first).not.toContain(FAKE_TEXT[1]);
    hold.release();
    const all = await readAll(reader, first);
    expect(hold.finished).toBe(true);
    expect(all).toBe(streamedAnswer('anthropic', 'claude-test'));
    // What the provider got: the managed key, the caller's headers it reads, the body as sent; no Flow key.
    const seen = fake.requests[n]!;
    expect(seen).toMatchObject({ method: 'POST', path: '/v1/messages', body: messagesBody('claude-test', true) });
    expect(seen.headers).toMatchObject({ 'x-api-key': MANAGED_ANTHROPIC, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024' });
    expect(headerText(n)).not.toContain(PRO.api_key);
    expect(seen.headers.authorization).toBeUndefined();
    expect(await used(PRO)).toBe(before + 1);
  });

  it('OpenAI’s path with the account’s own key: Bearer that key, no credit spent, the provider’s cookies and rate-limit headers kept back', async () => {
    const n = fake.requests.length;
    const before = await used(OWN);
    const res = await call('/flow/v1/ai/openai/v1/chat/completions', OWN, chatBody('gpt-test', true));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(streamedAnswer('openai', 'gpt-test'));
    expect(fake.requests[n]).toMatchObject({ path: '/v1/chat/completions', headers: { authorization: `Bearer ${OWN_OPENAI}` } });
    expect(fake.requests[n]!.headers['x-api-key']).toBeUndefined();
    expect(await used(OWN)).toBe(before);
    const whole = await call('/flow/v1/ai/openai/v1/chat/completions', OWN, chatBody('gpt-test'));
    expect(whole.status).toBe(200);
    expect(whole.headers.get('set-cookie')).toBeNull();
    expect(whole.headers.get('x-ratelimit-limit-requests')).toBeNull();
    expect(((await whole.json()) as any).choices[0].message.content).toBe(FAKE_TEXT.join(''));
  });

  it('the own key wins over managed credits; GET with its query string goes through', async () => {
    const n = fake.requests.length;
    const res = await call('/flow/v1/ai/anthropic/v1/models?limit=2&after_id=x', OWN);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.map((m: any) => m.id)).toEqual(['model-a', 'model-b']);
    expect(fake.requests[n]).toMatchObject({ method: 'GET', path: '/v1/models?limit=2&after_id=x', headers: { 'x-api-key': OWN_ANTHROPIC } });
  });

  it('flow ai-keys set, list and remove: the key read from standard input, never shown again', async () => {
    const k = await accountKey(s, 'data', { plan: 'pro' });
    const out: string[] = [];
    await runAiKeysCommand(s.rt, ['set', '--account', k.router_account_id, '--provider', 'openai', '--json'], (l) => out.push(l), () => 'sk-cli-openai-4444-SECRET');
    expect(JSON.parse(out[0]!)).toMatchObject({ provider: 'openai', key_hint: 'CRET' });
    await runAiKeysCommand(s.rt, ['list', '--account', k.router_account_id, '--json'], (l) => out.push(l));
    expect(JSON.parse(out[1]!)).toEqual([{ provider: 'openai', key_hint: 'CRET', linked_at: expect.any(String) }]);
    expect(out.join('\n')).not.toContain('SECRET');
    const n = fake.requests.length;
    expect((await call('/flow/v1/ai/openai/v1/chat/completions', k, chatBody('gpt-test'))).status).toBe(200);
    expect(fake.requests[n]!.headers.authorization).toBe('Bearer sk-cli-openai-4444-SECRET');
    await runAiKeysCommand(s.rt, ['remove', '--account', k.router_account_id, '--provider', 'openai'], (l) => out.push(l));
    const gone = await call('/flow/v1/ai/openai/v1/chat/completions', k, chatBody('gpt-test'));
    expect(((await gone.json()) as any).error.code).toBe('provider_key_required');
    await expect(runAiKeysCommand(s.rt, ['set', '--account', k.router_account_id, '--provider', 'openai'], () => undefined, () => 'has space')).rejects.toThrow(/printable ASCII/);
  });

  it('linked keys are stored encrypted', async () => {
    const { rows } = await s.rt.pool.query<{ key_ciphertext: Buffer; key_hint: string }>('SELECT key_ciphertext, key_hint FROM ai_provider_keys WHERE router_account_id = $1', [OWN.router_account_id]);
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.key_ciphertext.toString('latin1')).not.toContain('SECRET');
      expect(r.key_hint).toBe('CRET');
    }
  });
});

describe('provider errors', () => {
  it('a 4xx of the provider passes through with its status and body, and gives the credit back; a GET costs none', async () => {
    const before = await used(PRO);
    const bad = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('fail-400'));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'fake 400 for fail-400' } });
    const limited = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('fail-429'));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    const unknown = await call('/flow/v1/ai/anthropic/v1/nothing-here', PRO, {});
    expect(unknown.status).toBe(404);
    // A GET runs no model: on the service's key it costs nothing.
    expect((await call('/flow/v1/ai/anthropic/v1/models', PRO)).status).toBe(200);
    expect(await used(PRO)).toBe(before);
  });

  it('the provider refusing the key: 502 provider_auth_failed on the service’s key, 403 provider_key_rejected on the account’s own; no key in the answer', async () => {
    const managed = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('fail-401'));
    expect(managed.status).toBe(502);
    const mBody = await managed.text();
    expect(JSON.parse(mBody).error).toMatchObject({ code: 'provider_auth_failed', details: { provider: 'anthropic', provider_status: 401 } });
    expect(mBody).not.toContain('SECRET');
    const own = await call('/flow/v1/ai/openai/v1/chat/completions', OWN, chatBody('fail-403'));
    expect(own.status).toBe(403);
    const oBody = await own.text();
    expect(JSON.parse(oBody).error).toMatchObject({ code: 'provider_key_rejected', details: { provider: 'openai', provider_status: 403 } });
    expect(oBody).not.toContain('SECRET');
  });

  it('5xx → 502 provider_error; a 4xx page that is not JSON keeps its status as provider_error; a path leaving the provider’s base is 400', async () => {
    const before = await used(PRO);
    const failed = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('fail-500'));
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as any).error).toMatchObject({ code: 'provider_error', details: { provider_status: 500 } });
    const html = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('fail-html'));
    expect(html.status).toBe(422);
    expect(((await html.json()) as any).error.code).toBe('provider_error');
    expect(await used(PRO)).toBe(before);
    const n = fake.requests.length;
    // Sent as written over a plain socket (a WHATWG client would resolve the dot segments itself).
    const port = Number(new URL(base).port);
    for (const path of ['/flow/v1/ai/anthropic/v1/..%2F..%2Fadmin', '/flow/v1/ai/anthropic/%2e%2e/x', '/flow/v1/ai/anthropic/../../x', '/flow/v1/ai/openai/v1/a/./b', '/flow/v1/ai/openai/v1/a%5Cb']) {
      const r = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${PRO.api_key}\r\nConnection: close\r\n\r\n`);
      expect(r.status, path).toBe(400);
      expect(r.body.error.code, path).toBe('invalid_parameter');
    }
    expect(fake.requests.length).toBe(n);
  });

  it('a provider stream that breaks off ends the caller’s answer abruptly, never as a complete one', async () => {
    const res = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('broken', true));
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });
});

describe('POST /flow/v1/ai/inferences', () => {
  const req = (provider: string, model: string, stream?: boolean) => ({
    provider,
    model,
    max_tokens: 64,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ],
    ...(stream === undefined ? {} : { stream }),
  });

  it('one shape for both providers: the result, and what each provider was asked', async () => {
    const n = fake.requests.length;
    const a = await call('/flow/v1/ai/inferences', PRO, req('anthropic', 'claude-test'));
    expect(a.status).toBe(200);
    expect(((await a.json()) as any).data).toEqual({ provider: 'anthropic', model: 'claude-test', output_text: 'Hello, world', usage: { input_tokens: 12, output_tokens: 3 }, stop_reason: 'end_turn' });
    expect(fake.requests[n]!.body).toEqual({ model: 'claude-test', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello' }] });
    const o = await call('/flow/v1/ai/inferences', OWN, req('openai', 'gpt-test'));
    expect(((await o.json()) as any).data).toEqual({ provider: 'openai', model: 'gpt-test', output_text: 'Hello, world', usage: { input_tokens: 12, output_tokens: 3 }, stop_reason: 'stop' });
    expect(fake.requests[n + 1]!.body).toEqual({ model: 'gpt-test', max_completion_tokens: 64, messages: req('openai', 'x').messages });
  });

  it('streamed: a delta event per piece of text, the first before the provider finished, then done', async () => {
    for (const [provider, key, model] of [
      ['anthropic', PRO, 'claude-test'],
      ['openai', OWN, 'gpt-test'],
    ] as const) {
      const hold = fake.hold();
      const res = await call('/flow/v1/ai/inferences', key, req(provider, model, true));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const reader = res.body!.getReader();
      const first = await readUntil(reader, (t) => t.includes('event: delta'));
      expect(hold.finished).toBe(false);
      hold.release();
      const all = await readAll(reader, first);
      expect(all, provider).toBe(
        [...FAKE_TEXT.map((text) => `event: delta\ndata: ${JSON.stringify({ text })}\n\n`), `event: done\ndata: ${JSON.stringify({ provider, model, output_text: 'Hello, world', usage: { input_tokens: 12, output_tokens: 3 }, stop_reason: provider === 'anthropic' ? 'end_turn' : 'stop' })}\n\n`].join(''),
      );
    }
    expect(fake.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
  });

  it('a provider refusal keeps its status as provider_rejected; a broken stream ends with an error event; bad input never reaches the provider', async () => {
    const missing = await call('/flow/v1/ai/inferences', PRO, req('anthropic', 'fail-404'));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error).toMatchObject({ code: 'provider_rejected', details: { provider: 'anthropic', provider_status: 404, provider_error: { type: 'error' } } });
    const broken = await call('/flow/v1/ai/inferences', PRO, req('anthropic', 'broken', true));
    const text = await broken.text();
    expect(text.startsWith(`event: delta\ndata: {"text":"${FAKE_TEXT[0]}"}\n\n`)).toBe(true);
    expect(text).toMatch(/event: error\ndata: \{"error":\{"code":"provider_error",/);
    const n = fake.requests.length;
    for (const body of [{ ...req('anthropic', 'm'), extra: 1 }, { ...req('anthropic', 'm'), provider: 'gemini' }, { ...req('anthropic', 'm'), messages: [] }, { ...req('openai', 'm'), max_tokens: 0 }]) {
      const r = await call('/flow/v1/ai/inferences', PRO, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect(fake.requests.length).toBe(n);
  });
});

describe('who may call, and what it costs', () => {
  it('ai:invoke; provider_key_required with no key and no managed key; credits_exhausted before the provider is asked', async () => {
    const free = await call('/flow/v1/ai/anthropic/v1/messages', FREE, messagesBody('claude-test'));
    expect(free.status).toBe(403);
    expect(((await free.json()) as any).error).toMatchObject({ code: 'entitlement_required', details: { missing: ['ai:invoke'] } });
    const noKey = await call('/flow/v1/ai/openai/v1/chat/completions', PRO, chatBody('gpt-test'));
    expect(noKey.status).toBe(403);
    expect(((await noKey.json()) as any).error).toMatchObject({ code: 'provider_key_required', details: { provider: 'openai' } });
    const spent = await accountKey(s, 'data', { plan: 'pro' });
    await s.rt.pool.query('INSERT INTO credit_usage (workspace_id, period, used) VALUES ($1, $2, 100)', [spent.workspace_id, creditPeriod(Date.now())]);
    const n = fake.requests.length;
    const refused = await call('/flow/v1/ai/inferences', spent, { provider: 'anthropic', model: 'claude-test', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as any).error).toMatchObject({ code: 'credits_exhausted', details: { allowance: 100, used_this_period: 100 } });
    expect(fake.requests.length).toBe(n);
    expect(((await (await call('/flow/v1/auth/me', spent)).json()) as any).data.credits).toEqual({ allowance: 100, purchased: 0, total: 100, included_per_month: 100, used_this_period: 100 });
  });

  it('credits: concurrent spends never pass the allowance; a refund gives back what was spent; the month is the UTC month', async () => {
    const k = await accountKey(s, 'data', { plan: 'pro' });
    const now = Date.now();
    const spends = await Promise.all(Array.from({ length: 130 }, () => spendCredits(s.rt.pool, { workspaceId: k.workspace_id, plan: 'pro', amount: 1, nowMs: now })));
    expect(spends.filter((x) => x.ok)).toHaveLength(100);
    expect(await creditsOf(s.rt.pool, k.workspace_id, 'pro', now)).toMatchObject({ used_this_period: 100, total: 100 });
    const one = spends.find((x) => x.ok)!;
    if (one.ok) await refundCredits(s.rt.pool, one.spend);
    expect((await creditsOf(s.rt.pool, k.workspace_id, 'pro', now)).used_this_period).toBe(99);
    // A free plan includes none; next month starts from zero.
    expect((await spendCredits(s.rt.pool, { workspaceId: k.workspace_id, plan: 'free', amount: 1, nowMs: now })).ok).toBe(false);
    expect(creditPeriod(Date.UTC(2026, 10, 30, 23, 59, 59))).toBe('2026-11-01');
    expect((await creditsOf(s.rt.pool, k.workspace_id, 'pro', Date.UTC(2099, 0, 1))).used_this_period).toBe(0);
  });

  it('X-Service-Account: an organization calls on its user’s own key; any other key naming an account is refused', async () => {
    const org = await createKey(s.rt.pool, s.rt.gate, { plan: 'organization', keyType: 'data', environment: 'test' });
    const user = await organizationUser(s, org, 'ext-ai-user');
    await linkAiKey(s.rt.pool, s.config.aiKeySecret, { routerAccountId: user, provider: 'anthropic', apiKey: USER_ANTHROPIC });
    const n = fake.requests.length;
    const r = await call('/flow/v1/ai/anthropic/v1/messages', org, messagesBody('claude-test'), { 'x-service-account': 'ext-ai-user' });
    expect(r.status).toBe(200);
    expect(fake.requests[n]!.headers['x-api-key']).toBe(USER_ANTHROPIC);
    expect(fake.requests[n]!.headers['x-service-account']).toBeUndefined();
    const forbidden = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('claude-test'), { 'x-service-account': 'ext-ai-user' });
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as any).error.code).toBe('account_forbidden');
  });

  it('exempt from the day budget, throttled per minute', async () => {
    const day = await createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'data', environment: 'test', rateLimitPerDay: 1 });
    expect((await call('/flow/v1/kits', day)).status).toBe(200);
    expect((await call('/flow/v1/kits', day)).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await call('/flow/v1/ai/anthropic/v1/messages', day, messagesBody('claude-test'))).status).toBe(200);
    const minute = await createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'data', environment: 'test', rateLimitPerMinute: 2 });
    // Two calls fit the minute; the third is refused before the provider is asked (unless the minute turned meanwhile).
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call('/flow/v1/ai/anthropic/v1/messages', minute, messagesBody('claude-test')));
    const limited = answers.find((a) => a.status === 429) ?? (await call('/flow/v1/ai/anthropic/v1/messages', minute, messagesBody('claude-test')));
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as any).error.details.window).toBe('minute');
  });

  it('a caller that hangs up mid-stream stops the provider’s stream', async () => {
    const hold = fake.hold();
    const ac = new AbortController();
    const res = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('claude-test', true), {}, ac.signal);
    const reader = res.body!.getReader();
    await readUntil(reader, (t) => t.includes(FAKE_TEXT[0]!));
    ac.abort();
    await hold.abandoned;
    expect(hold.finished).toBe(false);
    hold.release();
  });

  it('a provider out of reach: 502 provider_unreachable, the credit given back', async () => {
    const before = await used(PRO);
    await fake.close();
    const r = await call('/flow/v1/ai/anthropic/v1/messages', PRO, messagesBody('claude-test'));
    expect(r.status).toBe(502);
    expect(((await r.json()) as any).error).toMatchObject({ code: 'provider_unreachable', details: { provider: 'anthropic' } });
    expect(await used(PRO)).toBe(before);
  });
});
