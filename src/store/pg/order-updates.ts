/**
 * A real-money order after its decision (migration 12; docs/orders.md "Later fills"): what its
 * venue reports later (a partial or full fill of a resting order, the fill of a pending one, the
 * end of its remainder) is recorded here, in one transaction per report:
 *
 * - the order row (row-locked, so reports of one order land one at a time): figures, statuses,
 *   cancelled_at when the remainder ended, unfilled_notional and amount as recordDecision computes them;
 * - balance_ledger rows that move what the order holds to what it should hold now (booked notional
 *   + fee, plus what still works): kind `hold` when it holds more (a fee on a fill), `release` when
 *   it holds less (a cancelled remainder, a fill cheaper than its limit, a pending order's estimate
 *   corrected); the fill's movement and the end of the remainder's are separate rows. Each with the
 *   connection's balance_version + 1 and balance.update;
 * - order.update on the orders channel;
 * - a liquidity refresh of the contest when more contracts filled.
 *
 * The guard (updateWorkingOrder): a report lands only while the order works, and only with more
 * filled contracts than recorded or an end. What an order holds is the sum of its ledger rows, so
 * the hold is moved by the difference and never counted twice, however often a report arrives.
 */
import { holdMoves, isWorking, updateWorkingOrder, type OrderUpdate, type VenueAnswer, type WorkingOrder } from '../../domain/execution.js';
import { microsText, parseMicros } from '../../domain/money.js';
import { orderUpdateEvent, type RouterOrder } from '../../domain/router-orders.js';
import { balanceEvent } from './executions.js';
import { requestLiquidityRefresh } from './liquidity-refresh.js';
import { SELECT_ORDERS, toOrder, type OrderRow } from './orders.js';
import { enqueueAccountEvent } from './outbox.js';
import type { Pool, PoolClient } from './pool.js';

type Queryable = Pool | PoolClient;

/** The NOTIFY channel a finished venue-side cancel is announced on (payload: the router_order_id). */
export const ORDER_CANCEL_NOTIFY = 'order_cancel_done';

/** Which order a report is about: ours by id, or the venue's by client_order_id (unique) or its own id. */
export type ReportTarget = { router_order_id: string } | { partner_id: string; client_order_id: string; venue_order_id: string };

export type ReportOutcome =
  | { outcome: 'applied'; order: RouterOrder }
  /** The report changes nothing (seen before, older than what is recorded, or the order no longer works). */
  | { outcome: 'unchanged' }
  /** The order's placement is not decided yet: the report must wait for the decision. */
  | { outcome: 'not_decided' }
  /** No real-money order of ours matches. */
  | { outcome: 'unknown' };

interface LockedOrder extends WorkingOrder {
  router_order_id: string;
  router_account_id: string;
  partner_id: string;
  contest_id: string;
  exec_state: string;
  /** Booked notional + fee as recorded. */
  booked: string;
}

async function lockOrder(client: PoolClient, t: ReportTarget): Promise<LockedOrder | null> {
  const cols = `router_order_id, router_account_id, partner_id, contest_id, exec_state, leg_status, cancelled_at IS NOT NULL AS cancelled,
                filled_shares::text AS filled_shares, limit_price::text AS limit_price, commitment::text AS commitment,
                (filled_notional + fee)::text AS booked`;
  let where: string;
  let params: unknown[];
  if ('router_order_id' in t) [where, params] = ['router_order_id = $1', [t.router_order_id]];
  else if (t.client_order_id !== '') [where, params] = ['client_order_id = $1 AND partner_id = $2', [t.client_order_id, t.partner_id]];
  else if (t.venue_order_id !== '') [where, params] = ['partner_id = $1 AND venue_order_id = $2', [t.partner_id, t.venue_order_id]];
  else return null;
  const { rows } = await client.query<LockedOrder>(`SELECT ${cols} FROM orders WHERE ${where} AND mode = 'real' FOR UPDATE`, params);
  return rows[0] ?? null;
}

/**
 * Records a venue report on an order in one transaction on `client` (see the module comment).
 * `finishCancel`: the report is the outcome of the order's venue-side cancel, which is finished
 * with it (cancel_requested_at cleared, `cancelError` kept, NOTIFY ORDER_CANCEL_NOTIFY), whether or
 * not the report changes the order.
 */
