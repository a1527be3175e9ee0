/**
 * The MCP tool server (issue 13 item 1; OPERATOR-INTERFACE "MCP") through the official SDK's client
 * (StreamableHTTPClientTransport) against the app listening on a real port, on real PostgreSQL,
 * Redis and chDB: every one of the 21 tools is called, its structured answer compared with its REST
 * twin's data for the same arguments; refusals (entitlement_required, not_found, invalid arguments,
 * rate_limit_exceeded, credits_exhausted) come back as isError results in the REST codes; a tools/call
 * moves the next REST response's X-RateLimit-Remaining-* by one while initialize and tools/list
 * move nothing; ask spends a credit seen on GET /auth/me; the account tools see only the key's account.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyRoutes } from '../../../api/rest/history/routes.js';
import { liquidityRoutes } from '../../../api/rest/liquidity/routes.js';
import { ManualClock } from '../../../src/clock.js';
import { prepareHistoryStore } from '../../../src/store/clickhouse/schema.js';
import { HistoryWriter } from '../../../src/store/clickhouse/writer.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { openOpportunity } from '../../../src/store/pg/opportunities.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { accountKey } from '../../support/accounts.js';
import { get } from '../../support/http.js';
import { filledOrder, writeOrder } from '../../support/orders.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { openTestClickHouse, type TestClickHouse } from '../history/support.js';
import { creditPeriod } from '../../../src/store/pg/credits.js';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const clock = new ManualClock(T0);
const iso = (ms: number) => new Date(ms).toISOString();

const HOME = 'ct_1:mk_ml:home:0:pt_nyc:ft';
const AWAY = 'ct_1:mk_ml:away:0:pt_bos:ft';

const SPEC_TOOLS = [
  'list_leagues', 'get_league', 'list_contests', 'get_contest', 'list_contest_markets', 'list_markets', 'get_market', 'list_participants', 'get_participant',
  'list_partners', 'get_partner', 'get_contest_liquidity', 'get_position_depth', 'get_contest_state', 'get_contest_price_history', 'ask',
  'get_account_balances', 'list_opportunities', 'get_opportunity', 'list_account_positions', 'list_account_history',
];

const venue = (hash: string, price: number, available: number) => ({
  partner_id: 'fx_book',
  partner_name: 'Fixture Book',
  price,
  american_odds: price >= 0.5 ? `-${Math.round((price / (1 - price)) * 100)}` : `+${Math.round(((1 - price) / price) * 100)}`,
  available,
  liquidity_hash: `fx_book:${hash}`,
  fee_packet: null,
  as_of: iso(T0),
  is_stale: false,
});
const position = (hash: string, side: 'home' | 'away', participant: [string, string], consensus: number, price: number) => ({
  position_hash: hash,
  contest_id: 'ct_1',
  title: `${participant[1]} moneyline`,
  market_key: 'moneyline',
  side_key: side,
  variable: 0,
  participant_id: participant[0],
  participant_name: participant[1],
  participant_image_url: null,
  consensus_price: consensus,
  consensus_line: null,
  distribution_prices: null,
  edges: [{ partner_id: 'fx_book', edge: consensus - price }],
  paper_bettable: true,
  partner_liquidities: [venue(hash, price, 1_500)],
});
const DEPTH = {
  position_hash: HOME,
  partners: [{ partner_id: 'fx_book', partner_name: 'Fixture Book', levels: [{ price: 0.55, available: 1_500 }, { price: 0.57, available: 900 }], total_available: 2_400, best_price: 0.55, fetched_at: iso(T0) }],
  fetched_at: iso(T0),
};
const STATE = {
  contest_id: 'ct_1',
  state: {
    game_status: 'live',
    clock: { display: '07:12', remaining_seconds: 432, is_running: true },
    period: { number: 2, label: 'Q2', type: 'quarter' },
    contest_result: null,
    winner_participant_id: null,
    scores: { home_score: 14, away_score: 10, period_scores: [{ home_score: 7, away_score: 3 }, { home_score: 7, away_score: 7 }] },
    situation: null,
    leaderboard: null,
  },
  refreshed_at: iso(T0),
  cached_at: iso(T0),
};

let s: TestStack;
let tch: TestClickHouse;
let port: number;
let PRO: CreatedKey;
let FREE: CreatedKey;
/** Account keys: A with orders and an opportunity, B with its own. */
let A: CreatedKey;
let B: CreatedKey;
let oppA: string;
let oppB: string;
const clients: Client[] = [];

