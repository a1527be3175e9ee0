/**
 * Child process for bench/rest.ts: starts the real Flow API (auth, rate limits, validation on) and a
 * bare Fastify baseline, so the load generator in the parent does not share their CPU.
 * argv[2]: `rest` (catalog reads) or `liquidity` (contest liquidity from the hot state).
 *
 * Both servers answer the same URLs, spread over every contest, with the same data path, so hits
 * and misses fall alike on both:
 *   rest       the same read cache class (dropped on every catalog version bump) and, on a miss,
 *              the same PostgreSQL queries and serialization; the bench bumps the catalog version
 *              on a timer, as catalog writes do, so misses keep coming.
 *   liquidity  a per-contest copy of the stored liquidity, dropped when the liquidity-changed
 *              topic announces a recomputation and revalidated by version after 1 s (as Flow
 *              does); on a miss, the same Redis read. The live simulator and pipeline keep
 *              running, so copies keep going stale.
 * The baseline has no authentication, rate limiting, schema validation or metrics: the ratio is
 * what those cost. Each side counts its store reads (misses), which the parent reads, with this
 * process's CPU time, from GET /__bench/counters on the baseline.
 * Prints one JSON line {flow_port, bare_port, api_key, paths} on stdout, then serves until killed.
 */
import Fastify, { type FastifyReply } from 'fastify';
import pg from 'pg';
import { Registry } from 'prom-client';
import { buildApp } from '../../api/rest/app.js';
import { appContext } from '../../cli/runtime.js';
import { ReadCache } from '../../api/rest/read-cache.js';
import { sendCachedData, sendFragment, serializeFragment } from '../../api/rest/reply.js';
import { liquidityRoutes } from '../../api/rest/liquidity/routes.js';
import { startCompute, startIngest } from '../../cli/roles/market.js';
import * as catalog from '../../src/store/pg/catalog.js';
import { createKey } from '../../src/store/pg/keys.js';
import { logKeys } from '../../src/store/redis/eventlog.js';
import { bumpCatalogVersion } from '../../src/store/redis/catalog-version.js';
import { HotState } from '../../src/store/redis/hot.js';
import { benchRuntime, sleep } from './stack.js';

const scenario = process.argv[2] === 'liquidity' ? 'liquidity' : 'rest';
const invalidateMs = Number(process.env.BENCH_INVALIDATE_MS ?? 1000);
const { rt, close } = await benchRuntime(scenario);
const counters = { flow_store_reads: 0, bare_store_reads: 0 };

/** Counts the queries a pool runs: on a warm principal cache, every one is a read-cache miss. */
function countQueries<P extends pg.Pool>(pool: P, counter: 'flow_store_reads' | 'bare_store_reads'): P {
  const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
  (pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
    counters[counter]++;
    return query(...a);
  };
  return pool;
}

/** A HotState whose liquidity reads are counted (a copy miss or revalidation each). */
class CountingHotState extends HotState {
  constructor(private readonly counter: 'flow_store_reads' | 'bare_store_reads') {
    super(rt.redis, rt.ks);
  }
  override async liquidityWithVersion(contestId: string) {
    counters[this.counter]++;
    return super.liquidityWithVersion(contestId);
  }
  override async liquidityVersion(contestId: string) {
    counters[this.counter]++;
    return super.liquidityVersion(contestId);
  }
}

// Limits far above the load so the bench measures the rate-limit path, not 429s.
const key = await createKey(rt.pool, rt.gate, { plan: 'scale', keyType: 'data', environment: 'test', rateLimitPerMinute: 1_000_000_000, rateLimitPerDay: 2_000_000_000 });
countQueries(rt.pool, 'flow_store_reads');
const flowHot = new CountingHotState('flow_store_reads');
const built = await buildApp(appContext(rt, { metrics: new Registry() }), [liquidityRoutes(flowHot)]);
await built.app.listen({ host: '127.0.0.1', port: 0 });
const flowPort = (built.app.server.address() as { port: number }).port;

const bare = Fastify({ logger: false });
const barePool = countQueries(new pg.Pool({ connectionString: rt.config.databaseUrl, max: 10 }), 'bare_store_reads');
const stops: (() => Promise<void>)[] = [];
const paths: string[] = [];
const now = () => Date.now();

