import { createServer } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/rest/app.js';
import { createHistoryRoutes, historyRoutes } from '../../../api/rest/history/routes.js';
import { createClickHouse } from '../../../src/store/clickhouse/client.js';
import { ManualClock } from '../../../src/clock.js';
import type { TradePrint } from '../../../src/domain/stream.js';
import { normalizeVenueTrade, type TradeLink, type VenueTrade } from '../../../src/domain/trades.js';
import { prepareHistoryStore } from '../../../src/store/clickhouse/schema.js';
import { HistoryWriter } from '../../../src/store/clickhouse/writer.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { openTestClickHouse, type TestClickHouse, queryString } from './support.js';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const M = 60_000;
const D = 86_400_000;
const NOW = T0 + 50 * M;
const C = 'ct_tr';
const A = `${C}:mk_ml:home:0:pt_a:ft`;
const B = `${C}:mk_ml:away:0:pt_b:ft`;

function print(id: string, over: Partial<VenueTrade>, link: Partial<TradeLink> = {}): TradePrint {
  const r = normalizeVenueTrade(
    { partner_id: 'vx', partner_name: 'Venue X', venue_trade_id: id, venue_market_id: `m-${id}`, taker_action: 'buy', price: 0.5, size_contracts: 1, executed_at: T0, ...over },
    { position_hash: A, liquidity_hash: `lh-${id}`, router_contest_id: C, router_market_id: 'mk_ml', relation: 'same', ...link },
  );
  if (!r.ok) throw new Error(r.reason);
  return r.print;
}

const tr1 = print('t1', { price: 0.6, size_contracts: 10, executed_at: T0 + 10 * M });
const tr2 = print('t2', { partner_id: 'vy', partner_name: 'Venue Y', taker_action: 'sell', price: 0.4, size_contracts: 100, executed_at: T0 + 20 * M });
const tr3 = print(
  't3',
  { price: 0.5, size_contracts: 1000, is_block: true, trader_id: 'w1', trader_id_kind: 'wallet', executed_at: T0 + 30 * M },
  { position_hash: B, router_market_id: 'mk_ml' },
);
// The venue traded the other side of a market whose complement is what we link: a taker buying
// that side at 0.7 is a sell of A at 0.3.
const tr4 = print('t4', { partner_id: 'vz', partner_name: 'Venue Z', taker_action: 'buy', price: 0.7, size_contracts: 10, executed_at: T0 + 40 * M }, { relation: 'complement' });
const tr5 = print('t5', { executed_at: T0 - 2 * 3_600_000 });
const tr6 = print('t6', { executed_at: T0 + 15 * M }, { router_contest_id: 'ct_other', position_hash: 'ct_other:mk_ml:home:0:pt:ft' });
const tr7 = print('t7', { price: 0.2, size_contracts: 5, executed_at: T0 - 6 * D });
const tr8 = print('t8', { executed_at: T0 - 8 * D });

let s: TestStack;
let tch: TestClickHouse;
let PRO: Record<string, string>;
let FREE: Record<string, string>;

beforeAll(async () => {
  tch = openTestClickHouse();
  await prepareHistoryStore(tch.ch, { retentionDays: 0 });
  s = await startStack({ clock: new ManualClock(NOW), plugins: [historyRoutes], clickhouse: tch.ch });
  PRO = { 'x-api-key': (await createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'data', environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 })).api_key };
  FREE = { 'x-api-key': (await createKey(s.rt.pool, s.rt.gate, { plan: 'free', keyType: 'data', environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 })).api_key };
  const w = new HistoryWriter(tch.ch, { flushIntervalMs: 60_000 });
  // tr1 arrives twice (a stream and a poll both delivered it): it must be reported once.
  w.trades([tr1, tr2, tr3, tr4, tr5, tr6, tr7, tr8, tr1]);
  // A venue with quotes but no published trades.
  w.writeTick({ ts: T0 + 5 * M, contest_id: C, position_hash: A, partner_id: 'vq', price: 0.5, available: 10, liquidity_hash: 'vq:a' });
  expect(await w.flush()).toBe(true);
  await w.close();
});

