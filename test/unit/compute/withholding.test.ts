import { describe, expect, it } from 'vitest';
import { withheldMask } from '../../../src/compute/withholding.js';
import { quote } from './helpers.js';

const onSide = (id: string, side: string) => quote(id, 0.5, 100, { venue_side_key: side });

describe('withheldMask', () => {
  it('withholds the one venue opposite to every other venue', () => {
    expect(withheldMask([onSide('a', 'home'), onSide('b', 'home'), onSide('c', 'away')])).toEqual([false, false, true]);
    expect(withheldMask([onSide('a', 'away'), onSide('b', 'home'), onSide('c', 'home'), onSide('d', 'home')])).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });

  it('withholds the lone venue even when it agrees with the catalog side (venues are compared with each other)', () => {
    // Position side_key is home; b and c list it as away. a is the lone dissent among venues.
    expect(withheldMask([onSide('a', 'home'), onSide('b', 'away'), onSide('c', 'away')])).toEqual([true, false, false]);
  });

  it('two venues disagreeing 1-1: nothing withheld', () => {
    expect(withheldMask([onSide('a', 'home'), onSide('b', 'away')])).toEqual([false, false]);
  });

  it('2-2 split: nothing withheld', () => {
    expect(withheldMask([onSide('a', 'home'), onSide('b', 'away'), onSide('c', 'away'), onSide('d', 'home')])).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('three distinct sides: no majority to be opposite to, nothing withheld', () => {
    expect(withheldMask([onSide('a', 'home'), onSide('b', 'away'), onSide('c', 'draw')])).toEqual([false, false, false]);
  });

  it('all agreeing or a single venue: nothing withheld', () => {
    expect(withheldMask([onSide('a', 'away'), onSide('b', 'away'), onSide('c', 'away')])).toEqual([false, false, false]);
    expect(withheldMask([onSide('a', 'away')])).toEqual([false]);
    expect(withheldMask([])).toEqual([]);
  });
});
