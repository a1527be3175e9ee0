/**
 * Order settlement (docs/orders.md "Settlement"): what a settled order's result moves, and the
 * orders channel's order.settled event. The arithmetic (winnings, net_winnings) is PostgreSQL's, in
 * numeric (flow_order_settlement, migration 9); this module only names which ledger entry a result
 * writes, from the exact figure the store hands it.
 */
import type { OrderResult } from './router-orders.js';

/** The results a venue's settlement can give a position (a void is `cancelled`). */
export type PositionSettlementResult = 'win' | 'lose' | 'push' | 'cancelled';

/** A venue's settlement of one contest, as the recorder stores it. */
export interface ContestSettlement {
  partner_id: string;
  contest_id: string;
  winner_participant_id: string | null;
  /** Unix ms, the venue's time of the settlement. */
  ts_event: number;
  results: { position_hash: string; result: PositionSettlementResult }[];
}

/** The orders channel's settlement event (spec "Events"). */
export interface OrderSettledEvent {
  type: 'order.settled';
  router_order_id: string;
  partner_id: string;
  result: OrderResult;
  winnings: number;
  net_winnings: number;
  timestamp: string;
}

export interface SettledOrder {
  router_order_id: string;
  router_account_id: string;
  partner_id: string;
  title: string;
  mode: 'paper' | 'real';
  result: OrderResult;
  /** Exact decimal text. */
  winnings: string;
  net_winnings: string;
  /** Whether anything is paid back (winnings > 0, decided in numeric). */
  pays: boolean;
  /** ISO 8601: the settlement's instant (the order's settled_at). */
  settled_at: string;
}

/**
 * The practice-ledger entry a settled paper order writes: a win is credited (`settlement_credit`),
 * the stake of a push or a cancelled order comes back (`refund`); nothing is written when nothing
 * is paid (a loss).
 */
export function practiceEntryOf(o: Pick<SettledOrder, 'result' | 'pays'>): 'settlement_credit' | 'refund' | null {
  if (!o.pays) return null;
  return o.result === 'win' ? 'settlement_credit' : 'refund';
}

const DESCRIPTIONS: Record<OrderResult, string> = {
  win: 'Practice order won',
  push: 'Practice order pushed, stake refunded',
  cancelled: 'Practice order cancelled, stake refunded',
  lose: 'Practice order lost',
};

/** How a practice-ledger settlement entry describes itself. */
export const settlementDescription = (o: Pick<SettledOrder, 'result' | 'title'>): string => `${DESCRIPTIONS[o.result]}: ${o.title}`;

export const orderSettledEvent = (o: SettledOrder): OrderSettledEvent => ({
  type: 'order.settled',
  router_order_id: o.router_order_id,
  partner_id: o.partner_id,
  result: o.result,
  winnings: Number(o.winnings),
  net_winnings: Number(o.net_winnings),
  timestamp: o.settled_at,
});
