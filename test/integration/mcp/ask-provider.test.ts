/**
 * The MCP `ask` tool planned by an AI provider's model (issue 13 item 1; docs/mcp.md "ask"), through
 * the SDK's client against the app on a real port, real PostgreSQL and Redis, and a local fake
 * provider acting as a tool-using model (test/support/fake-ai-provider.ts):
 * - Anthropic's tool_use / tool_result and OpenAI's tool_calls / tool messages: the model is shown
 *   the read tools, the read it asks for runs (the same data as REST), its result goes back and the
 *   final text quotes it;
 * - the credentials and credits of the AI pass-through: managed key (the question's credit plus one
 *   per model call) or the account's own key (the question's credit only), on /auth/me;
 * - a read the key may not make comes back as a refusal step, and the model is told it as an error;
 * - the bounds hold against a model that never stops asking;
 * - when the provider planner cannot answer (credits run out, no key, 5xx, refusal, unreadable
 *   answer, out of reach), the rule-based planner answers, saying why, the failed call refunded.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASK_BOUNDS } from '../../../api/mcp/provider-planner.js';
import { liquidityRoutes } from '../../../api/rest/liquidity/routes.js';
import { linkAiKey } from '../../../src/store/pg/ai-keys.js';
import { creditPeriod } from '../../../src/store/pg/credits.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { accountKey } from '../../support/accounts.js';
import { callThenQuote, endlessCalls, startFakeProvider, type FakeProvider, type SeenRequest } from '../../support/fake-ai-provider.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

const MANAGED_ANTHROPIC = 'sk-ant-managed-ask-SECRET';
const OWN_ANTHROPIC = 'sk-ant-own-ask-SECRET';
const OWN_OPENAI = 'sk-openai-own-ask-SECRET';
const HOME = 'ct_1:mk_ml:home:0:pt_nyc:ft';

let fake: FakeProvider;
/** Anthropic chosen by default: the service holds a managed Anthropic key. */
let A: TestStack;
/** OpenAI named by FLOW_ASK_PROVIDER, with no managed OpenAI key. */
let O: TestStack;
const ports = new Map<TestStack, number>();
const clients: Client[] = [];

const POSITIONS = [
  {
    position_hash: HOME,
    contest_id: 'ct_1',
    title: 'New York Knights moneyline',
    market_key: 'moneyline',
    side_key: 'home',
    variable: 0,
    participant_id: 'pt_nyc',
    participant_name: 'New York Knights',
    participant_image_url: null,
    consensus_price: 0.56,
    consensus_line: null,
    distribution_prices: null,
    edges: [{ partner_id: 'fx_book', edge: 0.01 }],
    paper_bettable: true,
    partner_liquidities: [
      { partner_id: 'fx_book', partner_name: 'Fixture Book', price: 0.55, american_odds: '-122', available: 1_500, liquidity_hash: `fx_book:${HOME}`, fee_packet: null, as_of: new Date().toISOString(), is_stale: false },
    ],
  },
];

async function stackFor(env: Record<string, string>): Promise<TestStack> {
  const s = await startStack({ env, plugins: [(app, ctx) => liquidityRoutes(new HotState(ctx.redis, ctx.ks))(app, ctx)] });
  await s.built.app.listen({ host: '127.0.0.1', port: 0 });
  ports.set(s, (s.built.app.server.address() as { port: number }).port);
  await new HotState(s.rt.redis, s.rt.ks).writeComputed('ct_1', 1, JSON.stringify(POSITIONS), '{}', []);
  return s;
}

beforeAll(async () => {
  fake = await startFakeProvider();
  A = await stackFor({ FLOW_ANTHROPIC_BASE_URL: fake.url, FLOW_ANTHROPIC_API_KEY: MANAGED_ANTHROPIC, FLOW_ASK_MODEL: 'claude-ask-test' });
  O = await stackFor({ FLOW_OPENAI_BASE_URL: fake.url, FLOW_ASK_PROVIDER: 'openai', FLOW_ASK_MODEL: 'gpt-ask-test' });
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await A?.close();
  await O?.close();
  await fake?.close().catch(() => undefined);
});

