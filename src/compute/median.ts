/**
 * Median of a short list (a handful of venues), or null when empty.
 *
 * Reorders `values` in place: an insertion sort on the caller's own scratch array beats copying
 * and calling Array.prototype.sort for the five to ten prices a position has.
 * With an even count it is the mean of the two middle values.
 */
export function medianInPlace(values: number[]): number | null {
  const n = values.length;
  if (n === 0) return null;
  for (let i = 1; i < n; i++) {
    const v = values[i];
    let j = i - 1;
    while (j >= 0 && values[j] > v) {
      values[j + 1] = values[j];
      j--;
    }
    values[j + 1] = v;
  }
  const mid = n >> 1;
  return n % 2 === 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}