const limits = { rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 };
const newKey = (plan: 'free' | 'pro', extra: Partial<Parameters<typeof createKey>[2]> = {}) =>
  createKey(s.rt.pool, s.rt.gate, { plan, keyType: 'data', environment: 'test', ...limits, ...extra });

async function connect(key: CreatedKey, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'flow-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { 'x-api-key': key.api_key, ...headers } } }));
  clients.push(client);
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => (await c.callTool({ name, arguments: args })) as CallToolResult;
const rest = (k: CreatedKey, url: string) => get(s.built.app, url, { 'x-api-key': k.api_key });

/** The REST answer as a tool answers it: data (an object as is; a list or a page as {data, pagination}). */
function asTool(body: { data: unknown; pagination?: unknown }): unknown {
  if (body.pagination !== undefined || Array.isArray(body.data)) return body.pagination !== undefined ? { data: body.data, pagination: body.pagination } : { data: body.data };
  return body.data;
}

/** A successful tool result: its structured content, which its text content repeats. */
function ok(r: CallToolResult): any {
  expect(r.isError ?? false, JSON.stringify(r)).toBe(false);
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  return r.structuredContent;
}

/** A refused tool result: the REST error body. */
function refused(r: CallToolResult): { code: string; message: string; details?: any } {
  expect(r.isError).toBe(true);
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  return (r.structuredContent as { error: { code: string; message: string; details?: any } }).error;
}

beforeAll(async () => {
  tch = openTestClickHouse();
  await prepareHistoryStore(tch.ch, { retentionDays: 0 });
  s = await startStack({ clock, clickhouse: tch.ch, plugins: [(app, ctx) => liquidityRoutes(new HotState(ctx.redis, ctx.ks))(app, ctx), historyRoutes] });
  await s.built.app.listen({ host: '127.0.0.1', port: 0 });
  port = (s.built.app.server.address() as { port: number }).port;
  PRO = await newKey('pro');
  FREE = await newKey('free');

  const hot = new HotState(s.rt.redis, s.rt.ks);
  const positions = [position(HOME, 'home', ['pt_nyc', 'New York Knights'], 0.56, 0.55), position(AWAY, 'away', ['pt_bos', 'Boston Harbors'], 0.44, 0.46)];
  await hot.writeComputed('ct_1', 1, JSON.stringify(positions), '{}', [[HOME, JSON.stringify(DEPTH)]]);
  await hot.setContestState('ct_1', JSON.stringify(STATE));

  const w = new HistoryWriter(tch.ch, { flushIntervalMs: 60_000 });
  for (const [at, price] of [[-50, 0.5], [-30, 0.53], [-10, 0.56]] as const) {
    w.writePoint({ ts: T0 + at * 60_000, contest_id: 'ct_1', position_hash: HOME, price });
    w.writePoint({ ts: T0 + at * 60_000, contest_id: 'ct_1', position_hash: AWAY, price: Math.round((1 - price) * 100) / 100 });
  }
  expect(await w.flush()).toBe(true);
  await w.close();

  A = await accountKey(s, 'data');
  B = await accountKey(s, 'data');
  for (const [k, stake] of [[A, '10'], [B, '77']] as const) {
    await writeOrder(s.rt.pool, filledOrder(k.router_account_id, { position_hash: HOME, contest_id: 'ct_1' }, { stake, shares: '20', price: '0.5' }));
    await writeOrder(s.rt.pool, filledOrder(k.router_account_id, { position_hash: AWAY, contest_id: 'ct_1' }, { stake: '5', shares: '10', price: '0.5' }, { mode: 'paper' }));
  }
  const opened: string[] = [];
  for (const k of [A, B]) {
    const client = await s.rt.pool.connect();
    try {
      const o = await openOpportunity(client, { routerAccountId: k.router_account_id, modelId: null, currency: 'ATLAS' });
      if (!o.ok) throw new Error('openOpportunity refused');
      opened.push(o.opportunity.opportunity_id);
    } finally {
      client.release();
    }
  }
  [oppA, oppB] = opened as [string, string];
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await s?.close();
  await tch?.close();
});

describe('tools/list', () => {
  it('lists the spec’s 21 read-only tools, each with an argument schema that describes every filter of its REST twin', async () => {
    const c = await connect(PRO);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...SPEC_TOOLS].sort());
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.annotations?.readOnlyHint, t.name).toBe(true);
      expect(t.description, t.name).toEqual(expect.any(String));
    }
    const props = (name: string) => Object.keys(byName.get(name)!.inputSchema.properties ?? {}).sort();
    expect(props('list_contests')).toEqual(['cursor', 'league_id', 'limit', 'parent_contest_id', 'q', 'start_after', 'start_before', 'status']);
    expect(props('get_contest_price_history')).toEqual(['contest_id', 'from', 'limit', 'partner_id', 'position_hash', 'resolution', 'to']);
    expect(props('list_account_positions')).toEqual(['cursor', 'history', 'limit', 'partner_id', 'status']);
    expect(props('list_opportunities')).toEqual(['cursor', 'limit', 'model_id']);
    expect(props('list_participants')).toEqual(['cursor', 'league_id', 'limit']);
    expect(props('ask')).toEqual(['question']);
    // Path ids under their REST names, required.
    for (const [tool, id] of [['get_league', 'league_id'], ['get_contest', 'contest_id'], ['get_participant', 'participant_id'], ['get_market', 'market_id'], ['get_partner', 'partner_id'], ['get_opportunity', 'opportunity_id'], ['get_position_depth', 'position_hash']]) {
      expect(byName.get(tool!)!.inputSchema.required, tool).toEqual([id]);
    }
    expect(byName.get('list_participants')!.inputSchema.required).toEqual(['league_id']);
    expect((byName.get('list_contests')!.inputSchema.properties as any).q.description).toMatch(/substring/);
  });
});

