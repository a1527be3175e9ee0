/**
 * What a real-money leg's venue answer means for the order (spec "Router order result", "States
 * and transitions"): its leg status, order status, fill status, the figures it books and which
 * funds the ledger holds for it. Pure: the execute worker (pipelines/processors/execute.ts) asks the
 * venue, this decides, the store (src/store/pg/executions.ts) writes the decision with its ledger
 * rows and events in one transaction.
 */
import { microsText, toMicros } from './money.js';
import { LEG_REJECT_CODES, type LegRejectCode } from './orders.js';
import type { FillStatus, LegStatus, OrderStatus } from './router-orders.js';

/** The venue's answer to a placement: the fields of the VenueAdapter's VenueOrder that decide the leg. */
export interface VenueAnswer {
  /** Empty when the venue never assigned an id (a local refusal). */
  venue_order_id: string;
  status: 'filled' | 'partially_filled' | 'resting' | 'pending' | 'rejected' | 'cancelled';
  filled_contracts: number;
  /** USD booked (fees excluded). */
  filled_notional: number;
  avg_price: number | null;
  fees: number;
  /** Contracts still working at the limit (a resting order). */
  remaining_contracts: number;
  /** The effective limit on the venue's grid, 0-1. */
  limit_price: number;
  reject_code: string | null;
  reject_reason: string | null;
  /** When the venue booked it (unix ms, the venue's clock). */
  ts_event: number;
}

/**
 * What the ledger holds for a decided leg (docs/orders.md "Real-money legs", Ledger):
 * - none: nothing reached the book (failed);
 * - booked: what filled, plus its fee (a completed market order; the remainder was killed);
 * - booked_and_resting: that, plus the resting contracts at the limit (what the venue holds for them);
 * - commitment: the plan's notional plus taker fee (a pending order: the venue holds the cost of a
 *   fill it confirms later, and its answer does not say how much yet).
 */
export type HoldKind = 'none' | 'booked' | 'booked_and_resting' | 'commitment';

/** A decided leg as the store writes it: decimal text for money (exact), venue numbers through their shortest text. */
export interface LegDecision {
  leg_status: LegStatus;
  status: OrderStatus;
  fill_status: FillStatus;
  venue_order_id: string | null;
  filled_notional: string;
  filled_shares: string;
  avg_price: string | null;
  fee: string;
  /** Contracts resting at `limit_price`. */
  resting_contracts: string;
  limit_price: string | null;
  rejected_code: LegRejectCode | null;
  rejected_reason: string | null;
  hold: HoldKind;
  /** The venue's time of the booking (the ledger rows' time), or null to use the database's clock. */
  at_ms: number | null;
}

/** A venue number (six decimals at most, as adapters round them) as exact decimal text. */
const text = (x: number): string => microsText(toMicros(Number.isFinite(x) && x > 0 ? x : 0, 'half'));

/** The spec's code of a venue refusal; a code outside the closed per-leg set (unsupported_order_type) becomes null, its text kept. */
export function legCodeOf(venueCode: string | null): LegRejectCode | null {
  return venueCode !== null && (LEG_REJECT_CODES as readonly string[]).includes(venueCode) ? (venueCode as LegRejectCode) : null;
}

/**
 * The leg a venue answer decides. filled and partially_filled (the remainder killed) → completed,
 * open until it settles; resting → resting, open; pending (an async-fill venue) → pending;
 * rejected → failed, closed, with the venue's code; cancelled at once → completed if something
 * filled, else failed.
 */
export function decideLeg(a: VenueAnswer): LegDecision {
  const filled = a.filled_contracts > 0 && a.filled_notional > 0;
  const base = {
    venue_order_id: a.venue_order_id === '' ? null : a.venue_order_id,
    filled_notional: filled ? text(a.filled_notional) : '0',
    filled_shares: filled ? text(a.filled_contracts) : '0',
    avg_price: filled && a.avg_price !== null && a.avg_price > 0 && a.avg_price < 1 ? text(a.avg_price) : null,
    fee: text(a.fees),
    resting_contracts: '0',
    limit_price: a.limit_price > 0 && a.limit_price < 1 ? text(a.limit_price) : null,
    rejected_code: null,
    rejected_reason: null,
    at_ms: Number.isFinite(a.ts_event) && a.ts_event > 0 ? a.ts_event : null,
  } satisfies Partial<LegDecision>;
  switch (a.status) {
    case 'filled':
    case 'partially_filled':
      return { ...base, leg_status: 'completed', status: 'open', fill_status: a.status, hold: 'booked' };
    case 'resting':
      return {
        ...base,
        leg_status: 'resting',
        status: 'open',
        fill_status: filled ? 'partially_filled' : 'unfilled',
        resting_contracts: text(a.remaining_contracts),
        hold: 'booked_and_resting',
      };
    case 'pending':
      return { ...base, leg_status: 'pending', status: 'pending', fill_status: 'unfilled', hold: 'commitment' };
    case 'cancelled':
      if (filled) return { ...base, leg_status: 'completed', status: 'open', fill_status: 'partially_filled', hold: 'booked' };
      return failedLeg(a.reject_reason ?? 'the venue cancelled the order before anything filled', null, base.venue_order_id, base.at_ms);
    case 'rejected':
      return failedLeg(a.reject_reason ?? 'the venue rejected the order', legCodeOf(a.reject_code), base.venue_order_id, base.at_ms);
  }
}

/** A leg that ends without anything booked: failed, closed, nothing held. */
export function failedLeg(reason: string, code: LegRejectCode | null = null, venueOrderId: string | null = null, atMs: number | null = null): LegDecision {
  return {
    leg_status: 'failed',
    status: 'closed',
    fill_status: 'unfilled',
    venue_order_id: venueOrderId,
    filled_notional: '0',
    filled_shares: '0',
    avg_price: null,
    fee: '0',
    resting_contracts: '0',
    limit_price: null,
    rejected_code: code,
    rejected_reason: reason,
    hold: 'none',
    at_ms: atMs,
  };
}