export async function recordVenueReport(
  client: PoolClient,
  target: ReportTarget,
  a: VenueAnswer,
  nowMs: number,
  opts: { finishCancel?: boolean; cancelError?: string | null } = {},
): Promise<ReportOutcome> {
  const timestamp = new Date(nowMs).toISOString();
  await client.query('BEGIN');
  try {
    const cur = await lockOrder(client, target);
    if (!cur || cur.exec_state !== 'decided') {
      await client.query('ROLLBACK');
      return { outcome: cur ? 'not_decided' : 'unknown' };
    }
    const id = cur.router_order_id;
    const u = updateWorkingOrder(cur, a);
    if (!u && !opts.finishCancel) {
      await client.query('ROLLBACK');
      return { outcome: 'unchanged' };
    }
    if (u) {
      await client.query(
        `WITH u AS (
           SELECT router_order_id,
                  greatest(0, CASE WHEN requested_amount IS NOT NULL THEN requested_amount - $6::numeric
                                   ELSE round((coalesce(send_shares, requested_shares) - $7::numeric) * coalesce(limit_price, max_price), 6) END) AS unfilled
             FROM orders WHERE router_order_id = $1
         )
         UPDATE orders o
            SET leg_status = $2, status = $3, fill_status = $4, venue_order_id = coalesce(o.venue_order_id, $5),
                filled_notional = $6::numeric, filled_shares = $7::numeric, avg_price = $8::numeric, fee = $9::numeric,
                unfilled_notional = u.unfilled, amount = $6::numeric + u.unfilled,
                rejected_code = CASE WHEN $2 = 'failed' THEN $10 ELSE o.rejected_code END,
                rejected_reason = CASE WHEN $2 = 'failed' THEN $11 ELSE o.rejected_reason END,
                cancelled_at = CASE WHEN $12::boolean THEN clock_timestamp() ELSE o.cancelled_at END,
                updated_at = clock_timestamp(), reconciled_at = clock_timestamp()
           FROM u WHERE o.router_order_id = u.router_order_id`,
        [id, u.leg_status, u.status, u.fill_status, u.venue_order_id, u.filled_notional, u.filled_shares, u.avg_price, u.fee, u.rejected_code, u.rejected_reason, u.cancelled],
      );
      await moveHold(client, cur, u, timestamp);
      if (u.filled_more) await requestLiquidityRefresh(client, cur.contest_id);
    }
    if (opts.finishCancel) await finishCancelIn(client, id, opts.cancelError ?? null);
    const row = (await client.query<OrderRow>(`${SELECT_ORDERS('orders')} WHERE o.router_order_id = $1`, [id])).rows[0]!;
    const order = toOrder(row);
    if (u) await enqueueAccountEvent(client, cur.router_account_id, 'orders', orderUpdateEvent(order, timestamp));
    await client.query('COMMIT');
    return u ? { outcome: 'applied', order } : { outcome: 'unchanged' };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * Moves what the order holds on its connection to what the report says it holds, with a ledger row
 * per movement (holdMoves: the fill's, then the end of the remainder's; none when nothing moves),
 * each announced with the connection's balance_version + 1 and a balance.update (order_hold or
 * release). A row is dated with the venue's time of the report, or, when it corrects a pending
 * order's estimate, with the original hold (the venue took the actual cost when it accepted the
 * order), so expected_balance compares it with the venue's snapshots on the venue's clock.
 */
async function moveHold(client: PoolClient, o: LockedOrder, u: OrderUpdate, timestamp: string): Promise<void> {
  const { rows } = await client.query<{ net: string }>(
    `SELECT coalesce(sum(amount), 0)::text AS net FROM balance_ledger WHERE router_order_id = $1 AND kind IN ('hold', 'release')`,
    [o.router_order_id],
  );
  // The ledger holds funds as negative rows: what the order holds now is minus their sum.
  const held = microsText(-parseMicros(rows[0]!.net).micros);
  const booked = microsText(parseMicros(u.filled_notional).micros + parseMicros(u.fee).micros);
  const moves = holdMoves({ held, booked_before: o.booked, booked_after: booked, new_contracts: u.new_contracts, limit_price: o.limit_price, holds: u.holds, corrects_estimate: u.corrects_estimate });
  for (const delta of moves) {
    const inserted = await client.query(
      `INSERT INTO balance_ledger (account_partner_id, kind, amount, router_order_id, created_at)
       SELECT ap.account_partner_id, $3, $4::numeric, $5,
              coalesce(CASE WHEN $6::boolean THEN (SELECT min(created_at) FROM balance_ledger WHERE router_order_id = $5 AND kind = 'hold') END,
                       to_timestamp($7::float8 / 1000), clock_timestamp())
         FROM account_partners ap WHERE ap.router_account_id = $1 AND ap.partner_id = $2`,
      [o.router_account_id, o.partner_id, delta > 0n ? 'hold' : 'release', microsText(-delta), o.router_order_id, u.corrects_estimate, u.at_ms],
    );
    if (inserted.rowCount === 1) await balanceEvent(client, o.router_account_id, o.partner_id, o.router_order_id, timestamp, delta > 0n ? 'order_hold' : 'release');
  }
}

