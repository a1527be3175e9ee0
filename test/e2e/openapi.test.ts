/**
 * The running service against its own OpenAPI document: every operation the document lists is called
 * with data present (quotes, depth, game state, price history and trades put in through the
 * simulator) and made to give each error answer it documents that a caller can provoke (400, 401,
 * 403, 404, 413, 415, 429); every response is validated against the document (checkedFetch).
 * A new route fails here until it is called below, so no route goes unchecked. The AI pass-through
 * runs against a local fake provider (test/support/fake-ai-provider.ts) on the service's managed keys.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/store/pg/keys.js';
import { openOpportunity } from '../../src/store/pg/opportunities.js';
import { insertOrder } from '../../src/store/pg/orders.js';
import { createPool, type Pool } from '../../src/store/pg/pool.js';
import { createRedis, Keyspace, type Redis } from '../../src/store/redis/client.js';
import { RequestGate } from '../../src/store/redis/gate.js';
import { SignalStore } from '../../src/store/redis/signals.js';
import { testSignal } from '../support/signals.js';
import { FAKE_TEXT, startFakeProvider, streamedAnswer, type FakeProvider } from '../support/fake-ai-provider.js';
import { ADMIN_TOKEN, checkedFetch, client, contractOf, demoKey, eventually, findTotalLine } from '../support/e2e.js';
import type { OpenApiContract } from '../support/openapi-contract.js';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let pool: Pool;
let redis: Redis;
let gate: RequestGate;
let contract: OpenApiContract;
let KEY: string;
let FREE: string;
let line: Awaited<ReturnType<typeof findTotalLine>>;
let provider: FakeProvider;
const t0 = Date.now();

/** operationId → statuses seen. */
const seen = new Map<string, Set<number>>();

type Method = 'GET' | 'POST' | 'PATCH';
interface Req {
  method?: Method;
  body?: unknown;
  raw?: string;
  contentType?: string;
  key?: string | null;
  admin?: string | null;
  headers?: Record<string, string>;
}

async function call(url: string, req: Req = {}): Promise<{ status: number; body: any }> {
  const method = req.method ?? 'GET';
  const headers: Record<string, string> = { ...req.headers };
  const key = req.key === undefined ? KEY : req.key;
  if (key !== null) headers['x-api-key'] = key;
  const admin = req.admin === undefined ? ADMIN_TOKEN : req.admin;
  if (url.startsWith('/sim/') && admin !== null) headers['x-admin-token'] = admin;
  let body: string | undefined;
  if (req.raw !== undefined || req.body !== undefined) {
    body = req.raw ?? JSON.stringify(req.body);
    headers['content-type'] = req.contentType ?? 'application/json';
  }
  const r = await checkedFetch(svc, url, { method, headers, body });
  const op = contract.operation(method, url);
  if (op) (seen.get(op.op.operationId) ?? seen.set(op.op.operationId, new Set()).get(op.op.operationId)!).add(r.status);
  return { status: r.status, body: r.headers['content-type']?.includes('json') ? JSON.parse(r.text) : r.text };
}

beforeAll(async () => {
  provider = await startFakeProvider();
  svc = await startService({
    FLOW_ANTHROPIC_BASE_URL: provider.url,
    FLOW_OPENAI_BASE_URL: provider.url,
    FLOW_ANTHROPIC_API_KEY: 'sk-e2e-managed-anthropic',
    FLOW_OPENAI_API_KEY: 'sk-e2e-managed-openai',
  });
  KEY = demoKey(svc);
  pool = createPool(svc.env.DATABASE_URL!, 2);
  // Keys minted beside the running service go into its key index, as `flow keys create` does.
  redis = createRedis(svc.env.REDIS_URL!);
  gate = new RequestGate(redis, new Keyspace(svc.env.REDIS_PREFIX!));
  FREE = (await createKey(pool, gate, { plan: 'free', keyType: 'data', environment: 'test' })).api_key;
  contract = await contractOf(svc);
  const c = client(svc, KEY);
  await c.sim('/sim/v1/freeze', { frozen: true });
  line = await findTotalLine(c);
}, 120_000);
afterAll(async () => {
  await pool?.end();
  await gate?.close();
  redis?.disconnect();
  await svc?.cleanup();
  await provider?.close();
}, 60_000);

const enc = encodeURIComponent;

