/**
 * The execute worker: one BullMQ job per real-money leg, one queue per venue (a process takes a
 * venue's legs only where it runs that venue's adapter). A job:
 *
 *   1. takes the (account, venue) lock: a PostgreSQL session advisory lock, tried without waiting.
 *      Held → the job goes back to the queue, delayed a few ms, and the slot serves other accounts
 *      (different accounts never wait on each other). One session holds it at a time on any number
 *      of processes; it cannot lapse under a live holder (unlike a queue lock); a dead process's
 *      session ends and frees it.
 *   2. reads the intent under the lock: decided already → done (a job runs at most once per leg in
 *      effect, however often it is delivered). Never sent and older than the intent TTL → failed,
 *      nothing sent (a market order is not placed long after it was asked for).
 *   3. marks it sent (committed), then places it through the adapter with its client_order_id:
 *      after a crash anywhere from here the next attempt places again under the same id, and the
 *      venue answers with the order it already has (the reconcile); nothing is placed twice.
 *   4. records the venue's answer with its ledger rows and events in one transaction
 *      (src/store/pg/executions.ts recordDecision).
 *
 * A cancel job (POST orders/cancel of an order resting at the venue) runs on the same queue under
 * the same lock: it calls the adapter's cancelOrder and records the venue's answer (the remainder
 * released, any fill that raced in booked) in one transaction (src/store/pg/order-updates.ts); an
 * order the venue finished first (filled) is read back with fetchOrder and recorded as it ended.
 *
 * Beside the queues the processor records what venues report on decided orders later (fills of
 * resting and pending orders: ./order-updates.ts) and, given the hot state, relays the liquidity
 * refreshes fills ask for (../liquidity-refresh/relay.ts).
 *
 * A retryable venue error (or PostgreSQL/Redis away) fails the attempt and BullMQ retries it with
 * backoff; a worker killed mid-job leaves it active until its lock lapses and the stall check hands
 * it to another worker. Whatever is still undecided after that (attempts exhausted, an enqueue
 * lost with the API that made it) the sweep enqueues again. docs/orders.md "Real-money legs".
 */
import { DelayedError, Worker, type Job } from 'bullmq';
import type { Registry } from 'prom-client';
import { decideLeg, failedLeg, type LegDecision } from '../../src/domain/execution.js';
import { failpoint } from '../../src/failpoints.js';
import type { Logger } from '../../src/log.js';
import { loadIntent, markSent, recordDecision, tryLockLeg, undecidedIntents, unlockLeg, type Intent } from '../../src/store/pg/executions.js';
import { cancelTarget, finishCancel, recordVenueReport, waitingCancels, type CancelTarget } from '../../src/store/pg/order-updates.js';
import type { Pool, PoolClient } from '../../src/store/pg/pool.js';
import type { Keyspace } from '../../src/store/redis/client.js';
import type { HotState } from '../../src/store/redis/hot.js';
import { VenueError, VenueErrorCodes } from '../../src/venues/errors.js';
import type { VenueAdapter, VenueOrder, VenueOrderRequest } from '../../src/venues/types.js';
import { LiquidityRefreshRelay } from '../liquidity-refresh/relay.js';
import { ExecuteProducer } from '../producers/execute.js';
import { executeQueueName, queueOptions, type JobMap } from '../queues.js';
import { OrderUpdates, type OrderUpdatesDeps } from './order-updates.js';

