/**
 * The gateway on a thread of its own (cli/roles/gateway-thread.ts, what `flow all` runs): clients
 * get the log's events through it, its metrics show in the process's registry, and a thread that
 * dies comes back on the same port, where clients resume.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayThread } from '../../../cli/roles/gateway-thread.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { connectWs, type WsClient } from '../../../bench/support/ws-client.js';
import { freePort } from '../../support/private-servers.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let key: CreatedKey;
beforeAll(async () => {
  s = await startStack({ catalog: null });
  key = await createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'data', environment: 'test' });
});
afterAll(async () => s?.close());

const eventually = async <T>(f: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const v = await f();
      if (ok(v)) return v;
    } catch (err) {
      if (Date.now() > until) throw err;
    }
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('the gateway thread', () => {
  it('streams the log, reports its metrics here, and comes back on its port after dying', async () => {
    // A port of its own, as STREAM_PORT names one: the kernel refuses to bind a port it picked for
    // port 0 again while its closed connections linger (TIME-WAIT), so a gateway on port 0 comes
    // back only after up to a minute (docs/decisions.md).
    const rt = { ...s.rt, config: { ...s.rt.config, streamPort: await freePort() } };
    const gw = await startGatewayThread(rt);
    const hot = new HotState(s.rt.redis, s.rt.ks);
    const contest = `thread_${Date.now()}`;
    const url = `ws://127.0.0.1:${gw.port}/flow/v1/stream?api_key=${encodeURIComponent(key.api_key)}`;
    const clients: WsClient[] = [];
    try {
      expect(gw.port).toBeGreaterThan(0);
      const c = await connectWs(url);
      clients.push(c);
      await c.next((m) => m?.type === 'connected');
      await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [contest] });
      const first = await hot.append(contest, [{ channel: 'liquidity', league_id: null, event: JSON.stringify({ type: 'liquidity.update', contest_id: contest, n: 1 }) }]);
      expect(await c.next((m) => m?.type === 'liquidity.update')).toMatchObject({ n: 1, event_id: first });

      // The thread's gauges are read at scrape time from this process's registry.
      expect(await s.rt.metrics.getSingleMetricAsString('flow_stream_connections')).toMatch(/flow_stream_connections 1\b/);

      // An uncaught error in the thread: its gateway closes (clients get 1001), the thread ends and
      // is started again on the same port.
      await gw.host.request({ op: 'fail' });
      expect((await c.closed).code).toBe(1001);
      const missed = await hot.append(contest, [{ channel: 'liquidity', league_id: null, event: JSON.stringify({ type: 'liquidity.update', contest_id: contest, n: 2 }) }]);
      const again = await eventually(() => connectWs(url), () => true, 10_000);
      clients.push(again);
      await again.next((m) => m?.type === 'connected');
      await again.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [contest], resume_from: { [contest]: first } });
      expect(await again.next((m) => m?.type === 'liquidity.update')).toMatchObject({ n: 2, event_id: missed });
    } finally {
      for (const c of clients) if (!c.isClosed) await c.close().catch(() => undefined);
      await gw.stop();
    }
    // Stopped: nothing listens on the port any more.
    await expect(connectWs(url, { timeoutMs: 2_000 })).rejects.toThrow();
  });
});
