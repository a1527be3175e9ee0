/**
 * Output rounding. Published numbers are rounded to six decimals so that float noise such as
 * 0.30000000000000004 never reaches a client or a stored snapshot; six decimals keep a
 * probability exact to a ten-thousandth of a cent per contract, far below any venue's tick.
 */
/** Decimals kept on computed outputs. */
export const OUTPUT_DECIMALS = 6;

const SCALE = 10 ** OUTPUT_DECIMALS;

/** Rounds to OUTPUT_DECIMALS decimals (half away from zero is irrelevant at this precision). */
export function round6(value: number): number {
  return Math.round(value * SCALE) / SCALE;
}
