/**
 * Issue 8 item 13, Redis: the whole service (the real CLI) on a private Redis that is SIGKILLed under
 * load and restarted empty (no persistence), as an operator would see it:
 *   (a) requests in flight when Redis drops, and those arriving while it is down, answer 503
 *       service_unavailable with Retry-After within 1 s (measured per request);
 *   (d) POST /sim/v1/quotes answers 503 quickly instead of hanging;
 *   (b) stream events flow again within 3 s of Redis coming back;
 *   (c) a busy contest's quotes are back within a few seconds even though no venue changes them
 *       (the simulator is frozen): hot state is rebuilt from the venues' current books.
 * The its run in order: (a) and (d) measure the outage, (b) and (c) the recovery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWs, type WsClient } from '../../../bench/support/ws-client.js';
import { ADMIN_TOKEN, client, demoKey, eventually, findTotalLine } from '../../support/e2e.js';
import { startPrivateRedis, until, type PrivateRedis } from '../../support/private-servers.js';
import { startService, type Service } from '../../support/service.js';

let redis: PrivateRedis;
let svc: Service;
let key: string;
let c: ReturnType<typeof client>;
let line: Awaited<ReturnType<typeof findTotalLine>>;
let ws: WsClient;
let busy: { contestId: string; hashes: Set<string> };
let idBeforeLoss: string;

interface Sample {
  start: number;
  end: number;
  status: number;
  retryAfter: string | null;
  code: string | null;
}

/** One request, timed; a request that never answers is recorded as status 0 after 10 s. */
async function timed(url: string, init: RequestInit): Promise<Sample> {
  const start = Date.now();
  try {
    const r = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    const text = await r.text();
    let code: string | null = null;
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
    } catch {
      /* not JSON */
    }
    return { start, end: Date.now(), status: r.status, retryAfter: r.headers.get('retry-after'), code };
  } catch {
    return { start, end: Date.now(), status: 0, retryAfter: null, code: null };
  }
}

/** `loops` concurrent request loops until stopped; every request's sample is kept. */
function load(loops: number, make: (i: number) => [string, RequestInit]) {
  const samples: Sample[] = [];
  let running = true;
  let n = 0;
  const done = Promise.all(
    Array.from({ length: loops }, async () => {
      while (running) {
        const [url, init] = make(n++);
        samples.push(await timed(url, init));
      }
    }),
  );
  return {
    samples,
    async stop() {
      running = false;
      await done;
    },
  };
}

const hashesOf = (data: any[]): Set<string> => new Set(data.flatMap((p: any) => p.partner_liquidities.map((q: any) => q.liquidity_hash)));

let killedAt = 0;
let restApi: ReturnType<typeof load>;
let simQuotes: ReturnType<typeof load>;

beforeAll(async () => {
  redis = await startPrivateRedis();
  svc = await startService({ REDIS_URL: redis.url, FLOW_ADMIN_TOKEN: ADMIN_TOKEN, FLOW_JWT_SECRET: 'test-jwt-secret' });
  key = demoKey(svc);
  c = client(svc, key);
  // Frozen: after the data loss no venue changes its quotes by itself, so only a rebuild brings
  // the busy contest's quotes back (and the quotes the test sets are the only changes).
  await c.sim('/sim/v1/freeze', { frozen: true });
  line = await findTotalLine(c);
  const contests = (await c.api('/flow/v1/contests?limit=30')).body.data as { id: string }[];
  busy = { contestId: '', hashes: new Set() };
  for (const ct of contests) {
    if (ct.id === line.contestId) continue;
    const hashes = hashesOf((await c.api(`/flow/v1/contests/${ct.id}/liquidity`)).body.data);
    if (hashes.size > busy.hashes.size) busy = { contestId: ct.id, hashes };
  }
  expect(busy.hashes.size).toBeGreaterThan(10);
  ws = await connectWs(`ws://127.0.0.1:${svc.streamPort}/flow/v1/stream?api_key=${key}`);
  await ws.next((m) => m.type === 'connected');
  expect((await ws.request({ action: 'subscribe', channel: 'ticks', contest_ids: [line.contestId] })).type).toBe('subscribed');
  // An event id issued before Redis loses its data: resuming from it later must not replay anything.
  await c.sim('/sim/v1/quotes', { partner_id: 'sim_exchange', position_hash: line.over.position_hash, price: 0.41, available: 2_000 });
  const before = await ws.next((m) => m.type === 'ticks' && m.ticks.some((t: any) => t.partner_id === 'sim_exchange' && t.price === 0.41), 10_000);
  idBeforeLoss = before.event_id;
  expect(idBeforeLoss).toMatch(/^\d+-\d+$/);
}, 180_000);

afterAll(async () => {
  await restApi?.stop();
  await simQuotes?.stop();
  await ws?.close().catch(() => undefined);
  if (redis) await redis.start().catch(() => undefined);
  await svc?.cleanup().catch(() => undefined);
  await redis?.stop();
}, 60_000);

