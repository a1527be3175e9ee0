/**
 * Issue 9, reliability: the compute process (liquidity jobs and the history writer) is SIGKILLed at
 * each step of its work, then restarted, while stream clients stay connected to a gateway in
 * another process. After the restart every client has received every change exactly once, and tick
 * history holds every change exactly once.
 *
 * Two processes of the real CLI on one database and Redis prefix: A runs api, gateway and ingest (the
 * simulator, frozen, so only the changes the test injects move); B runs compute, armed with one
 * failpoint (src/failpoints.ts) per scenario:
 *   compute.before-store   the job computed but stored nothing (it runs again once its lock lapses)
 *   compute.after-store    state and events are in the log; the job never finished (runs again, finds nothing new)
 *   history.before-insert  history rows read from the log, not inserted (read again after the restart)
 *   history.after-insert   inserted, not acknowledged (inserted again after the restart: deduplicated)
 * B keeps its ClickHouse data in its own directory; the test reads it once every scenario ran.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse } from '../../../src/store/clickhouse/client.js';
import { createRedis } from '../../../src/store/redis/client.js';
import { logKeys } from '../../../src/store/redis/eventlog.js';
import { Keyspace } from '../../../src/store/redis/client.js';
import { connectWs, type WsClient } from '../../../bench/support/ws-client.js';
import { client, demoKey, eventually } from '../../support/e2e.js';
import { startService, type Service } from '../../support/service.js';
import { removeDataDir } from '../../support/stack.js';
import { tempDir } from '../../support/scratch.js';

const POINTS = ['compute.before-store', 'compute.after-store', 'history.before-insert', 'history.after-insert'] as const;
const CHANGES_PER_SCENARIO = 6;

let a: Service;
let computeDir: string;
let b: Service | null = null;
let ws: WsClient;
let c: ReturnType<typeof client>;
let contestId: string;
/** Every (liquidity_hash, price) change the client received, with its count. */
const received = new Map<string, number>();
const eventIds: string[] = [];
/** Listings not used yet: each scenario changes fresh ones, once each. */
let listings: { partner_id: string; position_hash: string; liquidity_hash: string; price: number; available: number }[] = [];
/** Every change injected: what must be delivered and in history exactly once. */
const injected: { liquidity_hash: string; price: number }[] = [];

const keyOf = (h: string, p: number) => `${h}@${p}`;
const priceOf = (positions: any[], hash: string): number =>
  positions.flatMap((p: any) => p.partner_liquidities).find((q: any) => q.liquidity_hash === hash)?.price ?? NaN;

async function startCompute(failpoint: string | null): Promise<Service> {
  return startService({ ...a.env, FLOW_ROLES: 'compute', FLOW_DATA_DIR: computeDir, FLOW_FAILPOINTS: failpoint ?? '' });
}

