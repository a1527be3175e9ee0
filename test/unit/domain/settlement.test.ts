import { describe, expect, it } from 'vitest';
import { orderSettledEvent, practiceEntryOf, settlementDescription, type SettledOrder } from '../../../src/domain/settlement.js';

const order = (over: Partial<SettledOrder>): SettledOrder => ({
  router_order_id: 'ord_1',
  router_account_id: 'acct_1',
  partner_id: 'practice',
  title: 'Home to win',
  mode: 'paper',
  result: 'win',
  winnings: '25.000000',
  net_winnings: '25.000000',
  pays: true,
  settled_at: '2026-01-02T03:04:05.678Z',
  ...over,
});

describe('what a settled practice order writes to the wallet', () => {
  it('a win is a settlement_credit; a push or a cancelled order a refund; nothing when nothing is paid', () => {
    expect(practiceEntryOf(order({ result: 'win' }))).toBe('settlement_credit');
    expect(practiceEntryOf(order({ result: 'push' }))).toBe('refund');
    expect(practiceEntryOf(order({ result: 'cancelled' }))).toBe('refund');
    expect(practiceEntryOf(order({ result: 'lose', winnings: '0', pays: false }))).toBeNull();
    expect(practiceEntryOf(order({ result: 'cancelled', winnings: '0', pays: false }))).toBeNull();
    expect(settlementDescription(order({ result: 'push' }))).toBe('Practice order pushed, stake refunded: Home to win');
  });

  it('order.settled carries the spec’s fields, the figures as numbers and the settlement instant', () => {
    const e = orderSettledEvent(order({ winnings: '24.830000', net_winnings: '24.66', partner_id: 'sim_exchange' }));
    expect(e).toEqual({ type: 'order.settled', router_order_id: 'ord_1', partner_id: 'sim_exchange', result: 'win', winnings: 24.83, net_winnings: 24.66, timestamp: '2026-01-02T03:04:05.678Z' });
  });
});
