import type { VenueQuote } from './types.js';

/**
 * Which quotes of one position are withheld (spec, binding): a venue that lists the participant on
 * the opposite side from every other venue is withheld, because a lone dissent is far more likely
 * a mapping error at that venue (home/away swapped) than the truth, and buying it would buy the
 * other outcome.
 *
 * Read as: a quote is withheld when its venue_side_key is held by it alone while at least two
 * other quotes all share one other side. Hence:
 * - 1 vs 1 (two venues disagreeing): nobody is "the" dissenter, nothing is withheld;
 * - 1 vs 2+: the one is withheld; 2 vs 2: nothing;
 * - three or more distinct side keys: no clear majority side, nothing is withheld.
 * The position's own side_key plays no part: the rule compares venues with each other.
 * One quote per venue per position is assumed (a venue is its quote here).
 *
 * Returns one flag per quote, in order.
 */
export function withheldMask(quotes: readonly VenueQuote[]): boolean[] {
  const n = quotes.length;
  const mask = new Array<boolean>(n).fill(false);
  if (n < 3) return mask;
  const sideA = quotes[0].venue_side_key;
  let countA = 0;
  let sideB: string | null = null;
  let countB = 0;
  for (let i = 0; i < n; i++) {
    const side = quotes[i].venue_side_key;
    if (side === sideA) countA++;
    else if (sideB === null || side === sideB) {
      sideB = side;
      countB++;
    } else return mask; // a third side: no single opposite to measure against
  }
  let lone: string | null = null;
  if (countA === 1 && countB >= 2) lone = sideA;
  else if (countB === 1 && countA >= 2) lone = sideB;
  if (lone === null) return mask;
  for (let i = 0; i < n; i++) if (quotes[i].venue_side_key === lone) mask[i] = true;
  return mask;
}