/** Waits until the history writer has nothing unread or unacknowledged in the log. */
async function historyDrained(): Promise<boolean> {
  const r = createRedis(a.env.REDIS_URL!);
  try {
    const groups = (await r.xinfo('GROUPS', logKeys(new Keyspace(a.env.REDIS_PREFIX!)).hist)) as unknown[][];
    return groups.every((g) => {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < g.length; i += 2) o[String(g[i])] = g[i + 1];
      return Number(o.pending) === 0 && (o.lag === null || Number(o.lag) === 0);
    });
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

beforeAll(async () => {
  computeDir = tempDir('compute-kill');
  a = await startService({ FLOW_ROLES: 'api,gateway,ingest' });
  b = await startCompute(null);
  const key = demoKey(a);
  c = client(a, key);
  await c.sim('/sim/v1/freeze', { frozen: true });
  const contests = (await c.api('/flow/v1/contests?limit=50')).body.data as { id: string }[];
  for (const ct of contests) {
    const liq = await eventually(
      () => c.api(`/flow/v1/contests/${ct.id}/liquidity`),
      (r) => r.body.data.length > 0,
      15_000,
    );
    const entries = liq.body.data.flatMap((p: any) => p.partner_liquidities.map((q: any) => ({ partner_id: q.partner_id, position_hash: p.position_hash, liquidity_hash: q.liquidity_hash, price: q.price, available: q.available })));
    if (entries.length >= POINTS.length * CHANGES_PER_SCENARIO) {
      contestId = ct.id;
      listings = entries;
      break;
    }
  }
  expect(contestId).toBeTruthy();
  ws = await connectWs(`ws://127.0.0.1:${a.streamPort}/flow/v1/stream?api_key=${key}`, {
    onText: (text) => {
      const m = JSON.parse(text) as { type: string; event_id?: string; changed_entries?: { liquidity_hash: string; price: number }[] };
      if (m.type !== 'liquidity.update') return;
      if (m.event_id) eventIds.push(m.event_id);
      for (const e of m.changed_entries ?? []) received.set(keyOf(e.liquidity_hash, e.price), (received.get(keyOf(e.liquidity_hash, e.price)) ?? 0) + 1);
    },
  });
  ws.send({ action: 'subscribe', channel: 'liquidity', contest_ids: [contestId] });
  // The initial computation is done and written to history before any failpoint is armed.
  expect(await eventually(historyDrained, (ok) => ok, 20_000)).toBe(true);
  await b.stop();
  b = null;
}, 240_000);

afterAll(async () => {
  await ws?.close().catch(() => undefined);
  await b?.stop('SIGKILL').catch(() => undefined);
  await a?.cleanup().catch(() => undefined);
  if (computeDir) removeDataDir(computeDir);
}, 60_000);

describe('the compute process killed at each step of its work', () => {
  for (const point of POINTS) {
    it(`${point}: after a restart every change reaches the connected client once and history once`, async () => {
      b = await startCompute(point);
      try {
      const mine = listings.splice(0, CHANGES_PER_SCENARIO);
      for (const [i, l] of mine.entries()) {
        // A price far from the listing's own: each change is recognizable in the stream and in history.
        const price = l.price > 0.5 ? 0.2 + i * 0.01 : 0.7 + i * 0.01;
        await c.sim('/sim/v1/quotes', { partner_id: l.partner_id, position_hash: l.position_hash, price, available: l.available || 500 });
      }
      // The armed step is reached by the first job or the first history batch: the process dies.
      const died = await eventually(async () => b!.child.exitCode ?? b!.child.signalCode, (v) => v !== null, 20_000);
      expect(died).toBe('SIGKILL');
      b = await startCompute(null);
      // What each listing reads now is the change as the venue took it (venues round prices their way).
      const now = await eventually(
        () => c.api(`/flow/v1/contests/${contestId}/liquidity`),
        (r) => mine.every((l) => Math.abs(priceOf(r.body.data, l.liquidity_hash) - l.price) > 0.05),
        30_000,
      );
      for (const l of mine) injected.push({ liquidity_hash: l.liquidity_hash, price: priceOf(now.body.data, l.liquidity_hash) });
      const expected = injected.map((x) => keyOf(x.liquidity_hash, x.price));
      const all = await eventually(
        async () => expected.every((k) => received.has(k)),
        (ok) => ok,
        30_000,
      );
      expect(all, `missing: ${expected.filter((k) => !received.has(k)).join(' ')}; received ${received.size} distinct changes`).toBe(true);
      expect(await eventually(historyDrained, (ok) => ok, 30_000)).toBe(true);
      for (const k of expected) expect(received.get(k), k).toBe(1);
      expect(new Set(eventIds).size).toBe(eventIds.length);
      } finally {
        await b?.stop();
        b = null;
      }
    }, 120_000);
  }

  it('tick history holds every injected change exactly once', async () => {
    expect(injected.length).toBe(POINTS.length * CHANGES_PER_SCENARIO);
    const ch = createClickHouse({ url: null, dataDir: computeDir });
    try {
      const rs = await ch.query({
        query: `SELECT liquidity_hash, price, count() AS n FROM ticks WHERE contest_id = {c:String} GROUP BY liquidity_hash, price`,
        query_params: { c: contestId },
        format: 'JSONEachRow',
      });
      const rows = await rs.json<{ liquidity_hash: string; price: number; n: string | number }>();
      const counts = new Map(rows.map((r) => [keyOf(r.liquidity_hash, Number(r.price)), Number(r.n)]));
      for (const x of injected) expect(counts.get(keyOf(x.liquidity_hash, x.price)), keyOf(x.liquidity_hash, x.price)).toBe(1);
    } finally {
      await ch.close();
    }
  });
});