export interface ExecuteProcessorDeps {
  redisUrl: string;
  ks: Keyspace;
  pool: Pool;
  /** The venue adapters of this process: one queue is worked per adapter that places orders. */
  adapters: readonly VenueAdapter[];
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  now(): number;
  /** Jobs at once per venue in this process (each holds a PostgreSQL connection while it runs). */
  concurrency?: number;
  /** A job's queue lock: a killed worker's job runs again about this long after it died. */
  lockMs?: number;
  /** An intent never sent this long after it was written is not sent: it fails (default 60 s). */
  intentTtlMs?: number;
  /** How often undecided intents are enqueued again, and how old they must be (defaults 10 s, 10 s). */
  sweepEveryMs?: number;
  sweepAfterMs?: number;
  /** Delay of a job whose (account, venue) is busy, before jitter. */
  contendedDelayMs?: number;
  /** The venues' later reports on decided orders (./order-updates.ts): its tuning, or false for none. */
  orderUpdates?: Partial<Pick<OrderUpdatesDeps, 'maxWaiting' | 'concurrency' | 'reconcileEveryMs' | 'reconcileBatch'>> | false;
  /** The hot state: when given, this process relays the liquidity refreshes fills ask for. */
  hot?: Pick<HotState, 'append'>;
  /** The relay's LISTEN session (null or absent: it polls). */
  databaseUrl?: string | null;
  /** The order reports' metrics (flow_order_reports_*). */
  metrics?: Registry;
}

export const EXECUTE_DEFAULTS = {
  concurrency: 4,
  lockMs: 10_000,
  intentTtlMs: 60_000,
  sweepEveryMs: 10_000,
  sweepAfterMs: 10_000,
  contendedDelayMs: 20,
} as const;

/** What a job did with its leg (or its cancel). */
export type LegRun = 'decided' | 'already_decided' | 'contended' | 'missing';

export class ExecuteProcessor {
  readonly workers: Worker<JobMap['execute']>[] = [];
  private readonly adapters = new Map<string, VenueAdapter>();
  private readonly producer: ExecuteProducer;
  private readonly sweeper: NodeJS.Timeout;
  private sweeping: Promise<void> | null = null;
  private readonly o: Required<Omit<ExecuteProcessorDeps, 'redisUrl' | 'ks' | 'pool' | 'adapters' | 'log' | 'now' | 'orderUpdates' | 'hot' | 'databaseUrl' | 'metrics'>>;
  /** Legs this process decided (metrics, tests). */
  decided = 0;
  /** Venue-side cancels this process carried out (metrics, tests). */
  cancelled = 0;
  /** The venues' later reports on decided orders; null when turned off. */
  readonly updates: OrderUpdates | null;
  private readonly refreshes: LiquidityRefreshRelay | null;

  constructor(private readonly d: ExecuteProcessorDeps) {
    this.o = {
      concurrency: d.concurrency ?? EXECUTE_DEFAULTS.concurrency,
      lockMs: d.lockMs ?? EXECUTE_DEFAULTS.lockMs,
      intentTtlMs: d.intentTtlMs ?? EXECUTE_DEFAULTS.intentTtlMs,
      sweepEveryMs: d.sweepEveryMs ?? EXECUTE_DEFAULTS.sweepEveryMs,
      sweepAfterMs: d.sweepAfterMs ?? EXECUTE_DEFAULTS.sweepAfterMs,
      contendedDelayMs: d.contendedDelayMs ?? EXECUTE_DEFAULTS.contendedDelayMs,
    };
    for (const a of d.adapters) if (a.describe().capabilities.orders.place) this.adapters.set(a.id, a);
    this.producer = new ExecuteProducer(d.redisUrl, d.ks);
    for (const partnerId of this.adapters.keys()) {
      const worker = new Worker<JobMap['execute']>(executeQueueName(partnerId), (job, token) => this.process(job, token), {
        ...queueOptions(d.redisUrl, d.ks),
        concurrency: this.o.concurrency,
        lockDuration: this.o.lockMs,
        stalledInterval: this.o.lockMs,
        maxStalledCount: 10,
        runRetryDelay: 250,
      });
      worker.on('failed', (job, err) => d.log.warn({ err, router_order_id: job?.data.router_order_id, partner_id: partnerId }, 'execute job failed; it is retried (or swept) and reconciles first'));
      this.workers.push(worker);
    }
    this.sweeper = setInterval(() => {
      this.sweeping ??= this.sweep()
        .then(() => undefined)
        .catch((err: unknown) => d.log.warn({ err }, 'the undecided-intent sweep failed; the next one retries'))
        .finally(() => (this.sweeping = null));
    }, this.o.sweepEveryMs);
    this.sweeper.unref();
    this.updates = d.orderUpdates === false ? null : new OrderUpdates({ pool: d.pool, adapters: [...this.adapters.values()], log: d.log, now: d.now, metrics: d.metrics, ...d.orderUpdates }).start();
    this.refreshes = d.hot ? new LiquidityRefreshRelay({ pool: d.pool, hot: d.hot, databaseUrl: d.databaseUrl ?? null, log: d.log }).start() : null;
  }

