/**
 * Child process for bench/orders.ts: the real Flow API (auth, rate limits, validation, the buy
 * route) on its own database and Redis prefix, fed live quotes by the service's own market roles,
 * so the load generator in the parent does not share its event loop. argv[2]: how many accounts.
 *
 * The quotes: the ingest role (the simulated venues) and the compute role (the liquidity pipeline,
 * without the history writer) run here as in `flow all`, until the pipeline has caught up with
 * every open contest the venues quote; then the simulator is frozen, so the runs measure the buy
 * path and not quote churn. The ingester keeps re-confirming the frozen quotes, so they stay live
 * (not stale) for the whole run.
 * The positions the bench buys are those with a price a paper leg fills at (the route's own
 * bestPaperQuote over the hot state) at most MAX_FILL_PRICE.
 *
 * The account-event relay (the api role's outbox → event log mover) does not run, as in bench
 * wallet: the buys' events stay in the outbox for the end-of-run checks to count.
 *
 * Each account is an execution key in its own workspace, with limits far above the load (the bench
 * measures the rate-limit path, not 429s), and a wallet topped up by one deposit of the most one
 * deposit may be (through the route), so no leg of a run can find it dry. One more account serves
 * two buys on a recording pool: the second's statements are what the raw baseline replays
 * (bench/support/raw-buy.ts).
 * A bare Fastify app beside it answers POST /bare (JSON parsed, a small JSON back): the HTTP floor
 * the bench prints.
 * Prints one JSON line (OrdersServerInfo), then serves until killed; the database is dropped on exit.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { buildApp } from '../../api/rest/app.js';
import { appContext } from '../../cli/runtime.js';
import { startCompute, startIngest } from '../../cli/roles/market.js';
import { bestPaperQuote } from '../../src/domain/order-checks.js';
import { PRACTICE_PARTNER_ID } from '../../src/domain/account.js';
import type { PartnerLiquidity } from '../../src/domain/stream.js';
import { internalBookPartners, openContestIds } from '../../src/store/pg/catalog.js';
import { createKey } from '../../src/store/pg/keys.js';
import { PRACTICE_MAX_DEPOSIT } from '../../src/store/pg/wallet.js';
import { HotState } from '../../src/store/redis/hot.js';
import { captureBuy, type BuyCapture, type BuyTarget } from './raw-buy.js';
import { DEPOSIT_PATH } from './raw-deposit.js';
import { benchRuntime, sleep } from './stack.js';

/** A leg's max_price is 0.99: positions priced above this are left out, so no leg fails above_max_price. */
const MAX_FILL_PRICE = 0.95;
/** At most this many positions are bought (spread over the open contests). */
const MAX_TARGETS = 200;
const QUOTES_TIMEOUT_MS = 60_000;
const STABLE_CHECKS = 4;

export interface OrdersServerInfo {
  port: number;
  /** A bare Fastify app in this process: POST /bare parses the JSON body and answers a small JSON (the HTTP floor). */
  bare_port: number;
  database_url: string;
  redis_url: string;
  redis_prefix: string;
  pool_max: number;
  accounts: { api_key: string; router_account_id: string }[];
  /** Positions with a live paper price, and the partner the legs name (one that quotes them). */
  targets: BuyTarget[];
  /** Open contests and their hot-state liquidity documents' sizes (a paper leg reads and parses its contest's whole document). */
  contests: { count: number; liquidity_bytes_median: number; liquidity_bytes_max: number };
  capture: BuyCapture;
}

const count = Number(process.argv[2] ?? 100);
const { rt, close } = await benchRuntime('orders', { FLOW_VENUES: 'sim' });
const ingest = await startIngest(rt);
const compute = await startCompute(rt, { history: false });
// Both in this process, as `flow all` wires them (cli/roles/start.ts).
ingest.ingester.fastPath = compute.processor.fastPath;

const hot = new HotState(rt.redis, rt.ks);
const internal = await internalBookPartners(rt.pool);
const isInternal = (p: string) => internal.has(p) || p === PRACTICE_PARTNER_ID;

/** The open contests with venue state (an open contest no venue quotes has none, and is never computed). */
async function quotedContests(): Promise<string[]> {
  const out: string[] = [];
  for (const id of await openContestIds(rt.pool)) if ((await rt.redis.get(rt.ks.k('vqv', id))) !== null) out.push(id);
  return out;
}

/** Their liquidity documents once each is computed from its latest venue state; null while one is behind. */
async function caughtUp(): Promise<Map<string, string> | null> {
  const out = new Map<string, string>();
  for (const id of await quotedContests()) {
    const stored = Number(await rt.redis.get(rt.ks.k('vqv', id)));
    const computed = await hot.liquidityVersion(id);
    const json = await hot.liquidity(id);
    if (computed === null || computed < stored || json === null) return null;
    out.set(id, json);
  }
  return out;
}

