/** Upgrade, greeting, connection limits and the client-message protocol of the stream gateway. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keysRevoke } from '../../../cli/keys.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { eventually, liquidityEvent, startHarness, ticksEvent, type Harness } from './harness.js';
import { connectWs, UpgradeRefused } from '../../../bench/support/ws-client.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterEach(async () => h?.closeClients());
afterAll(async () => h?.close());

async function refusal(p: Promise<unknown>): Promise<UpgradeRefused> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpgradeRefused);
  return err as UpgradeRefused;
}

describe('upgrade and greeting', () => {
  it('greets with connected: organization_id, api_key_id, server_time', async () => {
    const k = await h.key('free');
    const before = Date.now();
    const c = await h.open(k.api_key);
    const hello = await c.next();
    expect(hello).toEqual({ type: 'connected', organization_id: k.workspace_id, api_key_id: k.key_id, server_time: expect.any(String) });
    const t = Date.parse(hello.server_time);
    expect(t).toBeGreaterThanOrEqual(before - 1000);
    expect(t).toBeLessThanOrEqual(Date.now() + 1000);
    await c.close();
  });

  it('accepts the key in the X-API-Key header too', async () => {
    const k = await h.key('free');
    const c = await h.open(null, { headers: { 'X-API-Key': k.api_key } });
    expect((await c.next()).api_key_id).toBe(k.key_id);
    await c.close();
  });

  it('refuses a missing or unknown key with HTTP 401 at upgrade', async () => {
    for (const key of [null, 'flow_test_not-a-key']) {
      const r = await refusal(h.open(key));
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body).error.code).toBe('unauthorized');
    }
  });

  it('refuses a revoked key with HTTP 401 at upgrade, even after it was cached', async () => {
    const k = await h.key('pro');
    const c = await h.connect(k.api_key); // caches the principal record
    expect(await keysRevoke(h.s.rt, k.key_id)).toBe(true);
    await c.closed;
    const r = await refusal(h.open(k.api_key));
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).error.message).toMatch(/revoked/);
  });
});

describe('connections per key', () => {
  it('refuses the 4th concurrent connection with HTTP 429 and reuses a freed slot', async () => {
    expect(h.s.config.streamMaxConnectionsPerKey).toBe(3);
    const k = await h.key('free');
    const open = [await h.connect(k.api_key), await h.connect(k.api_key), await h.connect(k.api_key)];
    const r = await refusal(h.open(k.api_key));
    expect(r.status).toBe(429);
    const body = JSON.parse(r.body);
    expect(body.error.code).toBe('connection_limit_exceeded');
    expect(body.error.details.max_connections).toBe(3);
    // Another key is not affected.
    const other = await h.key('free');
    await (await h.connect(other.api_key)).close();

    await open[0]!.close();
    const again = await eventually(() => h.connect(k.api_key));
    expect(again.isClosed).toBe(false);
    expect((await refusal(h.open(k.api_key))).status).toBe(429);
  });

  it('counts connections across gateway processes', async () => {
    const gw2 = await h.startGateway();
    const k = await h.key('free');
    await h.connect(k.api_key);
    await h.connect(k.api_key, { gw: gw2 });
    await h.connect(k.api_key);
    expect((await refusal(h.open(k.api_key, { gw: gw2 }))).status).toBe(429);
    await h.closeClients();
    await gw2.stop();
  });

  it('does not count slots whose heartbeat expired (a gateway that died)', async () => {
    const k = await h.key('free');
    const zkey = h.s.rt.ks.k('stream', 'conns', k.key_id);
    const stale = Date.now() - 10 * 60_000;
    await h.s.rt.redis.zadd(zkey, stale, 'dead-1', stale, 'dead-2', stale, 'dead-3');
    const c = await h.connect(k.api_key);
    expect(await h.s.rt.redis.zcard(zkey)).toBe(1);
    await c.close();
    await eventually(async () => expect(await h.s.rt.redis.zcard(zkey)).toBe(0));
  });
});

describe('client messages', () => {
  it('answers ping with pong and server_time', async () => {
    const c = await h.connect((await h.key('free')).api_key);
    const pong = await c.request({ action: 'ping' });
    expect(pong).toEqual({ type: 'pong', server_time: expect.any(String) });
    expect(Number.isNaN(Date.parse(pong.server_time))).toBe(false);
  });

  it('answers non-JSON and malformed messages with invalid_message and stays open', async () => {
    const c = await h.connect((await h.key('free')).api_key);
    for (const m of ['not json', '{"action":', '42', '[]', JSON.stringify({ action: 'dance' }), JSON.stringify({ channel: 'liquidity' })]) {
      const e = await c.request(m);
      expect(e).toMatchObject({ type: 'error', code: 'invalid_message' });
      expect(typeof e.message).toBe('string');
    }
    expect((await c.request({ action: 'ping' })).type).toBe('pong');
  });

  it('answers unknown channels with invalid_channel', async () => {
    const c = await h.connect((await h.key('organization')).api_key);
    for (const channel of ['candles', 'quote', 'exposure', 42, undefined]) {
      const e = await c.request({ action: 'subscribe', channel, contest_ids: ['c1'] });
      expect(e).toMatchObject({ type: 'error', code: 'invalid_channel' });
    }
    expect(await c.request({ action: 'unsubscribe', channel: 'nope' })).toMatchObject({ type: 'error', code: 'invalid_channel' });
  });

  it('rejects bad filter values and unknown fields with invalid_message', async () => {
    const c = await h.connect((await h.key('scale')).api_key);
    const bad = [
      { action: 'subscribe', channel: 'liquidity', contest_id: 'c1' },
      { action: 'subscribe', channel: 'liquidity', contest_ids: 'c1' },
      { action: 'subscribe', channel: 'liquidity', contest_ids: [1] },
      { action: 'subscribe', channel: 'liquidity', contest_ids: [] },
      { action: 'subscribe', channel: 'trades', contest_ids: ['c1'], min_notional_usd: -1 },
      { action: 'subscribe', channel: 'signal', min_confidence: 'very' },
      { action: 'subscribe', channel: 'signal', min_strength: 101 },
      { action: 'subscribe', channel: 'arbitrage', after_fee_only: 'yes' },
    ];
    for (const m of bad) expect(await c.request(m)).toMatchObject({ type: 'error', code: 'invalid_message', channel: m.channel });
  });
});

describe('subscribe rules', () => {
  const SUBS: Record<string, object> = {
    liquidity: { channel: 'liquidity' },
    contest_state: { channel: 'contest_state' },
    ticks: { channel: 'ticks', contest_ids: ['c1'] },
    trades: { channel: 'trades', contest_ids: ['c1'] },
    arbitrage: { channel: 'arbitrage' },
    signal: { channel: 'signal' },
    orders: { channel: 'orders' },
    balance: { channel: 'balance' },
    'orders (all)': { channel: 'orders', all: true },
    'balance (account_ids)': { channel: 'balance', account_ids: ['someone'] },
  };
  const ALLOWED: Record<string, string[]> = {
    free: ['liquidity'],
    pro: ['liquidity', 'contest_state', 'trades', 'arbitrage', 'signal', 'orders', 'balance'],
    scale: ['liquidity', 'contest_state', 'ticks', 'trades', 'arbitrage', 'signal', 'orders', 'balance'],
    organization: Object.keys(SUBS),
  };
  for (const [plan, allowed] of Object.entries(ALLOWED)) {
    it(`${plan}: entitlement table`, async () => {
      const k = await h.key(plan as 'free');
      const c = await h.connect(k.api_key);
      for (const [name, sub] of Object.entries(SUBS)) {
        const r = await c.request({ action: 'subscribe', ...sub });
        if (allowed.includes(name)) {
          // account_ids naming an unowned account passes the entitlement check, then is forbidden.
          if (name === 'balance (account_ids)') expect(r).toMatchObject({ type: 'error', code: 'account_forbidden' });
          else expect(r, name).toMatchObject({ type: 'subscribed', channel: (sub as { channel: string }).channel });
        } else {
          expect(r, name).toMatchObject({ type: 'error', code: 'entitlement_required', channel: (sub as { channel: string }).channel });
          expect(r.missing.length).toBeGreaterThan(0);
          expect(r.message).toContain(r.missing[0]);
        }
      }
    });
  }

  it('a refused subscribe creates nothing: later events are not delivered', async () => {
    const pro = await h.key('pro'); // no stream:ticks
    const c = await h.connect(pro.api_key);
    expect(await c.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['cx'] })).toMatchObject({ code: 'entitlement_required', missing: ['stream:ticks'] });
    const free = await h.connect((await h.key('free')).api_key);
    expect(await free.request({ action: 'subscribe', channel: 'trades', contest_ids: ['cx'] })).toMatchObject({ code: 'entitlement_required' });
    for (const x of [c, free]) expect((await x.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['sentinel'] })).type).toBe('subscribed');
    await h.publish('ticks', 'cx', ticksEvent('cx'));
    await h.publish('trades', 'cx', { type: 'trades', contest_id: 'cx', trades: [], timestamp: new Date().toISOString() });
    await h.publish('liquidity', 'sentinel', liquidityEvent('sentinel'));
    for (const x of [c, free]) {
      await x.next((m) => m.type === 'liquidity.update');
      expect(x.all.filter((m) => m.type === 'ticks' || m.type === 'trades')).toEqual([]);
    }
  });

  it('ticks and trades need contest_ids', async () => {
    const c = await h.connect((await h.key('scale')).api_key);
    for (const channel of ['ticks', 'trades']) {
      expect(await c.request({ action: 'subscribe', channel })).toMatchObject({ type: 'error', code: 'contest_ids_required', channel });
      expect(await c.request({ action: 'subscribe', channel, contest_ids: [] })).toMatchObject({ type: 'error', code: 'contest_ids_required' });
      expect(await c.request({ action: 'subscribe', channel, contest_ids: null })).toMatchObject({ type: 'error', code: 'contest_ids_required' });
    }
  });

  it('caps a channel at 200 contests per connection and keeps the previous subscription', async () => {
    const c = await h.connect((await h.key('free')).api_key);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `cap-${i}`);
    expect(await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['keep'] })).toEqual({ type: 'subscribed', channel: 'liquidity', contest_ids: ['keep'] });
    const e = await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ids(201) });
    expect(e).toMatchObject({ type: 'error', code: 'invalid_message' });
    expect(e.message).toMatch(/200/);
    await h.publish('liquidity', 'cap-0', liquidityEvent('cap-0'));
    await h.publish('liquidity', 'keep', liquidityEvent('keep'));
    expect((await c.next((m) => m.type === 'liquidity.update')).contest_id).toBe('keep');
    expect(c.all.filter((m) => m.contest_id === 'cap-0')).toEqual([]);
    // Exactly 200 is fine; duplicates count once.
    const ok = await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [...ids(200), 'cap-0'] });
    expect(ok.type).toBe('subscribed');
    expect(ok.contest_ids).toHaveLength(200);
  });

  it('re-subscribing replaces the filter list', async () => {
    const c = await h.connect((await h.key('scale')).api_key);
    expect(await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['old'] })).toMatchObject({ contest_ids: ['old'] });
    expect(await c.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['old'] })).toMatchObject({ contest_ids: ['old'] });
    await h.publish('liquidity', 'old', liquidityEvent('old'));
    await h.publish('ticks', 'old', ticksEvent('old'));
    await c.next((m) => m.type === 'liquidity.update' && m.contest_id === 'old');
    await c.next((m) => m.type === 'ticks' && m.contest_id === 'old');

    expect(await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['new'] })).toMatchObject({ contest_ids: ['new'] });
    expect(await c.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['new'] })).toMatchObject({ contest_ids: ['new'] });
    const before = c.all.length;
    await h.publish('liquidity', 'old', liquidityEvent('old'));
    await h.publish('ticks', 'old', ticksEvent('old'));
    await h.publish('liquidity', 'new', liquidityEvent('new'));
    await h.publish('ticks', 'new', ticksEvent('new'));
    await c.next((m) => m.type === 'liquidity.update' && m.contest_id === 'new');
    await c.next((m) => m.type === 'ticks' && m.contest_id === 'new');
    expect(c.all.slice(before).filter((m) => m.contest_id === 'old')).toEqual([]);
  });

  it('unsubscribe stops delivery (whole channel, or some contests)', async () => {
    const c = await h.connect((await h.key('pro')).api_key);
    await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['u1', 'u2'] });
    await c.request({ action: 'subscribe', channel: 'contest_state', contest_ids: ['sentinel'] });
    expect(await c.request({ action: 'unsubscribe', channel: 'liquidity', contest_ids: ['u1'] })).toMatchObject({
      type: 'unsubscribed',
      channel: 'liquidity',
      remaining_contest_ids: ['u2'],
    });
    const state = (id: string) => ({ type: 'contest_state.update', contest_id: id, state: {}, refreshed_at: new Date().toISOString(), timestamp: new Date().toISOString() });
    await h.publish('liquidity', 'u1', liquidityEvent('u1'));
    await h.publish('liquidity', 'u2', liquidityEvent('u2'));
    await h.publish('contest_state', 'sentinel', state('sentinel'));
    await c.next((m) => m.type === 'contest_state.update');
    expect(c.all.filter((m) => m.type === 'liquidity.update').map((m) => m.contest_id)).toEqual(['u2']);

    expect(await c.request({ action: 'unsubscribe', channel: 'liquidity' })).toEqual({ type: 'unsubscribed', channel: 'liquidity' });
    await h.publish('liquidity', 'u2', liquidityEvent('u2'));
    await h.publish('contest_state', 'sentinel', state('sentinel'));
    await c.next((m) => m.type === 'contest_state.update');
    expect(c.all.filter((m) => m.type === 'liquidity.update')).toHaveLength(1);
  });
});

describe('plain HTTP on the stream port', () => {
  it('answers a non-upgrade GET with 426 and a bad path upgrade with a refusal; serves health and metrics', async () => {
    const r = await fetch(`http://127.0.0.1:${h.gw.port}/flow/v1/stream`);
    expect(r.status).toBe(426);
    expect((await fetch(`http://127.0.0.1:${h.gw.port}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${h.gw.port}/metrics`)).text();
    expect(metrics).toContain('flow_stream_upgrades_total{result="accepted"}');
    expect(metrics).toContain('flow_stream_upgrades_total{result="limit"}');
    const k = await createKey(h.s.rt.pool, h.s.rt.gate, { plan: 'free', keyType: 'data', environment: 'test' });
    const e = await refusal(connectWs(`ws://127.0.0.1:${h.gw.port}/flow/v2/stream?api_key=${k.api_key}`));
    expect(e.status).toBe(404);
  });
});
