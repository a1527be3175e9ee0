/**
 * The simulator does not grow: a settled contest's listings and orders leave the venues, and in
 * churn mode (contests opening and settling all the time) the model's contests and listings stay
 * level while contests keep coming and going.
 */
import { describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../../../src/venues/sim/index.js';
import { SimMarket, type SimContestOpenedEvent, type SimSettleEvent } from '../../../../src/sim/index.js';
import { NOW, contestOf, manualClock, newMarket, pickPosition } from './support.js';

const listings = (m: SimMarket) => m.state().venues.reduce((s, v) => s + v.listings, 0);

describe('a settled contest', () => {
  it('leaves the venues: its listings are delisted and its finished orders forgotten', async () => {
    const m = newMarket();
    const clock = manualClock(m);
    m.freeze(true);
    const pos = pickPosition(m, 'sim_exchange');
    const contestId = contestOf(m, pos);
    m.connectAccount('acct', { partner_id: 'sim_exchange', balance: 1000 });
    const ex = createSimAdapter(m, 'sim_exchange', { clock: clock.now });
    await ex.connect();
    m.setQuote({ partner_id: 'sim_exchange', position_hash: pos, price: 0.4, available: 400 });
    const o = await ex.placeOrder({ client_order_id: 'c1', account_id: 'acct', position_hash: pos, order_type: 'market', amount: 40, max_price: 0.5 });
    const ordersBefore = m._venue('sim_exchange').orders.size;
    expect(ordersBefore).toBe(1);
    const own = m.catalog.positions.filter((p) => p.contest_id === contestId).filter((p) => m.instrumentForPosition('sim_exchange', p.position_hash)).length;
    expect(own).toBeGreaterThan(0);
    const before = listings(m);

    const winner = m.catalog.contest_participants.find((p) => p.contest_id === contestId && p.role === 'home')!.participant_id;
    m.settle(contestId, { winner_participant_id: winner });

    expect(m.instrumentForPosition('sim_exchange', pos)).toBeUndefined();
    expect(listings(m)).toBeLessThanOrEqual(before - own);
    expect(m._venue('sim_exchange').orders.size).toBe(0);
    expect(m._venue('sim_exchange').byClientId.size).toBe(0);
    expect(m.order('sim_exchange', 'acct', o.venue_order_id)).toBeUndefined();
    // A late trade print on the settled contest goes out without listing it again.
    const before2 = listings(m);
    m.emitTrade({ partner_id: 'sim_exchange', position_hash: pos, price: 0.5, size_contracts: 3, taker_action: 'buy' });
    expect(listings(m)).toBe(before2);
  });
});

describe('churn mode', () => {
  it('keeps opening and settling contests while the model stays level', () => {
    const m = new SimMarket({ seed: 3, now: NOW, activity: 0.2 });
    const opened: SimContestOpenedEvent[] = [];
    const settled: SimSettleEvent[] = [];
    m.onContestOpened((e) => opened.push(e));
    m.onSettle((e) => e.contest_id.startsWith('ct_churn_') && settled.push(e));
    m.churn({ every_ms: 1_000, lead_ms: 1_000, duration_ms: 3_000 });
    let t = NOW;
    const sample = () => ({ contests: m.contestCount(), listings: listings(m) });
    while (t < NOW + 20_000) m.tick((t += 100));
    const warm = sample();
    while (t < NOW + 120_000) m.tick((t += 100));
    const end = sample();

    expect(opened.length).toBeGreaterThanOrEqual(100);
    expect(settled.length).toBeGreaterThanOrEqual(95);
    // Each opened contest is a full catalog entry under a new id.
    const e = opened[5]!;
    expect(e.contest.id).toMatch(/^ct_churn_/);
    expect(e.positions.length).toBeGreaterThan(4);
    expect(new Set(e.positions.map((p) => p.contest_id))).toEqual(new Set([e.contest.id]));
    expect(e.positions.every((p) => p.group_key.startsWith(e.contest.id))).toBe(true);
    // At most the ~4 churned contests open at once, whatever the run's length.
    expect(Math.abs(end.contests - warm.contests)).toBeLessThanOrEqual(2);
    expect(end.listings).toBeLessThanOrEqual(warm.listings * 1.5);
    expect(m.gameState(opened[0]!.contest.id)).toBeUndefined();
  });
});
