/**
 * Orders (migration 8): one row per buy leg that wrote an order, written in the buy's transaction
 * with the ledger entry and the events it implies. Every read names the owning account, so another
 * account's order is simply not found. Money arithmetic happens here, in numeric; JavaScript only
 * carries the exact decimal text (numbers are made of it at the edge, as the wallet does).
 */
import type { Currency } from '../../domain/account.js';
import type { OrderMode, OrderType } from '../../domain/orders.js';
import type { FillStatus, LegStatus, OrderResult, OrderStatus, PlacedOrderView, RestingOrder, RouterOrder } from '../../domain/router-orders.js';
import type { Pool, PoolClient } from './pool.js';
import { isoUtc } from './sql.js';

type Queryable = Pool | PoolClient;

// ---- paper arithmetic (the terms themselves: src/domain/paper-terms.ts) ------------------------------

/** Whether each stake, in order, fits what the balance has left after the ones before it that fit (flow_paper_affordable). */
export async function paperAffordable(db: Queryable, balance: string, stakes: readonly string[]): Promise<boolean[]> {
  if (stakes.length === 0) return [];
  const { rows } = await db.query<{ ok: boolean[] }>('SELECT flow_paper_affordable($1::numeric, $2::numeric[]) AS ok', [balance, stakes]);
  return rows[0]!.ok;
}

// ---- writes ----------------------------------------------------------------------------------------

export interface NewOrder {
  router_order_id: string;
  router_account_id: string;
  opportunity_id: string | null;
  model_id: string | null;
  idempotency_key: string;
  leg_index: number;
  client_order_id: string;
  sor_decision_id: string;
  partner_id: string;
  requested_partner_id: string;
  currency: Currency;
  mode: OrderMode;
  order_type: OrderType;
  position_hash: string;
  liquidity_hash: string | null;
  price_partner_id: string | null;
  price_liquidity_hash: string | null;
  contest_id: string;
  title: string;
  requested_amount: string | null;
  requested_shares: string | null;
  max_price: string;
  /** Exact decimal text; the order's notional. */
  amount: string;
  avg_price: string | null;
  filled_notional: string;
  filled_shares: string;
  unfilled_notional: string;
  fee: string;
  leg_status: LegStatus;
  status: OrderStatus;
  fill_status: FillStatus;
  rejected_code: string | null;
  rejected_reason: string | null;
  /** Real-money intents (migration 10): what the venue is sent; absent on a paper order, decided in the buy. */
  exec_state?: 'intent';
  send_amount?: string | null;
  send_shares?: string | null;
  limit_price?: string;
  commitment?: string;
}

/** The columns of a real-money intent, written only when given. */
const INTENT_COLUMNS = ['exec_state', 'send_amount', 'send_shares', 'limit_price', 'commitment'] as const satisfies readonly (keyof NewOrder)[];

// flow_paper_buy (migration 13) writes a paper order's row with these columns too: test/integration/orders/practice-buy.test.ts
// fails when the two rows differ.
const COLUMNS = [
  'router_order_id', 'router_account_id', 'opportunity_id', 'model_id', 'idempotency_key', 'leg_index', 'client_order_id', 'sor_decision_id',
  'partner_id', 'requested_partner_id', 'currency', 'mode', 'order_type', 'position_hash', 'liquidity_hash', 'price_partner_id', 'price_liquidity_hash',
  'contest_id', 'title', 'requested_amount', 'requested_shares', 'max_price', 'amount', 'avg_price', 'filled_notional', 'filled_shares',
  'unfilled_notional', 'fee', 'leg_status', 'status', 'fill_status', 'rejected_code', 'rejected_reason',
] as const satisfies readonly (keyof NewOrder)[];

/** Writes an order in the caller's transaction and returns it as the reads show it. */
export async function insertOrder(client: PoolClient, o: NewOrder): Promise<RouterOrder> {
  const columns: (keyof NewOrder)[] = [...COLUMNS, ...INTENT_COLUMNS.filter((c) => o[c] !== undefined)];
  const { rows } = await client.query<OrderRow>(
    `WITH o AS (INSERT INTO orders (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *)
     ${SELECT_ORDERS('o')}`,
    columns.map((c) => o[c]),
  );
  return toOrder(rows[0]!);
}

// ---- reads -----------------------------------------------------------------------------------------

export interface OrderRow {
  router_order_id: string;
  title: string;
  partner_id: string;
  partner_name: string;
  internal_book: boolean;
  logo_url: string;
  requested_partner_id: string;
  amount: string;
  price: string;
  currency: Currency;
  mode: OrderMode;
  order_type: OrderType;
  fee: string;
  amount_with_fee: string;
  model_id: string | null;
  model_name: string | null;
  opportunity_id: string | null;
  contest_id: string;
  position_hash: string;
  liquidity_hash: string | null;
  max_price: string;
  avg_price: string | null;
  filled_notional: string;
  filled_shares: string;
  unfilled_notional: string;
  leg_status: LegStatus;
  status: OrderStatus;
  fill_status: FillStatus;
  result: OrderResult | null;
  winnings: string | null;
  net_winnings: string | null;
  settled_at: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
  // Beyond what the reads show: the buy leg it is, and how far its execution got (migration 10).
  leg_index: number;
  sor_decision_id: string;
  exec_state: 'intent' | 'sent' | 'decided';
  rejected_code: string | null;
  rejected_reason: string | null;
}

