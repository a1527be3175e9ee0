/** The changed_entries rule of liquidity.update, one quote at a time. */
import type { ChangedEntry } from './job-types.js';
import type { TickEntry } from './types.js';

/**
 * Whether a quote's entry changed for the stream since the previous snapshot: new, or its price,
 * available or is_stale differ. A stored quote from before is_stale existed reads as fresh.
 */
export function entryChanged(before: TickEntry | undefined, next: TickEntry): boolean {
  return !before || before.price !== next.price || before.available !== next.available || (before.is_stale ?? false) !== next.is_stale;
}

export const toChangedEntry = (t: TickEntry): ChangedEntry => ({
  liquidity_hash: t.liquidity_hash,
  partner_id: t.partner_id,
  price: t.price,
  available: t.available,
  as_of: t.as_of,
  is_stale: t.is_stale,
});

/** The entry of a vanished (or newly withheld) quote: available 0 at its last price, confirmed now; none when it was empty already. */
export function removalEntry(last: TickEntry, nowIso: string): ChangedEntry | null {
  return last.available === 0 ? null : toChangedEntry({ ...last, available: 0, actionable: false, as_of: nowIso, is_stale: false });
}
