/**
 * Account positions and the venue-history ledger, rolled up from the orders table in PostgreSQL
 * numeric (src/domain/positions.ts has the definitions). Every read names the account.
 *
 * The two sources share one definition of which orders count: those that booked something
 * (filled_shares > 0; an order that never filled holds no position and is no bet at a venue).
 * - source `orders`: every such order, practice (ATLAS, the practice book) and real money (USD).
 * - source `history` (and the history ledger): the venue's record of the account, as far as it is
 *   known. No venue adapter of this build reads a venue's own account history, so this is the real-
 *   money orders the service placed at venues (placed_via_openmarkets true); bets placed outside
 *   the service are not known (docs/performance.md).
 */
import type { Currency } from '../../domain/account.js';
import { positionKey, type AccountPosition, type HistoryRecord, type PositionSource, type PositionStatus } from '../../domain/positions.js';
import type { OrderResult } from '../../domain/router-orders.js';
import type { Pool, PoolClient } from './pool.js';
import { isoUtc } from './sql.js';

type Queryable = Pool | PoolClient;

/** The orders a source counts, for the account $1. */
const BOOKED = (source: PositionSource) => `o.router_account_id = $1 AND o.filled_shares > 0${source === 'history' ? ` AND o.mode = 'real'` : ''}`;

/** A position's place in its list: newest opened first; the opening time to the microsecond, so a cursor compares exactly. */
export type PositionCursor = [opened_at_us: string, partner_id: string, position_hash: string, currency: string];

export interface PositionQuery {
  source: PositionSource;
  status?: PositionStatus;
  partnerId?: string;
  after?: PositionCursor;
  limit: number;
}

interface PositionRow {
  partner_id: string;
  partner_name: string;
  currency: Currency;
  contest_id: string;
  market_id: string | null;
  side_key: string | null;
  position_hash: string;
  title: string;
  contracts: string;
  avg_price: string;
  cost_basis: string;
  fees: string;
  payout: string | null;
  net_pnl: string | null;
  outcome: OrderResult | null;
  status: PositionStatus;
  order_count: number;
  opened_at: string;
  opened_at_us: string;
  settled_at: string | null;
}

const numOrNull = (v: string | null): number | null => (v === null ? null : Number(v));

/**
 * A page of the account's positions with the cursor of each row. Every (book, position, currency)
 * the account booked on is summed, then filtered and paged: a page costs the account's booked
 * orders, read through orders_account_newest.
 */
export async function listPositions(db: Queryable, routerAccountId: string, q: PositionQuery): Promise<{ position: AccountPosition; cursor: PositionCursor }[]> {
  const params: unknown[] = [routerAccountId];
  const p = (v: unknown) => `$${params.push(v)}`;
  const where = [BOOKED(q.source)];
  if (q.partnerId !== undefined) where.push(`o.partner_id = ${p(q.partnerId)}`);
  const having: string[] = [];
  if (q.status === 'open') having.push('r.open_orders > 0');
  if (q.status === 'settled') having.push('r.open_orders = 0');
  if (q.after) {
    const [at, partner, hash, currency] = q.after;
    having.push(`(r.opened_at, r.partner_id, r.position_hash, r.currency) < (${p(at)}::timestamptz, ${p(partner)}, ${p(hash)}, ${p(currency)})`);
  }
  const { rows } = await db.query<PositionRow>(
    `WITH r AS (
       SELECT o.partner_id, o.position_hash, o.currency, min(o.contest_id) AS contest_id, min(o.title) AS title,
              sum(o.filled_shares) AS contracts, sum(o.filled_notional) AS notional, sum(o.fee) AS fees, sum(o.winnings) AS winnings,
              count(*)::int AS order_count, count(*) FILTER (WHERE o.settled_at IS NULL)::int AS open_orders,
              min(o.result) AS min_result, max(o.result) AS max_result,
              min(o.created_at) AS opened_at, max(o.settled_at) AS settled_at
         FROM orders o
        WHERE ${where.join(' AND ')}
        GROUP BY o.partner_id, o.position_hash, o.currency)
     SELECT r.partner_id, coalesce(pt.name, r.partner_id) AS partner_name, r.currency, r.contest_id, ps.market_id, ps.definition->>'side_key' AS side_key,
            r.position_hash, coalesce(ps.definition->>'title', r.title) AS title,
            trim_scale(r.contracts)::text AS contracts, trim_scale(round(r.notional / r.contracts, 6))::text AS avg_price,
            trim_scale(r.notional + r.fees)::text AS cost_basis, trim_scale(r.fees)::text AS fees,
            -- Settled: every order has its result. The booked orders of one book and position settle by
            -- the one result that book gave the position, so min = max (guarded all the same).
            CASE WHEN r.open_orders = 0 THEN trim_scale(r.winnings)::text END AS payout,
            CASE WHEN r.open_orders = 0 THEN trim_scale(r.winnings - r.notional - r.fees)::text END AS net_pnl,
            CASE WHEN r.open_orders = 0 AND r.min_result = r.max_result THEN r.min_result END AS outcome,
            CASE WHEN r.open_orders = 0 THEN 'settled' ELSE 'open' END AS status,
            r.order_count, ${isoUtc('r.opened_at')} AS opened_at,
            to_char(r.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS opened_at_us,
            CASE WHEN r.open_orders = 0 THEN ${isoUtc('r.settled_at')} END AS settled_at
       FROM r
       LEFT JOIN partners pt ON pt.partner_id = r.partner_id
       LEFT JOIN positions ps ON ps.position_hash = r.position_hash
      ${having.length ? `WHERE ${having.join(' AND ')}` : ''}
      ORDER BY r.opened_at DESC, r.partner_id DESC, r.position_hash DESC, r.currency DESC
      LIMIT ${p(q.limit)}`,
    params,
  );
  return rows.map((r) => ({
    position: {
      position_key: positionKey(r.partner_id, r.position_hash),
      partner_id: r.partner_id,
      partner_name: r.partner_name,
      currency: r.currency,
      contest_id: r.contest_id,
      market_id: r.market_id,
      side_key: r.side_key,
      position_hash: r.position_hash,
      title: r.title,
      contracts: Number(r.contracts),
      avg_price: Number(r.avg_price),
      cost_basis: Number(r.cost_basis),
      fees: Number(r.fees),
      payout: numOrNull(r.payout),
      net_pnl: numOrNull(r.net_pnl),
      outcome: r.outcome,
      status: r.status,
      order_count: r.order_count,
      opened_at: r.opened_at,
      settled_at: r.settled_at,
    },
    cursor: [r.opened_at_us, r.partner_id, r.position_hash, r.currency],
  }));
}

