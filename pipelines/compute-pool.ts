/**
 * The piscina threads that run compute tasks off the event loop.
 *
 * A contest's liquidity jobs go to one thread (its id hashed: one single-thread pool per thread,
 * since piscina picks a thread by load alone), where the thread keeps the contest's last run
 * (src/compute/job.ts). This side keeps a mirror of each contest's texts and of the input it last
 * sent, so a change crosses as a delta (the repriced quotes) and comes back as the text fragments
 * it changed (src/compute/liquidity-task.ts); this side assembles the texts. When the mirror or
 * the thread's run is missing or does not match the stored snapshot, the job crosses whole and the
 * thread computes from the snapshot: a mirror only saves work, the stored snapshot is what counts.
 */
import { Piscina } from 'piscina';
import { ContestText } from '../src/compute/contest-text.js';
import { InputMirror } from '../src/compute/input-delta.js';
import { jobOutput, runLiquidityJob, threadRuns, type LiquidityJobInput, type LiquidityJobOutput } from '../src/compute/job.js';
import { unpackStep, type LiquidityTask, type LiquidityTaskResult } from '../src/compute/liquidity-task.js';
import { DEFAULT_RUN_CACHE_LIMITS, RunCache, type RunCacheLimits } from '../src/compute/run-cache.js';
import type { TradeSignalTask, TradeSignalTaskOutput } from '../src/compute/trade-signals.js';
import { threadFile } from './thread-file.js';

/**
 * A job with at most this many venue quotes runs on the calling thread when the pipeline is quiet:
 * it computes in a fraction of a millisecond, less than the two thread hops it would otherwise
 * take, and those hops are what a quote's way to the stream waits on (bench stream-latency).
 * Larger jobs, every job while the pool has work queued, and every job that follows an inline one
 * within INLINE_GAP_MS (a burst: all contests recomputed at once) go to the worker threads, so
 * the event loop is never held for a burst's whole length; but a contest whose inline run holds
 * the stored snapshot stays inline within the gap (see liquidity()).
 */
export const INLINE_MAX_QUOTES = 64;
export const INLINE_GAP_MS = 5;

/** Tasks a thread is handed at once (it runs them one after the other, in order). */
const TASKS_PER_THREAD = 8;

function quoteCount(job: LiquidityJobInput): number {
  let n = 0;
  for (const p of job.input.positions) n += p.quotes.length;
  return n;
}

/** What this side keeps of a contest handed to a thread: the texts as of the thread's run, and the input it computed. */
interface Mirror {
  text: ContestText;
  inputs: InputMirror;
  quotes: number;
}

export interface ComputePoolOptions {
  /** Bounds of the runs each compute thread keeps (default DEFAULT_RUN_CACHE_LIMITS). */
  runs?: RunCacheLimits;
  /** Bounds of the mirrors kept on this thread (default DEFAULT_RUN_CACHE_LIMITS). */
  mirrors?: RunCacheLimits;
  /** The clock the burst rule reads (ms; tests give their own, so a stalled machine cannot make a burst look like a pause). */
  now?: () => number;
}

/** FNV-1a of a contest id: which thread computes it. */
function threadOf(contestId: string, threads: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < contestId.length; i++) h = Math.imul(h ^ contestId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % threads;
}

export class ComputePool {
  private readonly pools: Piscina[];
  private readonly mirrors: RunCache<Mirror>;
  private readonly limits: RunCacheLimits;
  private readonly now: () => number;

  constructor(threads = 1, opts: ComputePoolOptions = {}) {
    this.now = opts.now ?? (() => performance.now());
    const filename = threadFile(import.meta.url, '../workers/liquidity');
    // recordTiming off: piscina otherwise records every task's wait and run time in histograms.
    // Several tasks handed over at once: a thread that finishes one takes the next from its port
    // instead of sleeping until this thread hears of the result and sends it (two wake-ups a task).
    this.pools = Array.from(
      { length: Math.max(1, threads) },
      () => new Piscina({ filename, minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: TASKS_PER_THREAD, idleTimeout: 60_000, recordTiming: false }),
    );
    this.inFlight = this.pools.map(() => 0);
    this.limits = opts.runs ?? DEFAULT_RUN_CACHE_LIMITS;
    // The fragments, the snapshot text last handed out (flat once written to Redis), and the input's quotes, which stay referenced.
    this.mirrors = new RunCache<Mirror>(opts.mirrors ?? DEFAULT_RUN_CACHE_LIMITS, (m) => 3 * m.text.chars + 600 * m.quotes);
  }

  /** Jobs run on the calling thread and on the pool (metrics, tests). */
  inlineRuns = 0;
  pooledRuns = 0;
  /** Pooled jobs sent as a delta, those of them the thread answered with a miss (sent again whole), and jobs sent whole. */
  deltaRuns = 0;
  deltaMisses = 0;
  fullRuns = 0;
  private lastInlineEnd = -Infinity;

  /** Tasks handed to each thread and not answered yet. */
  private readonly inFlight: number[];

