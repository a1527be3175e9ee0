/**
 * Issue 8 item 13, the rate-limit gate when its connection fails under a script call, through a TCP
 * proxy in front of a private Redis that can withhold Redis' replies and cut the connection:
 * - a call Redis executed but whose answer was lost fails its requests with GateUnavailable at once,
 *   and is never resent after the reconnect (the requests were refused, so they must not be counted
 *   a second time, nor admitted late);
 * - a call on a connection that hangs without closing fails within the bound (1 s), as do the
 *   requests queued behind it, and the gate serves again once the connection does.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowsAt } from '../../../src/domain/ratelimit.js';
import { createRedis, Keyspace, type Redis } from '../../../src/store/redis/client.js';
import { GateUnavailable, RequestGate, type GateOutcome } from '../../../src/store/redis/gate.js';
import { freePort, startPrivateRedis, until, type PrivateRedis } from '../../support/private-servers.js';

/** Forwards to Redis; can hold back Redis' replies (a link that hangs) and cut every connection. */
class Proxy {
  private withholding = false;
  private readonly held = new Map<net.Socket, Buffer[]>();
  private readonly server: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  constructor(
    readonly port: number,
    upstreamPort: number,
  ) {
    this.server = net.createServer((down) => {
      const up = net.connect(upstreamPort, '127.0.0.1');
      const pair: [net.Socket, net.Socket] = [down, up];
      this.pairs.add(pair);
      down.on('data', (d) => up.write(d));
      up.on('data', (d) => {
        if (!this.withholding) down.write(d);
        else this.held.set(down, [...(this.held.get(down) ?? []), d]);
      });
      const end = () => {
        this.pairs.delete(pair);
        down.destroy();
        up.destroy();
      };
      down.on('close', end).on('error', end);
      up.on('close', end).on('error', end);
    });
  }
  listen(): Promise<void> {
    return new Promise((r) => this.server.listen(this.port, '127.0.0.1', () => r()));
  }
  withhold(): void {
    this.withholding = true;
  }
  /** Delivers what was held back, in order, and forwards again. */
  release(): void {
    this.withholding = false;
    for (const [down, chunks] of this.held) for (const c of chunks) if (!down.destroyed) down.write(c);
    this.held.clear();
  }
  cut(): void {
    this.held.clear();
    for (const [down, up] of this.pairs) {
      down.destroy();
      up.destroy();
    }
  }
  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const ks = new Keyspace('flowfault_gate');
const NOW = Date.parse('2026-11-20T10:00:30.000Z');
const p = (workspace: string) => ({ workspace_id: workspace, key_id: `key-${workspace}`, router_account_id: `acct-${workspace}`, rpm: 1_000, rpd: 100_000 });
const minuteKey = (workspace: string) => ks.k('rl', workspace, 'm', windowsAt(NOW).minuteIndex);

let redis: PrivateRedis;
let proxy: Proxy;
let direct: Redis;
let viaProxy: Redis;
let gate: RequestGate;

/** One check; resolves with its outcome or error and when it came, never rejects. */
function check(workspace: string): Promise<{ at: number; err: unknown; outcome?: GateOutcome }> {
  return new Promise((resolve) => gate.check(p(workspace), NOW, false, (err, outcome) => resolve({ at: Date.now(), err, outcome })));
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  proxy = new Proxy(await freePort(), redis.port);
  await proxy.listen();
  direct = createRedis(redis.url);
  viaProxy = createRedis(`redis://127.0.0.1:${proxy.port}`);
  viaProxy.on('error', () => undefined);
  gate = new RequestGate(viaProxy, ks);
  await viaProxy.ping();
});

afterAll(async () => {
  await gate?.close();
  viaProxy?.disconnect();
  direct?.disconnect();
  await proxy?.close();
  await redis?.stop();
});

describe('gate: the connection fails under a script call', () => {
  it('a call Redis ran but whose answer was lost fails at once and is not counted again after the reconnect', async () => {
    const ok = await check('ws-lost');
    expect(ok.err).toBeNull();
    expect(ok.outcome!.minuteCount).toBe(1);

    proxy.withhold();
    const pending = check('ws-lost');
    // Redis has run the script (the counter moved) but its answer is held back.
    await until(async () => (await direct.get(minuteKey('ws-lost'))) === '2', 5_000, 'the script ran');
    const cutAt = Date.now();
    proxy.cut();
    proxy.release();
    const lost = await pending;
    expect(lost.err).toBeInstanceOf(GateUnavailable);
    expect(lost.at - cutAt).toBeLessThan(1_000);

    // Back: the client reconnects; the lost call must not run a second time.
    await until(() => viaProxy.status === 'ready', 5_000, 'the gate connection is back');
    const next = await check('ws-lost');
    expect(next.err).toBeNull();
    expect(next.outcome!.minuteCount).toBe(3);
    expect(await direct.get(minuteKey('ws-lost'))).toBe('3');
  });

  it('a connection that hangs fails its call and the requests queued behind it within 1 s, and the gate recovers', async () => {
    proxy.withhold();
    const start = Date.now();
    const first = check('ws-hang');
    // Queued behind the in-flight call (same windows), then another workspace's lane.
    await new Promise((r) => setImmediate(r));
    const queued = [check('ws-hang'), check('ws-hang'), check('ws-hang-2')];
    const all = await Promise.all([first, ...queued]);
    for (const r of all) {
      expect(r.err).toBeInstanceOf(GateUnavailable);
      expect(r.at - start).toBeLessThanOrEqual(1_000);
    }
    proxy.release();
    // The held answers arrive late and are dropped; newer calls are answered normally.
    await until(async () => (await check('ws-hang-3')).err === null, 5_000, 'the gate answers again');
    const again = await check('ws-hang');
    expect(again.err).toBeNull();
  });
});
