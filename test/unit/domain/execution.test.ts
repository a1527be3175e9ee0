/**
 * What a venue's answer to a placement decides for a real-money leg (src/domain/execution.ts): the
 * statuses, the figures as exact text, the venue's code mapped onto the spec's closed set, and which
 * funds the ledger holds; and what a venue's later report changes on a working order (the guard
 * that makes a report land once, the statuses, what the order holds from then on).
 */
import { describe, expect, it } from 'vitest';
import { decideLeg, failedLeg, holdMoves, legCodeOf, updateWorkingOrder, type VenueAnswer, type WorkingOrder } from '../../../src/domain/execution.js';

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

describe('updateWorkingOrder', () => {
  const resting: WorkingOrder = { leg_status: 'resting', cancelled: false, filled_shares: '0', limit_price: '0.5', commitment: '10.7' };
  const rest = (over: Partial<VenueAnswer>) => answer({ status: 'resting', filled_contracts: 0, filled_notional: 0, avg_price: null, fees: 0, remaining_contracts: 20, ...over });

  it('a fill of a resting order: more contracts than recorded land; the hold is what booked plus fee plus what still rests', () => {
    const u = updateWorkingOrder(resting, rest({ filled_contracts: 8, filled_notional: 4, avg_price: 0.5, fees: 0.035, remaining_contracts: 12 }))!;
    expect(u).toMatchObject({ leg_status: 'resting', status: 'open', fill_status: 'partially_filled', filled_shares: '8', filled_notional: '4', fee: '0.035', cancelled: false, filled_more: true, corrects_estimate: false, holds: '10.035' });
    const all = updateWorkingOrder({ ...resting, filled_shares: '8' }, answer({ status: 'filled', filled_contracts: 20, filled_notional: 10, avg_price: 0.5, fees: 0.0875 }))!;
    expect(all).toMatchObject({ leg_status: 'completed', status: 'open', fill_status: 'filled', holds: '10.0875', filled_more: true });
  });

  it('changes nothing for a report seen before, an older one, or an order that no longer works', () => {
    const at8 = { ...resting, filled_shares: '8' };
    expect(updateWorkingOrder(at8, rest({ filled_contracts: 8, filled_notional: 4, remaining_contracts: 12 }))).toBeNull();
    expect(updateWorkingOrder(at8, rest({ filled_contracts: 5, filled_notional: 2.5, remaining_contracts: 15 }))).toBeNull();
    expect(updateWorkingOrder(at8, answer({ status: 'cancelled', filled_contracts: 5, filled_notional: 2.5 }))).toBeNull();
    expect(updateWorkingOrder({ ...at8, cancelled: true }, answer({ status: 'filled', filled_contracts: 20 }))).toBeNull();
    expect(updateWorkingOrder({ ...at8, leg_status: 'completed' }, answer({ status: 'filled', filled_contracts: 20 }))).toBeNull();
    expect(updateWorkingOrder(resting, answer({ status: 'pending', filled_contracts: 0, filled_notional: 0 }))).toBeNull();
  });

  it('the end of a resting remainder: cancelled set, the order stays resting, closed when nothing filled, the rest no longer held', () => {
    expect(updateWorkingOrder({ ...resting, filled_shares: '8' }, answer({ status: 'cancelled', filled_contracts: 8, filled_notional: 4, avg_price: 0.5, fees: 0.035 }))).toMatchObject({
      leg_status: 'resting',
      status: 'open',
      fill_status: 'partially_filled',
      cancelled: true,
      filled_more: false,
      holds: '4.035',
    });
    expect(updateWorkingOrder(resting, answer({ status: 'cancelled', filled_contracts: 0, filled_notional: 0, avg_price: null, fees: 0 }))).toMatchObject({
      leg_status: 'resting',
      status: 'closed',
      fill_status: 'unfilled',
      cancelled: true,
      holds: '0',
      rejected_code: null,
    });
  });

  it('a pending order: its fill corrects the commitment (an estimate) to the cost; refused later it fails and holds nothing', () => {
    const pending: WorkingOrder = { leg_status: 'pending', cancelled: false, filled_shares: '0', limit_price: '0.6', commitment: '10.1' };
    expect(updateWorkingOrder(pending, answer({ status: 'filled', filled_contracts: 20, filled_notional: 10, avg_price: 0.5, fees: 0.05 }))).toMatchObject({
      leg_status: 'completed',
      fill_status: 'filled',
      holds: '10.05',
      corrects_estimate: true,
      filled_more: true,
    });
    expect(updateWorkingOrder(pending, answer({ status: 'rejected', filled_contracts: 0, filled_notional: 0, avg_price: null, fees: 0, reject_code: 'insufficient_balance', reject_reason: 'no funds' }))).toMatchObject({
      leg_status: 'failed',
      status: 'closed',
      rejected_code: 'insufficient_balance',
      rejected_reason: 'no funds',
      holds: '0',
      cancelled: false,
    });
    expect(updateWorkingOrder(pending, answer({ status: 'pending', filled_contracts: 0, filled_notional: 0 }))).toBeNull();
  });
});

describe('holdMoves', () => {
  const base = { held: '10', booked_before: '0', booked_after: '2.53', new_contracts: '5', limit_price: '0.5', holds: '2.53', corrects_estimate: false };
  it('a fill and the end of the remainder in one report: the fee held, exactly the remainder released', () => {
    expect(holdMoves(base)).toEqual([30_000n, -7_500_000n]);
  });
  it('a fill alone moves only the fee; a fill cheaper than its limit releases the difference; a repeat moves nothing', () => {
    expect(holdMoves({ ...base, holds: '10.03' })).toEqual([30_000n]);
    expect(holdMoves({ ...base, booked_after: '2.03', holds: '9.53' })).toEqual([-470_000n]);
    expect(holdMoves({ ...base, held: '10.03', booked_before: '2.53', new_contracts: '0', holds: '10.03' })).toEqual([]);
  });
  it('a pending order’s estimate is corrected in one movement; the movements always add up to holds − held', () => {
    expect(holdMoves({ held: '10.1', booked_before: '0', booked_after: '10.05', new_contracts: '20', limit_price: '0.6', holds: '10.05', corrects_estimate: true })).toEqual([-50_000n]);
    const odd = holdMoves({ held: '3', booked_before: '0', booked_after: '4', new_contracts: '9', limit_price: '0.5', holds: '4', corrects_estimate: false });
    expect(odd.reduce((a, b) => a + b, 0n)).toBe(1_000_000n);
  });
});
