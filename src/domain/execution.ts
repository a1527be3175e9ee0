/**
 * What a real-money leg's venue answer means for the order (spec "Router order result", "States
 * and transitions"): its leg status, order status, fill status, the figures it books and which
 * funds the ledger holds for it. Pure: the execute worker (pipelines/processors/execute.ts) asks the
 * venue, this decides, the store (src/store/pg/executions.ts) writes the decision with its ledger
 * rows and events in one transaction.
 */
import { microsText, mulMicros, parseMicros, toMicros } from './money.js';
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

// ---- after the decision: the venue's later reports on a working order ------------------------------

/** A decided order that may still change at its venue, as the store holds it (exact decimal text). */
export interface WorkingOrder {
  leg_status: LegStatus;
  /** The remainder was cancelled already (cancelled_at set). */
  cancelled: boolean;
  /** Contracts filled as last recorded: the venue's own cumulative count (the update guard). */
  filled_shares: string;
  /** The order's limit on the venue's grid (what a resting contract holds). */
  limit_price: string | null;
  /** What a pending order holds until its fill is known (the plan's notional + estimated fee). */
  commitment: string | null;
}

/** What a venue's later report on a working order changes (src/store/pg/order-updates.ts writes it). */
export interface OrderUpdate {
  leg_status: LegStatus;
  status: OrderStatus;
  fill_status: FillStatus;
  filled_notional: string;
  filled_shares: string;
  avg_price: string | null;
  fee: string;
  /** The remainder ended at the venue (cancelled or expired): cancelled_at is set. */
  cancelled: boolean;
  /** Set when a pending order ends with nothing filled (the venue refused or dropped it). */
  rejected_code: LegRejectCode | null;
  rejected_reason: string | null;
  venue_order_id: string | null;
  /** What the order holds from now on: booked notional + fee, plus what still works (resting contracts × limit, or the pending commitment). */
  holds: string;
  /**
   * The change of hold corrects a pending order's estimate (the commitment) to its actual cost,
   * which the venue took when it accepted the order: the ledger row is dated with the original hold,
   * not with the fill.
   */
  corrects_estimate: boolean;
  /** More contracts filled than recorded: the contest's liquidity changed (a refresh is due). */
  filled_more: boolean;
  /** Contracts the report adds to those recorded (decimal text). */
  new_contracts: string;
  /** The venue's time of the report (the ledger row's time), or null for the database's clock. */
  at_ms: number | null;
}

const WORKING_LEGS: readonly LegStatus[] = ['resting', 'pending'];

/** Whether a decided order can still change at its venue (a resting remainder or an unconfirmed fill). */
export const isWorking = (o: Pick<WorkingOrder, 'leg_status' | 'cancelled'>): boolean => WORKING_LEGS.includes(o.leg_status) && !o.cancelled;

/**
 * What a venue report (an order update, a fetchOrder, a cancel's answer) changes on a working order,
 * or null when it changes nothing. Reports are cumulative snapshots of the venue's order, and the
 * venue's filled count only grows, so a report lands only when it carries more filled contracts
 * than recorded, or ends the order: a report seen twice, or an older one after a newer, is null.
 * An order that is no longer working takes no report.
 *
 * - resting, filled to the end → completed, open (until it settles), filled;
 * - resting with more fills → still resting, partially_filled;
 * - resting, cancelled or expired at the venue → stays resting with cancelled set: closed when
 *   nothing filled, else open (its filled part settles), partially_filled;
 * - pending → filled or partially_filled (completed, open); nothing filled and refused or dropped
 *   by the venue → failed, closed.
 * The hold follows: booked notional + fee, plus the resting contracts at the limit while any rest,
 * or the commitment while the fill is pending.
 */
