/**
 * The expiry sweep of the market-signal caches (scheduler role): a contest whose arbitrages
 * outlived their 120 s without a newer computation gets an arbitrage.update clearing them through
 * the event log, and a contest whose signals passed their expires_at gets a signal.update without
 * them (an empty one when none is left), so stream subscribers drop what the REST reads no longer
 * serve. Idempotent and conditional in Redis, so any number of scheduler processes may run it.
 */
import type { Logger } from '../../src/log.js';
import type { ArbitrageStore } from '../../src/store/redis/arbitrages.js';
import type { SignalStore } from '../../src/store/redis/signals.js';

/** How often expired sets are looked for: a clear arrives at most this long after the expiry. */
export const EXPIRY_SWEEP_MS = 2_000;

export class SignalExpirySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Contests whose arbitrages were cleared (metrics, tests). */
  cleared = 0;
  /** Contests whose signal set was republished without its expired signals (metrics, tests). */
  signalsSwept = 0;

  constructor(
    private readonly d: { arbitrages: ArbitrageStore; signals: SignalStore; log: Pick<Logger, 'warn' | 'debug'>; now(): number; everyMs?: number },
  ) {}

  start(): this {
    this.timer = setInterval(() => void this.sweep(), this.d.everyMs ?? EXPIRY_SWEEP_MS);
    this.timer.unref();
    return this;
  }

  /** One pass (skipped while the previous one runs). */
  sweep(): Promise<void> {
    this.running ??= (async () => {
      try {
        try {
          this.cleared += await this.d.arbitrages.sweepExpired(this.d.now());
        } catch (err) {
          this.d.log.warn({ err, task: 'signal_expiry' }, 'clearing expired arbitrages failed; the next pass retries');
        }
        // Apart from the arbitrages: one failing does not hold the other up.
        try {
          this.signalsSwept += await this.d.signals.sweepExpired(this.d.now());
        } catch (err) {
          this.d.log.warn({ err, task: 'signal_expiry' }, 'clearing expired signals failed; the next pass retries');
        }
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
