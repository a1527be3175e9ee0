/**
 * The compute worker: one BullMQ job per contest → read venue state from Redis → one piscina task
 * (consensus, outliers, withholding, depth, ticks) → compare-and-set the hot snapshot, appending its
 * liquidity.update and ticks events and consensus history rows to the event log in the same step.
 * Gateways and the history writer (pipelines/history) read them from the log.
 *
 * A job carries only the contest id and always recomputes from the venue state as it is now, so a
 * killed worker loses nothing: BullMQ re-runs the stalled job, or the next change runs a newer one.
 */
import { Worker } from 'bullmq';
import type { PositionInput } from '../../src/compute/types.js';
import type { LiquidityJobOutput } from '../../src/compute/job.js';
import { positionInput } from '../../src/compute/contest.js';
import { ARBITRAGE_TTL_MS } from '../../src/domain/arbitrage.js';
import { chunk, liquidityUpdateEvents } from '../../src/domain/stream.js';
import type { Logger } from '../../src/log.js';
import { partnerNames } from '../../src/store/pg/catalog.js';
import { ContestCatalogCache, type ContestCatalog } from '../contest-catalog.js';
import type { Pool } from '../../src/store/pg/pool.js';
import type { Keyspace } from '../../src/store/redis/client.js';
import type { HotState, VenueStateTexts } from '../../src/store/redis/hot.js';
import type { ComputePool } from '../compute-pool.js';
import { QUEUE_NAMES, queueOptions, type JobMap } from '../queues.js';
import type { HistAppend, LogAppend } from '../../src/store/redis/eventlog.js';
import type { SignalStore } from '../../src/store/redis/signals.js';
import { failpoint } from '../../src/failpoints.js';
import { QuoteInputs } from './quote-inputs.js';

/** The stream events a computation implies: liquidity.update, arbitrage.update when the set changed, and ticks, split into chunks. */
export function streamEvents(contestId: string, leagueId: string | null, out: LiquidityJobOutput, now: number): LogAppend[] {
  const timestamp = new Date(now).toISOString();
  const events: LogAppend[] = liquidityUpdateEvents(contestId, out.changed, out.refreshRequired, timestamp).map((e) => ({ channel: 'liquidity', league_id: leagueId, event: JSON.stringify(e) }));
  if (out.arbitragesChanged) {
    // The set is JSON already (from the worker): spliced in, not parsed and written again.
    const event = `{"type":"arbitrage.update","contest_id":${JSON.stringify(contestId)},"league_id":${JSON.stringify(leagueId)},"arbitrages":${out.arbitragesJson},"timestamp":"${timestamp}"}`;
    events.push({ channel: 'arbitrage', league_id: leagueId, event });
  }
  if (out.ticks.length) {
    for (const part of chunk(out.ticks)) {
      events.push({ channel: 'ticks', league_id: leagueId, event: JSON.stringify({ type: 'ticks', contest_id: contestId, ticks: part, timestamp }) });
    }
  }
  return events;
}