describe('the tools answer their REST twins’ data', () => {
  it('catalog tools, argument by argument', async () => {
    const c = await connect(PRO);
    const cases: [string, Record<string, unknown>, string][] = [
      ['list_leagues', {}, '/flow/v1/leagues'],
      ['list_leagues', { limit: 2 }, '/flow/v1/leagues?limit=2'],
      ['get_league', { league_id: 'lg_tn' }, '/flow/v1/leagues/lg_tn'],
      ['list_contests', {}, '/flow/v1/contests'],
      ['list_contests', { q: 'boston', league_id: 'lg_fb', status: 'open,closed', limit: 2 }, '/flow/v1/contests?q=boston&league_id=lg_fb&status=open%2Cclosed&limit=2'],
      ['list_contests', { start_after: iso(T0 + 2 * 3_600_000), start_before: iso(T0 + 5 * 3_600_000) }, `/flow/v1/contests?start_after=${encodeURIComponent(iso(T0 + 2 * 3_600_000))}&start_before=${encodeURIComponent(iso(T0 + 5 * 3_600_000))}`],
      ['list_contests', { parent_contest_id: 'ct_t' }, '/flow/v1/contests?parent_contest_id=ct_t'],
      ['get_contest', { contest_id: 'ct_1' }, '/flow/v1/contests/ct_1'],
      ['list_contest_markets', { contest_id: 'ct_1' }, '/flow/v1/contests/ct_1/markets'],
      ['list_markets', {}, '/flow/v1/markets'],
      ['get_market', { market_id: 'mk_tot' }, '/flow/v1/markets/mk_tot'],
      ['list_participants', { league_id: 'lg_fb', limit: 2 }, '/flow/v1/participants?league_id=lg_fb&limit=2'],
      ['get_participant', { participant_id: 'pt_kim' }, '/flow/v1/participants/pt_kim'],
      ['list_partners', {}, '/flow/v1/partners'],
      ['get_partner', { partner_id: 'fx_book' }, '/flow/v1/partners/fx_book'],
    ];
    for (const [tool, args, url] of cases) {
      const r = await rest(PRO, url);
      expect(r.status, url).toBe(200);
      expect(ok(await call(c, tool, args)), `${tool} ${JSON.stringify(args)}`).toEqual(asTool(r.body));
    }
    // A page's cursor is the REST cursor: the second page through the tool is the REST second page.
    const first = ok(await call(c, 'list_leagues', { limit: 2 }));
    expect(first.pagination.has_more).toBe(true);
    const second = await rest(PRO, `/flow/v1/leagues?limit=2&cursor=${encodeURIComponent(first.pagination.next_cursor)}`);
    expect(ok(await call(c, 'list_leagues', { limit: 2, cursor: first.pagination.next_cursor }))).toEqual(asTool(second.body));
    expect(ok(await call(c, 'list_contests', { q: 'boston', league_id: 'lg_fb', status: 'open,closed', limit: 2 })).data.every((x: any) => /boston/i.test(x.title))).toBe(true);
  });

  it('liquidity, depth, game state and price history (a pro key)', async () => {
    const c = await connect(PRO);
    const liq = await rest(PRO, '/flow/v1/contests/ct_1/liquidity');
    expect(liq.body.data).toHaveLength(2);
    expect(ok(await call(c, 'get_contest_liquidity', { contest_id: 'ct_1' }))).toEqual({ data: liq.body.data });
    // A contest with nothing quoted: an empty list, as on REST.
    expect(ok(await call(c, 'get_contest_liquidity', { contest_id: 'ct_2' }))).toEqual({ data: (await rest(PRO, '/flow/v1/contests/ct_2/liquidity')).body.data });
    const depth = await rest(PRO, `/flow/v1/depth/${encodeURIComponent(HOME)}`);
    expect(depth.body.data).toEqual(DEPTH);
    expect(ok(await call(c, 'get_position_depth', { position_hash: HOME }))).toEqual(depth.body.data);
    const state = await rest(PRO, '/flow/v1/contests/ct_1/state');
    expect(state.body.data).toEqual(STATE);
    expect(ok(await call(c, 'get_contest_state', { contest_id: 'ct_1' }))).toEqual(state.body.data);
    const from = T0 - 3_600_000;
    for (const q of [{ from, to: T0 }, { from, to: T0, position_hash: HOME, resolution: 'tick' }, { from, to: T0, resolution: '5m', limit: 2 }]) {
      const qs = new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)]));
      const r = await rest(PRO, `/flow/v1/contests/ct_1/price-history?${qs}`);
      expect(r.status).toBe(200);
      expect(r.body.data.points.length).toBeGreaterThan(0);
      // from and to as numbers (unix ms), as an agent writes them: coerced as the query string is.
      expect(ok(await call(c, 'get_contest_price_history', { contest_id: 'ct_1', ...q })), qs.toString()).toEqual(r.body.data);
    }
  });

  it('the account tools answer the key’s own account, equal to REST, and never another’s', async () => {
    const a = await connect(A);
    const b = await connect(B);
    for (const [k, c, mine, theirs] of [[A, a, oppA, oppB], [B, b, oppB, oppA]] as const) {
      const balances = await rest(k, '/flow/v1/auth/account/balances');
      expect(ok(await call(c, 'get_account_balances'))).toEqual(balances.body.data);
      expect(balances.body.data.router_account_id).toBe(k.router_account_id);

      const opps = await rest(k, '/flow/v1/auth/opportunities');
      const listed = ok(await call(c, 'list_opportunities'));
      expect(listed).toEqual(asTool(opps.body));
      expect(listed.data.map((o: any) => o.opportunity_id)).toEqual([mine]);
      expect(ok(await call(c, 'get_opportunity', { opportunity_id: mine }))).toEqual((await rest(k, `/flow/v1/auth/opportunities/${mine}`)).body.data);
      const other = refused(await call(c, 'get_opportunity', { opportunity_id: theirs }));
      expect(other).toEqual((await rest(k, `/flow/v1/auth/opportunities/${theirs}`)).body.error);
      expect(other.code).toBe('opportunity_not_found');

      for (const args of [{}, { status: 'open' }, { history: '1' }, { partner_id: 'practice' }, { limit: 1 }]) {
        const qs = new URLSearchParams(args as Record<string, string>);
        const r = await rest(k, `/flow/v1/auth/account/positions?${qs}`);
        expect(ok(await call(c, 'list_account_positions', args)), qs.toString()).toEqual(asTool(r.body));
      }
      const positions = ok(await call(c, 'list_account_positions')).data.positions;
      expect(positions.length).toBe(2);
      // B staked 77 on HOME, A 10: each sees its own cost basis only.
      expect(positions.find((p: any) => p.position_hash === HOME).cost_basis).toBe(k === A ? 10 : 77);
      const history = await rest(k, '/flow/v1/auth/account/history');
      const toolHistory = ok(await call(c, 'list_account_history'));
      expect(toolHistory).toEqual(asTool(history.body));
      expect(toolHistory.data.length).toBe(1);
    }
  });
});

