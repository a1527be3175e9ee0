/**
 * Settlement (migration 9, docs/orders.md "Settlement"): the venues' contest results as their
 * settlement feeds reported them, and the settlement of each order on them. An order settles by the
 * result its own book (orders.partner_id) gave its position, once, guarded by settled_at IS NULL in
 * the transaction that also writes what the result moves; the formula is flow_order_settlement.
 */
import type { ContestSettlement, SettledOrder } from '../../domain/settlement.js';
import type { Pool, PoolClient } from './pool.js';
import { isoUtc } from './sql.js';

type Queryable = Pool | PoolClient;

/** The LISTEN/NOTIFY channel a recorded (or re-opened) settlement notifies (migration 9's trigger). */
export const CONTEST_SETTLEMENTS_NOTIFY = 'contest_settlements';

export interface RecordOutcome {
  /** Positions recorded now (0 for a repeated report). */
  added: number;
  /** Positions the venue had reported before with another result (the first stands). */
  conflicts: string[];
}

/**
 * Records a venue's settlement of a contest in one statement (one transaction): the contest's row
 * (pending again if it was recorded before: a repeat or an extension re-checks its orders) and each
 * position's result, the first report of a position standing.
 */
export async function recordContestSettlement(db: Queryable, s: ContestSettlement): Promise<RecordOutcome> {
  const { rows } = await db.query<{ added: number; conflicts: string[] }>(
    `WITH given AS (SELECT * FROM unnest($5::text[], $6::text[]) AS g(position_hash, result)),
          h AS (
            INSERT INTO contest_settlements (partner_id, contest_id, winner_participant_id, ts_event) VALUES ($1, $2, $3, $4::timestamptz)
            ON CONFLICT (partner_id, contest_id) DO UPDATE SET pending = true
            RETURNING partner_id, contest_id),
          added AS (
            INSERT INTO position_settlements (partner_id, position_hash, contest_id, result)
            SELECT h.partner_id, g.position_hash, h.contest_id, g.result FROM h, given g
            ON CONFLICT (partner_id, position_hash) DO NOTHING
            RETURNING 1)
     SELECT (SELECT count(*) FROM added)::int AS added,
            coalesce((SELECT array_agg(ps.position_hash ORDER BY ps.position_hash) FROM position_settlements ps JOIN given g USING (position_hash)
                       WHERE ps.partner_id = $1 AND ps.result <> g.result), '{}') AS conflicts`,
    [s.partner_id, s.contest_id, s.winner_participant_id, new Date(s.ts_event).toISOString(), s.results.map((r) => r.position_hash), s.results.map((r) => r.result)],
  );
  return rows[0]!;
}

/** A venue's settled contest whose orders on that book may still be unsettled. */
export interface PendingSettlement {
  partner_id: string;
  contest_id: string;
  /** How long ago it was recorded (ms, PostgreSQL's clock). */
  age_ms: number;
}

/**
 * Up to `limit` pending settlements: those never worked on first, then the least recently worked
 * on, so settlements whose orders keep waiting never starve newer ones.
 */
export async function pendingSettlements(db: Queryable, limit: number): Promise<PendingSettlement[]> {
  const { rows } = await db.query<PendingSettlement>(
    `SELECT partner_id, contest_id, (extract(epoch FROM clock_timestamp() - recorded_at) * 1000)::float8 AS age_ms
       FROM contest_settlements WHERE pending ORDER BY checked_at NULLS FIRST, recorded_at LIMIT $1`,
    [limit],
  );
  return rows;
}

/**
 * An order still working at its venue: a fill not confirmed yet (pending), or a resting remainder not
 * cancelled. It waits: the venue's fill and cancel reports land first, so it settles on its final fills.
 */
const WORKING = `(o.leg_status = 'pending' OR (o.leg_status = 'resting' AND o.cancelled_at IS NULL AND o.fill_status <> 'filled'))`;

/** Unsettled orders of `partner`'s settled contest that its results cover (same book, same position). */
const UNSETTLED_ON = `
  FROM orders o JOIN position_settlements ps ON ps.partner_id = o.partner_id AND ps.position_hash = o.position_hash
 WHERE o.contest_id = $2 AND o.partner_id = $1 AND o.settled_at IS NULL`;

export interface SettleableOrder {
  router_order_id: string;
  router_account_id: string;
}