async function connect(s: TestStack, key: CreatedKey): Promise<Client> {
  const client = new Client({ name: 'flow-ask-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${ports.get(s)}/mcp`), { requestInit: { headers: { 'x-api-key': key.api_key } } }));
  clients.push(client);
  return client;
}

/** ask's structured answer (a success: ask answers even when the provider fails). */
async function ask(s: TestStack, key: CreatedKey, question: string): Promise<any> {
  const r = (await (await connect(s, key)).callTool({ name: 'ask', arguments: { question } })) as CallToolResult;
  expect(r.isError ?? false, JSON.stringify(r)).toBe(false);
  return r.structuredContent;
}

const rest = (s: TestStack, k: CreatedKey, url: string) => get(s.built.app, url, { 'x-api-key': k.api_key });
const used = async (s: TestStack, k: CreatedKey): Promise<number> => (await rest(s, k, '/flow/v1/auth/me')).body.data.credits.used_this_period;
const proKey = (s: TestStack, entitlements?: string[]) => accountKey(s, 'data', { plan: 'pro', ...(entitlements ? { entitlements } : {}) });
/** The provider requests made since `n`. */
const since = (n: number): SeenRequest[] => fake.requests.slice(n);
const toolNames = (body: any, kind: 'anthropic' | 'openai'): string[] => body.tools.map((t: any) => (kind === 'anthropic' ? t.name : t.function.name)).sort();

/** What the read tools list holds for the key, ask left out: what the model must be shown. */
async function readToolNames(s: TestStack, k: CreatedKey): Promise<string[]> {
  const { tools } = await (await connect(s, k)).listTools();
  return tools.map((t) => t.name).filter((n) => n !== 'ask').sort();
}

/** The text the scripted model writes from a liquidity result: an answer holding it came from the tool. */
const quoteLiquidity = ({ body }: { body: any }) => {
  const p = body.data[0];
  const v = p.partner_liquidities[0];
  return `${p.title}: ${v.price} at ${v.partner_name} (${v.available} available)`;
};

describe('Anthropic on the service’s managed key', () => {
  it('the model is shown the read tools, the read it asks for runs, its result goes back and is quoted; the question’s credit plus one per model call', async () => {
    const k = await proKey(A);
    const before = await used(A, k);
    fake.toolScript = callThenQuote('get_contest_liquidity', { contest_id: 'ct_1' }, quoteLiquidity);
    const n = fake.requests.length;
    const question = 'What does New York cost?';
    const r = await ask(A, k, question);

    const liquidity = (await rest(A, k, '/flow/v1/contests/ct_1/liquidity')).body.data;
    expect(Object.keys(r).sort()).toEqual(['answer', 'credits_spent', 'planner', 'question', 'steps']);
    expect(r.planner).toBe('anthropic');
    expect(r.answer).toBe('New York Knights moneyline: 0.55 at Fixture Book (1500 available)');
    expect(r.steps).toEqual([{ tool: 'get_contest_liquidity', arguments: { contest_id: 'ct_1' }, ok: true, data: liquidity }]);
    expect(r.credits_spent).toBe(3);
    expect(await used(A, k)).toBe(before + 3);

    const [first, second] = since(n);
    expect(since(n)).toHaveLength(2);
    for (const seen of [first!, second!]) {
      expect(seen).toMatchObject({ method: 'POST', path: '/v1/messages', body: { model: 'claude-ask-test', max_tokens: ASK_BOUNDS.maxTokens } });
      expect(seen.headers).toMatchObject({ 'x-api-key': MANAGED_ANTHROPIC, 'anthropic-version': '2023-06-01' });
      expect(JSON.stringify(seen.headers)).not.toContain(k.api_key);
      expect(toolNames(seen.body, 'anthropic')).toEqual(await readToolNames(A, k));
      expect(seen.body.tool_choice).toBeUndefined();
    }
    expect(first!.body.messages).toEqual([{ role: 'user', content: question }]);
    const toolUse = second!.body.messages[1].content.find((b: any) => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'get_contest_liquidity', input: { contest_id: 'ct_1' } });
    expect(second!.body.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: JSON.stringify({ data: liquidity }) }] });
  });

  it('a read the key may not make comes back as a refusal step, and the model is told it as a tool error', async () => {
    const k = await proKey(A, []);
    fake.toolScript = callThenQuote('get_contest_state', { contest_id: 'ct_1' }, ({ body, isError }) => `refused=${isError}: ${body.error.code}, missing ${body.error.details.missing.join(', ')}`);
    const n = fake.requests.length;
    const r = await ask(A, k, 'What is the score in ct_1?');
    expect(r.planner).toBe('anthropic');
    expect(r.steps).toEqual([{ tool: 'get_contest_state', arguments: { contest_id: 'ct_1' }, ok: false, error: { code: 'entitlement_required', message: expect.any(String), details: { missing: ['gamestate:read'] } } }]);
    expect(r.answer).toBe('refused=true: entitlement_required, missing gamestate:read');
    const result = since(n)[1]!.body.messages[2].content[0];
    expect(result).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.parse(result.content).error.code).toBe('entitlement_required');
  });

  it('a model that never stops asking is stopped at the bounds: the last model call forbids tools, the answer says where it stopped', async () => {
    const k = await proKey(A);
    const before = await used(A, k);
    fake.toolScript = endlessCalls('list_leagues', { limit: 2 });
    let n = fake.requests.length;
    const r = await ask(A, k, 'Keep looking at leagues');
    const calls = since(n);
    expect(calls).toHaveLength(ASK_BOUNDS.rounds);
    expect(calls.map((c) => c.body.tool_choice ?? null)).toEqual([...Array.from({ length: ASK_BOUNDS.rounds - 1 }, () => null), { type: 'none' }]);
    expect(r.planner).toBe('anthropic');
    expect(r.steps).toHaveLength(ASK_BOUNDS.rounds - 1);
    expect(r.steps.every((x: any) => x.tool === 'list_leagues' && x.ok)).toBe(true);
    expect(r.answer).toMatch(/^Still looking\.\n\n\(The planner stopped here: the model still asked for tools after 6 model calls and 5 reads/);
    expect(r.credits_spent).toBe(1 + ASK_BOUNDS.rounds);
    expect(await used(A, k)).toBe(before + 1 + ASK_BOUNDS.rounds);

    // Five calls a turn: the twelve reads are spent in the third turn, the calls past them answered
    // as errors and not run, and the next model call forbids tools.
    fake.toolScript = endlessCalls('list_leagues', { limit: 2 }, 5);
    n = fake.requests.length;
    const many = await ask(A, k, 'Keep looking at leagues, five at a time');
    const turns = since(n);
    expect(turns).toHaveLength(4);
    expect(turns[3]!.body.tool_choice).toEqual({ type: 'none' });
    expect(many.steps).toHaveLength(ASK_BOUNDS.toolCalls);
    const told = turns[3]!.body.messages.at(-1).content as any[];
    expect(told.map((b) => b.is_error === true)).toEqual([false, false, true, true, true]);
    expect(JSON.parse(told[4].content).error.code).toBe('ask_budget_spent');
    expect(many.credits_spent).toBe(1 + 4);
  });

  it('credits running out between model calls: the rule-based planner answers, saying so, and the allowance is not passed', async () => {
    const k = await proKey(A);
    await A.rt.pool.query('INSERT INTO credit_usage (workspace_id, period, used) VALUES ($1, $2, 98)', [k.workspace_id, creditPeriod(Date.now())]);
    fake.toolScript = callThenQuote('get_contest_liquidity', { contest_id: 'ct_1' }, quoteLiquidity);
    const n = fake.requests.length;
    const r = await ask(A, k, 'What are the odds for Boston Harbors at New York Knights?');
    expect(since(n)).toHaveLength(1);
    expect(r.planner).toBe('rule_based');
    expect(r.fallback).toEqual({ provider: 'anthropic', error: { code: 'credits_exhausted', message: expect.stringMatching(/reasoning credits are spent/) } });
    expect(r.answer.split('\n')[0]).toMatch(/^Answered by the rule-based planner \(the anthropic planner could not answer: credits_exhausted, /);
    expect(r.answer).toContain('Fixture Book');
    // The provider's read first, then the rule-based planner's.
    expect(r.steps[0]).toMatchObject({ tool: 'get_contest_liquidity', ok: true });
    expect(r.steps.slice(1).map((x: any) => x.tool)).toContain('get_contest_liquidity');
    expect(r.credits_spent).toBe(2);
    expect(await used(A, k)).toBe(100);
  });

  it('the provider failing (5xx, a refusal, an answer that cannot be read): the rule-based planner answers with the reason, the failed call’s credit given back', async () => {
    const k = await proKey(A);
    const cases: [unknown, string, RegExp][] = [
      [{ status: 500 }, 'provider_error', /anthropic answered HTTP 500/],
      [{ status: 404 }, 'provider_rejected', /fake 404 from the script/],
      [{ raw: 'not json' }, 'provider_error', /could not be read \(not JSON\)/],
      [{ raw: JSON.stringify({ type: 'message', content: [{ type: 'tool_use', name: 'list_leagues', input: {} }] }) }, 'provider_error', /no usable id/],
      [{ raw: JSON.stringify({ type: 'message', content: [], stop_reason: 'max_tokens' }) }, 'provider_error', /neither text nor a tool call/],
      [{ raw: '[1,2]' }, 'provider_error', /other than a JSON object/],
    ];
    for (const [reply, code, message] of cases) {
      fake.toolScript = () => reply as never;
      const before = await used(A, k);
      const r = await ask(A, k, 'Which venues are there?');
      expect(r.planner, JSON.stringify(reply)).toBe('rule_based');
      expect(r.fallback, JSON.stringify(reply)).toEqual({ provider: 'anthropic', error: { code, message: expect.stringMatching(message) } });
      expect(r.answer.split('\n')[0]).toContain(`the anthropic planner could not answer: ${code}`);
      expect(r.steps.map((x: any) => x.tool)).toEqual(['list_partners']);
      expect(r.credits_spent).toBe(1);
      expect(await used(A, k)).toBe(before + 1);
    }
  });

  it('an account with its own Anthropic key: the model runs on that key, and only the question’s credit is spent', async () => {
    const k = await proKey(A);
    await linkAiKey(A.rt.pool, A.config.aiKeySecret, { routerAccountId: k.router_account_id, provider: 'anthropic', apiKey: OWN_ANTHROPIC });
    fake.toolScript = callThenQuote('get_contest_liquidity', { contest_id: 'ct_1' }, quoteLiquidity);
    const n = fake.requests.length;
    const r = await ask(A, k, 'What does New York cost?');
    expect(r.answer).toBe('New York Knights moneyline: 0.55 at Fixture Book (1500 available)');
    expect(since(n).map((x) => x.headers['x-api-key'])).toEqual([OWN_ANTHROPIC, OWN_ANTHROPIC]);
    expect(r.credits_spent).toBe(1);
    expect(await used(A, k)).toBe(1);
  });
});