  /** The venues this process executes on. */
  get venues(): string[] {
    return [...this.adapters.keys()];
  }

  private async process(job: Job<JobMap['execute']>, token: string | undefined): Promise<LegRun> {
    const run = job.data.action === 'cancel' ? await this.runCancel(job.data.router_order_id) : await this.runLeg(job.data.router_order_id);
    if (run !== 'contended') return run;
    // Busy (account, venue): back to the queue shortly; this slot takes another account's job.
    await job.moveToDelayed(Date.now() + this.o.contendedDelayMs + Math.floor(Math.random() * this.o.contendedDelayMs), token);
    throw new DelayedError();
  }

  /** Runs one leg to its decision under the (account, venue) lock (see the module comment). */
  async runLeg(routerOrderId: string): Promise<LegRun> {
    const client = await this.d.pool.connect();
    let failed: unknown = undefined;
    try {
      const first = await loadIntent(client, routerOrderId);
      if (!first) {
        this.d.log.warn({ router_order_id: routerOrderId }, 'execute job for an order that is not a real-money intent; dropped');
        return 'missing';
      }
      if (first.exec_state === 'decided') return 'already_decided';
      const { router_account_id: account, partner_id: partner } = first;
      if (!(await tryLockLeg(client, account, partner))) return 'contended';
      try {
        // Read again under the lock: another holder may have decided it meanwhile.
        const intent = await loadIntent(client, routerOrderId);
        if (!intent || intent.exec_state === 'decided') return 'already_decided';
        const decision = await this.decide(client, intent);
        await recordDecision(client, routerOrderId, decision, this.d.now());
        this.decided++;
        return 'decided';
      } finally {
        await unlockLeg(client, account, partner);
      }
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      // A client that failed mid-way is destroyed, not pooled: its session (and any lock it may
      // still hold) ends with it.
      client.release(failed === undefined ? undefined : failed instanceof Error ? failed : true);
    }
  }

  /**
   * Carries out an order's venue-side cancel under the (account, venue) lock: the venue's answer
   * (cancelled, with whatever filled up to then) recorded with the release of the remainder and the
   * cancel finished, in one transaction. The order ended already (filled, or cancelled by another
   * way in) → the cancel is finished without a venue call: the caller reads how it ended.
   */
  async runCancel(routerOrderId: string): Promise<LegRun> {
    const client = await this.d.pool.connect();
    let failed: unknown = undefined;
    try {
      const first = await cancelTarget(client, routerOrderId);
      if (!first) return 'missing';
      if (!first.requested) return 'already_decided';
      if (!(await tryLockLeg(client, first.router_account_id, first.partner_id))) return 'contended';
      try {
        const t = await cancelTarget(client, routerOrderId);
        if (!t || !t.requested) return 'already_decided';
        await this.cancelAtVenue(client, t);
        this.cancelled++;
        return 'decided';
      } finally {
        await unlockLeg(client, first.router_account_id, first.partner_id);
      }
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      client.release(failed === undefined ? undefined : failed instanceof Error ? failed : true);
    }
  }

