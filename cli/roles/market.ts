/**
 * The live-market roles: ingest (venue adapters, the simulator) and compute (the liquidity
 * pipeline). Both stateless apart from Redis/PostgreSQL, so each scales out by running more copies
 * (several ingest processes should split the venues between them with FLOW_VENUES).
 */
import { Counter } from 'prom-client';
import { scrapedCounter } from '../../src/metrics.js';
import { ComputePool } from '../../pipelines/compute-pool.js';
import { threadRuns } from '../../src/compute/job.js';
import { DEFAULT_RUN_CACHE_LIMITS } from '../../src/compute/run-cache.js';
import { Ingester } from '../../pipelines/ingest/ingester.js';
import { HistoryWriterThread, type WriterThreadData } from '../../pipelines/history/writer-thread.js';
import { LiquidityProcessor } from '../../pipelines/processors/liquidity.js';
import { LiquidityProducer } from '../../pipelines/producers/liquidity.js';
import { SettlementRecorder } from '../../pipelines/settlement/recorder.js';
import { TradeSignalConsumer } from '../../pipelines/signals/trades.js';
import { StoreUnavailable } from '../../src/errors.js';
import { prepareHistoryStore } from '../../src/store/clickhouse/schema.js';
import { closeContest, partnerNames, routingMaps, seedCatalog } from '../../src/store/pg/catalog.js';
import { bumpCatalogVersion } from '../../src/store/redis/catalog-version.js';
import { HotState } from '../../src/store/redis/hot.js';
import { logLimits } from '../../src/store/redis/eventlog.js';
import { SignalStore } from '../../src/store/redis/signals.js';
import type { SimChurnOptions, SimContestOpenedEvent, SimControl } from '../../src/sim/index.js';
import { SimCommandConsumer } from '../../pipelines/ingest/sim-commands.js';
import type { VenueAdapter } from '../../src/venues/types.js';
import { VenueConnector } from '../../pipelines/ingest/venue-connector.js';
import type { Runtime } from '../runtime.js';
import type { RemappedAdapter } from '../../src/venues/matching/index.js';
import { buildIngestVenues, registerVenueMetrics, seedVenueCatalog, venueCatalogMerge, type CatalogVenue } from './venues.js';

export interface IngestRole {
  name: 'ingest';
  ingester: Ingester;
  /**
   * Every venue adapter of FLOW_VENUES (the balance refresher, preflight and execute read through
   * them); one still connecting in the background answers `not_connected`.
   */
  adapters: readonly VenueAdapter[];
  /** Records the venues' settlement feeds in PostgreSQL (the scheduler's settler settles orders from them). */
  settlements: SettlementRecorder;
  /** Connects the venues that connect in the background (their state: connector.snapshot()). */
  connector: VenueConnector;
  /** The simulator and what this process does around a change (null without sim venues). */
  sim: SimControl | null;
  /** Takes the /sim/v1 commands API processes send over Redis (null without sim venues). */
  simCommands: SimCommandConsumer | null;
  stop(): Promise<void>;
}

export interface IngestOptions {
  simIntervalMs?: number;
  /** Soak runs: the simulator keeps opening and settling contests (off by default). */
  simChurn?: SimChurnOptions;
}