describe('every operation, with data present, answers as the document says', () => {
  it('catalog, caller and service reads', async () => {
    const leagues = await call('/flow/v1/leagues?limit=1');
    expect(leagues.body.pagination.has_more).toBe(true);
    expect((await call(`/flow/v1/leagues?limit=1&cursor=${enc(leagues.body.pagination.next_cursor)}`)).status).toBe(200);
    const league = leagues.body.data[0].id;
    expect((await call(`/flow/v1/leagues/${enc(league)}`)).status).toBe(200);
    const participants = await call(`/flow/v1/participants?league_id=${enc(league)}&limit=2`);
    expect(participants.body.data.length).toBeGreaterThan(0);
    expect((await call(`/flow/v1/participants/${enc(participants.body.data[0].id)}`)).status).toBe(200);
    const contests = await call('/flow/v1/contests?limit=5');
    expect(contests.body.data.length).toBe(5);
    expect((await call(`/flow/v1/contests/${enc(line.contestId)}`)).status).toBe(200);
    const markets = await call(`/flow/v1/contests/${enc(line.contestId)}/markets`);
    expect(markets.body.data.length).toBeGreaterThan(0);
    expect((await call('/flow/v1/markets')).status).toBe(200);
    expect((await call(`/flow/v1/markets/${enc(markets.body.data[0].id)}`)).status).toBe(200);
    const partners = await call('/flow/v1/partners');
    expect(partners.body.data.length).toBeGreaterThan(0);
    expect((await call(`/flow/v1/partners/${enc(partners.body.data[0].partner_id)}`)).status).toBe(200);
    expect((await call('/flow/v1/auth/me')).body.data.auth_method).toBe('api_key');
    for (const url of ['/healthz', '/readyz', '/metrics', '/flow/v1/openapi.json']) expect((await call(url, { key: null })).status).toBe(200);
  });

  it('liquidity, depth, game state and history, fed through the simulator', async () => {
    const hash = line.over.position_hash;
    await call('/sim/v1/quotes', { method: 'POST', body: { partner_id: 'sim_exchange', position_hash: hash, price: 0.47, available: 1_500, levels: [{ price: 0.47, available: 1_500 }, { price: 0.5, available: 900 }] } });
    await call('/sim/v1/trades', { method: 'POST', body: { partner_id: 'sim_exchange', position_hash: hash, price: 0.47, size_contracts: 12, taker_action: 'buy', trader_id: null } });
    await call(`/sim/v1/contests/${enc(line.contestId)}/state`, {
      method: 'POST',
      body: { game_status: 'live', clock: { display: '12:00', remaining_seconds: 720, is_running: true }, period: { number: 2, label: 'Q2', type: 'quarter' }, scores: { home_score: 7, away_score: 3, period_scores: [{ home_score: 7, away_score: 3 }] } },
    });
    const liq = await eventually(
      () => call(`/flow/v1/contests/${enc(line.contestId)}/liquidity`),
      (r) => r.body.data.find((p: any) => p.position_hash === hash)?.partner_liquidities.some((q: any) => q.partner_id === 'sim_exchange' && q.price === 0.47),
    );
    expect(liq.body.data.length).toBeGreaterThan(0);
    const depth = await eventually(() => call(`/flow/v1/depth/${enc(hash)}`), (r) => r.status === 200);
    expect(depth.body.data.partners.length).toBeGreaterThan(0);
    const state = await eventually(() => call(`/flow/v1/contests/${enc(line.contestId)}/state`), (r) => r.body.data?.state?.game_status === 'live');
    expect(state.body.data.state.scores.home_score).toBe(7);
    const batch = await call('/flow/v1/contest-state/batch', { method: 'POST', body: { contest_ids: [line.contestId, 'ct_missing'] } });
    expect(Object.keys(batch.body.data)).toEqual([line.contestId]);
    const window = `from=${t0 - 60_000}&to=${Date.now() + 60_000}`;
    const history = await eventually(() => call(`/flow/v1/contests/${enc(line.contestId)}/price-history?position_hash=${enc(hash)}&${window}`), (r) => r.body.data?.points?.length > 0, 15_000);
    expect(history.body.data.points[0].position_hash).toBe(hash);
    const tick = await call(`/flow/v1/contests/${enc(line.contestId)}/price-history?position_hash=${enc(hash)}&partner_id=sim_exchange&resolution=tick&${window}`);
    expect(tick.body.data.resolution).toBe('tick');
    // The simulator prints trades of its own meanwhile, on this position too (with a trader id):
    // look for ours, the print posted above.
    const ours = (t: any) => t.position_hash === hash && t.partner_id === 'sim_exchange' && t.size_contracts === 12 && t.price === 0.47;
    const trades = await eventually(() => call(`/flow/v1/trades?contest_id=${enc(line.contestId)}`), (r) => r.body.data?.some(ours), 15_000);
    expect(trades.body.data.find(ours)).toMatchObject({ position_hash: hash, trader_id: null });
  }, 60_000);

  it('signals, the signal type catalog and arbitrages', async () => {
    // A live signal, written as the detectors write it, so the read validates a real Signal.
    const store = new SignalStore(redis, new Keyspace(svc.env.REDIS_PREFIX!));
    // A type the liquidity computation never writes, so the contest's own arbitrage and price_move signals stay out of the answer.
    const sig = testSignal('block_trade', 'e2e', line.contestId, 600_000, { position: { router_contest_id: line.contestId, position_hash: line.over.position_hash } });
    await store.write({ contestId: line.contestId, leagueId: 'lg', upserts: [sig], timestamp: new Date().toISOString() });
    const signals = await call(`/flow/v1/signals?contest_id=${enc(line.contestId)}&type=block_trade&include_beta=true`);
    expect(signals.body.data).toEqual([sig]);
    expect(signals.body.meta).toMatchObject({ total: 1, returned: 1, contest_count: 1 });
    const types = await call('/flow/v1/signals/types', { key: FREE });
    expect(types.body.data.find((e: any) => e.signal_type === 'arbitrage')).toMatchObject({ entitled: false, missing_entitlements: ['signals:read'] });
    expect((await call('/flow/v1/arbitrages')).status).toBe(200);
  });

  it('the simulator control API', async () => {
    expect((await call('/sim/v1/state')).body.data.frozen).toBe(true);
    const account = (await call('/flow/v1/auth/me')).body.data.router_account_id;
    expect((await call(`/sim/v1/accounts/${enc(account)}/connect`, { method: 'POST', body: { partner_id: 'sim_exchange', balance: 250 } })).status).toBe(200);
    // The connection is the service's record too, and `flow all` refreshes it through the ingest role's adapters.
    const listed = await call('/flow/v1/auth/account/partners');
    expect(listed.body.data.account_partners.find((p: any) => p.partner_id === 'sim_exchange')).toMatchObject({ balance: 250, balance_source: 'venue_api', is_stale: false });
    const refreshed = await call('/flow/v1/auth/account/partners/balance/update', { method: 'POST', body: {} });
    expect(refreshed.body.data.refreshed_partner_ids).toEqual(['sim_exchange']);
    expect((await call('/flow/v1/auth/account/balances')).body.data.real_money_total).toBe(250);
    const deposit = await call('/flow/v1/auth/account/paper/deposit', { method: 'POST', body: { amount: 5 }, headers: { 'idempotency-key': randomUUID() } });
    expect(deposit.status).toBe(201);
    expect(svc.logs.some((l) => l.msg === 'balance refresh scheduled')).toBe(true);
    // A market situation (a signal type) made now on a venue's own trade feed: its print reaches the trade history.
    const block = await call('/sim/v1/situations', { method: 'POST', body: { type: 'block_trade', partner_id: 'sim_exchange', position_hash: line.under.position_hash, notional_usd: 8_000 } });
    expect(block.body.data).toMatchObject({ type: 'block_trade', partner_id: 'sim_exchange', position_hash: line.under.position_hash, details: { crosses_threshold: true } });
    const printed = block.body.data.details.prints[0];
    const history = await eventually(() => call(`/flow/v1/trades?contest_id=${enc(line.contestId)}`), (r) => r.body.data?.some((t: any) => t.venue_trade_id === printed.venue_trade_id), 15_000);
    expect(history.body.data.find((t: any) => t.venue_trade_id === printed.venue_trade_id)).toMatchObject({ is_block: true, price: printed.price, size_contracts: printed.size_contracts });
    // Another contest than the one the error tests use: a settled contest is closed to quotes.
    const other = (await call('/flow/v1/contests?limit=50')).body.data.find((x: any) => x.id !== line.contestId && x.has_markets);
    const positions = await eventually(() => call(`/flow/v1/contests/${enc(other.id)}/liquidity`), (r) => r.body.data.length > 0);
    const settled = await call(`/sim/v1/contests/${enc(other.id)}/settle`, { method: 'POST', body: { results: { [positions.body.data[0].position_hash]: 'push' } } });
    expect(settled.body.data.contest_id).toBe(other.id);
    expect((await call('/sim/v1/freeze', { method: 'POST', body: { frozen: true } })).status).toBe(200);
  });
});

