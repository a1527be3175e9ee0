import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fillFee } from '../../../src/venues/fees.js';
import {
  americanToProb,
  fromNative,
  inPriceBand,
  onGrid,
  probToAmerican,
  roundAskOnGrid,
  roundLimitForBuyer,
  toNative,
} from '../../../src/venues/prices.js';

describe('price units', () => {
  it('converts american odds both ways', () => {
    expect(probToAmerican(0.5)).toBe(-100);
    expect(probToAmerican(0.6)).toBeCloseTo(-150, 9);
    expect(probToAmerican(0.4)).toBeCloseTo(150, 9);
    expect(americanToProb(-150)).toBeCloseTo(0.6, 12);
    expect(americanToProb(150)).toBeCloseTo(0.4, 12);
    expect(() => americanToProb(50)).toThrow(RangeError);
    expect(() => probToAmerican(1)).toThrow(RangeError);
  });

  it('round-trips every unit at 6 decimals', () => {
    for (const p of [0.01, 0.123457, 0.5, 0.555, 0.99]) {
      for (const f of ['cents', 'probability', 'american'] as const) expect(fromNative(f, toNative(f, p))).toBe(p);
    }
  });

  it('rounds a buyer limit onto the grid without ever raising it', () => {
    expect(roundLimitForBuyer('cents', 55.5, 1)).toBe(55);
    expect(roundLimitForBuyer('cents', 0.57 * 100, 1)).toBe(57); // 56.99999999999999 must not floor to 56
    expect(roundLimitForBuyer('probability', 0.555, 0.01)).toBe(0.55);
    expect(roundLimitForBuyer('probability', 0.5559, 0.001)).toBe(0.555);
    // american: toward +inf is a lower probability on both sides of the gap
    expect(roundLimitForBuyer('american', -124.7, 1)).toBe(-124);
    expect(americanToProb(-124)).toBeLessThan(americanToProb(-124.7));
    expect(roundLimitForBuyer('american', 150.4, 1)).toBe(151);
    expect(americanToProb(151)).toBeLessThan(americanToProb(150.4));
  });

  it('rounds an ask against the buyer', () => {
    expect(roundAskOnGrid('cents', 55.2, 1)).toBe(56);
    expect(roundAskOnGrid('probability', 0.541, 0.01)).toBe(0.55);
    expect(roundAskOnGrid('american', -124.3, 1)).toBe(-125);
    expect(roundAskOnGrid('american', 150.6, 1)).toBe(150);
  });

  it('knows the grid and the band', () => {
    expect(onGrid(55, 1)).toBe(true);
    expect(onGrid(55.5, 1)).toBe(false);
    expect(onGrid(0.55, 0.01)).toBe(true);
    const cents = { price_format: 'cents' as const, min_price: 1, max_price: 99 };
    expect(inPriceBand(cents, 0)).toBe(false);
    expect(inPriceBand(cents, 99)).toBe(true);
    expect(inPriceBand(cents, 100)).toBe(false);
    const am = { price_format: 'american' as const, min_price: 5000, max_price: -10000 };
    expect(inPriceBand(am, -110)).toBe(true);
    expect(inPriceBand(am, 6000)).toBe(false); // longer than the longest underdog
    expect(inPriceBand(am, -20000)).toBe(false); // shorter than the shortest favourite
    expect(inPriceBand(am, 50)).toBe(false);
  });
});

describe('fees', () => {
  it('pq: rate · p · (1 − p) per contract, optionally rounded up to the cent', () => {
    const m = { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 } as const;
    expect(fillFee(m, 'taker', 0.4, 25)).toBeCloseTo(0.42, 9);
    expect(fillFee(m, 'taker', 0.5, 1, true)).toBe(0.02); // 0.0175 → 0.02
    expect(fillFee(m, 'maker', 0.5, 100)).toBeCloseTo(0.4375, 9);
  });
  it('flat_pct is a percent of notional; none and unknown charge nothing here', () => {
    expect(fillFee({ kind: 'flat_pct', taker_pct: 1, maker_pct: 0 }, 'taker', 0.5, 100)).toBeCloseTo(0.5, 9);
    expect(fillFee({ kind: 'none' }, 'taker', 0.5, 100)).toBe(0);
    expect(fillFee({ kind: 'unknown' }, 'taker', 0.5, 100)).toBe(0);
  });
});

describe('grid rounding without the decimal text', () => {
  // What the rounding was written as: the multiple of the tick through toFixed's text.
  const decimals = (x: number) => {
    const s = String(x);
    const i = s.indexOf('.');
    return i < 0 ? 0 : Math.min(12, s.length - i - 1);
  };
  const throughText = (steps: number, tick: number) => Number((steps * tick).toFixed(decimals(tick)));
  const ticks = fc.constantFrom(1, 0.5, 0.25, 0.1, 0.05, 0.01, 0.005, 0.001, 0.0001, 2.5, 5, 1e-7, 0.3, 1 / 3, 1234.5678);
  // Far-out natives too: grids whose whole products pass 2^53 go through the text.
  const natives = fc.oneof(fc.double({ min: -1000, max: 1000, noNaN: true }), fc.integer({ min: -100_000, max: 100_000 }).map((n) => n / 1000), fc.double({ min: -1e13, max: 1e13, noNaN: true }));

  it('gives the very numbers the text gave, for every format, up and down', () => {
    fc.assert(
      fc.property(fc.constantFrom('cents' as const, 'probability' as const), natives, ticks, (format, native, tick) => {
        const up = Math.ceil(native / tick - 1e-9);
        const down = Math.floor(native / tick + 1e-9);
        expect(Object.is(roundAskOnGrid(format, native, tick), throughText(up, tick))).toBe(true);
        expect(Object.is(roundLimitForBuyer(format, native, tick), throughText(down, tick))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });
});
