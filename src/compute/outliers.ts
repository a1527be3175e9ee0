import { medianInPlace } from './median.js';
import { MIN_QUOTE_USD, isTradablePrice } from './quotes.js';
import type { VenueQuote } from './types.js';

/** A quote further than this from the median is an outlier (spec, binding). */
export const OUTLIER_DISTANCE = 0.15;

/** The median is only meaningful with at least this many real books (spec, binding). */
export const MIN_REAL_BOOKS_FOR_MEDIAN = 3;

/**
 * Slack for binary floating point: 0.65 − 0.5 evaluates to 0.15000000000000002, and a quote exactly
 * 0.15 away must not be flagged. Far below any venue's price tick.
 */
const DISTANCE_EPSILON = 1e-9;

/**
 * Median price of the venues with a real book quoting the position, or null when fewer than
 * MIN_REAL_BOOKS_FOR_MEDIAN do.
 *
 * Counted: quotes not excluded, with real_book, a tradable price and at least USD 1 available.
 * A sportsbook line (no depth) or an emptied book is not a venue "quoting with a real book", so it
 * neither counts toward the three nor moves the median; it is still judged against the median.
 * `excluded` flags the quotes the caller keeps out: withheld ones, and stale ones (a price not
 * confirmed within its venue's bound is not evidence of where the market is now).
 */
export function realBookMedian(quotes: readonly VenueQuote[], excluded: readonly boolean[]): number | null {
  const prices: number[] = [];
  for (let i = 0; i < quotes.length; i++) {
    const q = quotes[i];
    if (!excluded[i] && q.real_book && q.available >= MIN_QUOTE_USD && isTradablePrice(q.price)) prices.push(q.price);
  }
  if (prices.length < MIN_REAL_BOOKS_FOR_MEDIAN) return null;
  return medianInPlace(prices);
}

/** More than OUTLIER_DISTANCE from the median; never an outlier when the median is null. */
export function isOutlier(price: number, median: number | null): boolean {
  return median !== null && Math.abs(price - median) > OUTLIER_DISTANCE + DISTANCE_EPSILON;
}
