/**
 * A Kalshi order book and what a buyer can take from it.
 *
 * Kalshi publishes only bids, for each outcome of a market: YES bids and NO bids, each a list of
 * [price, count] ascending (best bid last). Since YES + NO pay exactly $1, a NO bid at q is an offer
 * to sell YES at 1 − q: the YES ask ladder is the NO bid ladder mirrored (best NO bid → best YES
 * ask, same size), and the NO ask ladder is the YES bid ladder mirrored.
 *
 *   NO bid 0.88 × 1967.33  →  YES ask 0.12 × 1967.33  (rest-orderbook.json; the market's own
 *                                                      yes_ask_dollars/yes_ask_size_fp agree)
 *
 * Prices and counts are exact micros (units.ts). The book is mutable state (snapshot + deltas), kept
 * per market by the stream; everything it hands out is plain data.
 */
import type { Micros } from '../../domain/money.js';
import type { PriceLevel } from '../types.js';
import type { KalshiLevel } from './messages.js';
import { complement, countMicros, malformed, notionalMicros, num, priceMicros } from './units.js';
import { UNIT } from '../../domain/money.js';

export type KalshiSide = 'yes' | 'no';

export const SIDES: readonly KalshiSide[] = ['yes', 'no'];

export const otherSide = (s: KalshiSide): KalshiSide => (s === 'yes' ? 'no' : 'yes');

/** Resting bids per outcome: price (micro-dollars) → count (micro-contracts). Zero counts are absent. */
export interface KalshiBook {
  yes: Map<Micros, Micros>;
  no: Map<Micros, Micros>;
}

/** One offer to a buyer of an outcome, exact. */
export interface KalshiOffer {
  price: Micros;
  count: Micros;
}

export const emptyBook = (): KalshiBook => ({ yes: new Map(), no: new Map() });

function checkPrice(p: Micros, what: string): Micros {
  if (p <= 0n || p >= UNIT) throw malformed(`${what} (price outside (0, 1))`, { price: String(p) });
  return p;
}

/** One side's ladder ([price, count] pairs, dollars or legacy cents) → map. null/absent → empty. */
export function ladder(levels: KalshiLevel[] | null | undefined, what: string): Map<Micros, Micros> {
  const out = new Map<Micros, Micros>();
  if (levels === null || levels === undefined) return out;
  if (!Array.isArray(levels)) throw malformed(what);
  for (const lv of levels) {
    if (!Array.isArray(lv) || lv.length < 2) throw malformed(what);
    const p = checkPrice(priceMicros(lv[0], `${what} price`), what);
    const c = countMicros(lv[1], `${what} count`);
    if (c < 0n) throw malformed(`${what} (negative count)`);
    if (c > 0n) out.set(p, (out.get(p) ?? 0n) + c);
  }
  return out;
}

export type DeltaResult = 'applied' | 'negative';

/**
 * Applies a signed change to the resting count at `price` on `side`. A change that would leave a
 * negative count means our book and the venue's disagree: the book is left untouched and the caller
 * must resnapshot.
 */
export function applyDelta(book: KalshiBook, side: KalshiSide, price: Micros, delta: Micros): DeltaResult {
  checkPrice(price, 'delta');
  const m = book[side];
  const next = (m.get(price) ?? 0n) + delta;
  if (next < 0n) return 'negative';
  if (next === 0n) m.delete(price);
  else m.set(price, next);
  return 'applied';
}

/** What a buyer of `outcome` can take: the other outcome's bids mirrored, best (lowest price) first. */
export function offers(book: KalshiBook, outcome: KalshiSide): KalshiOffer[] {
  const bids = [...book[otherSide(outcome)].entries()].sort((a, b) => (a[0] > b[0] ? -1 : a[0] < b[0] ? 1 : 0));
  return bids.map(([p, c]) => ({ price: complement(p), count: c }));
}

/** Offers as normalized levels: price 0-1 and the USD a buyer spends taking the whole level. */
export function levelsOf(list: KalshiOffer[], max = Number.POSITIVE_INFINITY): PriceLevel[] {
  return list.slice(0, max).map((o) => ({ price: num(o.price), available: num(notionalMicros(o.price, o.count)) }));
}

/** The best bid on `side` (highest), or null. */
export function bestBid(book: KalshiBook, side: KalshiSide): KalshiOffer | null {
  let best: KalshiOffer | null = null;
  for (const [p, c] of book[side]) if (!best || p > best.price) best = { price: p, count: c };
  return best;
}

/** A copy safe to hand out while the stream keeps mutating the original. */
export const cloneBook = (b: KalshiBook): KalshiBook => ({ yes: new Map(b.yes), no: new Map(b.no) });
