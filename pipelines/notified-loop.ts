/**
 * A worker loop over PostgreSQL work that wakes on NOTIFY: the account-event relay and the order
 * settler. It runs `step` again at once while work is known to wait (or a notification arrived
 * during the step), otherwise sleeps until a notification or the poll (the fallback for a lost
 * notification or a dropped LISTEN session); a failing step is retried with exponential backoff.
 * stop() ends a sleep at once and waits for the step in flight.
 */
import type { Logger } from '../src/log.js';
import { listen, type Listening } from '../src/store/pg/listen.js';

export interface NotifiedLoopOptions {
  /** The LISTEN session's database; null polls only. */
  databaseUrl: string | null;
  /** The NOTIFY channel that means "work may be waiting". */
  channel: string;
  pollMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** One unit of work; true when more is known to wait (run again without sleeping). */
  step: () => Promise<boolean>;
  /** A step failed; it is retried after `retryInMs`. */
  onError: (err: unknown, failures: number, retryInMs: number) => void;
  /** A step succeeded after `failures` failed ones. */
  onRecovered?: (failures: number) => void;
}

export class NotifiedLoop {
  private listening: Listening | null = null;
  private running: Promise<void> | null = null;
  private halted = false;
  /** A notification arrived since the current step began: run another instead of sleeping. */
  private notified = false;
  /** The current sleep: ends it early (on stop always, on a notification when idle). */
  private sleepEnd: { end: () => void; onNotify: boolean } | null = null;

  constructor(private readonly o: NotifiedLoopOptions) {}

  /** True once stop() was called: a long step should end early. */
  get stopping(): boolean {
    return this.halted;
  }

  /** True when a LISTEN session wakes the loop (false: it polls only). */
  get listens(): boolean {
    return this.listening !== null;
  }

  start(): this {
    if (this.running) return this;
    if (this.o.databaseUrl) this.listening = listen(this.o.databaseUrl, this.o.channel, () => this.onNotify(), { log: this.o.log });
    this.running = this.run();
    return this;
  }

  /** Finishes the step in flight (if any) and stops. */
  async stop(): Promise<void> {
    if (this.halted) return;
    this.halted = true;
    this.sleepEnd?.end();
    await this.listening?.close();
    await this.running;
  }

  private onNotify(): void {
    this.notified = true;
    if (this.sleepEnd?.onNotify) this.sleepEnd.end();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.halted) {
      this.notified = false;
      let more: boolean;
      try {
        more = await this.o.step();
      } catch (err) {
        failures++;
        const delay = Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** (failures - 1));
        this.o.onError(err, failures, delay);
        await this.sleep(delay, false);
        continue;
      }
      if (failures) this.o.onRecovered?.(failures);
      failures = 0;
      if (!more && !this.notified) await this.sleep(this.o.pollMs, true);
    }
  }

  private sleep(ms: number, onNotify: boolean): Promise<void> {
    if (this.halted) return Promise.resolve();
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.sleepEnd = null;
        resolve();
      };
      const timer = setTimeout(end, ms);
      this.sleepEnd = { end, onNotify };
    });
  }
}
