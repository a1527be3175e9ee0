/**
 * Real-money legs from intent to decision (migration 10; docs/orders.md "Real-money legs").
 *
 * 1. The buy writes the leg's order row as an intent (exec_state 'intent', leg_status pending)
 *    before any venue sees it, with the client_order_id the venue will be sent.
 * 2. The execute worker takes the (account, venue) lock (tryLockLeg), marks the intent 'sent'
 *    (committed) and calls the venue.
 * 3. It records the venue's answer (recordDecision) in one transaction: the order row decided, the
 *    ledger hold, the connection's balance_version bumped, order.update and balance.update in the
 *    outbox, and a NOTIFY that wakes the buy waiting for it (OrderDecisions).
 * A worker that dies between 2 and 3 leaves the intent 'sent': the next attempt reconciles by
 * placing again under the same client_order_id (the venue answers with the order it has).
 */
import type { LegDecision } from '../../domain/execution.js';
import type { LegRejectCode, OrderType } from '../../domain/orders.js';
import { orderUpdateEvent, type RouterOrder } from '../../domain/router-orders.js';
import type { BalanceUpdateEvent } from '../../domain/account.js';
import type { Logger } from '../../log.js';
import { requestLiquidityRefresh } from './liquidity-refresh.js';
import { listen, type Listening } from './listen.js';
import { SELECT_ORDERS, toOrder, type OrderRow } from './orders.js';
import { enqueueAccountEvent } from './outbox.js';
import { iso, sinceSnapshot } from './partners.js';
import type { Pool, PoolClient } from './pool.js';

type Queryable = Pool | PoolClient;

/** The NOTIFY channel a decision is announced on (payload: the router_order_id). */
export const ORDER_DECIDED_NOTIFY = 'order_decided';
/** Seed of the (account, venue) advisory lock keys (the Idempotency-Key locks use 727003). */
const LEG_LOCK_SEED = 727004;

export type ExecState = 'intent' | 'sent' | 'decided';

/** What the execute worker needs to place a leg. */
export interface Intent {
  router_order_id: string;
  router_account_id: string;
  partner_id: string;
  client_order_id: string;
  position_hash: string;
  liquidity_hash: string | null;
  order_type: OrderType;
  /** The caller's max_price: the adapter puts it onto the venue's grid as preflight did. */
  max_price: string;
  send_amount: string | null;
  send_shares: string | null;
  exec_state: ExecState;
  attempts: number;
  /** How long ago the intent was written, by PostgreSQL's clock. */
  age_ms: number;
}

/** The intent of a real-money order, or null when there is none of that id (or it is a paper order). */
export async function loadIntent(db: Queryable, routerOrderId: string): Promise<Intent | null> {
  const { rows } = await db.query<Intent>(
    `SELECT router_order_id, router_account_id, partner_id, client_order_id, position_hash, liquidity_hash, order_type, max_price::text AS max_price,
            send_amount::text AS send_amount, send_shares::text AS send_shares, exec_state, attempts,
            (extract(epoch FROM clock_timestamp() - created_at) * 1000)::float8 AS age_ms
       FROM orders WHERE router_order_id = $1 AND mode = 'real'`,
    [routerOrderId],
  );
  return rows[0] ?? null;
}

/**
 * Takes the (account, venue) lock without waiting: a session-level advisory lock on `client`'s
 * connection. One session holds it at a time however many execute processes run; a process that
 * dies loses its session and with it the lock; a live holder never loses it to a timeout.
 */