describe('refusals are isError results in the REST codes', () => {
  it('depth, price history and game state answer entitlement_required with details.missing on a free key; the rest work', async () => {
    const c = await connect(FREE);
    for (const [tool, args, url, missing] of [
      ['get_position_depth', { position_hash: HOME }, `/flow/v1/depth/${encodeURIComponent(HOME)}`, 'depth:read'],
      ['get_contest_state', { contest_id: 'ct_1' }, '/flow/v1/contests/ct_1/state', 'gamestate:read'],
      ['get_contest_price_history', { contest_id: 'ct_1' }, '/flow/v1/contests/ct_1/price-history', 'pricing:history'],
    ] as const) {
      const e = refused(await call(c, tool, args));
      expect(e.code, tool).toBe('entitlement_required');
      expect(e.details, tool).toEqual({ missing: [missing] });
      const r = await rest(FREE, url);
      expect(r.status).toBe(403);
      expect(e).toEqual(r.body.error);
    }
    // A data key on the free plan reads the catalog and liquidity.
    expect(ok(await call(c, 'get_league', { league_id: 'lg_fb' })).id).toBe('lg_fb');
    expect(ok(await call(c, 'get_contest_liquidity', { contest_id: 'ct_1' })).data).toHaveLength(2);
  });

  it('not_found, as the REST twin says it', async () => {
    const c = await connect(PRO);
    for (const [tool, args, url] of [
      ['get_league', { league_id: 'lg_nope' }, '/flow/v1/leagues/lg_nope'],
      ['get_contest', { contest_id: 'ct_nope' }, '/flow/v1/contests/ct_nope'],
      ['get_market', { market_id: 'mk_nope' }, '/flow/v1/markets/mk_nope'],
      ['get_participant', { participant_id: 'pt_nope' }, '/flow/v1/participants/pt_nope'],
      ['get_partner', { partner_id: 'nope' }, '/flow/v1/partners/nope'],
      ['list_contest_markets', { contest_id: 'ct_nope' }, '/flow/v1/contests/ct_nope/markets'],
      ['get_contest_liquidity', { contest_id: 'ct_nope' }, '/flow/v1/contests/ct_nope/liquidity'],
      ['get_contest_state', { contest_id: 'ct_2' }, '/flow/v1/contests/ct_2/state'],
      ['get_position_depth', { position_hash: AWAY }, `/flow/v1/depth/${encodeURIComponent(AWAY)}`],
    ] as const) {
      const e = refused(await call(c, tool, args));
      expect(e.code, tool).toBe('not_found');
      const r = await rest(PRO, url);
      expect(r.status, url).toBe(404);
      expect(e, tool).toEqual(r.body.error);
    }
  });

  it('arguments are validated as the REST query is: invalid_parameter, unknown_parameter, a missing id', async () => {
    const c = await connect(PRO);
    const over = refused(await call(c, 'list_leagues', { limit: 1000 }));
    expect(over.code).toBe('invalid_parameter');
    expect(over.details.parameter).toBe('limit');
    expect(over).toMatchObject({ code: (await rest(PRO, '/flow/v1/leagues?limit=1000')).body.error.code });
    expect(refused(await call(c, 'list_contests', { q: 'x' })).code).toBe('invalid_parameter');
    expect(refused(await call(c, 'list_contests', { start_after: iso(T0 + 1), start_before: iso(T0) })).code).toBe('invalid_parameter');
    const unknown = refused(await call(c, 'list_contests', { leage_id: 'lg_fb' }));
    expect(unknown.code).toBe('unknown_parameter');
    expect(unknown.details.parameter).toBe('/leage_id');
    const missing = refused(await call(c, 'get_league', {}));
    expect(missing).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'league_id' } });
    expect(refused(await call(c, 'list_leagues', { cursor: 'not-a-cursor' })).code).toBe((await rest(PRO, '/flow/v1/leagues?cursor=not-a-cursor')).body.error.code);
    // An unknown tool is a protocol error, not a tool result.
    await expect(c.callTool({ name: 'place_order', arguments: {} })).rejects.toThrow(/place_order/);
  });

  it('rate_limit_exceeded with retry_after_seconds once the minute window is spent; ask is not counted', async () => {
    clock.set(Date.parse('2026-11-20T12:30:00.000Z'));
    const tiny = await newKey('pro', { rateLimitPerMinute: 2, rateLimitPerDay: 1_000 });
    const c = await connect(tiny);
    expect(ok(await call(c, 'list_markets')).data.length).toBeGreaterThan(0);
    expect(ok(await call(c, 'get_contest', { contest_id: 'ct_1' })).id).toBe('ct_1');
    const e = refused(await call(c, 'list_markets'));
    expect(e).toEqual({ code: 'rate_limit_exceeded', message: expect.any(String), details: { retry_after_seconds: 60, window: 'minute' } });
    expect((await rest(tiny, '/flow/v1/leagues')).status).toBe(429);
    // tools/list costs nothing and still answers; ask spends credits instead of requests.
    expect((await c.listTools()).tools).toHaveLength(21);
    const asked = ok(await call(c, 'ask', { question: 'Which venues are there?' }));
    expect(asked.steps.map((x: any) => x.tool)).toEqual(['list_partners']);
    clock.set(Date.parse('2026-11-20T12:31:00.000Z'));
    expect(ok(await call(c, 'list_markets')).data.length).toBeGreaterThan(0);
  });
});

