/**
 * The scheduled balance refresh (the scheduler role): every `tickMs` it claims at most `batch`
 * connections not tried within BALANCE_REFRESH_EVERY_MS and re-reads them. Rounds never overlap;
 * a round that finds nothing logs at debug, one that did work logs one info line.
 *
 * Capacity: batch / tickMs connections a process reads (250 per 15 s = 1,000 a minute); a
 * connection is re-read about every BALANCE_REFRESH_EVERY_MS while that holds, well inside
 * BALANCE_STALE_AFTER_MS. More scheduler processes split the work (claims skip locked rows).
 */
import { BALANCE_REFRESH_EVERY_MS } from '../../src/domain/account.js';
import type { Logger } from '../../src/log.js';
import type { BalanceRefresher } from './refresher.js';

export const BALANCE_TICK_MS = 15_000;
export const BALANCE_BATCH = 250;

export interface BalanceSchedulerOptions {
  tickMs?: number;
  batch?: number;
  everyMs?: number;
}

export class BalanceScheduler {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  rounds = 0;
  private readonly tickMs: number;
  private readonly batch: number;
  private readonly everyMs: number;

  constructor(
    private readonly refresher: BalanceRefresher,
    private readonly log: Logger,
    opts: BalanceSchedulerOptions = {},
  ) {
    this.tickMs = opts.tickMs ?? BALANCE_TICK_MS;
    this.batch = opts.batch ?? BALANCE_BATCH;
    this.everyMs = opts.everyMs ?? BALANCE_REFRESH_EVERY_MS;
  }

  start(): void {
    if (this.timer) return;
    this.log.info({ task: 'balance_refresh', venues: this.refresher.partnerIds, tick_ms: this.tickMs, batch: this.batch, every_ms: this.everyMs }, 'balance refresh scheduled');
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
    void this.tick();
  }

  /** One round, unless one is still running (then that one's promise). */
  tick(): Promise<void> {
    this.round ??= this.runRound().finally(() => {
      this.round = null;
    });
    return this.round;
  }

  private async runRound(): Promise<void> {
    const started = Date.now();
    try {
      const r = await this.refresher.refreshDue(this.batch, this.everyMs);
      this.rounds++;
      const claimed = r.read.length + Object.values(r.failed).reduce((n, byCode) => n + Object.values(byCode).reduce((a, b) => a + b, 0), 0);
      const fields = { task: 'balance_refresh', claimed, read: r.read.length, landed: r.landed, failed: r.failed, ms: Date.now() - started, full: claimed === this.batch };
      if (claimed === 0) this.log.debug(fields, 'balance refresh round: nothing due');
      else this.log.info(fields, 'balance refresh round');
    } catch (err) {
      this.log.warn({ task: 'balance_refresh', err, ms: Date.now() - started }, 'balance refresh round failed; the next tick tries again');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round;
  }
}