if (scenario === 'liquidity') {
  const ingest = await startIngest(rt);
  const compute = await startCompute(rt);
  stops.push(() => ingest.stop(), () => compute.stop());
  const { rows } = await rt.pool.query<{ id: string }>(
    "SELECT c.id FROM contests c JOIN positions p ON p.contest_id = c.id WHERE c.status = 'open' GROUP BY c.id ORDER BY count(*) DESC",
  );
  // Every open contest whose liquidity the pipeline has computed.
  const hot = new HotState(rt.redis, rt.ks);
  for (let i = 0; i < 200; i++) {
    const ready = (await Promise.all(rows.map((r) => hot.liquidityVersion(r.id)))).filter((v) => v !== null).length;
    if (ready === rows.length || (i > 60 && ready > 0)) break;
    await sleep(100);
  }
  for (const r of rows) if ((await hot.liquidityVersion(r.id)) !== null) paths.push(`/flow/v1/contests/${encodeURIComponent(r.id)}/liquidity`);

  // Baseline: Flow's copy-per-contest scheme without the request pipeline around it.
  const bareHot = new CountingHotState('bare_store_reads');
  const copies = new Map<string, { version: number; fragment: Buffer; checkedAt: number }>();
  const subscriber = rt.redis.duplicate();
  const changed = logKeys(rt.ks).liquidityChanged;
  subscriber.on('message', (topic: string, contestId: string) => {
    if (topic === changed) copies.delete(contestId);
  });
  await subscriber.subscribe(changed);
  stops.push(async () => {
    await subscriber.unsubscribe(changed);
    subscriber.disconnect();
  });
  bare.get<{ Params: { id: string } }>('/flow/v1/contests/:id/liquidity', async (req, reply) => {
    const id = req.params.id;
    const t = Date.now();
    let copy = copies.get(id);
    if (copy && t - copy.checkedAt >= 1_000) {
      if ((await bareHot.liquidityVersion(id)) === copy.version) copy.checkedAt = t;
      else copy = undefined;
    }
    if (!copy) {
      const fresh = await bareHot.liquidityWithVersion(id);
      if (!fresh) return sendFragment(reply, now(), '"data":[]');
      copy = { version: fresh.version, fragment: Buffer.from(fresh.json), checkedAt: t };
      copies.set(id, copy);
    }
    sendCachedData(reply, now(), copy.fragment);
  });
} else {
  const contests = await rt.pool.query<{ id: string }>('SELECT id FROM contests ORDER BY id');
  const leagues = await rt.pool.query<{ id: string }>('SELECT DISTINCT league_id AS id FROM contests ORDER BY 1');
  for (const { id } of contests.rows) paths.push(`/flow/v1/contests/${encodeURIComponent(id)}`, `/flow/v1/contests/${encodeURIComponent(id)}/markets`);
  // Every page size 1..50 per league: distinct URLs, so each cache wipe costs many misses.
  for (const { id } of leagues.rows) for (let limit = 1; limit <= 50; limit++) paths.push(`/flow/v1/contests?league_id=${encodeURIComponent(id)}&limit=${limit}`);

  // Baseline: the same cache class, the same queries and serialization, none of the pipeline.
  const cache = new ReadCache(rt.redis, rt.ks);
  await cache.start();
  stops.push(async () => cache.stop());
  const notFound = (reply: FastifyReply) => reply.code(404).send({ error: { code: 'not_found', message: 'not found' } });
  bare.get<{ Params: { id: string } }>('/flow/v1/contests/:id', async (req, reply) => {
    const fragment = await cache.get(`contest|${req.params.id}`, async () => {
      const c = await catalog.getContest(barePool, req.params.id);
      return c ? serializeFragment(c) : '';
    });
    return fragment ? sendFragment(reply, now(), fragment) : notFound(reply);
  });
  bare.get<{ Params: { id: string } }>('/flow/v1/contests/:id/markets', async (req, reply) => {
    const fragment = await cache.get(`contest-markets|${req.params.id}`, async () => {
      const c = await catalog.getContest(barePool, req.params.id);
      return c ? serializeFragment(await catalog.contestMarkets(barePool, req.params.id)) : '';
    });
    return fragment ? sendFragment(reply, now(), fragment) : notFound(reply);
  });
  bare.get<{ Querystring: { league_id: string; limit: string } }>('/flow/v1/contests', async (req, reply) => {
    const limit = Number(req.query.limit ?? 50);
    const filter: catalog.ContestFilter = { league_id: [req.query.league_id], status: ['open'] };
    const scope = `contests|${JSON.stringify(filter)}`;
    const fragment = await cache.get(req.url, async () => {
      const rows = await catalog.listContests(barePool, filter, limit + 1);
      const has_more = rows.length > limit;
      const items = has_more ? rows.slice(0, limit) : rows;
      const last = items[items.length - 1];
      return serializeFragment(items, { next_cursor: has_more && last ? rt.cursors.encode(scope, [last.starts_at, last.id]) : null, has_more, limit });
    });
    return sendFragment(reply, now(), fragment);
  });

  // Catalog writes bump the version; here a timer does, so both caches keep missing.
  const timer = setInterval(() => void bumpCatalogVersion(rt.redis, rt.ks).catch(() => undefined), invalidateMs);
  stops.push(async () => clearInterval(timer));
}

// CPU time of this process, read by the parent around each run: when the load generator is what
// limits req/s (it shares this machine's cores), CPU per request still tells the two servers apart.
bare.get('/__bench/counters', async () => {
  const cpu = process.cpuUsage();
  return { ...counters, cpu_us: cpu.user + cpu.system };
});
await bare.listen({ host: '127.0.0.1', port: 0 });
const barePort = (bare.server.address() as { port: number }).port;

// Both sides answer every URL alike (meta timestamp aside; liquidity moves, so only its size is close).
for (const p of paths) {
  const flow = await built.app.inject({ method: 'GET', url: p, headers: { 'x-api-key': key.api_key } });
  const base = await bare.inject({ method: 'GET', url: p });
  if (flow.statusCode !== 200 || base.statusCode !== 200) throw new Error(`${p} answered ${flow.statusCode} (flow) / ${base.statusCode} (bare): ${flow.body.slice(0, 300)}`);
  if (scenario === 'rest' && flow.body.replace(/"timestamp":"[^"]*"/, '') !== base.body.replace(/"timestamp":"[^"]*"/, '')) {
    throw new Error(`${p}: the baseline's body differs from Flow's\nflow ${flow.body.slice(0, 300)}\nbare ${base.body.slice(0, 300)}`);
  }
}

process.stdout.write(JSON.stringify({ flow_port: flowPort, bare_port: barePort, api_key: key.api_key, paths }) + '\n');
const stop = async () => {
  await bare.close();
  await built.close();
  for (const s of stops) await s().catch(() => undefined);
  await barePool.end();
  rt.pool.on('error', () => undefined);
  await close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