describe('orders', () => {
  it('preflight checks a buy without placing it', async () => {
    // The simulator control test connected sim_exchange with USD 250; the liquidity test set its book at 0.47.
    const orders = [
      { mode: 'real', position_hash: line.over.position_hash, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 },
      { mode: 'paper', position_hash: line.over.position_hash, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 },
      { mode: 'real', position_hash: line.over.position_hash, partner_id: 'sim_quotes', amount: 10, max_price: 0.5 },
    ];
    const r = await call('/flow/v1/auth/orders/preflight', { method: 'POST', body: { orders, verify_liquidity: true } });
    expect(r.status).toBe(200);
    expect(r.body.data.results.map((x: any) => [x.accepted, x.rejected_code])).toEqual([
      [true, null],
      [true, null],
      [false, 'orders_not_supported'],
    ]);
    expect(r.body.data.results[0]).toMatchObject({ currency: 'USD', normalized: { price_format: 'cents', contracts: 21 }, total_allocated: 9.87 });
    expect(r.body.data.results[1]).toMatchObject({ currency: 'ATLAS', venues: [{ partner_id: 'practice' }] });
    const halted = await call('/flow/v1/auth/orders/preflight', { method: 'POST', body: { orders: [orders[2], orders[0]], on_leg_failure: 'halt' } });
    expect(halted.body.data).toMatchObject({ halted_at_index: 0, results: [{ rejected_code: 'orders_not_supported' }, { rejected_code: 'halted_upstream' }] });
  });

  it('the user’s grants and limits: 403 scope_not_granted on buy and preflight; execution_limit_exceeded per leg', async () => {
    const account = (await call('/flow/v1/auth/me')).body.data.router_account_id as string;
    // The user withholds trade:execute on sim_p2p (the hosted page's choice, through the simulator).
    const withheld = await call(`/sim/v1/accounts/${enc(account)}/connect`, { method: 'POST', body: { partner_id: 'sim_p2p', balance: 50, scopes: ['balance:read'] } });
    expect(withheld.body.data.scopes).toEqual(['balance:read']);
    const leg = { mode: 'real', position_hash: line.over.position_hash, partner_id: 'sim_p2p', amount: 5, max_price: 0.5 };
    for (const path of ['buy', 'preflight']) {
      const r = await call(`/flow/v1/auth/orders/${path}`, { method: 'POST', body: { orders: [leg] }, headers: { 'idempotency-key': randomUUID() } });
      expect(r.status, path).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'scope_not_granted', details: { partner_id: 'sim_p2p' } });
    }
    expect((await call(`/sim/v1/accounts/${enc(account)}/connect`, { method: 'POST', body: { partner_id: 'sim_p2p', balance: 50, scopes: ['balance:read', 'history:read', 'trade:execute'] } })).status).toBe(200);
    // A limit: the leg is refused in a 200, with the spec's per-leg code; then lifted for the tests after this one.
    const set = await call(`/sim/v1/accounts/${enc(account)}/policy`, { method: 'POST', body: { limits: [{ type: 'max_stake_per_order', params: { amount: 1 } }] } });
    expect(set.body.data.limits).toEqual([{ type: 'max_stake_per_order', params: { amount: 1 } }]);
    const limited = await call('/flow/v1/auth/orders/preflight', { method: 'POST', body: { orders: [{ ...leg, partner_id: 'sim_exchange', amount: 10 }] } });
    expect(limited.body.data.results[0]).toMatchObject({ accepted: false, rejected_code: 'execution_limit_exceeded', fix: 'reduce_stake' });
    expect((await call(`/sim/v1/accounts/${enc(account)}/policy`, { method: 'POST', body: { limits: [] } })).body.data.limits).toEqual([]);
  });
});

