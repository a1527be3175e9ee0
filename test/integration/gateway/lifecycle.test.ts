/** Connection lifecycle: key revocation (pushed and re-checked), server pings and termination. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keysRevoke } from '../../../cli/keys.js';
import { revokeKey } from '../../../src/store/pg/keys.js';
import { sleep, startHarness, type Harness } from './harness.js';

const PING_MS = 300;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ pingIntervalMs: PING_MS, keyCheckIntervalMs: 250 });
});
afterEach(async () => h?.closeClients());
afterAll(async () => h?.close());

describe('key revocation', () => {
  it('a revoked key (flow keys revoke → bus) gets key_invalid, then close 4001, on every connection', async () => {
    // A gateway whose periodic re-check is far away: only the bus message can close these in time.
    const gw = await h.startGateway({ keyCheckIntervalMs: 600_000 });
    const k = await h.key('pro');
    const keep = await h.key('pro');
    const a = await h.connect(k.api_key, { gw });
    const b = await h.connect(k.api_key, { gw });
    const other = await h.connect(keep.api_key, { gw });
    const t0 = Date.now();
    expect(await keysRevoke(h.s.rt, k.key_id)).toBe(true);
    for (const c of [a, b]) {
      expect(await c.next()).toMatchObject({ type: 'error', code: 'key_invalid', message: expect.stringMatching(/revoked/) });
      expect(await c.closed).toEqual({ code: 4001, reason: 'key_invalid' });
    }
    expect(Date.now() - t0).toBeLessThan(2000);
    expect((await other.request({ action: 'ping' })).type).toBe('pong');
    expect(other.isClosed).toBe(false);
    await h.closeClients();
    await gw.stop();
  });

  it('a key revoked without a bus message is caught by the periodic re-check', async () => {
    const k = await h.key('free');
    const c = await h.connect(k.api_key);
    expect(await revokeKey(h.s.rt.pool, k.key_id)).not.toBeNull(); // database only: no cache eviction, no bus
    expect(await c.next((m) => m.type === 'error', 3000)).toMatchObject({ code: 'key_invalid' });
    expect((await c.closed).code).toBe(4001);
  });

  it('an entitlement removed from a key ends the subscriptions that needed it', async () => {
    const k = await h.key('scale');
    const c = await h.connect(k.api_key);
    await c.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['E1'] });
    await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['E1'] });
    await h.s.rt.pool.query("UPDATE api_keys SET entitlements = array_remove(entitlements, 'stream:ticks') WHERE key_id = $1", [k.key_id]);
    expect(await c.next((m) => m.type === 'error', 3000)).toMatchObject({ code: 'entitlement_required', channel: 'ticks', missing: ['stream:ticks'] });
    expect(c.isClosed).toBe(false);
  });
});

describe('liveness', () => {
  it('pings every interval; a client that answers stays, one that does not is terminated', async () => {
    const k = await h.key('free');
    const alive = await h.connect(k.api_key);
    const silent = await h.connect(k.api_key, { autoPong: false });
    const t0 = Date.now();
    const closed = await silent.closed;
    const after = Date.now() - t0;
    // Terminated (no close frame), after one unanswered ping and before a third interval ends.
    expect(closed.code).toBe(1006);
    expect(silent.pingsReceived).toBeGreaterThanOrEqual(1);
    expect(after).toBeGreaterThanOrEqual(PING_MS);
    expect(after).toBeLessThan(PING_MS * 3 + 500);
    await sleep(PING_MS * 3);
    expect(alive.isClosed).toBe(false);
    expect(alive.pingsReceived).toBeGreaterThanOrEqual(3);
    expect((await alive.request({ action: 'ping' })).type).toBe('pong');
  });

  it('pings in slices across the interval, not every connection at once; each connection once per interval', async () => {
    // 1,000 ms: five slices 200 ms apart, the five connections one in each.
    const gw = await h.startGateway({ pingIntervalMs: 1000 });
    const clients = [];
    for (let i = 0; i < 5; i++) clients.push(await h.connect((await h.key('free')).api_key, { gw }));
    await sleep(2200);
    // Judged on when the pings came, not on what a sleep let happen (a loaded machine connects and
    // wakes late): pinged all at once, the first pings would fall within a few ms of each other; in
    // slices they spread over the interval (200 ms a slice, so at least two slices apart). Each
    // connection is pinged about once an interval: never twice within half of one, at most three
    // times in 2.2 s.
    const first = clients.map((c) => c.pingTimes[0]!);
    expect(first.every((t) => t !== undefined)).toBe(true);
    expect(Math.max(...first) - Math.min(...first)).toBeGreaterThanOrEqual(300);
    for (const c of clients) {
      expect(c.pingsReceived).toBeGreaterThanOrEqual(1);
      expect(c.pingsReceived).toBeLessThanOrEqual(3);
      for (let i = 1; i < c.pingTimes.length; i++) expect(c.pingTimes[i]! - c.pingTimes[i - 1]!).toBeGreaterThanOrEqual(500);
      expect(c.isClosed).toBe(false);
    }
  });
});
