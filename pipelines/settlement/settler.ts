/**
 * The order settler (the scheduler role; docs/orders.md "Settlement"): settles every order of a
 * contest its book has settled, from the results the recorder wrote to PostgreSQL.
 *
 * One order, one transaction: the account's lock, the order row (result, winnings, net_winnings,
 * settled_at, status closed; guarded by settled_at IS NULL, so a repeat is a no-op), what the result
 * moves (practice: the wallet's settlement_credit or refund; real: the venue connection's
 * balance_ledger settlement row and balance_version) and the events (order.settled; balance.update
 * cause settlement) in the outbox. A crash at any point leaves each order settled with all of that,
 * or not at all; a restarted settler finds the rest, so every order settles exactly once. Several
 * settlers may run (one per scheduler process): two that meet on an order serialize on its row and
 * the second finds it settled.
 *
 * A pass takes the pending settlements least recently worked on (new ones first) and works through
 * a bounded batch of each one's orders (a few in flight at once); a settlement whose orders are all
 * settled stops being pending. An order still working at its venue (fill unconfirmed, remainder
 * resting) waits, its settlement going to the back of the queue. The settler
 * wakes on NOTIFY when a settlement is recorded and polls as a fallback; every so often it re-opens
 * settlements an order turned up under after they were worked through.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { PRACTICE_PARTNER_ID, practiceAccountPartnerId, type BalanceUpdateEvent } from '../../src/domain/account.js';
import { orderSettledEvent, practiceEntryOf, settlementDescription, type SettledOrder } from '../../src/domain/settlement.js';
import { failpoint } from '../../src/failpoints.js';
import type { Logger } from '../../src/log.js';
import { singleMetric } from '../../src/metrics.js';
import { lockAccount } from '../../src/store/pg/accounts.js';
import { enqueueAccountEvent } from '../../src/store/pg/outbox.js';
import { landSettlement } from '../../src/store/pg/partners.js';
import { inTransaction, type Pool } from '../../src/store/pg/pool.js';
import {
  CONTEST_SETTLEMENTS_NOTIFY,
  finishSettlementPass,
  pendingSettlements,
  pendingSummary,
  reopenSettlements,
  settleableOrders,
  settleOrderRow,
  type PendingSettlement,
  type SettleableOrder,
} from '../../src/store/pg/settlement.js';
import { appendPracticeEntry } from '../../src/store/pg/wallet.js';
import { NotifiedLoop } from '../notified-loop.js';

export const SETTLER_DEFAULTS = {
  /** Orders read per batch of one settlement (bounds a query and the memory of a batch). */
  batchSize: 200,
  /** Orders settled at once (each its own transaction and connection). */
  concurrency: 4,
  /** Pending settlements taken per pass. */
  contestsPerPass: 20,
  pollMs: 5_000,
  reopenEveryMs: 60_000,
  retryBaseMs: 100,
  retryMaxMs: 5_000,
} as const;

export interface OrderSettlerOptions {
  pool: Pool;
  /** For the LISTEN session (a connection of its own); omit to poll only. */
  databaseUrl?: string;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  metrics?: Registry;
  batchSize?: number;
  concurrency?: number;
  contestsPerPass?: number;
  pollMs?: number;
  reopenEveryMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
}

export interface SettlerStats {
  /** Orders this settler settled (committed). */
  settled: number;
  passes: number;
  errors: number;
}

interface SettlerMetrics {
  settled: Counter<'result' | 'mode'>;
  errors: Counter;
  pending: Gauge;
  oldest: Gauge;
  delay: Histogram;
}