afterAll(async () => {
  await s?.close();
  await tch?.close();
});

const app = () => s.built.app;
const url = (q: Record<string, string | number>) => `/flow/v1/trades?${queryString(q)}`;
const ids = (r: { body: any }) => r.body.data.map((t: TradePrint) => t.venue_trade_id);
const iso = (ms: number) => new Date(ms).toISOString();

describe('GET /flow/v1/trades', () => {
  it('defaults to the last hour, newest first, every Trade print field', async () => {
    const r = await get(app(), url({ contest_id: C }), PRO);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual(['t4', 't3', 't2', 't1']);
    expect(r.body.data[1]).toEqual(tr3);
    expect(r.body.data[3]).toEqual(tr1);
    expect(Object.keys(r.body.data[0]).sort()).toEqual(
      [
        'partner_id',
        'partner_name',
        'venue_trade_id',
        'venue_market_id',
        'liquidity_hash',
        'position_hash',
        'router_contest_id',
        'router_market_id',
        'taker_action',
        'price',
        'size_contracts',
        'notional_usd',
        'is_block',
        'trader_id',
        'trader_id_kind',
        'executed_at',
      ].sort(),
    );
    expect(r.body.meta.api_version).toBe('v1');
  });
  it('notional is size × price of the named position, for sells too', async () => {
    const r = await get(app(), url({ contest_id: C }), PRO);
    const byId = Object.fromEntries(r.body.data.map((t: TradePrint) => [t.venue_trade_id, t]));
    expect(byId.t1).toMatchObject({ taker_action: 'buy', price: 0.6, size_contracts: 10, notional_usd: 6 });
    expect(byId.t2).toMatchObject({ taker_action: 'sell', price: 0.4, size_contracts: 100, notional_usd: 40 });
  });
  it('complement rule: a buy of the other side reads as a sell of the linked position', async () => {
    const r = await get(app(), url({ contest_id: C }), PRO);
    expect(r.body.data[0]).toMatchObject({ venue_trade_id: 't4', position_hash: A, taker_action: 'sell', price: 0.3, notional_usd: 3, partner_id: 'vz' });
  });
  it('filters by partner id or name (case-insensitive)', async () => {
    expect(ids(await get(app(), url({ contest_id: C, partner: 'vx' }), PRO))).toEqual(['t3', 't1']);
    expect(ids(await get(app(), url({ contest_id: C, partner: 'venue x' }), PRO))).toEqual(['t3', 't1']);
    expect(ids(await get(app(), url({ contest_id: C, partner: 'Venue Y' }), PRO))).toEqual(['t2']);
    expect(ids(await get(app(), url({ contest_id: C, partner: 'vq' }), PRO))).toEqual([]);
  });
  it('since is inclusive and until exclusive', async () => {
    expect(ids(await get(app(), url({ contest_id: C, since: iso(T0 + 20 * M) }), PRO))).toEqual(['t4', 't3', 't2']);
    expect(ids(await get(app(), url({ contest_id: C, since: iso(T0 + 15 * M), until: iso(T0 + 30 * M) }), PRO))).toEqual(['t2']);
    expect(ids(await get(app(), url({ contest_id: C, since: iso(T0 + 15 * M), until: iso(T0 + 30 * M + 1) }), PRO))).toEqual(['t3', 't2']);
  });
  it('reaches up to 7 days back, and no further', async () => {
    expect(ids(await get(app(), url({ contest_id: C, since: iso(NOW - 7 * D) }), PRO))).toEqual(['t4', 't3', 't2', 't1', 't5', 't7']);
    const r = await get(app(), url({ contest_id: C, since: iso(NOW - 7 * D - 5 * M) }), PRO);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'since' } });
  });
  it('min_notional_usd keeps prints at least that large', async () => {
    expect(ids(await get(app(), url({ contest_id: C, min_notional_usd: '40' }), PRO))).toEqual(['t3', 't2']);
    expect(ids(await get(app(), url({ contest_id: C, min_notional_usd: '40.01' }), PRO))).toEqual(['t3']);
    expect(ids(await get(app(), url({ contest_id: C, min_notional_usd: '0' }), PRO))).toEqual(['t4', 't3', 't2', 't1']);
  });
  it('limit keeps the newest', async () => {
    expect(ids(await get(app(), url({ contest_id: C, limit: 2 }), PRO))).toEqual(['t4', 't3']);
    expect((await get(app(), url({ contest_id: C, limit: 1000 }), PRO)).status).toBe(200);
  });
  it('filters by one position, with or without the contest', async () => {
    expect(ids(await get(app(), url({ position_hash: A }), PRO))).toEqual(['t4', 't2', 't1']);
    expect(ids(await get(app(), url({ position_hash: A, contest_id: C, since: iso(NOW - 7 * D) }), PRO))).toEqual(['t4', 't2', 't1', 't5', 't7']);
    expect(ids(await get(app(), url({ position_hash: B }), PRO))).toEqual(['t3']);
    expect(ids(await get(app(), url({ position_hash: A, contest_id: 'ct_other' }), PRO))).toEqual([]);
  });
  it('never mixes contests, and an unknown contest is empty', async () => {
    expect(ids(await get(app(), url({ contest_id: 'ct_other' }), PRO))).toEqual(['t6']);
    expect(ids(await get(app(), url({ contest_id: 'nope' }), PRO))).toEqual([]);
  });
});

