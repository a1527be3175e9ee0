/**
 * American odds from a 0-1 buy price.
 *
 * Favourite (price above 0.5): −100·p/(1−p), e.g. 0.6 → "-150".
 * Even or underdog (price at most 0.5): +100·(1−p)/p, e.g. 0.4 → "+150", 0.5 → "+100" (even money is
 * conventionally written +100). The magnitude is rounded to a whole number, as books print it.
 * A price outside (0, 1) has no finite odds and yields an empty string.
 */
export function americanOdds(price: number): string {
  if (!(price > 0 && price < 1)) return '';
  if (price > 0.5) return '-' + Math.round((100 * price) / (1 - price));
  return '+' + Math.round((100 * (1 - price)) / price);
}