function settlerMetrics(registry: Registry): SettlerMetrics {
  const registers = [registry];
  return {
    settled: singleMetric(
      registry,
      'flow_settlement_orders_total',
      () => new Counter({ name: 'flow_settlement_orders_total', help: 'Orders settled, by result and mode', labelNames: ['result', 'mode'] as const, registers }),
    ),
    errors: singleMetric(
      registry,
      'flow_settlement_errors_total',
      () => new Counter({ name: 'flow_settlement_errors_total', help: 'Settler passes or order settlements that failed (retried)', registers }),
    ),
    pending: singleMetric(
      registry,
      'flow_settlement_pending_contests',
      () => new Gauge({ name: 'flow_settlement_pending_contests', help: 'Venue contest settlements whose orders are not all settled, at the last pass', registers }),
    ),
    oldest: singleMetric(
      registry,
      'flow_settlement_oldest_pending_seconds',
      () => new Gauge({ name: 'flow_settlement_oldest_pending_seconds', help: 'Age of the oldest pending venue contest settlement at the last pass (0: none)', registers }),
    ),
    delay: singleMetric(
      registry,
      'flow_settlement_delay_seconds',
      () =>
        new Histogram({
          name: 'flow_settlement_delay_seconds',
          help: 'Time from a venue settlement being recorded to one of its orders settling',
          buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300],
          registers,
        }),
    ),
  };
}

export class OrderSettler {
  readonly stats: SettlerStats = { settled: 0, passes: 0, errors: 0 };
  private readonly m: SettlerMetrics | null;
  private readonly loop: NotifiedLoop;
  private lastReopen = 0;

  constructor(private readonly o: OrderSettlerOptions) {
    this.m = o.metrics ? settlerMetrics(o.metrics) : null;
    this.loop = new NotifiedLoop({
      databaseUrl: o.databaseUrl ?? null,
      channel: CONTEST_SETTLEMENTS_NOTIFY,
      pollMs: o.pollMs ?? SETTLER_DEFAULTS.pollMs,
      retryBaseMs: o.retryBaseMs ?? SETTLER_DEFAULTS.retryBaseMs,
      retryMaxMs: o.retryMaxMs ?? SETTLER_DEFAULTS.retryMaxMs,
      log: o.log,
      step: () => this.pass(),
      onError: (err, failures, retryInMs) => {
        this.stats.errors++;
        this.m?.errors.inc();
        o.log.warn({ err, failures, retry_in_ms: retryInMs }, 'a settlement pass failed; what it did not settle is retried');
      },
    });
  }

  private get batchSize(): number {
    return this.o.batchSize ?? SETTLER_DEFAULTS.batchSize;
  }

  start(): this {
    this.loop.start();
    this.o.log.info({ batch_size: this.batchSize, poll_ms: this.o.pollMs ?? SETTLER_DEFAULTS.pollMs, listen: this.loop.listens }, 'order settler running');
    return this;
  }

  /** Finishes the orders in flight and stops. */
  async stop(): Promise<void> {
    await this.loop.stop();
    this.o.log.info({ settled: this.stats.settled }, 'order settler stopped');
  }

  /**
   * One pass: pending settlements, each worked through a batch of orders. Returns whether
   * more work is known to be waiting (a full batch, or as many settlements as a pass takes).
   */
  async pass(): Promise<boolean> {
    this.stats.passes++;
    const now = Date.now();
    if (now - this.lastReopen >= (this.o.reopenEveryMs ?? SETTLER_DEFAULTS.reopenEveryMs)) {
      const reopened = await reopenSettlements(this.o.pool);
      this.lastReopen = now;
      if (reopened > 0) this.o.log.info({ task: 'settlement', reopened }, 'settlements re-opened for orders written after them');
    }
    const limit = this.o.contestsPerPass ?? SETTLER_DEFAULTS.contestsPerPass;
    const pending = await pendingSettlements(this.o.pool, limit);
    let full = false;
    let progress = false;
    for (const p of pending) {
      if (this.loop.stopping) return false;
      const r = await this.settleBatch(p);
      full ||= r.full;
      progress ||= r.progress;
    }
    if (this.m) {
      const summary = await pendingSummary(this.o.pool);
      this.m.pending.set(summary.contests);
      this.m.oldest.set(summary.oldest_age_ms / 1000);
    }
    // More waits behind a full batch, or behind a full pass that got somewhere (a pass of settlements
    // whose orders all still wait at their venues is no reason to go again at once).
    return full || (pending.length === limit && progress);
  }

  /** Runs passes until one finds nothing more to do (tests, and a drain before stopping). */
  async drain(): Promise<void> {
    while (await this.pass());
  }