/** Up to `limit` orders of the settlement that can settle now (through the unsettled-by-contest index). */
export async function settleableOrders(db: Queryable, p: Pick<PendingSettlement, 'partner_id' | 'contest_id'>, limit: number): Promise<SettleableOrder[]> {
  const { rows } = await db.query<SettleableOrder>(
    `SELECT o.router_order_id, o.router_account_id ${UNSETTLED_ON} AND NOT ${WORKING} ORDER BY o.router_order_id LIMIT $3`,
    [p.partner_id, p.contest_id, limit],
  );
  return rows;
}

/**
 * After a settler worked through the settlement's last batch: clears its pending flag unless an
 * order it covers is still unsettled (settleable, or working), and stamps checked_at. Returns
 * whether it cleared. A report that re-opens it concurrently sets pending again after this (its
 * row lock orders the two); should one add positions this statement did not see, the re-open sweep
 * (reopenSettlements) finds their orders.
 */
export async function finishSettlementPass(db: Queryable, p: Pick<PendingSettlement, 'partner_id' | 'contest_id'>): Promise<boolean> {
  const { rows } = await db.query<{ cleared: boolean }>(
    `UPDATE contest_settlements SET checked_at = clock_timestamp(), pending = EXISTS (SELECT 1 ${UNSETTLED_ON})
      WHERE partner_id = $1 AND contest_id = $2 AND pending
     RETURNING NOT pending AS cleared`,
    [p.partner_id, p.contest_id],
  );
  return rows[0]?.cleared ?? false;
}

/**
 * Sets pending again on every cleared settlement that an unsettled order has turned up under since
 * (an order written after its book's settlement was worked through). Reads the unsettled orders only
 * (their partial index), never the history of settlements. Returns how many it re-opened.
 */
export async function reopenSettlements(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE contest_settlements cs SET pending = true
       FROM (SELECT DISTINCT o.partner_id, o.contest_id
               FROM orders o JOIN position_settlements ps ON ps.partner_id = o.partner_id AND ps.position_hash = o.position_hash
              WHERE o.settled_at IS NULL) u
      WHERE cs.partner_id = u.partner_id AND cs.contest_id = u.contest_id AND NOT cs.pending`,
  );
  return rowCount ?? 0;
}

/**
 * Settles one order in the caller's transaction: result, winnings, net_winnings (flow_order_settlement),
 * settled_at, status closed. null when it is settled already (the guard that makes a repeat a no-op),
 * still working, or not covered by a result. The row stays locked until the transaction ends.
 */
export async function settleOrderRow(client: PoolClient, routerOrderId: string): Promise<SettledOrder | null> {
  const { rows } = await client.query<SettledOrder>(
    `WITH s AS (
       SELECT o.router_order_id, x.result, x.winnings, x.net_winnings
         FROM orders o JOIN position_settlements ps ON ps.partner_id = o.partner_id AND ps.position_hash = o.position_hash
        CROSS JOIN LATERAL flow_order_settlement(o.filled_notional, o.filled_shares, o.fee, ps.result) x
        WHERE o.router_order_id = $1 AND o.settled_at IS NULL AND NOT ${WORKING}
          FOR UPDATE OF o)
     UPDATE orders o
        SET result = s.result, winnings = s.winnings, net_winnings = s.net_winnings, status = 'closed',
            settled_at = clock_timestamp(), updated_at = clock_timestamp()
       FROM s WHERE o.router_order_id = s.router_order_id
     RETURNING o.router_order_id, o.router_account_id, o.partner_id, o.title, o.mode, o.result,
               o.winnings::text AS winnings, o.net_winnings::text AS net_winnings, o.winnings > 0 AS pays,
               ${isoUtc('o.settled_at')} AS settled_at`,
    [routerOrderId],
  );
  return rows[0] ?? null;
}

/** How many settlements are pending, and how long the oldest has waited (ms; 0 when none), for the gauges. */
export async function pendingSummary(db: Queryable): Promise<{ contests: number; oldest_age_ms: number }> {
  const { rows } = await db.query<{ contests: number; oldest_age_ms: number }>(
    `SELECT count(*)::int AS contests, coalesce(extract(epoch FROM clock_timestamp() - min(recorded_at)) * 1000, 0)::float8 AS oldest_age_ms
       FROM contest_settlements WHERE pending`,
  );
  return rows[0]!;
}
