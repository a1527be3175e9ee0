/**
 * What a venue's answer to a placement decides for a real-money leg (src/domain/execution.ts): the
 * statuses, the figures as exact text, the venue's code mapped onto the spec's closed set, and which
 * funds the ledger holds.
 */
import { describe, expect, it } from 'vitest';
import { decideLeg, failedLeg, legCodeOf, type VenueAnswer } from '../../../src/domain/execution.js';

const answer = (over: Partial<VenueAnswer>): VenueAnswer => ({
  venue_order_id: 'v-1',
  status: 'filled',
  filled_contracts: 21,
  filled_notional: 9.87,
  avg_price: 0.47,
  fees: 0.37,
  remaining_contracts: 0,
  limit_price: 0.5,
  reject_code: null,
  reject_reason: null,
  ts_event: 1_700_000_000_123,
  ...over,
});

describe('decideLeg', () => {
  it('filled and partially_filled (the rest killed): completed, open until settlement, the booked cost held', () => {
    expect(decideLeg(answer({}))).toEqual({
      leg_status: 'completed',
      status: 'open',
      fill_status: 'filled',
      venue_order_id: 'v-1',
      filled_notional: '9.87',
      filled_shares: '21',
      avg_price: '0.47',
      fee: '0.37',
      resting_contracts: '0',
      limit_price: '0.5',
      rejected_code: null,
      rejected_reason: null,
      hold: 'booked',
      at_ms: 1_700_000_000_123,
    });
    expect(decideLeg(answer({ status: 'partially_filled' }))).toMatchObject({ leg_status: 'completed', fill_status: 'partially_filled', hold: 'booked' });
  });

  it('resting: open, with its resting contracts; partially_filled when some crossed', () => {
    expect(decideLeg(answer({ status: 'resting', filled_contracts: 0, filled_notional: 0, avg_price: null, fees: 0, remaining_contracts: 20 }))).toMatchObject({
      leg_status: 'resting',
      status: 'open',
      fill_status: 'unfilled',
      filled_notional: '0',
      avg_price: null,
      resting_contracts: '20',
      hold: 'booked_and_resting',
    });
    expect(decideLeg(answer({ status: 'resting', remaining_contracts: 9 })).fill_status).toBe('partially_filled');
  });

  it('pending (an async-fill venue): pending, the plan’s commitment held', () => {
    expect(decideLeg(answer({ status: 'pending', filled_contracts: 0, filled_notional: 0, avg_price: null, fees: 0 }))).toMatchObject({ leg_status: 'pending', status: 'pending', fill_status: 'unfilled', hold: 'commitment' });
  });

  it('rejected: failed and closed with the venue’s code and reason, nothing held; a code outside the closed set is null', () => {
    const d = decideLeg(answer({ status: 'rejected', venue_order_id: '', filled_contracts: 0, filled_notional: 0, avg_price: null, fees: 0, reject_code: 'above_max_price', reject_reason: 'best offer 0.6 is above the limit 0.5' }));
    expect(d).toMatchObject({ leg_status: 'failed', status: 'closed', fill_status: 'unfilled', venue_order_id: null, rejected_code: 'above_max_price', rejected_reason: 'best offer 0.6 is above the limit 0.5', hold: 'none' });
    expect(decideLeg(answer({ status: 'rejected', reject_code: 'unsupported_order_type', reject_reason: 'no limits' }))).toMatchObject({ leg_status: 'failed', rejected_code: null, rejected_reason: 'no limits' });
    expect(legCodeOf('insufficient_balance')).toBe('insufficient_balance');
    expect(legCodeOf('halted_upstream')).toBe('halted_upstream');
    expect(legCodeOf('nope')).toBeNull();
  });

  it('cancelled at once: completed when something filled, else failed', () => {
    expect(decideLeg(answer({ status: 'cancelled' }))).toMatchObject({ leg_status: 'completed', fill_status: 'partially_filled', hold: 'booked' });
    expect(decideLeg(answer({ status: 'cancelled', filled_contracts: 0, filled_notional: 0 }))).toMatchObject({ leg_status: 'failed', hold: 'none' });
  });

  it('venue floats become exact six-decimal text; a missing time falls back to the database clock', () => {
    expect(decideLeg(answer({ filled_notional: 0.1 + 0.2, fees: 1e-7 }))).toMatchObject({ filled_notional: '0.3', fee: '0' });
    expect(decideLeg(answer({ ts_event: Number.NaN })).at_ms).toBeNull();
    expect(failedLeg('expired')).toMatchObject({ leg_status: 'failed', status: 'closed', hold: 'none', rejected_code: null, rejected_reason: 'expired', at_ms: null });
  });
});