describe('metering', () => {
  const remaining = (r: { headers: Record<string, unknown> }) => [Number(r.headers['x-ratelimit-remaining-minute']), Number(r.headers['x-ratelimit-remaining-day'])];

  it('a tools/call counts one request in the minute and day windows; initialize and tools/list count nothing', async () => {
    clock.set(Date.parse('2026-11-20T13:00:00.000Z'));
    const k = await newKey('pro', { rateLimitPerMinute: 1_000, rateLimitPerDay: 100_000 });
    const [m0, d0] = remaining(await rest(k, '/flow/v1/leagues'));
    expect([m0, d0]).toEqual([999, 99_999]);
    const c = await connect(k); // initialize and notifications/initialized
    await c.listTools();
    await c.listTools();
    expect(remaining(await rest(k, '/flow/v1/leagues'))).toEqual([m0 - 1, d0 - 1]);
    await call(c, 'list_leagues');
    expect(remaining(await rest(k, '/flow/v1/leagues'))).toEqual([m0 - 3, d0 - 3]);
    // A refused call counts too, as a refused REST request does.
    refused(await call(c, 'get_league', { league_id: 'lg_nope' }));
    expect(remaining(await rest(k, '/flow/v1/leagues'))).toEqual([m0 - 5, d0 - 5]);
    // An own-account read is exempt from the day budget, as its REST twin: the minute window only.
    await call(c, 'get_account_balances');
    expect(remaining(await rest(k, '/flow/v1/leagues'))).toEqual([m0 - 7, d0 - 6]);
    // ask is not a request.
    await call(c, 'ask', { question: 'What leagues are there?' });
    expect(remaining(await rest(k, '/flow/v1/leagues'))).toEqual([m0 - 8, d0 - 7]);
    // In the key's usage (GET /auth/me) as requests are: six REST reads, three tool calls (ask is
    // none) and /auth/me itself; the refused get_league is one of its errors, as a REST 404 is.
    const usage = (await rest(k, '/flow/v1/auth/me')).body.data.usage;
    expect(usage).toMatchObject({ requests_last_24h: 10, errors_last_24h: 1 });
  });
});