function sameNames(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** Consensus prices that changed, as price_points history rows (a null consensus is no point). */
export function consensusHistory(contestId: string, points: LiquidityJobOutput['consensus'], now: number): HistAppend[] {
  const rows = points.filter((p) => p.price !== null).map((p) => ({ ts: now, contest_id: contestId, position_hash: p.position_hash, price: p.price }));
  return rows.length ? [{ table: 'points', rows: JSON.stringify(rows) }] : [];
}

export interface LiquidityProcessorDeps {
  redisUrl: string;
  ks: Keyspace;
  pool: Pool;
  hot: HotState;
  /** Where the arbitrage and price_move signals a computation finds are written. */
  signals: SignalStore;
  compute: ComputePool;
  log: Logger;
  now: () => number;
  concurrency?: number;
  /** How long a job's lock lives without renewal: a crashed worker's job runs again after about this. */
  lockMs?: number;
  /** Most contests whose catalog facts are kept in memory (default MAX_META). */
  maxContests?: number;
}

const META_TTL_MS = 60_000;
const RUN_RETRY_DELAY_MS = 250;
/** Far more contests than recompute at once; beyond it the least recently computed are reloaded. */
const MAX_META = 10_000;
/** Fast-path computations at once in this process; more changes wait in its backlog, then the queue. */
const LOCAL_MAX_IN_FLIGHT = 1;
/**
 * Contests the fast path takes for later while it computes: each computed once it is done, from
 * the venue state as it is then (several changes of a contest waiting make one computation). More
 * go to the queue.
 */
const LOCAL_MAX_WAITING = 256;

export class LiquidityProcessor {
  readonly worker: Worker<JobMap['liquidity']>;
  /**
   * Catalog facts per contest, reloaded after META_TTL_MS. A closed contest gets no more jobs, so
   * its entry goes stale and the sweep drops it; the LRU bound holds should contests churn faster.
   */
  private readonly meta: ContestCatalogCache;
  private readonly sweep: NodeJS.Timeout;
  private names = new Map<string, string>();
  private namesAt = 0;
  /** Each contest's quotes as its last computation took them: unchanged texts are not parsed again. */
  readonly quotes = new QuoteInputs();
  processed = 0;

  constructor(private readonly d: LiquidityProcessorDeps) {
    // A contest the catalog does not list yet is asked about again on the next job (missingTtlMs 0).
    this.meta = new ContestCatalogCache(d.pool, { now: d.now, max: d.maxContests ?? MAX_META, ttlMs: META_TTL_MS, missingTtlMs: 0 });
    this.sweep = setInterval(() => this.pruneMeta(), META_TTL_MS);
    this.sweep.unref();
    this.worker = new Worker<JobMap['liquidity']>(QUEUE_NAMES.liquidity, (job) => this.process(job.data.contest_id), {
      ...queueOptions(d.redisUrl, d.ks),
      concurrency: d.concurrency ?? 8,
      // A crashed worker's job is picked up again once its lock lapses and the stall check runs.
      lockDuration: d.lockMs ?? 5_000,
      stalledInterval: d.lockMs ?? 5_000,
      maxStalledCount: 5,
      // After a connection error BullMQ waits this long before trying again (default 15 s, which
      // kept the pipeline idle long after Redis was back).
      runRetryDelay: RUN_RETRY_DELAY_MS,
    });
    this.worker.on('failed', (job, err) => d.log.warn({ err, contest_id: job?.data.contest_id }, 'liquidity job failed'));
  }

  private async contestMeta(contestId: string): Promise<ContestCatalog> {
    const t = this.d.now();
    const m = await this.meta.get(contestId);
    if (t - this.namesAt > META_TTL_MS) {
      const names = await partnerNames(this.d.pool);
      // The same names keep the same map: the quotes mapped with it stay good (QuoteInputs).
      if (!sameNames(names, this.names)) this.names = names;
      this.namesAt = t;
    }
    return m;
  }

  /**
   * The co-located fast path (the ingester's FastPath): when ingest runs in this process, a moved
   * contest is computed here the moment its venue state is stored, without a queued job and its
   * hops (the add, the worker's wake-up, moveToActive, the completion). The write that stored the
   * change marked the contest taken; the computation's store clears the mark, and a mark left
   * behind (this process died, the computation failed) is queued by the ingester after a grace.
   * One at a time in this process: under load the queue computes the rest.
   */
  readonly fastPath = {
    reserve: (): boolean => {
      if (this.localRuns >= LOCAL_MAX_IN_FLIGHT || this.closing) return false;
      this.localRuns++;
      return true;
    },
    release: (): void => {
      this.localRuns--;
    },
    held: (contestId: string): readonly string[] => this.d.compute.heldSnapshots(contestId),
    compute: (contestId: string, state: VenueStateTexts): void => {
      this.fastPathRuns++;
      this.runLocal(contestId, state);
    },
    roomLater: (contestId: string): boolean => this.roomLater(contestId),
    later: (contestId: string): boolean => {
      if (!this.roomLater(contestId)) return false;
      this.waiting.add(contestId);
      this.runWaiting();
      return true;
    },
  };

  /** Whether the backlog takes the contest: it waits there already, or there is room. */
  private roomLater(contestId: string): boolean {
    return !this.closing && (this.waiting.has(contestId) || this.waiting.size < LOCAL_MAX_WAITING);
  }

  /** A fast-path computation on a reservation already taken; the next waiting contest runs when it is done. */
  private runLocal(contestId: string, state?: VenueStateTexts): void {
    this.process(contestId, state)
      .catch((err: unknown) => this.d.log.warn({ err, contest_id: contestId }, 'fast-path computation failed; its contest is queued once its mark is old enough'))
      .finally(() => {
        this.localRuns--;
        this.runWaiting();
      });
  }

  /** Starts waiting contests, oldest first, while the fast path has room. */
  private runWaiting(): void {
    while (!this.closing && this.localRuns < LOCAL_MAX_IN_FLIGHT && this.waiting.size > 0) {
      const contestId = this.waiting.values().next().value!;
      this.waiting.delete(contestId);
      this.localRuns++;
      this.fastPathLaterRuns++;
      this.runLocal(contestId);
    }
  }

  private localRuns = 0;
  /** Contests taken for later, in the order taken (their venue-state writes marked them). */
  private readonly waiting = new Set<string>();
  /** Computations of contests taken for later (metrics, tests). */
  fastPathLaterRuns = 0;
  private closing = false;
  /** Contests computed by the fast path (metrics, tests). */
  fastPathRuns = 0;
  /** Jobs that found their venue state computed already (by the fast path, or an earlier run). */
  skipped = 0;

  /** Computes a contest from its venue state: `given` (the fast path's write answered it), else read now. */
  private async process(contestId: string, given?: VenueStateTexts): Promise<void> {
    const [meta, state] = await Promise.all([this.contestMeta(contestId), given ?? this.d.hot.readVenueStateToCompute(contestId, this.d.compute.heldSnapshots(contestId))]);
    if (!state) {
      this.skipped++;
      return;
    }
    const now = this.d.now();
    const byPosition = this.quotes.byPosition(contestId, state.texts, this.names, now);
    const positions: PositionInput[] = meta.positions.map((p) => positionInput(p, byPosition.get(p.position_hash) ?? []));
    const out = await this.d.compute.liquidity({ input: { contest_id: contestId, positions, now_ms: now, label: meta.label, league_id: meta.leagueId }, prevJson: state.snapshot });
    const events = streamEvents(contestId, meta.leagueId, out, now);
    failpoint('compute.before-store');
    // The state and the events and history rows it implies land in one atomic step: a crash after
    // it loses nothing (gateways and the history writer read the log), a crash before it leaves the
    // job to run again.
    const written = await this.d.hot.writeComputed(contestId, state.version, out.positionsJson, out.snapshotJson, out.depth, {
      events,
      hist: consensusHistory(contestId, out.consensus, now),
      outliers: out.outliers,
      arbitrages: { json: out.arbitragesJson, leagueId: meta.leagueId, ttlMs: ARBITRAGE_TTL_MS },
      ...(out.snapshotParts ? { snapshotParts: out.snapshotParts } : {}),
      ...(out.textsSince ? { since: out.textsSince } : {}),
    });
    failpoint('compute.after-store');
    this.processed++;
    if (!written) return; // a newer job already stored a newer state; its events supersede ours
    if (out.signalsDue) {
      // Only the computation whose state was stored writes its signals: the next one decides from
      // that state's snapshot whether they changed, so signals from a superseded run (written before
      // it lost the compare-and-set) could outlive the state that withdrew them. A crash between the
      // two writes leaves the signals as they were until the snapshot's refresh instant (at most a
      // minute before the soonest expiry), when the next computation writes them whole again.
      await this.d.signals.write({ contestId, leagueId: meta.leagueId, upserts: out.signals, owns: 'arbitrage', version: state.version, timestamp: new Date(now).toISOString() });
    }
  }

  /** Drops cached positions of a contest (after a catalog change). */
  forget(contestId: string): void {
    this.meta.forget(contestId);
    this.quotes.forget(contestId);
  }

  /** Contests whose catalog facts are in memory. */
  metaSize(): number {
    return this.meta.size;
  }

  /** Drops the facts of contests not computed within META_TTL_MS (closed ones among them). */
  pruneMeta(): void {
    this.meta.prune();
  }

  async close(): Promise<void> {
    this.closing = true;
    // Contests still waiting keep their marks: the ingester's sweep queues them after the grace.
    this.waiting.clear();
    clearInterval(this.sweep);
    await this.worker.close();
  }
}