// ---- the reconcile ----------------------------------------------------------------------------

/** A working order as the reconcile asks its venue about it. */
export interface WorkingAtVenue {
  router_order_id: string;
  router_account_id: string;
  partner_id: string;
  venue_order_id: string;
}

/**
 * Up to `limit` orders working at `partnerIds` (a resting remainder, an unconfirmed fill) not
 * compared with their venue within `notWithinMs`, least recently compared first.
 */
export async function workingOrders(db: Queryable, partnerIds: readonly string[], notWithinMs: number, limit: number): Promise<WorkingAtVenue[]> {
  if (partnerIds.length === 0) return [];
  const { rows } = await db.query<WorkingAtVenue>(
    `SELECT router_order_id, router_account_id, partner_id, venue_order_id FROM orders
      WHERE mode = 'real' AND exec_state = 'decided' AND leg_status IN ('resting', 'pending') AND cancelled_at IS NULL
        AND partner_id = ANY($1::text[]) AND venue_order_id IS NOT NULL
        AND (reconciled_at IS NULL OR reconciled_at < clock_timestamp() - $2 * interval '1 millisecond')
      ORDER BY reconciled_at NULLS FIRST, router_order_id LIMIT $3`,
    [partnerIds, notWithinMs, limit],
  );
  return rows;
}

/** Stamps orders as compared with their venue now (those whose report changed nothing, or could not be read). */
export async function markReconciled(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query('UPDATE orders SET reconciled_at = clock_timestamp() WHERE router_order_id = ANY($1::text[])', [ids]);
}

// ---- the venue-side cancel ---------------------------------------------------------------------

export type CancelRequest =
  /** Ended here: the order never reached a venue (no venue order id), so nothing there can fill it. */
  | { outcome: 'cancelled'; order: RouterOrder }
  /** Asked of the venue: a job on its execute queue carries it out. */
  | { outcome: 'requested'; partner_id: string }
  | { outcome: 'not_found' | 'not_resting' | 'venue_cancel_unavailable' };

/**
 * POST orders/cancel, in the caller's transaction: the account's order, locked. A resting order
 * still working at its venue is marked cancel-requested (a repeat while one is asked joins it) unless
 * its venue cannot cancel (partner order_config.cancel_supported false: venue_cancel_unavailable);
 * one resting that never reached a venue ends here; anything else is not resting (filled, cancelled,
 * a market order, every practice order).
 */
export async function requestCancel(client: PoolClient, routerAccountId: string, routerOrderId: string): Promise<CancelRequest> {
  const { rows } = await client.query<{ leg_status: string; cancelled: boolean; venue_order_id: string | null; partner_id: string; cancel_supported: boolean }>(
    `SELECT o.leg_status, o.cancelled_at IS NOT NULL AS cancelled, o.venue_order_id, o.partner_id,
            coalesce((p.order_config ->> 'cancel_supported')::boolean, false) AS cancel_supported
       FROM orders o LEFT JOIN partners p ON p.partner_id = o.partner_id
      WHERE o.router_order_id = $1 AND o.router_account_id = $2
        FOR UPDATE OF o`,
    [routerOrderId, routerAccountId],
  );
  const o = rows[0];
  if (!o) return { outcome: 'not_found' };
  if (o.leg_status !== 'resting' || o.cancelled) return { outcome: 'not_resting' };
  if (o.venue_order_id === null) {
    const ended = await client.query<OrderRow>(
      `WITH o AS (
         UPDATE orders SET cancelled_at = clock_timestamp(), updated_at = clock_timestamp(),
                           status = CASE WHEN filled_notional > 0 THEN 'open' ELSE 'closed' END
          WHERE router_order_id = $1 RETURNING *)
       ${SELECT_ORDERS('o')}`,
      [routerOrderId],
    );
    return { outcome: 'cancelled', order: toOrder(ended.rows[0]!) };
  }
  if (!o.cancel_supported) return { outcome: 'venue_cancel_unavailable' };
  await client.query(
    `UPDATE orders SET cancel_requested_at = coalesce(cancel_requested_at, clock_timestamp()), cancel_error = NULL, updated_at = clock_timestamp() WHERE router_order_id = $1`,
    [routerOrderId],
  );
  return { outcome: 'requested', partner_id: o.partner_id };
}

