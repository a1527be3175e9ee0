/**
 * The settlement recorder (the ingest role, which holds the venue adapters): every settlement a
 * venue's feed reports (VenueAdapter.subscribeSettlements) is written to PostgreSQL
 * (contest_settlements, position_settlements; src/store/pg/settlement.ts), where the settler of the
 * scheduler role picks it up. That row is the durable trigger: from its commit on, a crash anywhere
 * loses no order's settlement.
 *
 * Writes go one at a time, in the order the feeds delivered them; a failed write (PostgreSQL out of
 * reach) is retried with exponential backoff, the reports waiting in memory (at most MAX_WAITING;
 * beyond that the oldest is dropped with an error log, which a real venue's re-sent or re-queried
 * settlement repairs). `flush` lets a caller wait until what it caused is recorded: the simulator's
 * settle call answers only then, so its 200 means the settlement is durable.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ContestSettlement } from '../../src/domain/settlement.js';
import type { Logger } from '../../src/log.js';
import { singleMetric } from '../../src/metrics.js';
import type { Pool } from '../../src/store/pg/pool.js';
import { recordContestSettlement } from '../../src/store/pg/settlement.js';
import type { Unsubscribe, VenueAdapter, VenueSettlement } from '../../src/venues/types.js';

export const RECORDER_DEFAULTS = {
  retryBaseMs: 100,
  retryMaxMs: 5_000,
  maxWaiting: 10_000,
} as const;

export interface SettlementRecorderOptions {
  pool: Pool;
  adapters: readonly VenueAdapter[];
  log: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;
  metrics?: Registry;
  retryBaseMs?: number;
  retryMaxMs?: number;
  maxWaiting?: number;
}

interface RecorderMetrics {
  recorded: Counter<'partner_id'>;
  errors: Counter;
  dropped: Counter;
  waiting: Gauge;
}

function recorderMetrics(registry: Registry): RecorderMetrics {
  const registers = [registry];
  return {
    recorded: singleMetric(
      registry,
      'flow_settlement_reports_recorded_total',
      () => new Counter({ name: 'flow_settlement_reports_recorded_total', help: 'Venue contest settlements written to PostgreSQL, by venue', labelNames: ['partner_id'] as const, registers }),
    ),
    errors: singleMetric(
      registry,
      'flow_settlement_record_errors_total',
      () => new Counter({ name: 'flow_settlement_record_errors_total', help: 'Failed writes of a venue settlement (retried)', registers }),
    ),
    dropped: singleMetric(
      registry,
      'flow_settlement_reports_dropped_total',
      () => new Counter({ name: 'flow_settlement_reports_dropped_total', help: 'Venue settlements dropped unrecorded because too many waited for PostgreSQL', registers }),
    ),
    waiting: singleMetric(
      registry,
      'flow_settlement_reports_waiting',
      () => new Gauge({ name: 'flow_settlement_reports_waiting', help: 'Venue settlements received and not yet written to PostgreSQL', registers }),
    ),
  };
}

/** The feed's report as the store records it (positions the venue could not name were already left out). */
export const contestSettlementOf = (s: VenueSettlement): ContestSettlement => ({
  partner_id: s.partner_id,
  contest_id: s.contest_id,
  winner_participant_id: s.winner_participant_id,
  ts_event: Number.isFinite(new Date(s.ts_event).getTime()) ? s.ts_event : s.ts_init,
  results: s.results,
});

export class SettlementRecorder {
  /** Reports received, in order; the first is being written. */
  private readonly waiting: ContestSettlement[] = [];
  /** Reports received so far, and reports done (recorded or dropped): flush waits for done to reach a count. */
  private received = 0;
  private done = 0;
  private dropped = 0;
  private readonly flushers = new Set<{ upTo: number; resolve: (ok: boolean) => void }>();
  private readonly unsubs: Unsubscribe[] = [];
  private writer: Promise<void> | null = null;
  private stopping = false;
  private retryTimer: { end: () => void } | null = null;
  private readonly m: RecorderMetrics | null;

  constructor(private readonly o: SettlementRecorderOptions) {
    this.m = o.metrics ? recorderMetrics(o.metrics) : null;
  }

  /** Subscribes to the settlement feed of every (connected) adapter that has one. */
  start(): this {
    const venues = this.o.adapters.filter((a) => this.watch(a)).map((a) => a.id);
    this.o.log.info({ venues }, 'settlement recorder running');
    return this;
  }

