/**
 * Multiplicative (proportional) devig of one venue's prices over a mutually exclusive group:
 * fair_i = p_i / Σ p_j, so the group sums to exactly 1.
 *
 * Why multiplicative and not power or Shin (see docs/pricing.md for the full argument):
 * - most venues here are exchanges, where the overround is the bid-ask spread, not a bookmaker
 *   margin loaded onto longshots; the favourite-longshot correction that power and Shin apply is
 *   built for sportsbook margins;
 * - it is closed-form and exact, so anyone can reproduce a published consensus by hand, and it is
 *   the cheapest method on a path that runs on every liquidity change;
 * - it handles any group size and an underround (Σ < 1, crossed books) the same way.
 *
 * `out` may be passed to avoid an allocation; it is returned. Prices must be positive.
 */
export function devigMultiplicative(prices: readonly number[], out: number[] = new Array<number>(prices.length)): number[] {
  let sum = 0;
  for (let i = 0; i < prices.length; i++) sum += prices[i];
  for (let i = 0; i < prices.length; i++) out[i] = prices[i] / sum;
  return out;
}

/** Σ p − 1: the venue's margin over the group (negative for an underround). */
export function overround(prices: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < prices.length; i++) sum += prices[i];
  return sum - 1;
}
