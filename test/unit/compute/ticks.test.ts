import { describe, expect, it } from 'vitest';
import { buyId, shouldSendTick, tickReason } from '../../../src/compute/ticks.js';

const q = (price: number, available: number) => ({ price, available });

describe('tickReason / shouldSendTick', () => {
  it('a new quote is sent', () => {
    expect(tickReason(undefined, q(0.5, 50_000))).toBe('new');
  });

  it('a disappeared quote is sent', () => {
    expect(tickReason(q(0.5, 50_000), undefined)).toBe('removed');
  });

  it('nothing before and nothing now sends nothing', () => {
    expect(tickReason(undefined, undefined)).toBeNull();
  });

  it('any price change is sent, whatever the size', () => {
    expect(tickReason(q(0.5, 50_000), q(0.51, 50_000))).toBe('price');
    expect(tickReason(q(0.5, 50_000), q(0.49, 60_000))).toBe('price');
  });

  it('no change sends nothing', () => {
    expect(tickReason(q(0.5, 50_000), q(0.5, 50_000))).toBeNull();
    expect(shouldSendTick(q(0.5, 500), q(0.5, 500))).toBe(false);
  });

  it('emptying is sent', () => {
    expect(tickReason(q(0.5, 50_000), q(0.5, 0))).toBe('emptied');
    // Below USD 1 nothing can be bought: that is empty too.
    expect(tickReason(q(0.5, 50_000), q(0.5, 0.5))).toBe('emptied');
  });

  it('refilling from empty is sent, even to a large size', () => {
    expect(tickReason(q(0.5, 0), q(0.5, 50_000))).toBe('refilled');
    expect(tickReason(q(0.5, 0.4), q(0.5, 2_000))).toBe('refilled');
  });

  it('shrinking to USD 1,000 or less is sent; to more than 1,000 is not', () => {
    expect(tickReason(q(0.5, 5_000), q(0.5, 1_000))).toBe('shrank');
    expect(tickReason(q(0.5, 900), q(0.5, 800))).toBe('shrank');
    expect(tickReason(q(0.5, 5_000), q(0.5, 1_000.01))).toBeNull();
    expect(tickReason(q(0.5, 5_000), q(0.5, 1_500))).toBeNull();
  });

  it('growing is not sent unless from empty', () => {
    expect(tickReason(q(0.5, 800), q(0.5, 900))).toBeNull();
    expect(tickReason(q(0.5, 2_000), q(0.5, 3_000))).toBeNull();
    expect(shouldSendTick(q(0.5, 800), q(0.5, 5_000))).toBe(false);
  });
});

describe('buyId', () => {
  it('names the quote version', () => {
    expect(buyId('kx:abc', 1_700_000_000_000)).toBe('kx:abc@1700000000000');
  });
});
