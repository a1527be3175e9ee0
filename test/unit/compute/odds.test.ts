import { describe, expect, it } from 'vitest';
import { americanOdds } from '../../../src/compute/odds.js';

describe('americanOdds', () => {
  it.each([
    [0.6, '-150'], // 100·0.6/0.4
    [2 / 3, '-200'], // 100·(2/3)/(1/3)
    [0.75, '-300'],
    [0.55, '-122'], // 122.22 rounds to 122
    [0.4, '+150'], // 100·0.6/0.4
    [0.45, '+122'],
    [0.25, '+300'],
    [0.2, '+400'],
    [0.5, '+100'], // even money is written +100
  ])('price %s → %s', (price, odds) => {
    expect(americanOdds(price)).toBe(odds);
  });

  it('gives no odds for prices outside (0, 1)', () => {
    expect(americanOdds(0)).toBe('');
    expect(americanOdds(1)).toBe('');
    expect(americanOdds(-0.1)).toBe('');
    expect(americanOdds(Number.NaN)).toBe('');
  });
});