  /** One batch of a settlement's orders: whether a full batch settled orders (more may wait), and whether it settled or finished anything. */
  private async settleBatch(p: PendingSettlement): Promise<{ full: boolean; progress: boolean }> {
    const started = Date.now();
    const orders = await settleableOrders(this.o.pool, p, this.batchSize);
    const byResult: Record<string, number> = {};
    let next = 0;
    let failed = 0;
    const worker = async () => {
      while (next < orders.length && !this.loop.stopping) {
        const o = orders[next++]!;
        let settled: SettledOrder | null;
        try {
          settled = await this.settleOne(o);
        } catch (err) {
          // This order stays unsettled, and so its settlement pending: the next pass tries it again.
          failed++;
          this.stats.errors++;
          this.m?.errors.inc();
          this.o.log.warn({ err, task: 'settlement', router_order_id: o.router_order_id, partner_id: p.partner_id, contest_id: p.contest_id }, 'settling an order failed; retried on the next pass');
          continue;
        }
        if (settled) {
          byResult[settled.result] = (byResult[settled.result] ?? 0) + 1;
          this.m?.delay.observe((p.age_ms + Date.now() - started) / 1000);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? SETTLER_DEFAULTS.concurrency, orders.length) }, worker));
    const full = orders.length === this.batchSize;
    // A full batch comes back next pass as it is; otherwise the settlement is done, or waits behind the others.
    const cleared = !full && !this.loop.stopping ? await finishSettlementPass(this.o.pool, p) : false;
    const settled = Object.values(byResult).reduce((a, b) => a + b, 0);
    if (settled > 0 || cleared || failed > 0) {
      this.o.log.info({ task: 'settlement', partner_id: p.partner_id, contest_id: p.contest_id, settled, by_result: byResult, failed, done: cleared, ms: Date.now() - started }, 'orders settled');
    } else {
      this.o.log.debug({ task: 'settlement', partner_id: p.partner_id, contest_id: p.contest_id }, 'a settlement’s orders are still working at their venue');
    }
    // A full batch that settled nothing (every order failed, or another settler had them) is no reason to hurry back.
    return { full: full && settled > 0, progress: settled > 0 || cleared };
  }

  /** Settles one order in its own transaction; null when there was nothing to do (settled already, or working). */
  private async settleOne(o: SettleableOrder): Promise<SettledOrder | null> {
    const settled = await inTransaction(this.o.pool, async (c) => {
      // The account first, as every writer of its wallet and orders takes it, so none deadlocks with this.
      await lockAccount(c, o.router_account_id);
      const s = await settleOrderRow(c, o.router_order_id);
      if (!s) return null;
      if (s.mode === 'paper') {
        const type = practiceEntryOf(s);
        if (type) {
          // Owed money: no deposit cap refuses it.
          const e = await appendPracticeEntry(c, s.router_account_id, { type, amount: s.winnings, router_order_id: s.router_order_id, description: settlementDescription(s) }, null);
          if (e.outcome !== 'ok') throw new Error(`crediting the practice wallet of ${s.router_account_id} for ${s.router_order_id} failed: ${e.outcome}`);
          const event: BalanceUpdateEvent = {
            type: 'balance.update',
            account_partner_id: practiceAccountPartnerId(s.router_account_id),
            partner_id: PRACTICE_PARTNER_ID,
            currency: 'ATLAS',
            balance: Number(e.balance_after),
            venue_balance: Number(e.balance_after),
            pending: 0,
            balance_version: e.seq,
            balance_as_of: e.created_at,
            cause: 'settlement',
            router_order_id: s.router_order_id,
            timestamp: s.settled_at,
          };
          await enqueueAccountEvent(c, s.router_account_id, 'balance', event);
        }
      } else if (s.pays) {
        const landed = await landSettlement(c, { routerAccountId: s.router_account_id, partnerId: s.partner_id, routerOrderId: s.router_order_id, amount: s.winnings, at: s.settled_at });
        if (!landed.connection) this.o.log.warn({ router_order_id: s.router_order_id, router_account_id: s.router_account_id, partner_id: s.partner_id }, 'a settled real order has no venue connection to credit; the order settled, no balance moved');
      }
      await enqueueAccountEvent(c, s.router_account_id, 'orders', orderSettledEvent(s));
      return s;
    });
    if (settled) {
      this.stats.settled++;
      this.m?.settled.inc({ result: settled.result, mode: settled.mode });
      failpoint('settle.after-order');
    }
    return settled;
  }
}
