/**
 * The tick-sending rule (spec, binding). A tick is sent whenever the price changes; a size-only
 * move is sent only when the quote empties, refills from empty, or shrinks to USD 1,000 or less.
 * New quotes are sent; a quote that disappeared is sent once with available 0.
 *
 * Size moves above USD 1,000 are not worth a message: they change nothing a taker of ordinary size
 * can see, and deep books move constantly.
 */
import { MIN_QUOTE_USD } from './quotes.js';
import type { TickEntry } from './types.js';

/** A size-only shrink to at most this many USD is sent. */
export const SHRINK_ALERT_USD = 1000;

/** The part of a quote the rule looks at. */
export interface QuoteTop {
  price: number;
  available: number;
}

/** Why a tick is sent; see the table in docs/pricing.md. */
export type TickReason = 'new' | 'removed' | 'price' | 'emptied' | 'refilled' | 'shrank';

/**
 * Why a tick is due between the previous and the new state of one quote, or null when none is.
 * `undefined` means the quote is absent on that side.
 *
 * "Empty" means below USD 1 (MIN_QUOTE_USD), the size under which a quote cannot take an order:
 * a quote going from USD 0.40 to USD 2,000 has refilled as far as any buyer can tell.
 */
export function tickReason(prev: QuoteTop | undefined, next: QuoteTop | undefined): TickReason | null {
  if (next === undefined) return prev === undefined ? null : 'removed';
  if (prev === undefined) return 'new';
  if (next.price !== prev.price) return 'price';
  if (next.available === prev.available) return null;
  const wasEmpty = prev.available < MIN_QUOTE_USD;
  const isEmpty = next.available < MIN_QUOTE_USD;
  if (isEmpty && !wasEmpty) return 'emptied';
  if (wasEmpty && !isEmpty) return 'refilled';
  if (next.available <= SHRINK_ALERT_USD && next.available < prev.available) return 'shrank';
  return null;
}

/** True when the tick-sending rule sends a tick for this change. */
export function shouldSendTick(prev: QuoteTop | undefined, next: QuoteTop | undefined): boolean {
  return tickReason(prev, next) !== null;
}

/** buy_id of a quote version: the quote's key and the venue's event time. */
export function buyId(liquidityHash: string, tsEvent: number): string {
  return liquidityHash + '@' + tsEvent;
}

/**
 * The tick for a quote that disappeared (or became withheld): its last entry with nothing
 * available. It is a new version, stamped with the compute clock; with the quote gone there is
 * nothing to compare with the median, so outlier is false and median null, and the removal itself
 * is confirmed now, so it is not stale.
 */
export function removalTick(last: TickEntry, nowMs: number, nowIso: string): TickEntry {
  return {
    ...last,
    available: 0,
    actionable: false,
    buy_id: buyId(last.liquidity_hash, nowMs),
    outlier: false,
    median: null,
    as_of: nowIso,
    is_stale: false,
  };
}