describe('bad input', () => {
  it.each([
    [{}, 'contest_id'],
    [{ partner: 'vx' }, 'contest_id'],
    [{ contest_id: C, since: 'yesterday' }, 'since'],
    [{ contest_id: C, since: '2026-11-20' }, 'since'],
    [{ contest_id: C, until: 'later' }, 'until'],
    [{ contest_id: C, since: iso(T0 + 20 * M), until: iso(T0 + 10 * M) }, 'until'],
    [{ contest_id: C, min_notional_usd: 'abc' }, 'min_notional_usd'],
    [{ contest_id: C, min_notional_usd: '-1' }, 'min_notional_usd'],
    [{ contest_id: C, min_notional_usd: '' }, 'min_notional_usd'],
    [{ contest_id: C, limit: 0 }, 'limit'],
    [{ contest_id: C, limit: 1001 }, 'limit'],
    [{ contest_id: C, limit: 'x' }, 'limit'],
  ] as [Record<string, string | number>, string][])('%o → 400 on %s', async (q, parameter) => {
    const r = await get(app(), url(q), PRO);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_parameter');
    expect(r.body.error.details.parameter).toBe(parameter);
  });
  it('a key without trades:read is refused with 403', async () => {
    const r = await get(app(), url({ contest_id: C }), FREE);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'entitlement_required', details: { missing: ['trades:read'] } });
  });
});

describe('ClickHouse unavailable', () => {
  it('answers 503 history_unavailable (never a 500) for both reads, with or without a client', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const dead = createClickHouse({ url: `http://127.0.0.1:${port}`, dataDir: tch.dataDir, logLevel: 'OFF' });
    const { rt, config } = s;
    const ctx = () => ({ config, log: rt.log, clock: rt.clock, pool: rt.pool, redis: rt.redis, ks: rt.ks, gate: rt.gate, cursors: rt.cursors, metrics: new Registry() });
    const down = await buildApp(ctx(), [createHistoryRoutes({ clickhouse: dead })]);
    const none = await buildApp(ctx(), [historyRoutes]);
    try {
      for (const a of [down.app, none.app]) {
        for (const u of [url({ contest_id: C }), `/flow/v1/contests/${C}/price-history`]) {
          const r = await get(a, u, PRO);
          expect(r.status).toBe(503);
          expect(r.body.error.code).toBe('history_unavailable');
          expect(r.headers['retry-after']).toBe('5');
        }
        // Validation still comes first.
        expect((await get(a, url({}), PRO)).status).toBe(400);
      }
    } finally {
      await down.close();
      await none.close();
      await dead.close();
    }
  });
});
