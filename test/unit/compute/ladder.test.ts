import { describe, expect, it } from 'vitest';
import { crossingLine, fitLadder, isotonicFit } from '../../../src/compute/ladder.js';

const pt = (variable: number, price: number, weight = 1) => ({ variable, price, weight });

describe('isotonicFit', () => {
  it('leaves a monotone sequence alone', () => {
    expect(isotonicFit([0.58, 0.52, 0.46], [1, 1, 1], false)).toEqual([0.58, 0.52, 0.46]);
  });

  it('pools adjacent violators (weighted)', () => {
    const eq = isotonicFit([0.58, 0.45, 0.48], [1, 1, 1], false);
    expect(eq[0]).toBe(0.58);
    expect(eq[1]).toBeCloseTo(0.465, 12);
    expect(eq[2]).toBeCloseTo(0.465, 12);
    // (1·0.45 + 3·0.48)/4 = 0.4725
    const w = isotonicFit([0.58, 0.45, 0.48], [1, 1, 3], false);
    expect(w[1]).toBeCloseTo(0.4725, 12);
    expect(w[2]).toBeCloseTo(0.4725, 12);
  });

  it('fits increasing sequences too', () => {
    const f = isotonicFit([0.4, 0.6, 0.5, 0.7], [1, 1, 1, 1], true);
    expect(f[0]).toBe(0.4);
    expect(f[1]).toBeCloseTo(0.55, 12);
    expect(f[2]).toBeCloseTo(0.55, 12);
    expect(f[3]).toBe(0.7);
  });
});

describe('crossingLine', () => {
  it('interpolates between the bracketing lines', () => {
    // 211.5 + (0.52 − 0.5)/(0.52 − 0.46) = 211.8333…
    expect(crossingLine([210.5, 211.5, 212.5], [0.58, 0.52, 0.46])).toBeCloseTo(211.8333333333, 9);
  });

  it('takes the middle of a run sitting at 0.5', () => {
    expect(crossingLine([1, 2, 3, 4], [0.6, 0.5, 0.5, 0.4])).toBe(2.5);
    expect(crossingLine([7], [0.5])).toBe(7);
  });

  it('is null when the ladder never reaches 0.5', () => {
    expect(crossingLine([1, 2], [0.6, 0.55])).toBeNull();
    expect(crossingLine([7], [0.6])).toBeNull();
    expect(crossingLine([], [])).toBeNull();
  });
});

describe('fitLadder', () => {
  it('over side of a total ladder (given unsorted)', () => {
    const fit = fitLadder([pt(212.5, 0.46), pt(210.5, 0.58), pt(211.5, 0.52)]);
    expect(fit.distribution).toEqual([
      { variable: 210.5, price: 0.58 },
      { variable: 211.5, price: 0.52 },
      { variable: 212.5, price: 0.46 },
    ]);
    expect(fit.line).toBe(211.833333);
  });

  it('home side of a spread ladder rises with the line', () => {
    // −4.5 + (0.5 − 0.46)/(0.52 − 0.46) = −3.8333…
    const fit = fitLadder([pt(-2.5, 0.58), pt(-3.5, 0.52), pt(-4.5, 0.46)]);
    expect(fit.line).toBe(-3.833333);
    expect(fit.distribution.map((d) => d.variable)).toEqual([-4.5, -3.5, -2.5]);
  });

  it('repairs a crossed ladder before locating the line', () => {
    // Over: 0.58, 0.45, 0.48 → 0.58, 0.465, 0.465; line 210.5 + 0.08/0.115 = 211.195652
    const fit = fitLadder([pt(210.5, 0.58), pt(211.5, 0.45), pt(212.5, 0.48)]);
    expect(fit.distribution.map((d) => d.price)).toEqual([0.58, 0.465, 0.465]);
    expect(fit.line).toBe(211.195652);
  });

  it('a single line cannot place the fair line', () => {
    expect(fitLadder([pt(210.5, 0.53)])).toEqual({ distribution: [{ variable: 210.5, price: 0.53 }], line: null });
    expect(fitLadder([])).toEqual({ distribution: [], line: null });
  });
});