/**
 * RouterOrder rows of `source` (the orders table or a CTE over it), with the venue's and the model's
 * current names. A venue missing from the catalog still reads: its id as its name, internal when paper.
 */
export const SELECT_ORDERS = (source: string) => `
  SELECT o.router_order_id, o.title, o.partner_id, coalesce(p.name, o.partner_id) AS partner_name,
         coalesce(p.internal_book, o.mode = 'paper') AS internal_book, coalesce(p.logo_url, '') AS logo_url,
         o.requested_partner_id, o.amount::text AS amount, coalesce(o.avg_price, o.max_price)::text AS price, o.currency, o.mode, o.order_type,
         o.fee::text AS fee, (o.amount + o.fee)::text AS amount_with_fee, o.model_id, m.model_name, o.opportunity_id, o.contest_id,
         o.position_hash, o.liquidity_hash, o.max_price::text AS max_price, o.avg_price::text AS avg_price, o.filled_notional::text AS filled_notional,
         o.filled_shares::text AS filled_shares, o.unfilled_notional::text AS unfilled_notional, o.leg_status, o.status, o.fill_status, o.result,
         o.winnings::text AS winnings, o.net_winnings::text AS net_winnings,
         ${isoUtc('o.settled_at')} AS settled_at, ${isoUtc('o.cancelled_at')} AS cancelled_at,
         ${isoUtc('o.created_at')} AS created_at, ${isoUtc('o.updated_at')} AS updated_at,
         o.leg_index, o.sor_decision_id, o.exec_state, o.rejected_code, o.rejected_reason
    FROM ${source} o
    LEFT JOIN partners p ON p.partner_id = o.partner_id
    LEFT JOIN models m ON m.model_id = o.model_id`;

const num = (v: string): number => Number(v);
const numOrNull = (v: string | null): number | null => (v === null ? null : Number(v));