/** Polls `read` until it answers the same non-empty set of contests STABLE_CHECKS times in a row. */
async function settled<T extends { size: number; keys(): Iterable<string> }>(what: string, read: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + QUOTES_TIMEOUT_MS;
  let last = '';
  let stable = 0;
  for (;;) {
    const got = await read();
    const seen = got ? [...got.keys()].sort().join(' ') : '';
    stable = got && got.size > 0 && seen === last ? stable + 1 : 0;
    last = seen;
    if (stable >= STABLE_CHECKS) return got!;
    if (Date.now() > deadline) throw new Error(`${what} within ${QUOTES_TIMEOUT_MS / 1000} s`);
    await sleep(250);
  }
}

/** The positions a paper leg fills at a price ≤ MAX_FILL_PRICE, round robin over the contests. */
function buyTargets(docs: Map<string, string>): BuyTarget[] {
  const perContest = [...docs.values()].map((json) =>
    (JSON.parse(json) as { position_hash: string; partner_liquidities: PartnerLiquidity[] }[]).flatMap((p) => {
      const q = bestPaperQuote(p.partner_liquidities, (x) => isInternal(x.partner_id));
      return q && q.price <= MAX_FILL_PRICE ? [{ position_hash: p.position_hash, partner_id: q.partner_id, price: q.price }] : [];
    }),
  );
  const out: BuyTarget[] = [];
  for (let i = 0; out.length < MAX_TARGETS && perContest.some((c) => i < c.length); i++) {
    for (const c of perContest) if (i < c.length && out.length < MAX_TARGETS) out.push(c[i]!);
  }
  return out;
}

const executionKey = () =>
  createKey(rt.pool, rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test', rateLimitPerMinute: 1_000_000_000, rateLimitPerDay: 2_000_000_000 });

try {
  // The venues have spoken (the contests they quote stay the same for a second), then nothing moves
  // and the pipeline catches up with the last change.
  await settled('no stable set of quoted contests', async () => new Set(await quotedContests()));
  ingest.sim!.market.freeze(true);
  const docs = await settled('the pipeline did not catch up with the frozen quotes', caughtUp);
  const targets = buyTargets(docs);
  if (targets.length === 0) throw new Error(`no position has a live paper price at most ${MAX_FILL_PRICE}`);
  const sizes = [...docs.values()].map((d) => Buffer.byteLength(d)).sort((a, b) => a - b);

  const built = await buildApp(appContext(rt, { metrics: new Registry() }));
  const accounts: { api_key: string; router_account_id: string }[] = [];
  for (let i = 0; i < count; i++) {
    const k = await executionKey();
    const r = await built.app.inject({
      method: 'POST',
      url: DEPOSIT_PATH,
      headers: { 'x-api-key': k.api_key, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      payload: JSON.stringify({ amount: PRACTICE_MAX_DEPOSIT }),
    });
    if (r.statusCode !== 201) throw new Error(`topping up a bench wallet answered ${r.statusCode}: ${r.body}`);
    accounts.push({ api_key: k.api_key, router_account_id: k.router_account_id });
  }
  const capture = await captureBuy(rt, await executionKey(), targets[0]!);

  await built.app.listen({ host: '127.0.0.1', port: 0 });
  // The HTTP floor: what Fastify alone costs a request of this size here (no auth, no schema, no store).
  const bare = Fastify();
  bare.post('/bare', async (req, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify({ data: { legs: (req.body as { orders: unknown[] }).orders.length }, meta: { timestamp: new Date().toISOString() } })));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const info: OrdersServerInfo = {
    port: (built.app.server.address() as { port: number }).port,
    bare_port: (bare.server.address() as { port: number }).port,
    database_url: rt.config.databaseUrl,
    redis_url: rt.config.redisUrl,
    redis_prefix: rt.ks.prefix,
    pool_max: rt.pool.options.max,
    accounts,
    targets,
    contests: { count: docs.size, liquidity_bytes_median: sizes[Math.floor(sizes.length / 2)]!, liquidity_bytes_max: sizes[sizes.length - 1]! },
    capture,
  };
  process.stdout.write(JSON.stringify(info) + '\n');
  const stop = async () => {
    await bare.close();
    await built.close();
    await ingest.stop();
    await compute.stop();
    rt.pool.on('error', () => undefined);
    await close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
} catch (err) {
  console.error(err);
  await ingest.stop().catch(() => undefined);
  await compute.stop().catch(() => undefined);
  await close().catch(() => undefined);
  process.exit(1);
}