export async function startIngest(rt: Runtime, opts: IngestOptions = {}): Promise<IngestRole> {
  // Every FLOW_VENUES entry through the registry: the simulator's venues connect now, venues whose
  // catalog comes from the venue (kalshi, polymarket) in the background (cli/roles/venues.ts).
  const venues = buildIngestVenues(rt);
  // The background venues are read through the cross-venue merge: every caller (the ingester,
  // preflight, execute) sees the merged catalog's ids (cli/roles/venues.ts, catalog-merge.ts).
  const merge = venues.background.length ? venueCatalogMerge(rt) : null;
  const merged = new Map<string, RemappedAdapter>(merge ? venues.background.map((a) => [a.id, merge.wrap(a)]) : []);
  const adapters = venues.all.map((a) => merged.get(a.id) ?? a);
  const market = venues.simMarket;
  // Bring the world from its epoch (up to an hour ago) to now before anyone listens, so the
  // catch-up does not arrive as one burst of quotes and trades stamped with the same instant.
  market?.tick(rt.clock.now());

  const hot = new HotState(rt.redis, rt.ks, { closedRetentionMs: rt.config.hotRetentionSeconds * 1000, logLimits: logLimits(rt.config.eventLog) });
  const producer = new LiquidityProducer(rt.config.redisUrl, rt.ks);
  const names = await partnerNames(rt.pool);
  const routes = await routingMaps(rt.pool);
  const openedPositions = new Map<string, string[]>();
  // Contests the simulator opens while running go into the catalog before their quotes are computed
  // (a job that comes first finds no positions yet and is not remembered; the next one is).
  market?.onContestOpened((ev: SimContestOpenedEvent) => {
    routes.leagueOf.set(ev.contest.id, ev.contest.league_id);
    for (const p of ev.positions) routes.marketOf.set(p.position_hash, p.market_id);
    openedPositions.set(
      ev.contest.id,
      ev.positions.map((p) => p.position_hash),
    );
    void seedCatalog(rt.pool, { leagues: [], participants: [], contests: [ev.contest], markets: [], contest_markets: ev.contest_markets, positions: ev.positions, partners: [] })
      .then(() => bumpCatalogVersion(rt.redis, rt.ks))
      .catch((err) => rt.log.warn({ err, contest_id: ev.contest.id }, 'recording a contest the simulator opened failed'));
  });
  if (market && opts.simChurn) market.churn(opts.simChurn);
  const ingester = new Ingester({
    adapters: venues.atStart,
    hot,
    producer,
    log: rt.log.child({ role: 'ingest' }),
    now: () => rt.clock.now(),
    leagueOf: (c) => routes.leagueOf.get(c) ?? null,
    marketOf: (p) => routes.marketOf.get(p) ?? null,
    partnerName: (p) => names.get(p) ?? p,
    onFinal: (contestId) => {
      // A contest the simulator opened at run time leaves the routing maps with it (the world's stay).
      const opened = openedPositions.get(contestId);
      if (opened) {
        openedPositions.delete(contestId);
        routes.leagueOf.delete(contestId);
        for (const h of opened) routes.marketOf.delete(h);
      }
      void closeContest(rt.pool, contestId)
        .then((changed) => (changed ? bumpCatalogVersion(rt.redis, rt.ks) : 0))
        .catch((err) => rt.log.warn({ err, contest_id: contestId }, 'closing a finished contest failed'));
    },
  });
  await ingester.start();
  // After the adapters connected: their settlement feeds, written to PostgreSQL as they arrive.
  const settlements = new SettlementRecorder({ pool: rt.pool, adapters: venues.atStart, log: rt.log.child({ role: 'ingest', component: 'settlements' }), metrics: rt.metrics }).start();
  // The venues connected in the background: once one answers, its catalog is merged with the other
  // connected venues' and goes into PostgreSQL and the routing maps, then the ingester reads it.
  // Until then its quotes are absent (or stale).
  const connector = new VenueConnector({
    log: rt.log.child({ role: 'ingest', component: 'venues' }),
    prepare: async (a) => {
      const change = await seedVenueCatalog(rt, merge!, (a as RemappedAdapter).inner as CatalogVenue, routes, names);
      // A venue contest the merge absorbed is closed; a venue already read that the merge re-keyed
      // is read again at once, so its quotes arrive under the merged ids.
      for (const id of change.retired) await ingester.retireContest(id);
      for (const w of change.remapped) await ingester.pollNow(w);
    },
    attach: async (a) => {
      await ingester.attach(a);
      settlements.watch(a);
    },
    now: () => rt.clock.now(),
  });
  connector.start([...merged.values()]);
  registerVenueMetrics(rt.metrics, venues.all, connector, merge);
  // Read at scrape time from the ingester's own counters: nothing on the hot path.
  new Counter({
    name: 'flow_ingest_quotes_total',
    help: 'Venue quote changes by stage: received from adapters, written to venue state',
    labelNames: ['stage'] as const,
    registers: [rt.metrics],
    collect() {
      this.reset();
      this.inc({ stage: 'received' }, ingester.quotesIn);
      this.inc({ stage: 'written' }, ingester.quotesFlushed);
    },
  });
  scrapedCounter(rt.metrics, 'flow_ingest_ticks_dropped_total', 'Tick-history rows dropped because Redis stayed out of reach past the ingester\'s bound', () => ingester.ticksDropped);
  market?.start({ interval_ms: opts.simIntervalMs ?? 250, clock: () => rt.clock.now() });
  rt.log.info({ role: 'ingest', venues: adapters.map((a) => a.id), connecting: venues.background.map((a) => a.id) }, 'ingest running');

  // Whether a venue streams its quotes, per adapter: describe() clones the venue's description,
  // and a simulator command asks on every change it makes.
  const streams = new WeakMap<VenueAdapter, boolean>();
  const streaming = (a: VenueAdapter): boolean => {
    let s = streams.get(a);
    if (s === undefined) streams.set(a, (s = a.describe().capabilities.quotes.streaming));
    return s;
  };
  const sim: SimControl | null = market
    ? {
        market,
        async refresh(partnerId: string) {
          const a = adapters.find((x) => x.id === partnerId);
          if (a && !streaming(a)) await ingester.pollNow(a);
          // The simulator has the change; if Redis cannot take it now, say so (503) rather than
          // hang: the ingester keeps it and passes it on once Redis is back.
          if (!(await ingester.flush())) throw new StoreUnavailable('redis', 'passing the change on to the market pipeline');
        },
        settlementsRecorded: () => settlements.flush(),
      }
    : null;
  // /sim/v1 reaches the simulator over Redis from any api process (docs/simulator.md).
  const simCommands = sim ? await new SimCommandConsumer({ redis: rt.redis, redisUrl: rt.config.redisUrl, ks: rt.ks, control: sim, log: rt.log, now: () => rt.clock.now() }).start() : null;

  return {
    name: 'ingest',
    ingester,
    adapters,
    settlements,
    sim,
    simCommands,
    connector,
    async stop() {
      // No operator command lands on a simulator that is stopping.
      await simCommands?.stop();
      market?.stop();
      // No venue is attached from here on; one still connecting is closed by its own attempt.
      connector.stop();
      // Before the adapters close: what the feeds delivered is written first.
      await settlements.stop();
      await ingester.stop();
      await producer.close();
    },
  };
}

