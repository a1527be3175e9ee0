/**
 * What a venue reports on real-money orders after their decision (the execute role; docs/orders.md
 * "Later fills"): fills of resting limit orders, the fill of a pending order on an async-fill
 * venue, a remainder the venue cancelled or expired. Two ways in, one recording
 * (src/store/pg/order-updates.ts recordVenueReport, idempotent):
 *
 * - the feed: every placing adapter's subscribeOrderUpdates. A report is recorded against the
 *   order named by its client_order_id (or the venue's id). Reports wait in a map bounded by
 *   maxWaiting, one per order (a report is a cumulative snapshot, so only the most advanced one
 *   matters: the others coalesce into it); one for an order whose placement is not decided yet waits
 *   for the decision (retried shortly). Beyond the bound, or after its retries, a report is dropped:
 *   the reconcile finds what it said.
 * - the reconcile: on start, every working order (resting, pending) of this process's venues is
 *   read back with fetchOrder, so what the venue reported while no execute process listened is
 *   caught up; then periodically, a bounded batch each time, least recently compared first.
 *
 * Any number of execute processes may run both: a report recorded twice changes nothing the second
 * time.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../src/log.js';
import { scrapedCounter, singleMetric } from '../../src/metrics.js';
import { markReconciled, recordVenueReport, workingOrders, type ReportOutcome, type ReportTarget } from '../../src/store/pg/order-updates.js';
import type { Pool, PoolClient } from '../../src/store/pg/pool.js';
import { VenueError } from '../../src/venues/errors.js';
import { TERMINAL_ORDER_STATUSES, type Unsubscribe, type VenueAdapter, type VenueOrder } from '../../src/venues/types.js';

export interface OrderUpdatesDeps {
  pool: Pool;
  /** The placing adapters of this process. */
  adapters: readonly VenueAdapter[];
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  now(): number;
  /** Reports waiting at most (default 10,000). */
  maxWaiting?: number;
  /** Reports recorded at once (each holds a PostgreSQL connection; default 2). */
  concurrency?: number;
  /** How often a batch of working orders is compared with the venue (default 30 s). */
  reconcileEveryMs?: number;
  /** Working orders per reconcile batch (default 200). */
  reconcileBatch?: number;
  /** flow_order_reports_* (docs/operations.md). */
  metrics?: Registry;
}

export const ORDER_UPDATE_DEFAULTS = {
  maxWaiting: 10_000,
  concurrency: 2,
  reconcileEveryMs: 30_000,
  reconcileBatch: 200,
  /** A report for an undecided order is tried again after this, this many times (the decision is normally milliseconds behind). */
  undecidedRetryMs: 200,
  undecidedRetries: 50,
  /** A report whose recording failed (PostgreSQL away) is tried again with backoff, this many times. */
  errorRetries: 10,
} as const;

interface Waiting {
  partner_id: string;
  report: VenueOrder;
  tries: number;
  /** Not before this instant (ms): a retry's delay. */
  at: number;
}

export interface OrderUpdateStats {
  /** Reports (feed and reconcile) that changed an order. */
  applied: number;
  /** Reports that changed nothing (seen before, stale, or the order no longer works). */
  unchanged: number;
  /** Feed reports dropped (the bound, or retries spent): the reconcile covers them. */
  dropped: number;
  /** Feed reports naming no order of ours. */
  unknown: number;
  /** Orders the reconcile read back from their venue. */
  reconciled: number;
}

const terminal = (o: VenueOrder) => TERMINAL_ORDER_STATUSES.includes(o.status);
/** Whether report `a` says more than `b` about the same order (more filled, or the end). */
const moreAdvanced = (a: VenueOrder, b: VenueOrder) => a.filled_contracts > b.filled_contracts || (a.filled_contracts === b.filled_contracts && terminal(a) && !terminal(b));

export class OrderUpdates {
  readonly stats: OrderUpdateStats = { applied: 0, unchanged: 0, dropped: 0, unknown: 0, reconciled: 0 };
  private readonly adapters = new Map<string, VenueAdapter>();
  private readonly waiting = new Map<string, Waiting>();
  private readonly unsubscribes: Unsubscribe[] = [];
  private readonly subscribed = new Set<string>();
  private readonly o: Required<Pick<OrderUpdatesDeps, 'maxWaiting' | 'concurrency' | 'reconcileEveryMs' | 'reconcileBatch'>>;
  private draining: Promise<void> | null = null;
  private again = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private reconciling: Promise<number> | null = null;
  private closed = false;