describe('ask', () => {
  const used = async (k: CreatedKey) => (await rest(k, '/flow/v1/auth/me')).body.data.credits.used_this_period as number;

  it('answers from the reads through the rule-based planner, says so, and spends a credit shown on /auth/me', async () => {
    const k = await newKey('pro');
    const c = await connect(k);
    expect(await used(k)).toBe(0);
    const r = ok(await call(c, 'ask', { question: 'What are the odds for Boston Harbors at New York Knights?' }));
    expect(r.planner).toBe('rule_based');
    expect(r.credits_spent).toBe(1);
    expect(r.answer).toMatch(/rule-based planner/);
    expect(r.answer).toContain('ct_1');
    expect(r.answer).toContain('Fixture Book');
    const liq = r.steps.find((x: any) => x.tool === 'get_contest_liquidity');
    expect(liq).toMatchObject({ ok: true, arguments: { contest_id: 'ct_1' } });
    expect(liq.data).toEqual((await rest(k, '/flow/v1/contests/ct_1/liquidity')).body.data);
    expect(await used(k)).toBe(1);

    const score = ok(await call(c, 'ask', { question: "What's the score in ct_1?" }));
    expect(score.steps.map((x: any) => x.tool)).toEqual(['get_contest', 'get_contest_state']);
    expect(score.answer).toContain('14-10');
    const moved = ok(await call(c, 'ask', { question: 'How has the price of Boston Harbors at New York Knights moved?' }));
    expect(moved.steps.map((x: any) => x.tool)).toContain('get_contest_price_history');
    const football = ok(await call(c, 'ask', { question: 'Which football games are coming up?' }));
    expect(football.steps.at(-1)).toMatchObject({ tool: 'list_contests', arguments: { league_id: 'lg_fb' } });
    expect(football.answer).toContain('Boston Harbors at New York Knights');
    expect(await used(k)).toBe(4);
    // Credits are the workspace's: another key of it sees the same spend.
    const sibling = await newKey('pro', { workspaceId: k.workspace_id });
    expect(await used(sibling)).toBe(4);
  });

  it('reports a read the key may not make instead of making it', async () => {
    const k = await newKey('pro', { entitlements: [] });
    const c = await connect(k);
    const r = ok(await call(c, 'ask', { question: "What's the score of the Boston Harbors at New York Knights game?" }));
    const state = r.steps.find((x: any) => x.tool === 'get_contest_state');
    expect(state).toMatchObject({ ok: false, error: { code: 'entitlement_required', details: { missing: ['gamestate:read'] } } });
    expect(r.answer).toMatch(/gamestate:read/);
  });

  it('a workspace without credits gets credits_exhausted and spends nothing', async () => {
    const c = await connect(FREE);
    const e = refused(await call(c, 'ask', { question: 'What leagues are there?' }));
    expect(e).toMatchObject({ code: 'credits_exhausted', details: { allowance: 0, used_this_period: 0 } });
    expect(await used(FREE)).toBe(0);
  });

  it('a pro workspace spends its 100 credits and no more, even asked concurrently', async () => {
    const k = await newKey('pro');
    await s.rt.pool.query('INSERT INTO credit_usage (workspace_id, period, used) VALUES ($1, $2, 97)', [k.workspace_id, creditPeriod(Date.now())]);
    const c = await connect(k);
    const answers = await Promise.all(Array.from({ length: 6 }, () => call(c, 'ask', { question: 'Which venues are there?' })));
    expect(answers.filter((a) => !a.isError)).toHaveLength(3);
    expect(answers.filter((a) => a.isError).map((a) => refused(a).code)).toEqual(['credits_exhausted', 'credits_exhausted', 'credits_exhausted']);
    expect(await used(k)).toBe(100);
  });
});