export interface HistoryQuery {
  partnerId?: string;
  /** The router_order_id of the previous page's last record. */
  after?: string;
  limit: number;
}

interface HistoryRow {
  router_order_id: string;
  partner_id: string;
  partner_name: string;
  venue_reference: string;
  instrument_label: string;
  quantity: string;
  price: string;
  currency: Currency;
  status: PositionStatus;
  cost: string;
  payout: string | null;
  outcome: OrderResult | null;
  position_hash: string;
  settled_pnl: string | null;
  occurred_at: string;
  settled_at: string | null;
}

/** A page of the account's venue-history ledger, newest first (placement time, then id). */
export async function listHistory(db: Queryable, routerAccountId: string, q: HistoryQuery): Promise<HistoryRecord[]> {
  const params: unknown[] = [routerAccountId];
  const p = (v: unknown) => `$${params.push(v)}`;
  const where = [BOOKED('history')];
  if (q.partnerId !== undefined) where.push(`o.partner_id = ${p(q.partnerId)}`);
  if (q.after !== undefined) {
    where.push(`(o.created_at, o.router_order_id) < (SELECT created_at, router_order_id FROM orders WHERE router_order_id = ${p(q.after)} AND router_account_id = $1)`);
  }
  const { rows } = await db.query<HistoryRow>(
    `SELECT o.router_order_id, o.partner_id, coalesce(pt.name, o.partner_id) AS partner_name,
            coalesce(nullif(o.venue_order_id, ''), o.client_order_id) AS venue_reference, o.title AS instrument_label,
            trim_scale(o.filled_shares)::text AS quantity, trim_scale(coalesce(o.avg_price, o.max_price))::text AS price, o.currency,
            CASE WHEN o.settled_at IS NULL THEN 'open' ELSE 'settled' END AS status,
            trim_scale(o.filled_notional + o.fee)::text AS cost, trim_scale(o.winnings)::text AS payout, o.result AS outcome,
            o.position_hash, trim_scale(o.net_winnings - o.filled_notional)::text AS settled_pnl,
            ${isoUtc('o.created_at')} AS occurred_at, ${isoUtc('o.settled_at')} AS settled_at
       FROM orders o LEFT JOIN partners pt ON pt.partner_id = o.partner_id
      WHERE ${where.join(' AND ')}
      ORDER BY o.created_at DESC, o.router_order_id DESC
      LIMIT ${p(q.limit)}`,
    params,
  );
  return rows.map((r) => ({
    router_order_id: r.router_order_id,
    partner_id: r.partner_id,
    partner_name: r.partner_name,
    venue_reference: r.venue_reference,
    kind: 'bet',
    side: 'buy',
    instrument_label: r.instrument_label,
    quantity: Number(r.quantity),
    price: Number(r.price),
    currency: r.currency,
    status: r.status,
    cost: Number(r.cost),
    payout: numOrNull(r.payout),
    outcome: r.outcome,
    position_key: positionKey(r.partner_id, r.position_hash),
    settled_pnl: numOrNull(r.settled_pnl),
    occurred_at: r.occurred_at,
    settled_at: r.settled_at,
    placed_via_openmarkets: true,
  }));
}