describe('the account records: models and opportunities', () => {
  it('create, read, list, change, archive and unarchive a model; list and read an opportunity', async () => {
    const created = await call('/flow/v1/auth/models', { method: 'POST', body: { model_name: 'e2e model', model_description: 'contract check' }, headers: { 'idempotency-key': randomUUID() } });
    expect(created.status).toBe(201);
    const id = created.body.data.model_id as string;
    expect((await call(`/flow/v1/auth/models/${enc(id)}`)).status).toBe(200);
    expect((await call('/flow/v1/auth/models')).body.data.map((m: any) => m.model_id)).toContain(id);
    expect((await call(`/flow/v1/auth/models/${enc(id)}`, { method: 'PATCH', body: { model_name: 'e2e model, renamed' } })).body.data.model_name).toBe('e2e model, renamed');
    expect((await call(`/flow/v1/auth/models/${enc(id)}/archive`, { method: 'POST' })).body.data.status).toBe('archived');
    expect((await call(`/flow/v1/auth/models/${enc(id)}/unarchive`, { method: 'POST' })).body.data.status).toBe('active');
    // Nothing opens an opportunity over REST (the buy will): open one the way the buy's transaction does.
    const account = (await call('/flow/v1/auth/me')).body.data.router_account_id as string;
    const client = await pool.connect();
    let opportunityId: string;
    try {
      const opened = await openOpportunity(client, { routerAccountId: account, modelId: id, currency: 'ATLAS' });
      if (!('opportunity' in opened)) throw new Error(`openOpportunity: ${JSON.stringify(opened)}`);
      opportunityId = opened.opportunity.opportunity_id;
    } finally {
      client.release();
    }
    expect((await call('/flow/v1/auth/opportunities')).body.data.map((o: any) => o.opportunity_id)).toContain(opportunityId);
    expect((await call(`/flow/v1/auth/opportunities/${enc(opportunityId)}`)).body.data.model_id).toBe(id);
  });
});

