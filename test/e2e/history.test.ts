/**
 * History end to end: quotes and trades go in through the simulator control API, flow through
 * ingest and compute into ClickHouse (embedded chDB in the service's data dir), and come back out of
 * the price-history and trades endpoints exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, demoKey, eventually, findTotalLine } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let c: ReturnType<typeof client>;
let line: Awaited<ReturnType<typeof findTotalLine>>;
let t0: number;

const history = (q: string) => c.api(`/flow/v1/contests/${line.contestId}/price-history?${q}`);
const setOver = (partner: string, price: number, available = 2_000) =>
  c.sim('/sim/v1/quotes', { partner_id: partner, position_hash: line.over.position_hash, price, available });

beforeAll(async () => {
  svc = await startService();
  c = client(svc, demoKey(svc));
  await c.sim('/sim/v1/freeze', { frozen: true });
  line = await findTotalLine(c);
  t0 = Date.now();
}, 120_000);
afterAll(async () => svc?.cleanup(), 60_000);

describe('price history', () => {
  it('records every quote change of a venue and serves it at tick resolution, in order', async () => {
    const prices = [0.41, 0.42, 0.44, 0.43];
    for (const p of prices) {
      await setOver('sim_exchange', p);
      // Each change computed before the next, so every one is its own row.
      await eventually(
        () => c.api(`/flow/v1/contests/${line.contestId}/liquidity`),
        (r) => r.body.data.find((x: any) => x.position_hash === line.over.position_hash)?.partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange')?.price === p,
      );
    }
    const q = `position_hash=${encodeURIComponent(line.over.position_hash)}&partner_id=sim_exchange&resolution=tick&from=${t0}&to=${Date.now() + 1_000}`;
    const r = await eventually(() => history(q), (x) => x.body.data?.points?.length >= prices.length, 10_000);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ contest_id: line.contestId, resolution: 'tick' });
    const got = r.body.data.points.map((p: any) => p.price);
    expect(got.slice(-prices.length)).toEqual(prices);
    const ts = r.body.data.points.map((p: any) => p.t);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
  });

  it('a 1m bucket holds the close: the last price of the minute', async () => {
    const q = `position_hash=${encodeURIComponent(line.over.position_hash)}&partner_id=sim_exchange&resolution=1m&from=${t0}&to=${Date.now() + 1_000}`;
    const r = await history(q);
    expect(r.body.data.resolution).toBe('1m');
    const last = r.body.data.points[r.body.data.points.length - 1];
    expect(last.price).toBe(0.43);
    expect(last.t % 60_000).toBe(0);
  });

  it('without partner_id serves the consensus series; auto picks tick within 6 h and 1m degrades to 5m beyond', async () => {
    const q = `position_hash=${encodeURIComponent(line.over.position_hash)}&from=${t0}&to=${Date.now() + 1_000}`;
    const r = await eventually(() => history(q), (x) => x.body.data?.points?.length > 0, 10_000);
    expect(r.body.data.resolution).toBe('tick');
    for (const p of r.body.data.points) {
      expect(p.position_hash).toBe(line.over.position_hash);
      expect(p.price).toBeGreaterThan(0);
      expect(p.price).toBeLessThan(1);
    }
    const wide = await history(`resolution=1m&from=${Date.now() - 7 * 3_600_000}&to=${Date.now()}`);
    expect(wide.body.data.resolution).toBe('5m');
  });

  it('needs pricing:history and refuses bad windows', async () => {
    const free = JSON.parse(
      (await import('node:child_process')).execFileSync(
        'node',
        ['--import', 'tsx', 'cli/flow.ts', 'keys', 'create', '--plan', 'free', '--type', 'data', '--env', 'test', '--json'],
        { env: { ...process.env, ...svc.env, LOG_LEVEL: 'warn' }, encoding: 'utf8' },
      ),
    );
    const denied = await fetch(`${svc.base}/flow/v1/contests/${line.contestId}/price-history`, { headers: { 'x-api-key': free.api_key } });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as any).error.code).toBe('entitlement_required');
    for (const bad of ['from=5&to=1', 'from=abc', 'to=-1', 'resolution=2m', 'limit=50001', 'limit=0']) {
      const r = await history(bad);
      expect(r.status, bad).toBe(400);
      expect(r.body.error.code, bad).toBe('invalid_parameter');
    }
    expect((await c.api('/flow/v1/contests/ct_unknown/price-history')).body.data.points).toEqual([]);
  });
});

describe('trades', () => {
  it('prints emitted on a venue come back newest first with notional = size × price, and filter', async () => {
    const base = Date.now() - 60_000;
    const emit = (price: number, size: number, action: 'buy' | 'sell', at: number, extra: object = {}) =>
      c.sim('/sim/v1/trades', { partner_id: 'sim_exchange', position_hash: line.over.position_hash, price, size_contracts: size, taker_action: action, executed_at: at, ...extra });
    await emit(0.4, 100, 'buy', base);
    await emit(0.3, 10, 'sell', base + 1_000);
    await emit(0.45, 5_000, 'buy', base + 2_000, { is_block: true, trader_id: 'desk-7' });
    const window = `since=${new Date(base - 1).toISOString()}&until=${new Date(base + 5_000).toISOString()}&limit=1000`;
    const read = () => c.api(`/flow/v1/trades?contest_id=${line.contestId}&${window}`);
    const ours = (x: any) => (x.body.data ?? []).filter((t: any) => t.position_hash === line.over.position_hash && t.executed_at >= new Date(base).toISOString() && t.partner_id === 'sim_exchange');
    const r = await eventually(read, (x) => ours(x).length >= 3, 10_000);
    const mine = ours(r);
    expect(mine.map((t: any) => [t.price, t.size_contracts, t.taker_action, t.notional_usd])).toEqual([
      [0.45, 5_000, 'buy', 2_250],
      [0.3, 10, 'sell', 3],
      [0.4, 100, 'buy', 40],
    ]);
    // The exchange publishes no trader identity: null, not the id the simulator was handed.
    expect(mine[0]).toMatchObject({ partner_id: 'sim_exchange', is_block: true, trader_id: null, trader_id_kind: null, router_contest_id: line.contestId, liquidity_hash: expect.stringMatching(/^sim_exchange:/) });
    await c.sim('/sim/v1/trades', { partner_id: 'sim_book01', position_hash: line.over.position_hash, price: 0.5, size_contracts: 8, taker_action: 'sell', executed_at: base + 3_000, trader_id: '0xabc' });
    const withId = await eventually(read, (x) => (x.body.data ?? []).some((t: any) => t.partner_id === 'sim_book01' && t.trader_id === '0xabc'), 10_000);
    expect(withId.body.data.find((t: any) => t.trader_id === '0xabc')).toMatchObject({ trader_id_kind: 'wallet', taker_action: 'sell', notional_usd: 4 });
    const big = await c.api(`/flow/v1/trades?contest_id=${line.contestId}&${window}&min_notional_usd=40`);
    expect(ours(big).map((t: any) => t.notional_usd)).toEqual([2_250, 40]);
    expect(big.body.data.every((t: any) => t.notional_usd >= 40)).toBe(true);
    const byName = await c.api(`/flow/v1/trades?position_hash=${encodeURIComponent(line.over.position_hash)}&partner=${encodeURIComponent(mine[0].partner_name)}&since=${new Date(base - 1).toISOString()}&until=${new Date(base + 1_000).toISOString()}`);
    expect(ours(byName).map((t: any) => t.price)).toEqual([0.4]);
    expect(byName.body.data.every((t: any) => t.partner_id === 'sim_exchange' && t.executed_at < new Date(base + 1_000).toISOString())).toBe(true);
    const old = await c.api(`/flow/v1/trades?contest_id=${line.contestId}&since=${new Date(Date.now() - 8 * 86_400_000).toISOString()}`);
    expect(old.status).toBe(400);
    expect((await c.api('/flow/v1/trades')).status).toBe(400);
    const sportsbook = await c.api(`/flow/v1/trades?contest_id=${line.contestId}&partner=sim_sportsbook&limit=1000`);
    expect(sportsbook.body.data).toEqual([]);
  });
});