  private async cancelAtVenue(client: PoolClient, t: CancelTarget): Promise<void> {
    const id = t.router_order_id;
    if (!t.working || t.venue_order_id === null) return finishCancel(client, id, null);
    const adapter = this.adapters.get(t.partner_id);
    if (!adapter) throw new Error(`no adapter for ${t.partner_id} in this process`);
    if (!adapter.describe().capabilities.orders.cancel) return finishCancel(client, id, `${t.partner_id} cannot cancel orders`);
    let answer: VenueOrder;
    try {
      answer = await adapter.cancelOrder({ account_id: t.router_account_id, venue_order_id: t.venue_order_id });
    } catch (err) {
      // Retryable: the job is retried (the venue may or may not have cancelled: a retry asks again,
      // and the venue answers for the order as it stands). Not cancellable: it ended at the venue
      // (filled in the meantime): its record says how, and that is what is booked.
      if (!(err instanceof VenueError) || err.retryable) throw err;
      if (err.code !== VenueErrorCodes.orderNotCancellable) return finishCancel(client, id, `${err.code}: ${err.message}`);
      try {
        answer = await adapter.fetchOrder(t.router_account_id, t.venue_order_id);
      } catch (e) {
        if (!(e instanceof VenueError) || e.retryable) throw e;
        return finishCancel(client, id, `${e.code}: ${e.message}`);
      }
    }
    await recordVenueReport(client, { router_order_id: id }, answer, this.d.now(), { finishCancel: true });
  }

  /** Asks the venue (or, for an intent never sent past its TTL, decides without it). */
  private async decide(client: PoolClient, intent: Intent): Promise<LegDecision> {
    if (intent.exec_state === 'intent' && intent.age_ms > this.o.intentTtlMs) {
      return failedLeg(`not sent: no execute worker took this leg within ${Math.round(this.o.intentTtlMs / 1000)} s of the buy, and a leg is never placed that late`);
    }
    const adapter = this.adapters.get(intent.partner_id);
    if (!adapter) throw new Error(`no adapter for ${intent.partner_id} in this process`);
    await markSent(client, intent.router_order_id);
    failpoint('execute.before-place');
    let answer;
    try {
      answer = await adapter.placeOrder(venueRequest(intent));
    } catch (err) {
      // Retryable (a timeout, a rate limit, the venue briefly away): the venue may or may not hold
      // the order, so the job fails and its retry reconciles. Anything else refused the request
      // itself: no order exists.
      if (!(err instanceof VenueError) || err.retryable) throw err;
      return failedLeg(`the venue refused the order: ${err.code}: ${err.message}`);
    }
    failpoint('execute.after-place');
    return decideLeg(answer);
  }

  /** Enqueues undecided intents and waiting cancels of this process's venues again (a no-op for those already queued). */
  async sweep(): Promise<number> {
    const due = await undecidedIntents(this.d.pool, this.venues, this.o.sweepAfterMs, 500);
    for (const r of due) await this.producer.enqueue(r.partner_id, r.router_order_id);
    if (due.length > 0) this.d.log.info({ intents: due.length }, 'undecided real-money legs enqueued again');
    const cancels = await waitingCancels(this.d.pool, this.venues, this.o.sweepAfterMs, 500);
    for (const r of cancels) await this.producer.enqueueCancel(r.partner_id, r.router_order_id);
    if (cancels.length > 0) this.d.log.info({ cancels: cancels.length }, 'waiting venue-side cancels enqueued again');
    return due.length + cancels.length;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.sweeping;
    await this.updates?.close();
    await this.refreshes?.stop();
    await Promise.all(this.workers.map((w) => w.close()));
    await this.producer.close();
  }
}

/** The venue request of an intent: its client_order_id, the position it named, its size and the caller's max_price (the adapter grids it). */
export function venueRequest(intent: Intent): VenueOrderRequest {
  return {
    client_order_id: intent.client_order_id,
    account_id: intent.router_account_id,
    ...(intent.liquidity_hash !== null ? { liquidity_hash: intent.liquidity_hash } : { position_hash: intent.position_hash }),
    order_type: intent.order_type,
    ...(intent.send_amount !== null ? { amount: Number(intent.send_amount) } : { shares: Number(intent.send_shares) }),
    max_price: Number(intent.max_price),
    ...(intent.order_type === 'market' ? { time_in_force: 'ioc' as const } : {}),
  };
}