describe('the HTTP endpoint', () => {
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } });
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

  it('needs a valid key: 401 in the REST error body', async () => {
    for (const headers of [{}, { 'x-api-key': 'flow_test_nope' }] as Record<string, string>[]) {
      const r = await post(initialize, headers);
      expect(r.status).toBe(401);
      expect(((await r.json()) as any).error.code).toBe('unauthorized');
    }
  });

  it('answers a bare initialize as JSON, and refuses what is not MCP in the REST error body', async () => {
    const good = await post(initialize, { 'x-api-key': PRO.api_key });
    expect(good.status).toBe(200);
    const init = (await good.json()) as any;
    expect(init.result.serverInfo.name).toBe('flow');
    expect(init.result.capabilities.tools).toBeDefined();
    const notRpc = await post(JSON.stringify({ hello: 'world' }), { 'x-api-key': PRO.api_key });
    expect(notRpc.status).toBe(400);
    expect(((await notRpc.json()) as any).error).toMatchObject({ code: 'invalid_body', message: expect.any(String) });
    const noAccept = await post(initialize, { 'x-api-key': PRO.api_key, accept: 'text/html' });
    expect(noAccept.status).toBe(406);
    expect(((await noAccept.json()) as any).error.code).toBe('not_acceptable');
    const text = await post('x', { 'x-api-key': PRO.api_key, 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(((await text.json()) as any).error.code).toBe('unsupported_media_type');
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`http://127.0.0.1:${port}/mcp`, { method, headers: { 'x-api-key': PRO.api_key } });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
      expect(((await r.json()) as any).error.code).toBe('method_not_allowed');
    }
  });

  it('an organization key acts for its user with X-Service-Account, as on REST', async () => {
    const org = await accountKey(s, 'data', { plan: 'organization' });
    const ext = `user-${randomUUID()}`;
    const user = `acct_${randomUUID()}`;
    await s.rt.pool.query("INSERT INTO accounts (router_account_id, workspace_id, environment, external_user_id) VALUES ($1, $2, 'test', $3)", [user, org.workspace_id, ext]);
    const c = await connect(org, { 'x-service-account': ext });
    expect(ok(await call(c, 'get_account_balances')).router_account_id).toBe(user);
    const stranger = await connect(A, { 'x-service-account': ext });
    expect(refused(await call(stranger, 'get_account_balances')).code).toBe('account_forbidden');
  });
});