  constructor(private readonly d: OrderUpdatesDeps) {
    this.o = {
      maxWaiting: d.maxWaiting ?? ORDER_UPDATE_DEFAULTS.maxWaiting,
      concurrency: d.concurrency ?? ORDER_UPDATE_DEFAULTS.concurrency,
      reconcileEveryMs: d.reconcileEveryMs ?? ORDER_UPDATE_DEFAULTS.reconcileEveryMs,
      reconcileBatch: d.reconcileBatch ?? ORDER_UPDATE_DEFAULTS.reconcileBatch,
    };
    for (const a of d.adapters) this.adapters.set(a.id, a);
    if (d.metrics) this.registerMetrics(d.metrics);
  }

  private registerMetrics(registry: Registry): void {
    const counter = (name: string, help: string, read: () => number) => singleMetric(registry, name, () => scrapedCounter(registry, name, help, read));
    counter('flow_order_reports_applied_total', 'Venue reports on decided real-money orders that changed them (later fills, ends of remainders)', () => this.stats.applied);
    counter('flow_order_reports_dropped_total', 'Order-update feed reports dropped (backlog full, retries spent); the reconcile reads them back', () => this.stats.dropped);
    counter('flow_order_reports_reconciled_total', 'Working orders read back from their venue by the reconcile', () => this.stats.reconciled);
    const waiting = () => this.waiting.size;
    singleMetric(
      registry,
      'flow_order_reports_waiting',
      () =>
        new Gauge({
          name: 'flow_order_reports_waiting',
          help: 'Order-update feed reports waiting to be recorded',
          registers: [registry],
          collect() {
            this.set(waiting());
          },
        }),
    );
  }

  /** Subscribes to every adapter's order updates, catches up on what was missed, and reconciles periodically. */
  start(): this {
    const startedAt = this.d.now();
    this.subscribe();
    void this.catchUp(startedAt);
    this.reconcileTimer = setInterval(() => {
      this.subscribe();
      this.reconcileOnce(this.o.reconcileEveryMs).catch((err: unknown) => this.d.log.warn({ err }, 'reconciling working orders failed; the next pass retries'));
    }, this.o.reconcileEveryMs);
    this.reconcileTimer.unref();
    return this;
  }

  /** Subscribes to the feeds not subscribed yet (a venue not connected at start is tried again each reconcile round). */
  private subscribe(): void {
    for (const a of this.adapters.values()) {
      if (this.subscribed.has(a.id)) continue;
      try {
        this.unsubscribes.push(a.subscribeOrderUpdates((o) => this.accept(a.id, o)));
        this.subscribed.add(a.id);
      } catch (err) {
        // Not connected yet, or no feed: meanwhile the reconcile alone keeps its orders current.
        this.d.log.warn({ err, partner_id: a.id }, 'no order-update feed from this venue yet; its working orders are reconciled periodically');
      }
    }
  }

  /** A report from a venue's feed (synchronous: it waits in the map and is recorded in the background). */
  accept(partnerId: string, report: VenueOrder): void {
    if (this.closed) return;
    const key = `${partnerId}|${report.client_order_id || report.venue_order_id}`;
    const had = this.waiting.get(key);
    if (had) {
      if (moreAdvanced(report, had.report)) this.waiting.set(key, { ...had, report, tries: 0 });
    } else if (this.waiting.size >= this.o.maxWaiting) {
      // Logged on the first drop and every 1000th after (a flood must not flood the log too).
      if (this.stats.dropped++ % 1000 === 0) {
        this.d.log.warn({ partner_id: partnerId, dropped: this.stats.dropped, waiting: this.waiting.size }, 'order-update backlog full: reports dropped (the reconcile catches them up)');
      }
      return;
    } else {
      this.waiting.set(key, { partner_id: partnerId, report, tries: 0, at: 0 });
    }
    this.kick();
  }

  /** Reports waiting to be recorded. */
  get backlog(): number {
    return this.waiting.size;
  }