describe('Redis killed under load and restarted empty', () => {
  it('(a) requests in flight or arriving while Redis is down answer 503 with Retry-After within 1 s', async () => {
    restApi = load(6, () => [`${svc.base}/flow/v1/contests/${line.contestId}/liquidity`, { headers: { 'x-api-key': key } }]);
    // The pipeline busy too: quote changes on one position, one after another.
    simQuotes = load(1, (i) => [
      `${svc.base}/sim/v1/quotes`,
      {
        method: 'POST',
        headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ partner_id: 'sim_exchange', position_hash: line.over.position_hash, price: i % 2 ? 0.55 : 0.56, available: 1_000 + (i % 50) }),
      },
    ]);
    await until(() => restApi.samples.filter((s) => s.status === 200).length >= 20 && simQuotes.samples.filter((s) => s.status === 200).length >= 3, 20_000, 'traffic before the kill');
    killedAt = Date.now();
    await redis.kill();
    // Requests that started while the kill was under way (before the process was gone) may still
    // have been served: they count as in flight, not as arriving while Redis is down.
    const deadAt = Date.now();
    // Keep the load on while Redis stays down, long enough for old behaviour (a resent script,
    // a lane blocked behind it) to show.
    await until(() => Date.now() - killedAt > 2_500, 5_000, 'outage window');
    await restApi.stop();

    const inFlight = restApi.samples.filter((s) => s.start < deadAt && s.end >= killedAt);
    const during = restApi.samples.filter((s) => s.start >= deadAt);
    expect(during.length).toBeGreaterThan(10);
    for (const s of inFlight) {
      // Its counters may have answered just before the kill (then 200 or 429, however late the
      // response is written on a loaded machine); a script resent after Redis returns would answer
      // only after the outage, far beyond this bound (the gate's own fault test shows no resend).
      expect(s.end - killedAt, 'an in-flight request answered within 1 s of the kill').toBeLessThanOrEqual(1_000);
      expect([200, 429, 503]).toContain(s.status);
    }
    for (const s of during) {
      expect(s.end - s.start, 'a request during the outage answered within 1 s').toBeLessThanOrEqual(1_000);
      expect(s.status).toBe(503);
      expect(s.code).toBe('service_unavailable');
      expect(Number(s.retryAfter)).toBeGreaterThan(0);
    }
  }, 60_000);

  it('(d) POST /sim/v1/quotes answers 503 service_unavailable quickly while Redis is down', async () => {
    await simQuotes.stop();
    const after = simQuotes.samples.filter((s) => s.start >= killedAt + 100);
    expect(after.length).toBeGreaterThan(2);
    for (const s of after) {
      expect(s.end - s.start, 'a quote change answered within 1 s').toBeLessThanOrEqual(1_000);
      expect(s.status).toBe(503);
      expect(s.code).toBe('service_unavailable');
      expect(Number(s.retryAfter)).toBeGreaterThan(0);
    }
  }, 30_000);

  let upAt = 0;
  it('(b) stream events flow within 3 s of Redis coming back empty', async () => {
    await ws.drain(() => true, 50);
    await redis.start();
    upAt = Date.now();
    // A price never set before: its tick can only come from a change made after the restart.
    const price = 0.47;
    const set = () =>
      timed(`${svc.base}/sim/v1/quotes`, {
        method: 'POST',
        headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ partner_id: 'sim_exchange', position_hash: line.over.position_hash, price, available: 2_000 }),
      });
    const hash = line.over.partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange').liquidity_hash;
    const tick = ws.next((m) => m.type === 'ticks' && m.ticks.some((t: any) => t.liquidity_hash === hash && t.price === price), 15_000).then(() => Date.now());
    await until(async () => (await set()).status === 200, 10_000, 'the quote change accepted after the restart', 50);
    const arrived = await tick;
    expect(arrived - upAt, 'ms from Redis back to the event on the stream').toBeLessThanOrEqual(3_000);
    // REST answers again too (its counters restart from zero in the empty Redis).
    const r = await c.api(`/flow/v1/contests/${line.contestId}/liquidity`);
    expect(r.status).toBe(200);
  }, 30_000);

  it('(c) the busy contest has all its quotes back within a few seconds, with no venue changing them', async () => {
    const liq = await eventually(
      () => c.api(`/flow/v1/contests/${busy.contestId}/liquidity`),
      (r) => r.status === 200 && [...busy.hashes].every((h) => hashesOf(r.body.data).has(h)),
      Math.max(0, upAt + 6_000 - Date.now()),
    );
    expect(liq.status).toBe(200);
    const back = hashesOf(liq.body.data);
    expect([...busy.hashes].filter((h) => !back.has(h)), 'quotes still missing 6 s after Redis came back').toEqual([]);
  }, 30_000);

  it('(e) a client resuming from an event id issued before the data loss gets resume_unavailable, then live events', async () => {
    const late = await connectWs(`ws://127.0.0.1:${svc.streamPort}/flow/v1/stream?api_key=${key}`);
    try {
      await late.next((m) => m.type === 'connected');
      late.send({ action: 'subscribe', channel: 'ticks', contest_ids: [line.contestId], resume_from: { [line.contestId]: idBeforeLoss } });
      const refusal = await late.next((m) => m.type === 'error' || m.type === 'ticks', 5_000);
      expect(refusal).toMatchObject({ type: 'error', code: 'resume_unavailable', channel: 'ticks', contest_id: line.contestId });
      // Then live: a change made now arrives, and nothing from before the loss was replayed.
      await c.sim('/sim/v1/quotes', { partner_id: 'sim_exchange', position_hash: line.over.position_hash, price: 0.43, available: 2_000 });
      const live = await late.next((m) => m.type === 'ticks' && m.ticks.some((t: any) => t.partner_id === 'sim_exchange' && t.price === 0.43), 10_000);
      expect(live.seq).toBe(1);
    } finally {
      await late.close().catch(() => undefined);
    }
  }, 30_000);
});
