/**
 * Account positions and the venue-history ledger (spec "Account positions and history";
 * docs/performance.md "Positions and history"). Shapes and rules only; the roll-ups run in
 * PostgreSQL numeric (src/store/pg/positions.ts).
 *
 * A position is what the account holds on one venue, market and side: every order that booked
 * something on one (book, position_hash) (a position_hash is one side of one market of a contest),
 * in one currency. Money per position, exact:
 *   cost_basis = Σ filled_notional + Σ fee          (what holding it cost)
 *   payout     = Σ winnings                          (null while open)
 *   net_pnl    = payout − cost_basis                 (null while open; = Σ net_winnings − Σ filled_notional)
 */
import type { Currency } from './account.js';
import type { OrderResult } from './router-orders.js';

/** data.source: `orders` (the buy endpoint's order book, default) or `history` (history=1: the venues' ledger). */
export const POSITION_SOURCES = ['orders', 'history'] as const;
export type PositionSource = (typeof POSITION_SOURCES)[number];

/** open until every order of the position has settled. */
export const POSITION_STATUSES = ['open', 'settled'] as const;
export type PositionStatus = (typeof POSITION_STATUSES)[number];

export interface AccountPosition {
  /** The venue's key of the position: `<partner_id>:<position_hash>` (no adapter reports a venue-native one). */
  position_key: string;
  partner_id: string;
  partner_name: string;
  currency: Currency;
  contest_id: string;
  /** The catalog's market and side of the position; null when the catalog does not hold it. */
  market_id: string | null;
  side_key: string | null;
  position_hash: string;
  title: string;
  /** Contracts booked. */
  contracts: number;
  /** Σ filled_notional / contracts, rounded to 6 places. */
  avg_price: number;
  cost_basis: number;
  /** The venue fees inside cost_basis (0 on the practice book). */
  fees: number;
  payout: number | null;
  net_pnl: number | null;
  /** The position's result on its book (win, lose, push, cancelled); null while open. */
  outcome: OrderResult | null;
  status: PositionStatus;
  /** Orders rolled up into the row. */
  order_count: number;
  /** When its first order was placed. */
  opened_at: string;
  /** When its last order settled; null while open. */
  settled_at: string | null;
}

export interface AccountPositions {
  source: PositionSource;
  positions: AccountPosition[];
}

/**
 * One record of the connect-history ledger (spec "Organization user records": venue reference,
 * kind, side, instrument_label, quantity, price, status, cost, payout, outcome, position_key,
 * settled_pnl, occurred_at, placed_via_openmarkets), plus the venue's name, the currency, the
 * settlement time and the router order it is.
 */
export interface HistoryRecord {
  router_order_id: string;
  partner_id: string;
  partner_name: string;
  /** The venue's order id, or the client_order_id the service sent when the venue gave none. */
  venue_reference: string;
  /** Every record of this build is a bet: a position bought and held to its result. */
  kind: 'bet';
  side: 'buy';
  instrument_label: string;
  /** Contracts booked. */
  quantity: number;
  /** The average fill price, 0-1. */
  price: number;
  currency: Currency;
  status: PositionStatus;
  /** filled_notional + fee. */
  cost: number;
  payout: number | null;
  outcome: OrderResult | null;
  position_key: string;
  /** payout − cost; null while open. */
  settled_pnl: number | null;
  /** When the order was placed. */
  occurred_at: string;
  settled_at: string | null;
  /** Under this exact name (spec): true for a bet placed through this service. */
  placed_via_openmarkets: boolean;
}

export const positionKey = (partnerId: string, positionHash: string): string => `${partnerId}:${positionHash}`;

/** The connect-history page size (spec "Limits": connect history default 100, max 500). */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 500;
