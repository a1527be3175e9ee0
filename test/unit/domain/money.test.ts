import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { divMicros, divRound, floorTo, fromMicros, microsText, mulMicros, parseMicros, toMicros, UNIT } from '../../../src/domain/money.js';

describe('micros: exact fixed point', () => {
  it('reads a number through its shortest text, not a float product', () => {
    expect(toMicros(0.1)).toBe(100_000n);
    expect(toMicros(10.005)).toBe(10_005_000n);
    expect(toMicros(0.47)).toBe(470_000n);
    expect(toMicros(1e12)).toBe(10n ** 18n);
    expect(toMicros(1e21)).toBe(10n ** 27n);
    expect(toMicros(-3.5)).toBe(-3_500_000n);
  });

  it('rounds beyond six decimals as asked and says it did', () => {
    expect(parseMicros('1.0000005', 'floor')).toEqual({ micros: 1_000_000n, exact: false });
    expect(parseMicros('1.0000005', 'ceil')).toEqual({ micros: 1_000_001n, exact: false });
    expect(parseMicros('1.0000005', 'half')).toEqual({ micros: 1_000_001n, exact: false });
    expect(parseMicros('1e-7', 'ceil')).toEqual({ micros: 1n, exact: false });
    expect(parseMicros('5e-324', 'floor')).toEqual({ micros: 0n, exact: false });
    expect(parseMicros('12.340000')).toEqual({ micros: 12_340_000n, exact: true });
    expect(() => parseMicros('1,5')).toThrow(RangeError);
  });

  it('divides with floor, ceil and half on either sign', () => {
    expect([divRound(7n, 2n, 'floor'), divRound(7n, 2n, 'ceil'), divRound(7n, 2n, 'half')]).toEqual([3n, 4n, 4n]);
    expect([divRound(-7n, 2n, 'floor'), divRound(-7n, 2n, 'ceil'), divRound(-7n, 2n, 'half')]).toEqual([-4n, -3n, -4n]);
    expect(divRound(5n, 3n, 'half')).toBe(2n);
    expect(divRound(4n, 3n, 'half')).toBe(1n);
  });

  it('multiplies and divides micro quantities: 21 contracts at 0.47 are exactly USD 9.87', () => {
    expect(mulMicros(21n * UNIT, toMicros(0.47), 'half')).toBe(toMicros(9.87));
    expect(divMicros(toMicros(10), toMicros(0.47), 'floor')).toBe(21_276_595n);
    expect(floorTo(divMicros(toMicros(10), toMicros(0.47), 'floor'), UNIT)).toBe(21n * UNIT);
  });

  it('prints and converts back without loss', () => {
    expect(microsText(-1n)).toBe('-0.000001');
    expect(microsText(12_500_000n)).toBe('12.5');
    expect(microsText(3n * UNIT)).toBe('3');
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 14n), max: 10n ** 14n }), (m) => {
        expect(parseMicros(microsText(m))).toEqual({ micros: m, exact: true });
        expect(toMicros(fromMicros(m))).toBe(m);
      }),
    );
  });
});