export async function tryLockLeg(client: PoolClient, routerAccountId: string, partnerId: string): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended($1 || '/' || $2, ${LEG_LOCK_SEED})) AS ok`, [routerAccountId, partnerId]);
  return rows[0]!.ok;
}

export async function unlockLeg(client: PoolClient, routerAccountId: string, partnerId: string): Promise<void> {
  await client.query(`SELECT pg_advisory_unlock(hashtextextended($1 || '/' || $2, ${LEG_LOCK_SEED}))`, [routerAccountId, partnerId]);
}

/** Marks a venue call about to happen (committed before it): from now on the venue may hold the order. */
export async function markSent(db: Queryable, routerOrderId: string): Promise<void> {
  await db.query(
    `UPDATE orders SET exec_state = 'sent', attempts = attempts + 1, sent_at = coalesce(sent_at, clock_timestamp()), updated_at = clock_timestamp()
      WHERE router_order_id = $1 AND exec_state <> 'decided'`,
    [routerOrderId],
  );
}

/**
 * Records a leg's decision in one transaction on `client` (which may hold the leg's lock):
 *
 * - the order row: decided, with what filled, its fee, and unfilled_notional = requested − booked
 *   (an amount leg: its amount; a shares leg: its contracts at the limit), in numeric;
 * - the ledger (balance_ledger, the connection's): one `hold` row, negative, of what the order
 *   commits (LegDecision.hold: booked notional + fee, plus resting contracts × limit, or the plan's
 *   commitment while a fill is pending), dated with the venue's time of the booking, so that
 *   expected_balance = snapshot + rows after it counts it exactly until a snapshot taken after
 *   the booking shows it; a failed leg writes none;
 * - with a hold, the connection's balance_version + 1 and a balance.update (cause order_hold) when
 *   the connection has a balance figure (a venue that reports none has no expected figure to send);
 * - order.update on the orders channel; NOTIFY order_decided;
 * - when something filled, a liquidity refresh of the order's contest (liquidity-refresh.ts).
 *
 * Returns the order, or null when it was decided already (by an earlier attempt).
 */
export async function recordDecision(client: PoolClient, routerOrderId: string, d: LegDecision, nowMs: number): Promise<RouterOrder | null> {
  const timestamp = new Date(nowMs).toISOString();
  await client.query('BEGIN');
  try {
    const updated = await client.query<{ router_account_id: string; partner_id: string; contest_id: string; hold: string | null }>(
      `WITH u AS (
         SELECT router_order_id,
                greatest(0, CASE WHEN requested_amount IS NOT NULL THEN requested_amount - $6::numeric
                                 ELSE round((send_shares - $7::numeric) * limit_price, 6) END) AS unfilled
           FROM orders WHERE router_order_id = $1
       )
       UPDATE orders o
          SET exec_state = 'decided', decided_at = clock_timestamp(), updated_at = clock_timestamp(),
              leg_status = $2, status = $3, fill_status = $4, venue_order_id = coalesce($5, o.venue_order_id),
              filled_notional = $6::numeric, filled_shares = $7::numeric, avg_price = $8::numeric, fee = $9::numeric,
              unfilled_notional = u.unfilled, amount = $6::numeric + u.unfilled,
              rejected_code = $10, rejected_reason = $11
         FROM u
        WHERE o.router_order_id = u.router_order_id AND o.exec_state <> 'decided'
       RETURNING o.router_account_id, o.partner_id, o.contest_id,
                 (CASE $12::text
                    WHEN 'booked' THEN $6::numeric + $9::numeric
                    WHEN 'booked_and_resting' THEN $6::numeric + $9::numeric + round($13::numeric * coalesce($14::numeric, o.limit_price), 6)
                    WHEN 'commitment' THEN o.commitment
                  END)::text AS hold`,
      [
        routerOrderId,
        d.leg_status,
        d.status,
        d.fill_status,
        d.venue_order_id,
        d.filled_notional,
        d.filled_shares,
        d.avg_price,
        d.fee,
        d.rejected_code,
        d.rejected_reason,
        d.hold,
        d.resting_contracts,
        d.limit_price,
      ],
    );
    const row = updated.rows[0];
    if (!row) {
      await client.query('ROLLBACK');
      return null;
    }
    const { router_account_id: account, partner_id: partner } = row;
    if (row.hold !== null && Number(row.hold) > 0) {
      const held = await client.query(
        `INSERT INTO balance_ledger (account_partner_id, kind, amount, router_order_id, created_at)
         SELECT ap.account_partner_id, 'hold', -($3::numeric), $4, coalesce(to_timestamp($5::float8 / 1000), clock_timestamp())
           FROM account_partners ap WHERE ap.router_account_id = $1 AND ap.partner_id = $2`,
        [account, partner, row.hold, routerOrderId, d.at_ms],
      );
      if (held.rowCount === 1) await balanceEvent(client, account, partner, routerOrderId, timestamp, 'order_hold');
    }
    // Something filled at once: the venue's book changed before any quote says so.
    if (d.filled_shares !== '0') await requestLiquidityRefresh(client, row.contest_id);
    const order = (await client.query<OrderRow>(`${SELECT_ORDERS('orders')} WHERE o.router_order_id = $1`, [routerOrderId])).rows[0]!;
    const decided = toOrder(order);
    await enqueueAccountEvent(client, account, 'orders', orderUpdateEvent(decided, timestamp));
    await client.query('SELECT pg_notify($1, $2)', [ORDER_DECIDED_NOTIFY, routerOrderId]);
    await client.query('COMMIT');
    return decided;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * The connection's balance_version + 1 and its balance.update, when it has a figure: cause
 * order_hold for funds an order holds (more), release for funds it gives back.
 */
export async function balanceEvent(client: PoolClient, account: string, partner: string, routerOrderId: string, timestamp: string, cause: 'order_hold' | 'release'): Promise<void> {
  const { rows } = await client.query<{ account_partner_id: string; balance_version: number; balance: string; expected: string; pending: string; balance_as_of: string }>(
    `UPDATE account_partners ap SET balance_version = ap.balance_version + 1, updated_at = now()
      WHERE ap.router_account_id = $1 AND ap.partner_id = $2 AND ap.balance_source IS NOT NULL AND ap.balance IS NOT NULL
      RETURNING ap.account_partner_id, ap.balance_version, ap.balance::text AS balance,
                (ap.balance + ${sinceSnapshot('ap')})::text AS expected, ${sinceSnapshot('ap')}::text AS pending, ${iso('ap.balance_as_of')} AS balance_as_of`,
    [account, partner],
  );
  const r = rows[0];
  if (!r) return;
  const event: BalanceUpdateEvent = {
    type: 'balance.update',
    account_partner_id: r.account_partner_id,
    partner_id: partner,
    currency: 'USD',
    balance: Number(r.expected),
    venue_balance: Number(r.balance),
    pending: Number(r.pending),
    balance_version: r.balance_version,
    balance_as_of: r.balance_as_of,
    cause,
    router_order_id: routerOrderId,
    timestamp,
  };
  await enqueueAccountEvent(client, account, 'balance', event);
}

/** Undecided intents on `partnerIds` written more than `olderThanMs` ago, oldest first (the execute role's sweep). */
export async function undecidedIntents(db: Queryable, partnerIds: readonly string[], olderThanMs: number, limit: number): Promise<{ router_order_id: string; partner_id: string }[]> {
  if (partnerIds.length === 0) return [];
  const { rows } = await db.query<{ router_order_id: string; partner_id: string }>(
    `SELECT router_order_id, partner_id FROM orders
      WHERE exec_state <> 'decided' AND partner_id = ANY($1::text[]) AND created_at < clock_timestamp() - $2 * interval '1 millisecond'
      ORDER BY created_at LIMIT $3`,
    [partnerIds, olderThanMs, limit],
  );
  return rows;
}

/** An order a buy wrote for one of its legs, with how far its execution got. */
export interface BuyLegOrder {
  order: RouterOrder;
  leg_index: number;
  sor_decision_id: string;
  exec_state: ExecState;
  rejected_code: LegRejectCode | null;
  rejected_reason: string | null;
}

const buyLegOrder = (r: OrderRow): BuyLegOrder => ({
  order: toOrder(r),
  leg_index: r.leg_index,
  sor_decision_id: r.sor_decision_id,
  exec_state: r.exec_state,
  rejected_code: r.rejected_code as LegRejectCode | null,
  rejected_reason: r.rejected_reason,
});

/** The orders a buy (account, Idempotency-Key) wrote, by leg index: what a resumed buy starts from. */
export async function ordersOfBuy(db: Queryable, routerAccountId: string, idempotencyKey: string): Promise<Map<number, BuyLegOrder>> {
  const { rows } = await db.query<OrderRow>(`${SELECT_ORDERS('orders')} WHERE o.router_account_id = $1 AND o.idempotency_key = $2`, [routerAccountId, idempotencyKey]);
  return new Map(rows.map((r) => [r.leg_index, buyLegOrder(r)]));
}

/** One order with its execution state. */
export async function buyLegOrderOf(db: Queryable, routerOrderId: string): Promise<BuyLegOrder | null> {
  const { rows } = await db.query<OrderRow>(`${SELECT_ORDERS('orders')} WHERE o.router_order_id = $1`, [routerOrderId]);
  return rows[0] ? buyLegOrder(rows[0]) : null;
}

/** Which of `ids` are decided. */
async function decidedAmong(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(`SELECT router_order_id AS id FROM orders WHERE router_order_id = ANY($1::text[]) AND exec_state = 'decided'`, [ids]);
  return rows.map((r) => r.id);
}

/** Something an order waits for: the NOTIFY that announces it, and which orders have it (the poll behind the NOTIFY). */
export interface OrderSignal {
  channel: string;
  done(db: Queryable, ids: readonly string[]): Promise<string[]>;
}

/**
 * Waits for orders to reach a state (a decision; a venue-side cancel finished), whichever process
 * gets them there: woken by the NOTIFY of that process's transaction (one LISTEN session per
 * waiter, opened on first use), with a poll as the fallback for a notification lost while the
 * session was down.
 */
export class OrderWaits {
  private readonly waiters = new Map<string, Set<(decided: boolean) => void>>();
  private session: Listening | null = null;
  private poll: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly databaseUrl: string,
    private readonly signal: OrderSignal,
    private readonly opts: { pollMs?: number; log?: Pick<Logger, 'warn'> } = {},
  ) {}

  /** Resolves true once the order has the state, false when `timeoutMs` passes first. */
  wait(routerOrderId: string, timeoutMs: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.session ??= listen(this.databaseUrl, this.signal.channel, (id) => (id === undefined ? void this.check() : this.wake(id)), { log: this.opts.log });
    return new Promise<boolean>((resolve) => {
      let set = this.waiters.get(routerOrderId);
      if (!set) this.waiters.set(routerOrderId, (set = new Set()));
      const finish = (decided: boolean) => {
        clearTimeout(timer);
        set.delete(onDecided);
        if (set.size === 0 && this.waiters.get(routerOrderId) === set) this.waiters.delete(routerOrderId);
        if (this.waiters.size === 0 && this.poll) {
          clearInterval(this.poll);
          this.poll = null;
        }
        resolve(decided);
      };
      const onDecided = (decided: boolean) => finish(decided);
      set.add(onDecided);
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.poll ??= setInterval(() => void this.check(), this.opts.pollMs ?? 1_000);
      // Decided before this process listened (or before this wait began).
      void this.check([routerOrderId]);
    });
  }

  private wake(id: string): void {
    for (const f of [...(this.waiters.get(id) ?? [])]) f(true);
  }

  private async check(ids: readonly string[] = [...this.waiters.keys()]): Promise<void> {
    try {
      for (const id of await this.signal.done(this.pool, ids)) this.wake(id);
    } catch (err) {
      this.opts.log?.warn({ err, channel: this.signal.channel }, 'reading the state of awaited orders failed; the next poll retries');
    }
  }

  /** Stops listening; waits still pending resolve false at once. */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of [...this.waiters.values()]) for (const f of [...set]) f(false);
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    await this.session?.close();
    this.session = null;
  }
}

/** Waits for real-money legs to be decided (the buy's wait). */
export class OrderDecisions extends OrderWaits {
  constructor(pool: Pool, databaseUrl: string, opts: { pollMs?: number; log?: Pick<Logger, 'warn'> } = {}) {
    super(pool, databaseUrl, { channel: ORDER_DECIDED_NOTIFY, done: decidedAmong }, opts);
  }
}
