/**
 * Orders as the router answers and keeps them (spec "Router order result", "router_order",
 * "States and transitions") and the order in which a buy's legs run (spec "Orders: place" rules
 * 2-5). Shapes and rules only, no I/O: the buy route supplies the checks and the placement.
 */
import type { Currency } from './account.js';
import type { OrderMode, OrderType, ResolvedLeg } from './orders.js';
import type { LegRejectCode } from './orders.js';

/** A leg's status in the buy response: completed, failed, rejected are terminal. */
export const LEG_STATUSES = ['completed', 'resting', 'pending', 'failed', 'rejected'] as const;
export type LegStatus = (typeof LEG_STATUSES)[number];

/** An order's status (the GET orders filter). */
export const ORDER_STATUSES = ['pending', 'open', 'closed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** unfilled and partially_filled are the spec's; `filled` (extension) is an order whose whole notional booked. */
export const FILL_STATUSES = ['unfilled', 'partially_filled', 'filled'] as const;
export type FillStatus = (typeof FILL_STATUSES)[number];

export const ORDER_RESULTS = ['win', 'lose', 'push', 'cancelled'] as const;
export type OrderResult = (typeof ORDER_RESULTS)[number];

/** The per-leg codes of a 200 buy response (spec "Errors"). */
export type RejectedCode = LegRejectCode;

/** The currency a leg's mode books in: paper is practice money, filled on the internal book. */
export const currencyOfMode = (mode: OrderMode): Currency => (mode === 'paper' ? 'ATLAS' : 'USD');

/** Why a leg did not complete: its terminal status, the spec's code when one applies, and the text. */
export interface LegFailure {
  status: 'failed' | 'rejected';
  code: RejectedCode | null;
  reason: string;
}

/** What placing a leg did: an order written (any status), or a failure before any book saw it. */
export type LegOutcome<O> = { placed: O; status: LegStatus } | { failure: LegFailure };

export const HALTED_UPSTREAM: LegFailure = {
  status: 'rejected',
  code: 'halted_upstream',
  reason: 'not placed: an earlier leg failed or was rejected and on_leg_failure is halt',
};

/**
 * A leg the per-leg checks refused, as the buy answers it: failed with the spec's code (a control
 * block or a venue constraint, spec "States and transitions"), or rejected when the router cannot
 * plan it (no code) and for no_live_price_for_paper (rule 11 says rejected).
 */
export function checkFailure(r: { rejected_code: RejectedCode | null; rejected_reason: string | null }): LegFailure {
  const reason = r.rejected_reason ?? 'refused by the pre-placement checks';
  if (r.rejected_code === null || r.rejected_code === 'no_live_price_for_paper' || r.rejected_code === 'halted_upstream') return { status: 'rejected', code: r.rejected_code, reason };
  return { status: 'failed', code: r.rejected_code, reason };
}

export interface SequenceOptions {
  halt: boolean;
  checkAllFirst: boolean;
  parallel: boolean;
}

export interface SequenceSteps<O> {
  /**
   * check_all_first: every leg's pre-placement checks at once (they may depend on each other, as
   * affordability summed over the batch does). One entry per leg: its failure, or null.
   */
  checkAll(legs: readonly ResolvedLeg[]): Promise<(LegFailure | null)[]>;
  /** Places one leg (running its own checks again: state may have moved since the pre-check). */
  place(leg: ResolvedLeg): Promise<LegOutcome<O>>;
  /**
   * Legs that share account state (rule 5): under placement parallel, legs of one lane are placed
   * one after another in array order and lanes run at once. Without it, every leg is in one lane.
   */
  lane?(leg: ResolvedLeg): string;
}

/** Whether a leg's outcome halts the legs after it (rule 3: failed or rejected, before or at the venue; resting and pending do not). */
export const halts = (o: LegOutcome<unknown>): boolean => 'failure' in o || o.status === 'failed' || o.status === 'rejected';

/**
 * Runs a buy's legs (spec rules 2-5) and returns one outcome per leg, in request order, and the
 * index that halted the request (or null).
 *
 * - One at a time in array order (rule 2); with halt, the first failed or rejected leg stops the
 *   rest, which come back rejected halted_upstream (rule 3). Placed legs stay placed.
 * - check_all_first: the pre-checks run first for every leg. Alone, failing legs are skipped and the
 *   others placed (rule 4). With halt, any failure means zero exposure: nothing is placed, every
 *   failing leg reports its own failure, the others halted_upstream, halted_at_index the first
 *   failing leg.
 * - placement parallel: legs are dispatched together, so one leg's placement failure cannot stop
 *   another (only the pre-checks can halt). Legs that share account state serialize (rule 5): each
 *   lane (steps.lane: real legs, one per venue) is placed in array order, lanes at once; without
 *   lanes every leg shares one (practice legs: one wallet, one transaction).
 */
export async function sequenceLegs<O>(legs: readonly ResolvedLeg[], opts: SequenceOptions, steps: SequenceSteps<O>): Promise<{ outcomes: LegOutcome<O>[]; haltedAt: number | null }> {
  const outcomes = new Array<LegOutcome<O>>(legs.length);
  let haltedAt: number | null = null;
  let toPlace = legs.map((_, i) => i);
  if (opts.checkAllFirst) {
    const failures = await steps.checkAll(legs);
    failures.forEach((f, i) => {
      if (f) outcomes[i] = { failure: f };
    });
    toPlace = toPlace.filter((i) => !failures[i]);
    const first = failures.findIndex((f) => f !== null);
    if (opts.halt && first >= 0) {
      for (const i of toPlace) outcomes[i] = { failure: HALTED_UPSTREAM };
      return { outcomes, haltedAt: first };
    }
  }
  if (opts.parallel) {
    const lanes = new Map<string, number[]>();
    for (const i of toPlace) {
      const lane = steps.lane?.(legs[i]!) ?? '';
      (lanes.get(lane) ?? lanes.set(lane, []).get(lane)!).push(i);
    }
    await Promise.all(
      [...lanes.values()].map(async (lane) => {
        for (const i of lane) outcomes[i] = await steps.place(legs[i]!);
      }),
    );
    return { outcomes, haltedAt };
  }
  for (const i of toPlace) {
    if (haltedAt !== null) {
      outcomes[i] = { failure: HALTED_UPSTREAM };
      continue;
    }
    const o = await steps.place(legs[i]!);
    outcomes[i] = o;
    if (opts.halt && halts(o)) haltedAt = i;
  }
  return { outcomes, haltedAt };
}

// ---- what the API shows ------------------------------------------------------------------------

export interface RouterOrderVenue {
  /** The book the leg was sent to; on a practice leg the internal book. */
  partner_id: string;
  success: boolean;
  router_order_id: string | null;
  error: string | null;
}

/** One leg of a buy's response (spec "Router order result"). */
export interface RouterOrderResult {
  index: number;
  status: LegStatus;
  sor_decision_id: string;
  requested_partner_id: string;
  filled_notional: number;
  filled_shares: number;
  unfilled_notional: number;
  avg_price: number;
  rejected_reason: string | null;
  rejected_code: RejectedCode | null;
  venues: RouterOrderVenue[];
}

/** What names a leg in its result: its index, audit id and the venue named. */
export type LegResultBase = Pick<RouterOrderResult, 'index' | 'sor_decision_id' | 'requested_partner_id'>;

/**
 * The result of a leg that wrote an order, from the order's figures. A leg the venue refused
 * (`refusal`) reports its reason and code with venues[0].success false.
 */
export function placedResult(
  base: LegResultBase,
  status: LegStatus,
  order: Omit<PlacedOrderView, 'status' | 'fill_status'>,
  outcome: { reason: string | null; code: RejectedCode | null; success: boolean } = { reason: null, code: null, success: true },
): RouterOrderResult {
  return {
    ...base,
    status,
    filled_notional: order.filled_notional,
    filled_shares: order.filled_shares,
    unfilled_notional: order.unfilled_notional,
    avg_price: order.avg_price ?? 0,
    rejected_reason: outcome.reason,
    rejected_code: outcome.code,
    venues: [{ partner_id: order.partner_id, success: outcome.success, router_order_id: order.router_order_id, error: outcome.success ? null : outcome.reason }],
  };
}

export interface BuyResponse {
  results: RouterOrderResult[];
  halted_at_index: number | null;
  /** null when no leg wrote an order. */
  opportunity_id: string | null;
  model_id: string | null;
}

export interface OrderPartner {
  partner_id: string;
  partner_name: string;
  internal_book: boolean;
  logo_url: string;
}

/** An order as the reads show it (spec "router_order": the named fields, and what a client needs beside them). */
export interface RouterOrder {
  router_order_id: string;
  title: string;
  partner_id: string;
  partner_name: string;
  partner: OrderPartner;
  logo_url: string;
  requested_partner_id: string;
  /** The order's notional: booked plus unfilled. */
  amount: number;
  /** The average fill price; the limit (max_price) while nothing has filled. */
  price: number;
  currency: Currency;
  mode: OrderMode;
  order_type: OrderType;
  fee: number;
  amount_with_fee: number;
  model_id: string | null;
  model_name: string | null;
  opportunity_id: string | null;
  contest_id: string;
  position_hash: string;
  liquidity_hash: string | null;
  max_price: number;
  /** null while nothing has filled. */
  avg_price: number | null;
  filled_notional: number;
  filled_shares: number;
  unfilled_notional: number;
  leg_status: LegStatus;
  status: OrderStatus;
  fill_status: FillStatus;
  result: OrderResult | null;
  winnings: number | null;
  net_winnings: number | null;
  settled_at: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** GET orders/resting/me entry (spec "Resting order entry"). */
export interface RestingOrder {
  router_order_id: string;
  title: string;
  partner_id: string;
  partner_name: string;
  amount: number;
  price: number;
  fill_status: 'unfilled' | 'partially_filled';
  currency: Currency;
  contest_id: string;
  position_hash: string;
  filled_notional: number;
  unfilled_notional: number;
  created_at: string;
}

/** GET orders/:router_order_id/resolution (operator interface path; shape decided here). */
export interface OrderResolution {
  router_order_id: string;
  contest_id: string;
  position_hash: string;
  title: string;
  currency: Currency;
  status: OrderStatus;
  /** Whether the order's outcome is final: settled, or closed with nothing booked. */
  resolved: boolean;
  result: OrderResult | null;
  /** The stake the result applies to (the booked notional). */
  amount: number;
  winnings: number | null;
  net_winnings: number | null;
  settled_at: string | null;
}

/** The orders channel's event (spec "Events"). */
export interface OrderUpdateEvent {
  type: 'order.update';
  router_order_id: string;
  partner_id: string;
  status: OrderStatus;
  fill_status: FillStatus;
  filled_amt: number;
  unfilled_amt: number;
  avg_price: number;
  timestamp: string;
}

/** How an order resolved (or that it has not yet). */
export function resolutionOf(o: RouterOrder): OrderResolution {
  return {
    router_order_id: o.router_order_id,
    contest_id: o.contest_id,
    position_hash: o.position_hash,
    title: o.title,
    currency: o.currency,
    status: o.status,
    resolved: o.settled_at !== null || (o.status === 'closed' && o.filled_notional === 0),
    result: o.result,
    amount: o.filled_notional,
    winnings: o.winnings,
    net_winnings: o.net_winnings,
    settled_at: o.settled_at,
  };
}

/** What a buy's answer and an order's order.update event show of the order. */
export type PlacedOrderView = Pick<RouterOrder, 'router_order_id' | 'partner_id' | 'status' | 'fill_status' | 'filled_notional' | 'filled_shares' | 'unfilled_notional' | 'avg_price'>;

/** The orders channel's event for an order as it stands now. */
export const orderUpdateEvent = (o: PlacedOrderView, timestamp: string): OrderUpdateEvent => ({
  type: 'order.update',
  router_order_id: o.router_order_id,
  partner_id: o.partner_id,
  status: o.status,
  fill_status: o.fill_status,
  filled_amt: o.filled_notional,
  unfilled_amt: o.unfilled_notional,
  avg_price: o.avg_price ?? 0,
  timestamp,
});
