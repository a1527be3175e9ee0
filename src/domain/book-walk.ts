/**
 * Walking a venue's book (best price first) for an order, in exact micros (money.ts): what a stake
 * or a contract count takes up to a limit, level by level, as a venue's matching engine fills a
 * market order (and the crossing part of a limit order).
 */
import { divMicros, floorTo, fromMicros, minMicros, mulMicros, toMicros, UNIT, type Micros } from './money.js';
import type { PriceLevel } from './quotes.js';

/** A market order's stake left below this (USD 0.005) is filled: the rest is rounding dust. */
const DUST: Micros = 5_000n;

/** One fill (or, on a limit order, the resting remainder at its limit). */
export interface Fill {
  price: Micros;
  contracts: Micros;
  notional: Micros;
}

export interface Walk {
  fills: Fill[];
  contracts: Micros;
  notional: Micros;
  /** Some level was offered at or below the limit. */
  eligible: boolean;
  /** The order was met (or what is left cannot buy one more contract / is rounding dust). */
  satisfied: boolean;
}

/** Levels as exact micros, best first, empty ones dropped. */
export function microLevels(levels: readonly PriceLevel[]): { price: Micros; available: Micros }[] {
  return levels
    .filter((l) => l.available > 0 && l.price > 0)
    .map((l) => ({ price: toMicros(l.price, 'half'), available: toMicros(l.available, 'floor') }))
    .filter((l) => l.available > 0n && l.price > 0n)
    .sort((a, b) => (a.price < b.price ? -1 : a.price > b.price ? 1 : 0));
}

/**
 * Takes liquidity from `levels` (best first) up to `limit` for a USD stake or a contract count.
 * Whole-contract venues take whole contracts; others micro-contracts. Exact: contracts × price is
 * the notional booked. The stake is met once what is left cannot buy one more contract at the
 * price just taken (deeper levels are dearer), or is dust on a fractional venue.
 */
export function walkBook(levels: readonly PriceLevel[], limit: Micros, whole: boolean, want: { usd: Micros } | { contracts: Micros }): Walk {
  const fills: Fill[] = [];
  let remUsd = 'usd' in want ? want.usd : 0n;
  let remQty = 'contracts' in want ? want.contracts : 0n;
  let contracts = 0n;
  let notional = 0n;
  let eligible = false;
  let satisfied = false;
  const grid = (q: Micros) => (whole ? floorTo(q, UNIT) : q);
  const wanted = (price: Micros) => grid('usd' in want ? divMicros(remUsd, price, 'floor') : remQty);
  for (const lv of microLevels(levels)) {
    if (lv.price > limit) break;
    eligible = true;
    if (wanted(lv.price) <= 0n) {
      satisfied = true;
      break;
    }
    const take = minMicros(grid(divMicros(lv.available, lv.price, 'floor')), wanted(lv.price));
    if (take <= 0n) continue; // a level smaller than one whole contract
    const cost = mulMicros(take, lv.price, 'half');
    fills.push({ price: lv.price, contracts: take, notional: cost });
    contracts += take;
    notional += cost;
    if ('usd' in want) remUsd -= cost;
    else remQty -= take;
    if ('usd' in want ? (!whole && remUsd < DUST) || wanted(lv.price) <= 0n : remQty <= 0n) {
      satisfied = true;
      break;
    }
  }
  return { fills, contracts, notional, eligible, satisfied };
}

/** USD a book offers at or below `limit`, and its best price. */
export function bookWithin(levels: readonly PriceLevel[], limit: number): { available: number; best: number | null } {
  const lv = microLevels(levels);
  const lim = toMicros(limit, 'floor');
  return { available: fromMicros(lv.filter((l) => l.price <= lim).reduce((s, l) => s + l.available, 0n)), best: lv[0] ? fromMicros(lv[0].price) : null };
}

