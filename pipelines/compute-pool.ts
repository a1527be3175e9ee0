/** The piscina pool that runs compute tasks off the event loop. */
import { Piscina } from 'piscina';
import { runLiquidityJob, type LiquidityJobInput, type LiquidityJobOutput } from '../src/compute/job.js';
import type { TradeSignalTask, TradeSignalTaskOutput } from '../src/compute/trade-signals.js';
import { threadFile } from './thread-file.js';

/**
 * A job with at most this many venue quotes runs on the calling thread when the pipeline is quiet:
 * it computes in a fraction of a millisecond, less than the two thread hops it would otherwise
 * take, and those hops are what a quote's way to the stream waits on (bench stream-latency).
 * Larger jobs, every job while the pool has work queued, and every job that follows an inline one
 * within INLINE_GAP_MS (a burst: all contests recomputed at once) go to the worker threads, so
 * the event loop is never held for a burst's whole length.
 */
export const INLINE_MAX_QUOTES = 64;
export const INLINE_GAP_MS = 5;

function quoteCount(job: LiquidityJobInput): number {
  let n = 0;
  for (const p of job.input.positions) n += p.quotes.length;
  return n;
}

export class ComputePool {
  private readonly pool: Piscina<LiquidityJobInput, LiquidityJobOutput>;

  /** `now`: the clock the burst rule reads (ms; tests give their own, so a stalled machine cannot make a burst look like a pause). */
  constructor(
    threads = 1,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.pool = new Piscina({ filename: threadFile(import.meta.url, '../workers/liquidity'), minThreads: threads, maxThreads: threads, idleTimeout: 60_000 });
  }

  /** Jobs run on the calling thread and on the pool (metrics, tests). */
  inlineRuns = 0;
  pooledRuns = 0;
  private lastInlineEnd = -Infinity;

  liquidity(job: LiquidityJobInput): Promise<LiquidityJobOutput> {
    if (this.pool.queueSize === 0 && this.now() - this.lastInlineEnd > INLINE_GAP_MS && quoteCount(job) <= INLINE_MAX_QUOTES) {
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
    return this.pool.run(job);
  }

  /** The worker module of the trade-signal tasks (the same threads: piscina picks the module per task). */
  private readonly tradeSignalsFile = threadFile(import.meta.url, '../workers/trade-signals');

  /** One batch of trade prints → trade-derived signals (pipelines/signals/trades.ts), always on a worker thread. */
  tradeSignals(task: TradeSignalTask): Promise<TradeSignalTaskOutput> {
    return (this.pool as unknown as Piscina<TradeSignalTask, TradeSignalTaskOutput>).run(task, { filename: this.tradeSignalsFile });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