export interface ComputeRole {
  name: 'compute';
  processor: LiquidityProcessor;
  /** The trade-derived signals (one active per deployment, the others standing by). */
  tradeSignals: TradeSignalConsumer;
  /** The history writer's thread, when this process runs one (it stands by while another process holds its lease). */
  history: HistoryWriterThread | null;
  stop(): Promise<void>;
}

export interface ComputeOptions {
  threads?: number;
  /** Also run the history writer: the history log in Redis → ClickHouse (options for tests and benches). */
  history?: boolean | WriterThreadData['consumer'];
}

export async function startCompute(rt: Runtime, opts: ComputeOptions = {}): Promise<ComputeRole> {
  let history: HistoryWriterThread | null = null;
  if (opts.history) {
    await prepareHistoryStore(rt.clickhouse(), { retentionDays: rt.config.historyRetentionDays });
    // Its own thread: batches and chDB inserts stay off the event loop that streams quotes. Started
    // before the processor takes jobs, so the role is whole (and says so) before any job runs.
    const c = rt.config;
    history = await HistoryWriterThread.start(
      { redisUrl: c.redisUrl, redisPrefix: c.redisPrefix, logLevel: rt.log.level, consumer: opts.history === true ? {} : opts.history },
      { clickhouse: rt.clickhouse(), log: rt.log.child({ component: 'history' }), metrics: rt.metrics },
    );
  }
  // Each cache of contest runs (every compute thread's, the mirrors and the inline runs here) within FLOW_COMPUTE_CACHE_MB.
  const runCache = { ...DEFAULT_RUN_CACHE_LIMITS, maxBytes: rt.config.computeCacheMb * 2 ** 20 };
  threadRuns.limit(runCache);
  const compute = new ComputePool(opts.threads ?? 1, { runs: runCache, mirrors: runCache });
  const processor = new LiquidityProcessor({
    redisUrl: rt.config.redisUrl,
    ks: rt.ks,
    pool: rt.pool,
    hot: new HotState(rt.redis, rt.ks, { logLimits: logLimits(rt.config.eventLog) }),
    signals: new SignalStore(rt.redis, rt.ks, logLimits(rt.config.eventLog)),
    compute,
    log: rt.log.child({ role: 'compute' }),
    now: () => rt.clock.now(),
  });
  scrapedCounter(rt.metrics, 'flow_liquidity_jobs_total', 'Contest liquidity recomputations finished', () => processor.processed);
  // Trade prints from the event log → trade-derived signals, on the same compute threads.
  const limits = logLimits(rt.config.eventLog);
  const tradeSignals = new TradeSignalConsumer({
    redis: rt.redis,
    redisUrl: rt.config.redisUrl,
    ks: rt.ks,
    pool: rt.pool,
    hot: new HotState(rt.redis, rt.ks, { logLimits: limits }),
    signals: new SignalStore(rt.redis, rt.ks, limits),
    compute,
    log: rt.log.child({ role: 'compute' }),
    metrics: rt.metrics,
    now: () => rt.clock.now(),
  }).start();
  rt.log.info({ role: 'compute', history: history !== null }, 'compute running');
  return {
    name: 'compute',
    processor,
    tradeSignals,
    history,
    async stop() {
      await processor.close();
      // Before the threads go: the batch in hand finishes (or stays pending for the next holder).
      await tradeSignals.stop();
      await compute.close();
      await history?.stop();
    },
  };
}