export function updateWorkingOrder(cur: WorkingOrder, a: VenueAnswer): OrderUpdate | null {
  if (!isWorking(cur)) return null;
  const before = parseMicros(cur.filled_shares, 'half').micros;
  const now = Number.isFinite(a.filled_contracts) && a.filled_contracts > 0 ? toMicros(a.filled_contracts, 'half') : 0n;
  const ends = a.status !== 'resting' && a.status !== 'pending';
  if (now < before || (now === before && !ends)) return null;
  const d = decideLeg(a);
  const restingEnds = cur.leg_status === 'resting' && (a.status === 'cancelled' || a.status === 'rejected');
  const filled = d.filled_notional !== '0';
  const next = restingEnds
    ? { ...d, leg_status: 'resting' as const, status: filled ? ('open' as const) : ('closed' as const), fill_status: filled ? ('partially_filled' as const) : ('unfilled' as const), hold: filled ? ('booked' as const) : ('none' as const), rejected_code: null, rejected_reason: null }
    : d;
  if (next.leg_status === 'pending' && cur.leg_status === 'resting') return null; // a resting order does not become pending
  const booked = parseMicros(next.filled_notional).micros + parseMicros(next.fee).micros;
  const limit = next.limit_price ?? cur.limit_price;
  const holds =
    next.hold === 'booked_and_resting'
      ? booked + (limit === null ? 0n : mulMicros(parseMicros(next.resting_contracts).micros, parseMicros(limit).micros, 'half'))
      : next.hold === 'commitment'
        ? parseMicros(cur.commitment ?? '0').micros
        : next.hold === 'booked'
          ? booked
          : 0n;
  return {
    leg_status: next.leg_status,
    status: next.status,
    fill_status: next.fill_status,
    filled_notional: next.filled_notional,
    filled_shares: next.filled_shares,
    avg_price: next.avg_price,
    fee: next.fee,
    cancelled: restingEnds,
    rejected_code: next.leg_status === 'failed' ? next.rejected_code : null,
    rejected_reason: next.leg_status === 'failed' ? next.rejected_reason : null,
    venue_order_id: next.venue_order_id,
    holds: microsText(holds),
    corrects_estimate: cur.leg_status === 'pending' && next.leg_status !== 'pending',
    filled_more: now > before,
    new_contracts: microsText(now - before),
    at_ms: next.at_ms,
  };
}

/** What the ledger records of a report, as the store reads it (exact decimal text). */
export interface HoldMoveInput {
  /** What the order's hold and release rows hold now (a positive amount). */
  held: string;
  /** Booked notional + fee as recorded before the report, and as the report has it. */
  booked_before: string;
  booked_after: string;
  /** Contracts the report adds, and the limit a resting contract was held at. */
  new_contracts: string;
  limit_price: string | null;
  /** What the order holds from now on (OrderUpdate.holds). */
  holds: string;
  corrects_estimate: boolean;
}

/**
 * The hold movements of one report, in order, each a positive amount to hold more or a negative one
 * to release (zeros left out): first the fill (its contracts move from the resting hold into what
 * is booked; what differs is the fee, or a fill cheaper than its limit), then the end of the
 * remainder (what no longer rests is released). So a partial fill and a cancel in one report still
 * read as a hold of the fee and a release of exactly the remainder. A pending order's estimate is
 * corrected in one movement. The movements always add up to holds − held.
 */
export function holdMoves(m: HoldMoveInput): bigint[] {
  const held = parseMicros(m.held).micros;
  const target = parseMicros(m.holds).micros;
  if (m.corrects_estimate) return target === held ? [] : [target - held];
  const bookedBefore = parseMicros(m.booked_before).micros;
  const bookedAfter = parseMicros(m.booked_after).micros;
  const moved = m.limit_price === null ? 0n : mulMicros(parseMicros(m.new_contracts).micros, parseMicros(m.limit_price).micros, 'half');
  const restingBefore = held - bookedBefore > 0n ? held - bookedBefore : 0n;
  const restingAfterFill = restingBefore - moved > 0n ? restingBefore - moved : 0n;
  const fill = bookedAfter + restingAfterFill - held;
  const end = target - bookedAfter - restingAfterFill;
  return [fill, end].filter((x) => x !== 0n);
}