  /** Tasks waiting behind the one each thread is running (piscina hands a thread several at once, FIFO). */
  private get queued(): number {
    let n = 0;
    for (const k of this.inFlight) n += Math.max(0, k - 1);
    return n;
  }

  private async run<T, R>(thread: number, task: T, filename?: string): Promise<R> {
    this.inFlight[thread]!++;
    try {
      return (await (this.pools[thread] as unknown as Piscina<T, R>).run(task, filename === undefined ? undefined : { filename })) as R;
    } finally {
      this.inFlight[thread]!--;
    }
  }

  /**
   * The snapshot texts this process last handed out for a contest (its mirror's, its inline run's):
   * when one of them is the stored snapshot, a job's read need not bring the snapshot back
   * (HotState.readVenueStateToCompute), and the job is computed against the text in hand.
   */
  heldSnapshots(contestId: string): string[] {
    const out: string[] = [];
    const mirrored = this.mirrors.peek(contestId)?.text.handedOut();
    if (mirrored) out.push(mirrored);
    const inline = threadRuns.peek(contestId)?.heldSnapshot();
    if (inline && inline !== mirrored) out.push(inline);
    return out;
  }

  liquidity(job: LiquidityJobInput): Promise<LiquidityJobOutput> {
    // A contest whose inline run holds the stored snapshot stays inline (while the pool is idle)
    // whatever the gap: sent to its thread, it would start from scratch there, and its next inline
    // job from scratch again (two runs of one contest, each outdating the other at every turn).
    if (this.queued === 0 && quoteCount(job) <= INLINE_MAX_QUOTES && (this.now() - this.lastInlineEnd > INLINE_GAP_MS || this.inlineHolds(job))) {
      this.inlineRuns++;
      try {
        return Promise.resolve(runLiquidityJob(job));
      } catch (err) {
        return Promise.reject(err as Error);
      } finally {
        this.lastInlineEnd = this.now();
      }
    }
    this.pooledRuns++;
    return this.pooled(job);
  }

  /** Whether this thread's inline run of the job's contest holds the snapshot the job computes against. */
  private inlineHolds(job: LiquidityJobInput): boolean {
    return threadRuns.peek(job.input.contest_id)?.holds(job.prevJson) === true;
  }

  private async pooled(job: LiquidityJobInput): Promise<LiquidityJobOutput> {
    const id = job.input.contest_id;
    const now = job.input.now_ms;
    const thread = threadOf(id, this.pools.length);
    const m = this.mirrors.get(id, now);
    if (m !== undefined && m.text.holds(job.prevJson)) {
      const delta = m.inputs.delta(job.input);
      if (delta !== null) {
        this.deltaRuns++;
        const base = m.text.run;
        const res = await this.run<LiquidityTask, LiquidityTaskResult>(thread, { kind: 'delta', contestId: id, base, delta: m.inputs.wire(delta) });
        // The mirror is still at the run the thread continued from (another job of the contest may have moved it).
        if (res.kind === 'step' && m.text.run === base) {
          const { findings, patch } = unpackStep(res);
          this.applyOrDrop(id, () => m.text.apply(patch));
          m.inputs.apply(delta);
          this.mirrors.set(id, m, now);
          return jobOutput(m.text, findings);
        }
        this.deltaMisses++;
      }
    }
    this.fullRuns++;
    const res = await this.run<LiquidityTask, LiquidityTaskResult>(thread, { kind: 'full', job, limits: this.limits });
    if (res.kind === 'output') {
      this.mirrors.delete(id);
      return res.output;
    }
    if (res.kind === 'miss') throw new Error(`compute thread answered a whole job of contest ${id} with a miss`);
    const fresh: Mirror = { text: new ContestText(), inputs: new InputMirror(job.input), quotes: quoteCount(job) };
    const { findings, patch } = unpackStep(res);
    this.applyOrDrop(id, () => fresh.text.apply(patch));
    this.mirrors.set(id, fresh, now);
    return jobOutput(fresh.text, findings);
  }

  /** Applies a patch to a mirror; a mirror a patch failed on is half changed, so it is dropped before the error goes on. */
  private applyOrDrop(id: string, apply: () => void): void {
    try {
      apply();
    } catch (err) {
      this.mirrors.delete(id);
      throw err;
    }
  }

  /** The worker module of the trade-signal tasks (the same threads: piscina picks the module per task). */
  private readonly tradeSignalsFile = threadFile(import.meta.url, '../workers/trade-signals');

  /** One batch of trade prints → trade-derived signals (pipelines/signals/trades.ts), always on a worker thread: the least queued one. */
  tradeSignals(task: TradeSignalTask): Promise<TradeSignalTaskOutput> {
    let thread = 0;
    for (let t = 1; t < this.pools.length; t++) if (this.inFlight[t]! < this.inFlight[thread]!) thread = t;
    return this.run<TradeSignalTask, TradeSignalTaskOutput>(thread, task, this.tradeSignalsFile);
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