  /**
   * Subscribes to one connected adapter's settlement feed, when it has one (a venue connected after
   * start, in the background). Answers whether it did.
   */
  watch(a: VenueAdapter): boolean {
    if (this.stopping || !a.describe().capabilities.settlements) return false;
    this.unsubs.push(a.subscribeSettlements((s) => this.accept(contestSettlementOf(s))));
    return true;
  }

  /** Takes a report to record (the feeds call this; a test may too). */
  accept(s: ContestSettlement): void {
    if (this.stopping) {
      this.o.log.error({ partner_id: s.partner_id, contest_id: s.contest_id }, 'a venue settlement arrived after the recorder stopped; not recorded');
      return;
    }
    this.received++;
    this.waiting.push(s);
    const max = this.o.maxWaiting ?? RECORDER_DEFAULTS.maxWaiting;
    while (this.waiting.length > max) {
      // Not the one being written (index 0): the next oldest.
      const [lost] = this.waiting.splice(1, 1);
      this.dropped++;
      this.finished(1);
      this.m?.dropped.inc();
      this.o.log.error({ partner_id: lost!.partner_id, contest_id: lost!.contest_id, waiting: this.waiting.length }, 'too many venue settlements wait for PostgreSQL; dropped the oldest unrecorded');
    }
    this.m?.waiting.set(this.waiting.length);
    this.writer ??= this.write().finally(() => (this.writer = null));
  }

  /**
   * Resolves true once every report received before the call is recorded; false when one of them
   * was dropped, or after `timeoutMs` without that.
   */
  flush(timeoutMs = 5_000): Promise<boolean> {
    if (this.done >= this.received) return Promise.resolve(true);
    const droppedBefore = this.dropped;
    return new Promise((resolve) => {
      const f = {
        upTo: this.received,
        resolve: (done: boolean) => {
          clearTimeout(timer);
          this.flushers.delete(f);
          resolve(done && this.dropped === droppedBefore);
        },
      };
      const timer = setTimeout(() => f.resolve(false), timeoutMs);
      this.flushers.add(f);
    });
  }

  /** Stops taking reports and tries to write those waiting for up to `timeoutMs`. */
  async stop(timeoutMs = 5_000): Promise<void> {
    for (const u of this.unsubs.splice(0)) u();
    const flushed = await this.flush(timeoutMs);
    this.stopping = true;
    this.retryTimer?.end();
    await this.writer;
    if (!flushed) this.o.log.error({ unrecorded: this.waiting.length }, 'the settlement recorder stopped with venue settlements unrecorded');
  }

  private async write(): Promise<void> {
    let failures = 0;
    while (this.waiting.length > 0 && !this.stopping) {
      const s = this.waiting[0]!;
      try {
        const r = await recordContestSettlement(this.o.pool, s);
        if (r.conflicts.length > 0) {
          this.o.log.warn({ partner_id: s.partner_id, contest_id: s.contest_id, positions: r.conflicts }, 'a venue reported other results for positions it had settled; the first results stand');
        }
        this.o.log.info({ task: 'settlement_record', partner_id: s.partner_id, contest_id: s.contest_id, positions: s.results.length, added: r.added }, 'venue settlement recorded');
        this.m?.recorded.inc({ partner_id: s.partner_id });
        failures = 0;
        this.waiting.shift();
        this.finished(1);
      } catch (err) {
        failures++;
        this.m?.errors.inc();
        const delay = Math.min(this.o.retryMaxMs ?? RECORDER_DEFAULTS.retryMaxMs, (this.o.retryBaseMs ?? RECORDER_DEFAULTS.retryBaseMs) * 2 ** (failures - 1));
        this.o.log.warn({ err, partner_id: s.partner_id, contest_id: s.contest_id, failures, retry_in_ms: delay }, 'recording a venue settlement failed; retrying');
        await new Promise<void>((resolve) => {
          const end = () => {
            clearTimeout(timer);
            this.retryTimer = null;
            resolve();
          };
          const timer = setTimeout(end, delay);
          this.retryTimer = { end };
        });
      }
      this.m?.waiting.set(this.waiting.length);
    }
  }

  private finished(n: number): void {
    this.done += n;
    for (const f of [...this.flushers]) if (this.done >= f.upTo) f.resolve(true);
  }
}