/** What the cancel job needs: the order at its venue, whether a cancel is still asked, and whether it still works. */
export interface CancelTarget {
  router_order_id: string;
  router_account_id: string;
  partner_id: string;
  venue_order_id: string | null;
  requested: boolean;
  working: boolean;
}

export async function cancelTarget(db: Queryable, routerOrderId: string): Promise<CancelTarget | null> {
  const { rows } = await db.query<CancelTarget & { leg_status: WorkingOrder['leg_status']; cancelled: boolean }>(
    `SELECT router_order_id, router_account_id, partner_id, venue_order_id, cancel_requested_at IS NOT NULL AS requested, leg_status, cancelled_at IS NOT NULL AS cancelled
       FROM orders WHERE router_order_id = $1 AND mode = 'real'`,
    [routerOrderId],
  );
  const r = rows[0];
  return r ? { router_order_id: r.router_order_id, router_account_id: r.router_account_id, partner_id: r.partner_id, venue_order_id: r.venue_order_id, requested: r.requested, working: isWorking(r) } : null;
}

async function finishCancelIn(client: PoolClient, routerOrderId: string, error: string | null): Promise<void> {
  await client.query('UPDATE orders SET cancel_requested_at = NULL, cancel_error = $2, updated_at = clock_timestamp() WHERE router_order_id = $1', [routerOrderId, error]);
  await client.query('SELECT pg_notify($1, $2)', [ORDER_CANCEL_NOTIFY, routerOrderId]);
}

/** Finishes a venue-side cancel that changed nothing (the order ended already), or that the venue refused (`error`). */
export async function finishCancel(client: PoolClient, routerOrderId: string, error: string | null): Promise<void> {
  await client.query('BEGIN');
  try {
    await finishCancelIn(client, routerOrderId, error);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Which of `ids` have no venue-side cancel waiting any more. */
export async function cancelsDoneAmong(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(`SELECT router_order_id AS id FROM orders WHERE router_order_id = ANY($1::text[]) AND cancel_requested_at IS NULL`, [ids]);
  return rows.map((r) => r.id);
}

/** Venue-side cancels on `partnerIds` asked more than `olderThanMs` ago and still waiting, oldest first (the sweep). */
export async function waitingCancels(db: Queryable, partnerIds: readonly string[], olderThanMs: number, limit: number): Promise<{ router_order_id: string; partner_id: string }[]> {
  if (partnerIds.length === 0) return [];
  const { rows } = await db.query<{ router_order_id: string; partner_id: string }>(
    `SELECT router_order_id, partner_id FROM orders
      WHERE cancel_requested_at IS NOT NULL AND partner_id = ANY($1::text[]) AND cancel_requested_at < clock_timestamp() - $2 * interval '1 millisecond'
      ORDER BY cancel_requested_at LIMIT $3`,
    [partnerIds, olderThanMs, limit],
  );
  return rows;
}

/** The order as a finished (or still waiting) cancel left it, with the cancel's state. */
export async function cancelState(db: Queryable, routerAccountId: string, routerOrderId: string): Promise<{ order: RouterOrder; waiting: boolean; error: string | null } | null> {
  const { rows } = await db.query<OrderRow & { waiting: boolean; cancel_error: string | null }>(
    `SELECT x.*, c.cancel_requested_at IS NOT NULL AS waiting, c.cancel_error
       FROM (${SELECT_ORDERS('orders')} WHERE o.router_order_id = $1 AND o.router_account_id = $2) x
       JOIN orders c ON c.router_order_id = x.router_order_id`,
    [routerOrderId, routerAccountId],
  );
  const r = rows[0];
  return r ? { order: toOrder(r), waiting: r.waiting, error: r.cancel_error } : null;
}
