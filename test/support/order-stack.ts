/**
 * A stack for the order routes: the simulator's catalog in PostgreSQL, a frozen simulator, and
 * the real pipeline behind it (an ingester, flushed on demand, and the liquidity processor with
 * its co-located fast path), so a book set with POST /sim/v1/quotes reaches the liquidity feed and
 * depth in Redis exactly as in `flow all`. Only the (venue, position) books a test sets are taken
 * into the feed, so a test knows every quote a position has. With `trades`, the prints a test emits
 * (POST /sim/v1/trades) reach the event log as ingest appends them. The order routes get their own venue
 * adapters on the same simulator (verify_liquidity reads live books through them), so a book
 * changed without `ingest` is what the venue shows live while the feed still has the old one.
 */
import { pino } from 'pino';
import { liquidityRoutes } from '../../api/rest/liquidity/routes.js';
import { preflightRoutes } from '../../api/rest/orders/index.js';
import { simRoutes } from '../../api/rest/sim/routes.js';
import { ComputePool } from '../../pipelines/compute-pool.js';
import { Ingester } from '../../pipelines/ingest/ingester.js';
import { LiquidityProducer } from '../../pipelines/producers/liquidity.js';
import { SettlementRecorder } from '../../pipelines/settlement/recorder.js';
import type { LiquidityProcessor } from '../../pipelines/processors/liquidity.js';
import { ExecuteProcessor, type ExecuteProcessorDeps } from '../../pipelines/processors/execute.js';
import { adapterLiveBooks } from '../../src/venues/live-books.js';
import { createKey, type CreatedKey } from '../../src/store/pg/keys.js';
import { HotState } from '../../src/store/redis/hot.js';
import { createSimAdapters } from '../../src/venues/sim/index.js';
import { buildSimCatalog, SimMarket } from '../../src/sim/index.js';
import type { PriceLevel, VenueAdapter } from '../../src/venues/types.js';
import { eventually } from './e2e.js';
import { send } from './http.js';
import { testProcessor } from './pipeline.js';
import { startStack, type TestStack } from './stack.js';

export interface OrderStack {
  s: TestStack;
  market: SimMarket;
  hot: HotState;
  /** Records the venues' settlement feeds in PostgreSQL, as the ingest role does (the settle call waits for it). */
  settlements: SettlementRecorder;
  admin: Record<string, string>;
  /** Sets a venue's book through POST /sim/v1/quotes and waits until the feed and depth show it (taken in `agoMs` old). */
  setBook(partnerId: string, positionHash: string, levels: PriceLevel[], agoMs?: number): Promise<void>;
  /** Takes the venue's current quote of the position into the feed (its ts_init `agoMs` in the past). */
  ingest(partnerId: string, positionHash: string, agoMs?: number): Promise<void>;
  /** Connects a sim venue to an account as the hosted flow would (POST /sim/v1/accounts/:id/connect). */
  connect(account: string, partnerId: string, balance: number, credentialStatus?: 'pending' | 'connected' | 'failed'): Promise<void>;
  key(keyType?: 'data' | 'execution', extra?: { plan?: 'free' | 'pro' | 'scale' | 'organization'; environment?: 'test' | 'live' }): Promise<CreatedKey>;
  /** The venue adapters preflight, the buy and execute workers use (on the same simulator). */
  adapters: VenueAdapter[];
  /** Starts an execute worker on the stack's adapters (closed with the stack), with its order-update feed, reconcile and liquidity-refresh relay. */
  execute(extra?: Partial<ExecuteProcessorDeps>): ExecuteProcessor;
  close(): Promise<void>;
}

export interface OrderStackOptions {
  /** FLOW_EXECUTE_WAIT_MS of the app (how long a buy waits for a real leg's decision). */
  executeWaitMs?: number;
  /** The venue adapters the app and execute workers use, wrapped (to observe or slow venue calls). */
  wrapAdapters?(adapters: VenueAdapter[]): VenueAdapter[];
  /** Take the prints of the venues that publish trades (POST /sim/v1/trades) into the event log, as ingest does. */
  trades?: boolean;
}

