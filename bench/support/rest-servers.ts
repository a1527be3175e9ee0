/**
 * Child process for bench/rest.ts: starts the real Flow API (auth + rate limits on) and a bare
 * Fastify serving the same bytes, so the load generator in the parent does not share their CPU.
 * argv[2]: `rest` (catalog reads) or `liquidity` (contest liquidity from the hot state).
 * Prints one JSON line {flow_port, bare_port, api_key, urls} on stdout, then serves until killed.
 */
import Fastify from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { buildApp } from '../../api/rest/app.js';
import { appContext, openRuntime } from '../../cli/runtime.js';
import { seedSimCatalog } from '../../cli/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { createKey } from '../../src/store/pg/keys.js';
import { HotState } from '../../src/store/redis/hot.js';
import { liquidityRoutes } from '../../api/rest/liquidity/routes.js';
import { startCompute, startIngest } from '../../cli/roles/market.js';

const config = loadConfig({
  ...process.env,
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/flow_bench',
  REDIS_PREFIX: process.env.BENCH_REDIS_PREFIX ?? 'flowbench',
  LOG_LEVEL: 'warn',
});
const rt = await openRuntime(config, pino({ level: 'warn' }), { defaultMetrics: false });
await seedSimCatalog(rt);
// Limits far above the load so the bench measures the rate-limit path, not 429s.
const key = await createKey(rt.pool, rt.gate, { plan: 'scale', keyType: 'data', environment: 'test', rateLimitPerMinute: 1_000_000_000, rateLimitPerDay: 2_000_000_000 });
const built = await buildApp(appContext(rt, { metrics: new Registry() }), [liquidityRoutes(new HotState(rt.redis, rt.ks))]);
await built.app.listen({ host: '127.0.0.1', port: 0 });
const flowPort = (built.app.server.address() as { port: number }).port;

const scenario = process.argv[2] ?? 'rest';
const paths: string[] = [];
const extra: { stop(): Promise<void> }[] = [];
if (scenario === 'liquidity') {
  // The live pipeline fills the hot state, then the market is frozen so both servers send equal bytes.
  const ingest = await startIngest(rt);
  const compute = await startCompute(rt);
  extra.push(ingest, compute);
  const { rows } = await rt.pool.query<{ id: string }>(
    "SELECT c.id FROM contests c JOIN positions p ON p.contest_id = c.id WHERE c.status = 'open' GROUP BY c.id ORDER BY count(*) DESC LIMIT 1",
  );
  const contest = rows[0]!.id;
  for (let i = 0; i < 200 && !(await new HotState(rt.redis, rt.ks).liquidity(contest)); i++) await new Promise((r) => setTimeout(r, 50));
  ingest.sim?.market.freeze(true);
  await new Promise((r) => setTimeout(r, 500));
  paths.push(`/flow/v1/contests/${encodeURIComponent(contest)}/liquidity`);
} else {
  const { rows } = await rt.pool.query<{ league_id: string }>('SELECT league_id FROM contests GROUP BY league_id ORDER BY count(*) DESC LIMIT 1');
  paths.push('/flow/v1/leagues', `/flow/v1/contests?league_id=${encodeURIComponent(rows[0]!.league_id)}`);
}

// The bare baseline serves exactly the bytes Flow served (meta timestamp aside).
const bare = Fastify({ logger: false });
for (const p of paths) {
  const res = await built.app.inject({ method: 'GET', url: p, headers: { 'x-api-key': key.api_key } });
  if (res.statusCode !== 200) throw new Error(`${p} answered ${res.statusCode}: ${res.body}`);
  const body = res.body;
  bare.get(p.split('?')[0]!, async (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
}
await bare.listen({ host: '127.0.0.1', port: 0 });
const barePort = (bare.server.address() as { port: number }).port;

process.stdout.write(JSON.stringify({ flow_port: flowPort, bare_port: barePort, api_key: key.api_key, paths }) + '\n');
const stop = async () => {
  await bare.close();
  await built.close();
  for (const e of extra) await e.stop();
  await rt.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
