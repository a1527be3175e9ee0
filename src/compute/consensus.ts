/**
 * Cross-venue consensus for one mutually exclusive group (both sides of a moneyline, over/under of
 * one total line, every runner of an outright).
 *
 * 1. A venue with a usable quote on every member is devigged multiplicatively over the group and
 *    contributes that fair distribution with one weight for all members (so a mixture of such
 *    venues still sums to 1).
 * 2. A venue missing some member cannot be devigged; each quote it has contributes its raw price
 *    at ONE_SIDED_WEIGHT of its liquidity weight, because a raw buy price still carries the
 *    venue's half-spread and is biased high.
 * 3. Per member: weighted mean of the contributions.
 * 4. When every member has a consensus the group is renormalized to sum to 1, which removes the
 *    vig the one-sided raw prices brought in and keeps home + away = 1.
 *
 * Outliers, withheld quotes and unusable quotes are filtered out by the caller (contest.ts), so the
 * mean here only sees robust inputs. Stale quotes are filtered here: on a member that any fresh
 * quote prices they are dropped (a deep stale book would otherwise outweigh a thin fresh one), and
 * only a member priced by stale quotes alone falls back to them.
 */
import { devigMultiplicative } from './devig.js';

/** A quote as the consensus sees it. */
export interface ConsensusQuote {
  partner_id: string;
  price: number;
  available: number;
  stale: boolean;
}

/** Consensus of one member: the fair price (null when nothing usable quotes it) and the total
 *  weight behind it (used to weight the ladder fit). */
export interface MemberConsensus {
  price: number | null;
  weight: number;
}

/** Liquidity below this counts as this much, so a sportsbook line (available 0) still has a say. */
export const MIN_WEIGHT_USD = 100;
/** Liquidity above this counts as this much, so one deep book cannot drown every other venue. */
export const MAX_WEIGHT_USD = 100_000;
/** Weight factor of a raw (un-devigged) price from a venue that does not price the whole group. */
export const ONE_SIDED_WEIGHT = 0.5;
/**
 * Weight factor of a stale quote. Stale quotes only ever price a member nothing fresh prices, so
 * within the member it cancels out; it scales the member's reported weight, so a consensus resting
 * on stale quotes counts for little in the ladder fit.
 */
export const STALE_WEIGHT = 0.1;

/**
 * Weight of a venue with `availableUsd` at its best level: sqrt of the liquidity clamped to
 * [MIN_WEIGHT_USD, MAX_WEIGHT_USD]. The square root makes a book 100× deeper count 10× more:
 * depth is evidence of a price that has been tested, but with strongly diminishing returns.
 */
export function liquidityWeight(availableUsd: number): number {
  const a = availableUsd < MIN_WEIGHT_USD ? MIN_WEIGHT_USD : availableUsd > MAX_WEIGHT_USD ? MAX_WEIGHT_USD : availableUsd;
  return Math.sqrt(a);
}

/**
 * Consensus for each member of a group. `members[k]` holds the usable quotes on member k (at most
 * one per venue). Returns one entry per member, in order.
 */
export function groupConsensus(members: readonly (readonly ConsensusQuote[])[]): MemberConsensus[] {
  const m = members.length;
  const num = new Array<number>(m).fill(0);
  const den = new Array<number>(m).fill(0);

  // Rows by venue: row[k] is the venue's quote on member k, if any.
  const rows = new Map<string, (ConsensusQuote | undefined)[]>();
  for (let k = 0; k < m; k++) {
    const quotes = members[k];
    const skipStale = hasFresh(quotes);
    for (let j = 0; j < quotes.length; j++) {
      const q = quotes[j];
      if (skipStale && q.stale) continue;
      let row = rows.get(q.partner_id);
      if (row === undefined) {
        row = new Array<ConsensusQuote | undefined>(m);
        rows.set(q.partner_id, row);
      }
      row[k] = q;
    }
  }

  const prices = new Array<number>(m);
  const fair = new Array<number>(m);
  for (const row of rows.values()) {
    let complete = m >= 2; // a one-member group has nothing to devig against
    let minAvailable = Infinity;
    let stale = false;
    for (let k = 0; complete && k < m; k++) {
      const q = row[k];
      if (q === undefined) {
        complete = false;
        break;
      }
      prices[k] = q.price;
      if (q.available < minAvailable) minAvailable = q.available;
      if (q.stale) stale = true;
    }
    if (complete) {
      // The thinnest side bounds how much of the two-way market is really there.
      const w = liquidityWeight(minAvailable) * (stale ? STALE_WEIGHT : 1);
      devigMultiplicative(prices, fair);
      for (let k = 0; k < m; k++) {
        num[k] += w * fair[k];
        den[k] += w;
      }
    } else {
      for (let k = 0; k < m; k++) {
        const q = row[k];
        if (q === undefined) continue;
        const w = liquidityWeight(q.available) * ONE_SIDED_WEIGHT * (q.stale ? STALE_WEIGHT : 1);
        num[k] += w * q.price;
        den[k] += w;
      }
    }
  }

  const out = new Array<MemberConsensus>(m);
  let total = 0;
  let allPriced = m >= 2;
  for (let k = 0; k < m; k++) {
    const price = den[k] > 0 ? num[k] / den[k] : null;
    out[k] = { price, weight: den[k] };
    if (price === null) allPriced = false;
    else total += price;
  }
  if (allPriced && total > 0) for (let k = 0; k < m; k++) out[k].price = (out[k].price as number) / total;
  return out;
}

function hasFresh(quotes: readonly ConsensusQuote[]): boolean {
  for (let j = 0; j < quotes.length; j++) if (!quotes[j].stale) return true;
  return false;
}