describe('OpenAI, named by FLOW_ASK_PROVIDER', () => {
  it('on the account’s own key: tool_calls answered by tool messages in OpenAI’s shape, the result quoted; one credit', async () => {
    const k = await proKey(O);
    await linkAiKey(O.rt.pool, O.config.aiKeySecret, { routerAccountId: k.router_account_id, provider: 'openai', apiKey: OWN_OPENAI });
    fake.toolScript = callThenQuote('get_contest', { contest_id: 'ct_1' }, ({ body }) => `${body.data.title} (${body.data.id}) starts ${body.data.starts_at}`);
    const n = fake.requests.length;
    const question = 'When does Boston play New York?';
    const r = await ask(O, k, question);
    const contest = (await rest(O, k, '/flow/v1/contests/ct_1')).body.data;
    expect(r.planner).toBe('openai');
    expect(r.answer).toBe(`${contest.title} (ct_1) starts ${contest.starts_at}`);
    expect(r.steps).toEqual([{ tool: 'get_contest', arguments: { contest_id: 'ct_1' }, ok: true, data: contest }]);
    expect(r.credits_spent).toBe(1);
    expect(await used(O, k)).toBe(1);

    const [first, second] = since(n);
    expect(since(n)).toHaveLength(2);
    for (const seen of [first!, second!]) {
      expect(seen).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: { model: 'gpt-ask-test', max_completion_tokens: ASK_BOUNDS.maxTokens } });
      expect(seen.headers.authorization).toBe(`Bearer ${OWN_OPENAI}`);
      expect(seen.body.tools.every((t: any) => t.type === 'function' && t.function.parameters.type === 'object')).toBe(true);
      expect(toolNames(seen.body, 'openai')).toEqual(await readToolNames(O, k));
    }
    expect(first!.body.messages.map((m: any) => m.role)).toEqual(['system', 'user']);
    expect(first!.body.messages[1]).toEqual({ role: 'user', content: question });
    const [, , assistant, tool] = second!.body.messages;
    expect(assistant).toMatchObject({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'get_contest', arguments: JSON.stringify({ contest_id: 'ct_1' }) } }] });
    expect(tool).toEqual({ role: 'tool', tool_call_id: assistant.tool_calls[0].id, content: JSON.stringify({ data: contest }) });
  });

  it('a refused read and arguments that are not a JSON object are told to the model as errors', async () => {
    const k = await proKey(O, []);
    await linkAiKey(O.rt.pool, O.config.aiKeySecret, { routerAccountId: k.router_account_id, provider: 'openai', apiKey: OWN_OPENAI });
    fake.toolScript = callThenQuote('get_position_depth', { position_hash: HOME }, ({ body, isError }) => `refused=${isError}: ${body.error.code}, missing ${body.error.details.missing.join(', ')}`);
    const r = await ask(O, k, 'How deep is the New York book?');
    expect(r.steps).toEqual([{ tool: 'get_position_depth', arguments: { position_hash: HOME }, ok: false, error: { code: 'entitlement_required', message: expect.any(String), details: { missing: ['depth:read'] } } }]);
    expect(r.answer).toBe('refused=true: entitlement_required, missing depth:read');

    // A model that writes its arguments as something other than a JSON object: refused, never run.
    let turn = 0;
    fake.toolScript = (seen) => (turn++ === 0 ? { raw: JSON.stringify({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'list_leagues', arguments: '[1' } }] }, finish_reason: 'tool_calls' }] }) } : { text: seen.results[0]!.content });
    const bad = await ask(O, k, 'Leagues?');
    expect(bad.steps).toEqual([{ tool: 'list_leagues', arguments: {}, ok: false, error: { code: 'invalid_parameter', message: 'the arguments must be a JSON object', details: { parameter: 'arguments' } } }]);
    expect(JSON.parse(bad.answer).error.code).toBe('invalid_parameter');
  });

  it('no own key and no managed OpenAI key: the rule-based planner answers, naming provider_key_required; nothing reaches the provider', async () => {
    const k = await proKey(O);
    const n = fake.requests.length;
    const r = await ask(O, k, 'Which venues are there?');
    expect(fake.requests.length).toBe(n);
    expect(r.planner).toBe('rule_based');
    expect(r.fallback).toEqual({ provider: 'openai', error: { code: 'provider_key_required', message: expect.stringMatching(/link your own key/) } });
    expect(r.steps.map((x: any) => x.tool)).toEqual(['list_partners']);
    expect(r.credits_spent).toBe(1);
    expect(await used(O, k)).toBe(1);
  });
});

describe('the provider out of reach', () => {
  it('the rule-based planner answers with provider_unreachable, the model call’s credit given back (runs last: it closes the fake)', async () => {
    const k = await proKey(A);
    await fake.close();
    const r = await ask(A, k, 'Which venues are there?');
    expect(r.planner).toBe('rule_based');
    expect(r.fallback).toEqual({ provider: 'anthropic', error: { code: 'provider_unreachable', message: expect.stringMatching(/anthropic could not be reached/) } });
    expect(r.answer).toContain('Venues:');
    expect(r.credits_spent).toBe(1);
    expect(await used(A, k)).toBe(1);
  });
});
