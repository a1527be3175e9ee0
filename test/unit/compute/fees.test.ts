import { describe, expect, it } from 'vitest';
import { feePacket } from '../../../src/compute/fees.js';

describe('feePacket', () => {
  it('none: prices are the quote, fees zero', () => {
    expect(feePacket(0.4, { kind: 'none' })).toEqual({ taker_price: 0.4, maker_price: 0.4, taker_fee: 0, maker_fee: 0 });
  });

  it('pq: rate·p·(1−p) per contract, 100·rate·(1−p) on USD 100', () => {
    // p = 0.40, p(1−p) = 0.24. Taker 0.07: 0.0168 per contract; USD 100 buys 250 contracts → 4.20.
    // Maker 0.0175: 0.0042 per contract → 1.05 on USD 100.
    expect(feePacket(0.4, { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 })).toEqual({
      taker_price: 0.4168,
      maker_price: 0.4042,
      taker_fee: 4.2,
      maker_fee: 1.05,
    });
  });

  it('pq with a maker rebate gives a price below the quote and a negative fee', () => {
    // p = 0.5: p(1−p) = 0.25; −0.01·0.25 = −0.0025; 100·(−0.01)·0.5 = −0.5.
    expect(feePacket(0.5, { kind: 'pq', taker_rate: 0.02, maker_rate: -0.01 })).toEqual({
      taker_price: 0.505,
      maker_price: 0.4975,
      taker_fee: 1,
      maker_fee: -0.5,
    });
  });

  it('flat_pct: percent of stake', () => {
    // 2 % taker at 0.40 → 0.408 per contract and USD 2 on USD 100; 0.5 % maker → 0.402 and 0.50.
    expect(feePacket(0.4, { kind: 'flat_pct', taker_pct: 2, maker_pct: 0.5 })).toEqual({
      taker_price: 0.408,
      maker_price: 0.402,
      taker_fee: 2,
      maker_fee: 0.5,
    });
  });

  it('unknown: null, not zero', () => {
    expect(feePacket(0.4, { kind: 'unknown' })).toBeNull();
  });
});
