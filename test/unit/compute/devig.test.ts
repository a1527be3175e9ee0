import { describe, expect, it } from 'vitest';
import { devigMultiplicative, overround } from '../../../src/compute/devig.js';

describe('devigMultiplicative', () => {
  it('scales a two-way market to sum 1', () => {
    // 0.52 + 0.50 = 1.02 → 0.52/1.02 = 26/51, 0.50/1.02 = 25/51.
    const [h, a] = devigMultiplicative([0.52, 0.5]);
    expect(h).toBeCloseTo(0.5098039216, 10);
    expect(a).toBeCloseTo(0.4901960784, 10);
    expect(h + a).toBeCloseTo(1, 12);
  });

  it('handles a three-way market', () => {
    // Σ = 1.05 → 0.40/1.05, 0.30/1.05, 0.35/1.05.
    const out = devigMultiplicative([0.4, 0.3, 0.35]);
    expect(out[0]).toBeCloseTo(0.3809523810, 10);
    expect(out[1]).toBeCloseTo(0.2857142857, 10);
    expect(out[2]).toBeCloseTo(0.3333333333, 10);
  });

  it('scales an underround up', () => {
    // Σ = 0.95 → 0.45/0.95 = 9/19, 0.50/0.95 = 10/19.
    const [a, b] = devigMultiplicative([0.45, 0.5]);
    expect(a).toBeCloseTo(0.4736842105, 10);
    expect(b).toBeCloseTo(0.5263157895, 10);
  });

  it('writes into the given array', () => {
    const out = [0, 0];
    expect(devigMultiplicative([0.3, 0.9], out)).toBe(out);
    expect(out[0]).toBeCloseTo(0.25, 12);
    expect(out[1]).toBeCloseTo(0.75, 12);
  });

  it('overround is Σ − 1', () => {
    expect(overround([0.52, 0.5])).toBeCloseTo(0.02, 12);
    expect(overround([0.45, 0.5])).toBeCloseTo(-0.05, 12);
  });
});
