/**
 * The ladder model: one side of a spread or total ladder (say "over" at 210.5, 211.5, 212.5) seen
 * as one curve of fair probability against the line.
 *
 * The per-line consensus prices are noisy and may cross each other (over 211.5 priced below over
 * 212.5), which no distribution allows. The model is the weighted isotonic (monotone) regression of
 * those prices on the line, direction taken from the data; it keeps every line that is already
 * consistent and pools the ones that are not. From that curve:
 * - distribution_prices: the fitted fair probability at every quoted line;
 * - consensus_line: where the curve crosses 0.5, linearly interpolated between the two lines that
 *   bracket it (the middle of the run when the curve sits at exactly 0.5). No extrapolation past
 *   the ends of the ladder: a single line or a ladder entirely on one side of 0.5 does not say
 *   where the fair line is, so the answer is null.
 */
import { round6 } from './precision.js';
import type { DistributionPoint } from './types.js';

/** One line of a ladder side: its line value, consensus price and the weight behind it. */
export interface LadderPoint {
  variable: number;
  price: number;
  weight: number;
}

/** The ladder model of one ladder side. */
export interface LadderFit {
  /** Ascending by variable. */
  distribution: DistributionPoint[];
  line: number | null;
}

const HALF_EPSILON = 1e-12;
/** Keeps the pooled mean defined when a line carries no weight. */
const MIN_POINT_WEIGHT = 1e-9;

/**
 * Fits one ladder side. Sorts `points` in place by variable (a ladder is a few dozen lines at
 * most, so an insertion sort on the caller's array is the cheapest option).
 */
export function fitLadder(points: LadderPoint[]): LadderFit {
  const n = points.length;
  if (n === 0) return { distribution: [], line: null };
  for (let i = 1; i < n; i++) {
    const p = points[i];
    let j = i - 1;
    while (j >= 0 && points[j].variable > p.variable) {
      points[j + 1] = points[j];
      j--;
    }
    points[j + 1] = p;
  }

  const variables = new Array<number>(n);
  const values = new Array<number>(n);
  const weights = new Array<number>(n);
  let sw = 0;
  let swx = 0;
  let swy = 0;
  let swxy = 0;
  for (let i = 0; i < n; i++) {
    const p = points[i];
    const w = p.weight > MIN_POINT_WEIGHT ? p.weight : MIN_POINT_WEIGHT;
    variables[i] = p.variable;
    values[i] = p.price;
    weights[i] = w;
    sw += w;
    swx += w * p.variable;
    swy += w * p.price;
    swxy += w * p.variable * p.price;
  }
  // Direction from the weighted covariance of price and line, so the model needs no knowledge of
  // which side key rises with the line (over falls, under and a spread's taker rise).
  const increasing = swxy / sw - (swx / sw) * (swy / sw) >= 0;
  const fitted = isotonicFit(values, weights, increasing);

  const distribution = new Array<DistributionPoint>(n);
  for (let i = 0; i < n; i++) distribution[i] = { variable: variables[i], price: round6(fitted[i]) };
  const line = crossingLine(variables, fitted);
  return { distribution, line: line === null ? null : round6(line) };
}

/**
 * Weighted isotonic regression by pool-adjacent-violators: the monotone sequence (non-decreasing
 * when `increasing`, else non-increasing) closest to `values` in weighted least squares.
 * Linear time; weights must be positive.
 */
export function isotonicFit(values: readonly number[], weights: readonly number[], increasing: boolean): number[] {
  const n = values.length;
  const sign = increasing ? 1 : -1; // fit −values increasing for the decreasing case
  const blockValue = new Array<number>(n);
  const blockWeight = new Array<number>(n);
  const blockSize = new Array<number>(n);
  let top = -1;
  for (let i = 0; i < n; i++) {
    top++;
    blockValue[top] = sign * values[i];
    blockWeight[top] = weights[i];
    blockSize[top] = 1;
    while (top > 0 && blockValue[top - 1] > blockValue[top]) {
      const w = blockWeight[top - 1] + blockWeight[top];
      blockValue[top - 1] = (blockValue[top - 1] * blockWeight[top - 1] + blockValue[top] * blockWeight[top]) / w;
      blockWeight[top - 1] = w;
      blockSize[top - 1] += blockSize[top];
      top--;
    }
  }
  const out = new Array<number>(n);
  let i = 0;
  for (let b = 0; b <= top; b++) for (let c = 0; c < blockSize[b]; c++) out[i++] = sign * blockValue[b];
  return out;
}

/**
 * Where a monotone curve given at ascending `variables` crosses 0.5: linear interpolation between
 * the bracketing lines, the midpoint of a run sitting at 0.5, or null when it never reaches 0.5.
 */
export function crossingLine(variables: readonly number[], fitted: readonly number[]): number | null {
  const n = variables.length;
  for (let i = 0; i < n; i++) {
    const a = fitted[i] - 0.5;
    if (Math.abs(a) <= HALF_EPSILON) {
      let j = i;
      while (j + 1 < n && Math.abs(fitted[j + 1] - 0.5) <= HALF_EPSILON) j++;
      return (variables[i] + variables[j]) / 2;
    }
    if (i + 1 < n) {
      const b = fitted[i + 1] - 0.5;
      if (Math.abs(b) > HALF_EPSILON && (a < 0) !== (b < 0)) {
        return variables[i] + (a / (a - b)) * (variables[i + 1] - variables[i]);
      }
    }
  }
  return null;
}