describe('orders: a practice buy, the reads, the cancel', () => {
  it('buys paper through a live quote, reads the order back, and cancels a real limit order at its venue', async () => {
    const hash = line.under.position_hash;
    await call('/sim/v1/quotes', { method: 'POST', body: { partner_id: 'sim_book01', position_hash: hash, price: 0.31, available: 2_000 } });
    const liq = await eventually(
      () => call(`/flow/v1/contests/${enc(line.contestId)}/liquidity`),
      (r) => r.body.data.find((p: any) => p.position_hash === hash)?.partner_liquidities.some((q: any) => q.partner_id === 'sim_book01' && q.price === 0.31 && !q.is_stale),
    );
    // Named by another venue's liquidity_hash (opaque: the service finds its position through what ingest indexed).
    const named = liq.body.data.find((p: any) => p.position_hash === hash).partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange').liquidity_hash as string;
    const leg = (mode: string) => ({ liquidity_hash: named, amount: 3.1, max_price: 0.99, mode });
    const bought = await call('/flow/v1/auth/orders/buy', { method: 'POST', body: { orders: [leg('paper')] }, headers: { 'idempotency-key': randomUUID() } });
    expect(bought.status).toBe(200);
    const [paper] = bought.body.data.results;
    expect(paper).toMatchObject({ status: 'completed', requested_partner_id: 'sim_exchange', filled_notional: 3.1, venues: [{ partner_id: 'practice', success: true }] });
    expect(paper.avg_price).toBeLessThanOrEqual(0.31);
    // A real leg on a connected venue: the service's execute role places it there, and the buy
    // answers with the venue's fill.
    const me = (await call('/flow/v1/auth/me')).body.data.router_account_id as string;
    expect((await call(`/sim/v1/accounts/${enc(me)}/connect`, { method: 'POST', body: { partner_id: 'sim_exchange', balance: 100 } })).status).toBe(200);
    const real = await call('/flow/v1/auth/orders/buy', { method: 'POST', body: { orders: [leg('real')] }, headers: { 'idempotency-key': randomUUID() } });
    expect(real.body.data.results[0]).toMatchObject({ status: 'completed', venues: [{ partner_id: 'sim_exchange', success: true }] });
    const id = paper.venues[0].router_order_id as string;
    const listed = await call('/flow/v1/auth/orders?currency=ATLAS&limit=5');
    expect(listed.body.data.map((o: any) => o.router_order_id)).toContain(id);
    expect((await call(`/flow/v1/auth/orders/${enc(id)}/resolution`)).body.data).toMatchObject({ router_order_id: id, resolved: false });
    expect((await call('/flow/v1/auth/orders/resting/me')).body.data.orders).toEqual([]);
    expect((await call('/flow/v1/auth/orders/cancel', { method: 'POST', body: { router_order_id: id } })).status).toBe(409);

    // A real limit order below the book rests at its venue; the cancel goes to the venue through the execute role.
    await call('/sim/v1/quotes', { method: 'POST', body: { partner_id: 'sim_exchange', position_hash: hash, price: 0.4, available: 1_000 } });
    const limit = await call('/flow/v1/auth/orders/buy', {
      method: 'POST',
      body: { orders: [{ liquidity_hash: named, amount: 5, max_price: 0.2, mode: 'real', order_type: 'limit' }] },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(limit.body.data.results[0]).toMatchObject({ status: 'resting', filled_notional: 0, unfilled_notional: 5, venues: [{ partner_id: 'sim_exchange', success: true }] });
    const resting = limit.body.data.results[0].venues[0].router_order_id as string;
    expect((await call('/flow/v1/auth/orders/resting/me')).body.data.orders.map((o: any) => o.router_order_id)).toEqual([resting]);
    expect((await call('/flow/v1/auth/orders/cancel', { method: 'POST', body: { router_order_id: resting } })).body.data).toEqual({ router_order_id: resting, status: 'cancelled', unfilled_notional: 5 });
    expect((await call('/flow/v1/auth/orders/resting/me')).body.data.orders).toEqual([]);

    // A venue that cannot cancel orders (cancel_supported false) keeps the order working: 409.
    const account = (await call('/flow/v1/auth/me')).body.data.router_account_id as string;
    const stuck = `ord_e2e_${randomUUID()}`;
    const client = await pool.connect();
    try {
      await insertOrder(client, {
        router_order_id: stuck, router_account_id: account, opportunity_id: null, model_id: null, idempotency_key: randomUUID(), leg_index: 0,
        client_order_id: `fco_${stuck}`, sor_decision_id: 'sor_e2e', partner_id: 'sim_sportsbook', requested_partner_id: 'sim_sportsbook', currency: 'USD',
        mode: 'real', order_type: 'limit', position_hash: hash, liquidity_hash: null, price_partner_id: null, price_liquidity_hash: null,
        contest_id: line.contestId, title: 'e2e resting', requested_amount: '10', requested_shares: null, max_price: '0.2', amount: '10', avg_price: null,
        filled_notional: '0', filled_shares: '0', unfilled_notional: '10', fee: '0', leg_status: 'resting', status: 'open', fill_status: 'unfilled',
        rejected_code: null, rejected_reason: null,
      });
      await client.query(`UPDATE orders SET venue_order_id = 'sb-e2e' WHERE router_order_id = $1`, [stuck]);
    } finally {
      client.release();
    }
    const refused = await call('/flow/v1/auth/orders/cancel', { method: 'POST', body: { router_order_id: stuck } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('venue_cancel_unavailable');
  }, 30_000);
});

describe('performance, positions and history', () => {
  it('the account’s performance (and a model’s), its positions and its venue history; 403 scope_required for an organization key without X-Service-Account', async () => {
    // The buy test above placed a practice order and a real one (both open: nothing has settled them).
    const perf = await call('/flow/v1/auth/performance?group_by=partner');
    expect(perf.status).toBe(200);
    expect(perf.body.data.by_currency.map((b: any) => b.funding.currency)).toEqual(['USD', 'ATLAS']);
    expect(perf.body.data.by_currency.every((b: any) => b.pending_count >= 1)).toBe(true);
    const model = (await call('/flow/v1/auth/models?limit=1')).body.data[0].model_id as string;
    expect((await call(`/flow/v1/auth/models/${enc(model)}/performance?group_by=day`)).body.data.group_by).toBe('day');
    const positions = await call('/flow/v1/auth/account/positions?status=open');
    expect(positions.body.data.source).toBe('orders');
    expect(positions.body.data.positions.map((p: any) => p.partner_id)).toEqual(expect.arrayContaining(['practice', 'sim_exchange']));
    const fromHistory = await call('/flow/v1/auth/account/positions?history=1');
    expect(fromHistory.body.data.source).toBe('history');
    expect(fromHistory.body.data.positions.every((p: any) => p.currency === 'USD')).toBe(true);
    const history = await call('/flow/v1/auth/account/history?partner_id=sim_exchange');
    expect(history.body.data.length).toBeGreaterThan(0);
    expect(history.body.data.every((h: any) => h.placed_via_openmarkets === true && h.partner_id === 'sim_exchange')).toBe(true);
    // An organization key names the user it reads for; without the header it has no account to measure.
    const org = (await createKey(pool, gate, { plan: 'organization', keyType: 'data', environment: 'test' })).api_key;
    for (const url of ['/flow/v1/auth/performance', `/flow/v1/auth/models/${enc(model)}/performance`]) {
      const r = await call(url, { key: org });
      expect([r.status, r.body.error.code], url).toEqual([403, 'scope_required']);
    }
  });
});

describe('kits and the AI pass-through', () => {
  it('the kit catalog, a kit’s watermarked content', async () => {
    const kits = await call('/flow/v1/kits');
    expect(kits.body.data.kits.length).toBeGreaterThanOrEqual(4);
    expect(kits.body.data.kits.every((k: any) => k.entitled)).toBe(true);
    const kit = await call('/flow/v1/kits/streaming-resume');
    expect(kit.body.data).toMatchObject({ slug: 'streaming-resume', entitlement: 'kit:streaming-resume', missing_companion_entitlements: [] });
    expect(kit.body.data.markdown).toMatch(/[\u200B\u200C\u200D\u2060]/);
  });

  it('each provider’s own paths, streamed and whole, and the normalized inference', async () => {
    const messages = { model: 'claude-e2e', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const streamed = await call('/flow/v1/ai/anthropic/v1/messages', { method: 'POST', body: messages, headers: { 'anthropic-version': '2023-06-01' } });
    expect(streamed.body).toBe(streamedAnswer('anthropic', 'claude-e2e'));
    expect((await call('/flow/v1/ai/anthropic/v1/models')).body.data.length).toBe(2);
    const chat = await call('/flow/v1/ai/openai/v1/chat/completions', { method: 'POST', body: { model: 'gpt-e2e', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.body.choices[0].message.content).toBe(FAKE_TEXT.join(''));
    expect((await call('/flow/v1/ai/openai/v1/models')).status).toBe(200);
    const inference = await call('/flow/v1/ai/inferences', { method: 'POST', body: { provider: 'openai', model: 'gpt-e2e', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
    expect(inference.body.data).toMatchObject({ provider: 'openai', output_text: FAKE_TEXT.join(''), usage: { input_tokens: 12, output_tokens: 3 } });
    const sse = await call('/flow/v1/ai/inferences', { method: 'POST', body: { provider: 'anthropic', model: 'claude-e2e', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(sse.body).toContain('event: done');
    // The provider saw the service's managed keys; each managed call that ran a model (the POSTs) spent a credit.
    expect(provider.requests.find((r) => r.path === '/v1/messages')!.headers['x-api-key']).toBe('sk-e2e-managed-anthropic');
    expect((await call('/flow/v1/auth/me')).body.data.credits.used_this_period).toBe(4);
  });
});

describe('every documented error answer a caller can provoke', () => {
  const ops = () =>
    Object.entries(contract.doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase() as Method, op })),
    );
  /** A request URL for the operation, path parameters filled with `fill` (a real id by default); a wildcard route's `path` keeps its slashes. */
  const urlOf = (path: string, fill: (name: string) => string) => path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'path' ? fill(name) : enc(fill(name))));
  const REAL: Record<string, () => string> = {
    position_hash: () => line.over.position_hash,
    router_account_id: () => 'acct_x',
    // A kit the free plan does not include.
    slug: () => 'streaming-resume',
    // The AI pass-through's provider path.
    path: () => 'v1/messages',
  };
  const real = (name: string) => REAL[name]?.() ?? line.contestId;

  it('401 without a credential (or with a wrong admin token)', async () => {
    for (const { path, method, op } of ops()) {
      if (!op.responses['401']) continue;
      const r = await call(urlOf(path, real), { method, key: null, admin: 'wrong', body: method !== 'GET' ? {} : undefined });
      expect(r.status, op.operationId).toBe(401);
    }
  });

  it('403 for a key whose plan lacks the entitlement', async () => {
    for (const { path, method, op } of ops()) {
      if (!op.responses['403']) continue;
      const r = await call(urlOf(path, real), { method, key: FREE, body: method !== 'GET' ? { contest_ids: [] } : undefined });
      // Every plan reads its own account: an account read's 403 is naming an account the key may not act for.
      if (r.status !== 403 && path.startsWith('/flow/v1/auth/')) {
        const other = await call(urlOf(path, real), { method, key: FREE, headers: { 'x-service-account': 'someone-else' }, body: method !== 'GET' ? {} : undefined });
        expect(other.status, op.operationId).toBe(403);
        expect(other.body.error.code, op.operationId).toBe('account_forbidden');
        continue;
      }
      expect(r.status, op.operationId).toBe(403);
      // A kit names the one entitlement it needs; the gate names every one missing.
      if (r.body.error.code === 'kit_not_entitled') expect(r.body.error.details.entitlement, op.operationId).toBe('kit:streaming-resume');
      else expect(r.body.error.details.missing.length, op.operationId).toBeGreaterThan(0);
    }
  });

  it('404 for an unknown id', async () => {
    for (const { path, method, op } of ops()) {
      if (!op.responses['404'] || path.startsWith('/sim/')) continue;
      // No id in the path: a model's 404 is an unknown league; a buy's or a preflight's, an unknown model; a cancel's, an unknown order.
      const leg = { position_hash: line.over.position_hash, partner_id: 'sim_exchange', amount: 1, max_price: 0.5, mode: 'paper' };
      const bodies: Record<string, unknown> = {
        createModel: { model_name: 'm', model_description: '', league_id: 'nope_missing' },
        buyOrders: { orders: [leg], model_id: 'nope_missing' },
        preflightOrders: { orders: [leg], model_id: 'nope_missing' },
        cancelOrder: { router_order_id: 'nope_missing' },
      };
      const body = bodies[op.operationId] ?? (method === 'PATCH' ? {} : undefined);
      const r = await call(urlOf(path, (name) => (name === 'position_hash' ? 'ct_nope:mk:over:0:pt:ft' : 'nope_missing')), { method, body, headers: { 'idempotency-key': randomUUID() } });
      expect(r.status, op.operationId).toBe(404);
    }
    expect((await call('/sim/v1/quotes', { method: 'POST', body: { partner_id: 'sim_exchange', position_hash: 'ct_nope:mk:over:0:pt:ft', price: 0.5, available: 1 } })).status).toBe(404);
  });

  it('400 for invalid input: an out-of-range query value, an over-long id, a body of the wrong type', async () => {
    for (const { path, method, op } of ops()) {
      if (!op.responses['400']) continue;
      const query = (op.parameters ?? []).find((p: any) => p.in === 'query' && typeof p.schema.minimum === 'number');
      const pathParam = (op.parameters ?? []).find((p: any) => p.in === 'path' && typeof p.schema.maxLength === 'number' && p.schema.maxLength < 400);
      let url = urlOf(path, real);
      let body: unknown;
      if (method !== 'GET' && op.requestBody) body = [];
      else if (query) url = `${url}?${query.name}=${query.schema.minimum - 1}`;
      else if (pathParam) url = urlOf(path, (name) => (name === pathParam.name ? 'x'.repeat(pathParam.schema.maxLength + 1) : real(name)));
      else if (op.operationId === 'getPositionDepth') url = `/flow/v1/depth/${enc(`${line.over.position_hash},${line.under.position_hash}`)}`;
      else if (op.operationId === 'getPerformance') url = `${url}?group_by=bogus`;
      else throw new Error(`no way to provoke 400 on ${op.operationId}`);
      const r = await call(url, { method, body });
      expect(r.status, `${op.operationId} ${url}`).toBe(400);
    }
  });

  it('413 and 415 on every route with a body', async () => {
    for (const { path, method, op } of ops()) {
      if (method === 'GET' || !op.requestBody) continue;
      expect((await call(urlOf(path, real), { method, raw: 'contest_ids=x', contentType: 'application/x-www-form-urlencoded' })).status, op.operationId).toBe(415);
      expect((await call(urlOf(path, real), { method, raw: JSON.stringify({ pad: 'x'.repeat(1_100_000) }) })).status, op.operationId).toBe(413);
    }
  });

  it('429 with Retry-After once the minute budget is spent', async () => {
    for (const { path, method, op } of ops()) {
      if (!op.responses['429']) continue;
      const key = (await createKey(pool, gate, { plan: 'scale', keyType: 'data', environment: 'test', rateLimitPerMinute: 1 })).api_key;
      await call(urlOf(path, real), { method, key, body: method !== 'GET' ? { contest_ids: [] } : undefined });
      const r = await call(urlOf(path, real), { method, key, body: method !== 'GET' ? { contest_ids: [] } : undefined });
      expect(r.status, op.operationId).toBe(429);
      expect(r.body.error.details.window).toBe('minute');
    }
  });

  it('every operation was called, and gave its success and every error above that it documents', () => {
    const provokable = ['400', '401', '403', '404', '413', '415', '429'];
    const gaps: string[] = [];
    for (const { path, op } of ops()) {
      const got = seen.get(op.operationId) ?? new Set<number>();
      const ok = Object.keys(op.responses).find((c) => c.startsWith('2'))!;
      if (!got.has(Number(ok))) gaps.push(`${op.operationId}: no ${ok}`);
      for (const status of Object.keys(op.responses).filter((c) => provokable.includes(c))) {
        // The simulator's 404/409 depend on which venue or contest is named: shown once above, not per route.
        if (path.startsWith('/sim/') && status === '404') continue;
        if (!got.has(Number(status))) gaps.push(`${op.operationId}: no ${status}`);
      }
    }
    expect(gaps).toEqual([]);
  });
});