  /** Resolves once every report waiting now (and any that came meanwhile) has been tried. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private kick(): void {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = null;
      if (this.again && !this.closed) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const now = this.d.now();
      const due: [string, Waiting][] = [];
      for (const e of this.waiting) {
        if (e[1].at > now) continue;
        due.push(e);
        if (due.length >= this.o.concurrency * 8) break;
      }
      if (due.length === 0) break;
      for (const [key] of due) this.waiting.delete(key);
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(this.o.concurrency, due.length) }, async () => {
          while (next < due.length) {
            const [key, w] = due[next++]!;
            await this.recordWaiting(key, w);
          }
        }),
      );
    }
    this.scheduleRetry();
  }

  private async recordWaiting(key: string, w: Waiting): Promise<void> {
    const target: ReportTarget = { partner_id: w.partner_id, client_order_id: w.report.client_order_id, venue_order_id: w.report.venue_order_id };
    let outcome: ReportOutcome['outcome'];
    try {
      outcome = await this.record(target, w.report);
    } catch (err) {
      this.retry(key, w, ORDER_UPDATE_DEFAULTS.errorRetries, Math.min(5_000, 100 * 2 ** w.tries), err);
      return;
    }
    if (outcome === 'not_decided') this.retry(key, w, ORDER_UPDATE_DEFAULTS.undecidedRetries, ORDER_UPDATE_DEFAULTS.undecidedRetryMs);
    else if (outcome === 'unknown') this.stats.unknown++;
  }

  /** Puts a report back for another try after `delayMs`, unless a newer one arrived meanwhile or its tries are spent. */
  private retry(key: string, w: Waiting, maxTries: number, delayMs: number, err?: unknown): void {
    if (this.closed) return;
    const newer = this.waiting.get(key);
    // A report that arrived meanwhile replaces this one unless this one says more.
    if (newer && !moreAdvanced(w.report, newer.report)) return;
    if (w.tries + 1 > maxTries) {
      this.stats.dropped++;
      this.d.log.warn({ err, partner_id: w.partner_id, venue_order_id: w.report.venue_order_id }, 'an order report could not be recorded; dropped (the reconcile catches it up)');
      return;
    }
    this.waiting.set(key, { ...w, tries: w.tries + 1, at: this.d.now() + delayMs });
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer || this.waiting.size === 0) return;
    let at = Infinity;
    for (const w of this.waiting.values()) at = Math.min(at, w.at);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.kick();
    }, Math.max(0, at - this.d.now()));
    this.retryTimer.unref();
  }

  /** Records one report on its own connection (destroyed if the recording failed mid-way). */
  private async record(target: ReportTarget, report: VenueOrder): Promise<ReportOutcome['outcome']> {
    const client: PoolClient = await this.d.pool.connect();
    let failed: unknown = undefined;
    try {
      const r = await recordVenueReport(client, target, report, this.d.now());
      if (r.outcome === 'applied') this.stats.applied++;
      else if (r.outcome === 'unchanged') this.stats.unchanged++;
      return r.outcome;
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      client.release(failed === undefined ? undefined : failed instanceof Error ? failed : true);
    }
  }

  /** Start: every working order not compared since `sinceMs`, batch after batch. */
  private async catchUp(sinceMs: number): Promise<void> {
    try {
      let read = this.o.reconcileBatch;
      while (!this.closed && read >= this.o.reconcileBatch) read = await this.reconcileOnce(Math.max(0, this.d.now() - sinceMs));
    } catch (err) {
      this.d.log.warn({ err }, 'catching up on working orders failed; the periodic reconcile goes on');
    }
  }

  /**
   * One bounded batch: working orders not compared with their venue within `notWithinMs`, read back
   * with fetchOrder and recorded. Returns how many were read. One batch at a time per process.
   */
  reconcileOnce(notWithinMs = 0): Promise<number> {
    this.reconciling ??= this.reconcileBatch(notWithinMs).finally(() => (this.reconciling = null));
    return this.reconciling;
  }

  private async reconcileBatch(notWithinMs: number): Promise<number> {
    if (this.closed) return 0;
    const due = await workingOrders(this.d.pool, [...this.adapters.keys()], notWithinMs, this.o.reconcileBatch);
    // Stamped whether or not their report changed them (or could be read): the next batch takes others first.
    const untouched: string[] = [];
    for (const w of due) {
      if (this.closed) break;
      const adapter = this.adapters.get(w.partner_id)!;
      let report: VenueOrder;
      try {
        report = await adapter.fetchOrder(w.router_account_id, w.venue_order_id);
      } catch (err) {
        untouched.push(w.router_order_id);
        const level = err instanceof VenueError && err.retryable ? 'debug' : 'warn';
        this.d.log[level]({ err, router_order_id: w.router_order_id, partner_id: w.partner_id }, 'reading a working order back from its venue failed; asked again next round');
        continue;
      }
      this.stats.reconciled++;
      const outcome = await this.record({ router_order_id: w.router_order_id }, report);
      if (outcome !== 'applied') untouched.push(w.router_order_id);
    }
    await markReconciled(this.d.pool, untouched);
    if (due.length > 0) this.d.log.debug({ orders: due.length }, 'working orders reconciled with their venues');
    return due.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const off of this.unsubscribes.splice(0)) off();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    await this.idle();
    await this.reconciling?.catch(() => undefined);
    this.waiting.clear();
  }
}