export function toOrder(r: OrderRow): RouterOrder {
  return {
    router_order_id: r.router_order_id,
    title: r.title,
    partner_id: r.partner_id,
    partner_name: r.partner_name,
    partner: { partner_id: r.partner_id, partner_name: r.partner_name, internal_book: r.internal_book, logo_url: r.logo_url },
    logo_url: r.logo_url,
    requested_partner_id: r.requested_partner_id,
    amount: num(r.amount),
    price: num(r.price),
    currency: r.currency,
    mode: r.mode,
    order_type: r.order_type,
    fee: num(r.fee),
    amount_with_fee: num(r.amount_with_fee),
    model_id: r.model_id,
    model_name: r.model_name,
    opportunity_id: r.opportunity_id,
    contest_id: r.contest_id,
    position_hash: r.position_hash,
    liquidity_hash: r.liquidity_hash,
    max_price: num(r.max_price),
    avg_price: numOrNull(r.avg_price),
    filled_notional: num(r.filled_notional),
    filled_shares: num(r.filled_shares),
    unfilled_notional: num(r.unfilled_notional),
    leg_status: r.leg_status,
    status: r.status,
    fill_status: r.fill_status,
    result: r.result,
    winnings: numOrNull(r.winnings),
    net_winnings: numOrNull(r.net_winnings),
    settled_at: r.settled_at,
    cancelled_at: r.cancelled_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * What an order written as `o` reads back as (toOrder of its row) in the fields a buy's answer and
 * its order.update event show, without reading it: the values written, numbers made of their text.
 * The read gives the same numbers when the money columns' text has at most six decimals (the
 * column's scale only adds zeros, which no number keeps), as every paper order's does (a buy books
 * to six decimals); avg_price is plain numeric and keeps its text.
 */
export function writtenOrderView(o: NewOrder): PlacedOrderView {
  return {
    router_order_id: o.router_order_id,
    partner_id: o.partner_id,
    status: o.status,
    fill_status: o.fill_status,
    filled_notional: num(o.filled_notional),
    filled_shares: num(o.filled_shares),
    unfilled_notional: num(o.unfilled_notional),
    avg_price: numOrNull(o.avg_price),
  };
}

/** The account's order; null when it has none of that id. */
export async function getOrder(db: Queryable, routerAccountId: string, routerOrderId: string): Promise<RouterOrder | null> {
  const { rows } = await db.query<OrderRow>(`${SELECT_ORDERS('orders')} WHERE o.router_order_id = $1 AND o.router_account_id = $2`, [routerOrderId, routerAccountId]);
  return rows[0] ? toOrder(rows[0]) : null;
}

/** The orders of these opportunities (the account's), oldest first within each: an opportunity's legs. */
export async function ordersOfOpportunities(db: Queryable, routerAccountId: string, opportunityIds: readonly string[]): Promise<Map<string, RouterOrder[]>> {
  const out = new Map<string, RouterOrder[]>();
  if (opportunityIds.length === 0) return out;
  const { rows } = await db.query<OrderRow>(
    `${SELECT_ORDERS('orders')} WHERE o.opportunity_id = ANY($1::text[]) AND o.router_account_id = $2 ORDER BY o.created_at, o.router_order_id`,
    [opportunityIds, routerAccountId],
  );
  for (const r of rows) {
    const order = toOrder(r);
    const list = out.get(order.opportunity_id!) ?? [];
    list.push(order);
    out.set(order.opportunity_id!, list);
  }
  return out;
}

export interface OrderListQuery {
  status?: OrderStatus;
  contestIds?: readonly string[];
  /** true: settled orders only; false: unsettled only. */
  settled?: boolean;
  result?: OrderResult;
  currency?: Currency;
  modelId?: string;
  /** created: newest first by creation time; settled: newest settlement first (settled orders only). */
  sort: 'created' | 'settled';
  /** Bounds (inclusive, ISO 8601) on the sort column. */
  from?: string;
  to?: string;
  /** Bounds (inclusive) on the settlement time, whatever the sort. */
  settledAfter?: string;
  settledBefore?: string;
  /** The last router_order_id of the previous page. */
  after?: string;
  limit: number;
}

/**
 * A page of the account's orders. The cursor is an order id: orders are never deleted, so it always
 * resolves, and (sort column, id) orders the rows totally.
 */
export async function listOrders(db: Queryable, routerAccountId: string, q: OrderListQuery): Promise<RouterOrder[]> {
  const params: unknown[] = [routerAccountId];
  const p = (v: unknown) => `$${params.push(v)}`;
  const col = q.sort === 'settled' ? 'settled_at' : 'created_at';
  const where = ['o.router_account_id = $1'];
  if (q.sort === 'settled' || q.settled === true || q.settledAfter !== undefined || q.settledBefore !== undefined) where.push('o.settled_at IS NOT NULL');
  if (q.settled === false) where.push('o.settled_at IS NULL');
  if (q.status !== undefined) where.push(`o.status = ${p(q.status)}`);
  if (q.contestIds !== undefined) where.push(`o.contest_id = ANY(${p(q.contestIds)}::text[])`);
  if (q.result !== undefined) where.push(`o.result = ${p(q.result)}`);
  if (q.currency !== undefined) where.push(`o.currency = ${p(q.currency)}`);
  if (q.modelId !== undefined) where.push(`o.model_id = ${p(q.modelId)}`);
  if (q.from !== undefined) where.push(`o.${col} >= ${p(q.from)}::timestamptz`);
  if (q.to !== undefined) where.push(`o.${col} <= ${p(q.to)}::timestamptz`);
  if (q.settledAfter !== undefined) where.push(`o.settled_at >= ${p(q.settledAfter)}::timestamptz`);
  if (q.settledBefore !== undefined) where.push(`o.settled_at <= ${p(q.settledBefore)}::timestamptz`);
  if (q.after !== undefined) {
    where.push(`(o.${col}, o.router_order_id) < (SELECT ${col}, router_order_id FROM orders WHERE router_order_id = ${p(q.after)} AND router_account_id = $1)`);
  }
  const { rows } = await db.query<OrderRow>(
    `${SELECT_ORDERS('orders')} WHERE ${where.join(' AND ')} ORDER BY o.${col} DESC, o.router_order_id DESC LIMIT ${p(q.limit)}`,
    params,
  );
  return rows.map(toOrder);
}

/** The account's working orders (resting, not cancelled, not wholly filled), newest first. */
export async function restingOrders(db: Queryable, routerAccountId: string): Promise<RestingOrder[]> {
  const { rows } = await db.query<OrderRow>(
    `${SELECT_ORDERS('orders')}
      WHERE o.router_account_id = $1 AND o.leg_status = 'resting' AND o.cancelled_at IS NULL AND o.fill_status IN ('unfilled', 'partially_filled')
      ORDER BY o.created_at DESC, o.router_order_id DESC`,
    [routerAccountId],
  );
  return rows.map(toOrder).map((o) => ({
    router_order_id: o.router_order_id,
    title: o.title,
    partner_id: o.partner_id,
    partner_name: o.partner_name,
    amount: o.amount,
    price: o.max_price,
    fill_status: o.fill_status as RestingOrder['fill_status'],
    currency: o.currency,
    contest_id: o.contest_id,
    position_hash: o.position_hash,
    filled_notional: o.filled_notional,
    unfilled_notional: o.unfilled_notional,
    created_at: o.created_at,
  }));
}
