import { describe, expect, it } from 'vitest';
import { isOutlier, realBookMedian } from '../../../src/compute/outliers.js';
import { quote } from './helpers.js';

const none = (n: number) => new Array<boolean>(n).fill(false);

describe('realBookMedian', () => {
  it('is the median of three or more real books', () => {
    const qs = [quote('a', 0.5, 100), quote('b', 0.65, 100), quote('c', 0.5, 100)];
    expect(realBookMedian(qs, none(3))).toBe(0.5);
  });

  it('averages the middle two of an even count', () => {
    const qs = [quote('a', 0.7, 100), quote('b', 0.4, 100), quote('c', 0.52, 100), quote('d', 0.5, 100)];
    expect(realBookMedian(qs, none(4))).toBeCloseTo(0.51, 12);
  });

  it('is null with only two real books, even when a third venue quotes without a book', () => {
    const qs = [quote('a', 0.5, 100), quote('b', 0.5, 100), quote('sb', 0.9, 500, { real_book: false })];
    expect(realBookMedian(qs, none(3))).toBeNull();
  });

  it('does not count an emptied real book or a withheld quote', () => {
    const emptied = [quote('a', 0.5, 100), quote('b', 0.5, 100), quote('c', 0.9, 0)];
    expect(realBookMedian(emptied, none(3))).toBeNull();
    const three = [quote('a', 0.5, 100), quote('b', 0.5, 100), quote('c', 0.9, 100)];
    expect(realBookMedian(three, [false, false, true])).toBeNull();
  });
});

describe('isOutlier', () => {
  it('exactly 0.15 from the median is not an outlier, above it is', () => {
    expect(isOutlier(0.65, 0.5)).toBe(false);
    expect(isOutlier(0.35, 0.5)).toBe(false);
    expect(isOutlier(0.6501, 0.5)).toBe(true);
    expect(isOutlier(0.3499, 0.5)).toBe(true);
  });

  it('nothing is an outlier without a median', () => {
    expect(isOutlier(0.99, null)).toBe(false);
  });
});