export async function startOrderStack(seed = 11, opts: OrderStackOptions = {}): Promise<OrderStack> {
  const startMs = Date.now();
  const market = new SimMarket({ seed, now: startMs });
  market.freeze(true);
  // The venues' clock moves as a real venue's does (an order, a balance read each carry their own
  // time: the expected balance compares them), while the dynamics never tick.
  market.start({ clock: Date.now, interval_ms: 2 ** 31 - 1 });
  // The ingester's clock can be set back, to take a quote in as an old (stale) one.
  let lagMs = 0;
  const ingestNow = () => Date.now() - lagMs;
  const ingestAdapters = createSimAdapters(market, { clock: ingestNow });
  const simAdapters: VenueAdapter[] = createSimAdapters(market);
  for (const a of [...ingestAdapters, ...simAdapters]) await a.connect();
  const liveAdapters = opts.wrapAdapters ? opts.wrapAdapters(simAdapters) : simAdapters;
  // Made once the stack's pool exists; the settle route only runs after that.
  let settlements: SettlementRecorder | null = null;
  const s = await startStack({
    catalog: buildSimCatalog(seed, startMs),
    env: opts.executeWaitMs !== undefined ? { FLOW_EXECUTE_WAIT_MS: String(opts.executeWaitMs) } : {},
    live: adapterLiveBooks(liveAdapters),
    plugins: [
      (app, ctx) => liquidityRoutes(new HotState(ctx.redis, ctx.ks))(app, ctx),
      simRoutes({ market, refresh: async () => undefined, settlementsRecorded: () => settlements!.flush() }),
      preflightRoutes({ adapters: liveAdapters }),
    ],
  });
  settlements = new SettlementRecorder({ pool: s.rt.pool, adapters: ingestAdapters, log: pino({ level: 'silent' }) }).start();
  const hot = new HotState(s.rt.redis, s.rt.ks);
  const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
  const ingester = new Ingester({
    adapters: ingestAdapters,
    hot,
    producer,
    log: pino({ level: 'silent' }),
    now: ingestNow,
    leagueOf: () => null,
    marketOf: () => null,
    partnerName: (p) => p,
    autoFlush: false,
  });
  const unsubs = opts.trades ? ingestAdapters.filter((a) => a.describe().capabilities.trades).map((a) => a.subscribeTrades((t) => ingester.acceptTrade(t))) : [];
  const compute = new ComputePool(1);
  const processor: LiquidityProcessor = testProcessor(s, hot, compute, () => Date.now());
  ingester.fastPath = processor.fastPath;
  const admin = { 'x-admin-token': s.config.adminToken };
  const executors: ExecuteProcessor[] = [];

  // We minted position hashes: the contest is their first part.
  const contestOf = (hash: string) => hash.split(':')[0]!;

  const ingest = async (partnerId: string, positionHash: string, agoMs = 0) => {
    const adapter = ingestAdapters.find((a) => a.id === partnerId)!;
    lagMs = agoMs;
    try {
      for (const q of await adapter.fetchQuotes({ position_hashes: [positionHash] })) ingester.accept(q);
    } finally {
      lagMs = 0;
    }
    if (!(await ingester.flush())) throw new Error('the ingester could not write to Redis');
    // Computed (fast path, or the queued job) once the feed is computed from the venue state just stored.
    const contest = contestOf(positionHash);
    const stored = Number((await s.rt.redis.get(s.rt.ks.k('vqv', contest))) ?? 0);
    const computed = await eventually(() => hot.liquidityVersion(contest), (v) => v !== null && v >= stored, 10_000);
    if (computed === null || computed < stored) throw new Error(`the feed of ${contest} was never computed`);
  };

  return {
    s,
    market,
    hot,
    settlements,
    admin,
    ingest,
    async setBook(partnerId, positionHash, levels, agoMs = 0) {
      const top = levels[0] ?? { price: 0.5, available: 0 };
      const r = await send(s.built.app, 'POST', '/sim/v1/quotes', { partner_id: partnerId, position_hash: positionHash, price: top.price, available: top.available, levels }, admin);
      if (r.status !== 200) throw new Error(`sim quote ${partnerId}: ${r.status} ${JSON.stringify(r.body)}`);
      await ingest(partnerId, positionHash, agoMs);
    },
    async connect(account, partnerId, balance, credentialStatus) {
      const r = await send(s.built.app, 'POST', `/sim/v1/accounts/${encodeURIComponent(account)}/connect`, { partner_id: partnerId, balance, ...(credentialStatus ? { credential_status: credentialStatus } : {}) }, admin);
      if (r.status !== 200) throw new Error(`sim connect ${partnerId}: ${r.status} ${JSON.stringify(r.body)}`);
    },
    adapters: liveAdapters,
    execute(extra = {}) {
      const p = new ExecuteProcessor({
        redisUrl: s.env.REDIS_URL!,
        ks: s.rt.ks,
        pool: s.rt.pool,
        adapters: liveAdapters,
        log: pino({ level: 'silent' }),
        now: () => Date.now(),
        lockMs: 2_000,
        hot,
        databaseUrl: s.databaseUrl,
        ...extra,
      });
      executors.push(p);
      return p;
    },
    key: (keyType = 'execution', extra = {}) =>
      createKey(s.rt.pool, s.rt.gate, { plan: extra.plan ?? 'scale', keyType, environment: extra.environment ?? 'test', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 }),
    async close() {
      await settlements!.stop();
      market.stop();
      for (const p of executors) await p.close();
      for (const u of unsubs) u();
      await ingester.stop();
      await producer.close();
      await processor.close();
      await compute.close();
      for (const a of [...ingestAdapters, ...simAdapters]) await a.close();
      await s.close();
    },
  };
}
