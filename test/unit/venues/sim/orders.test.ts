/**
 * Order placement on each simulated venue honours its order_config: whole-contract floor, min
 * and max stake, price grid and band, market orders walking the book up to max_price and killing
 * the rest, limits resting, cancels, async fills, quotes-only and practice rules.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { VenueError } from '../../../../src/venues/errors.js';
import { createSimAdapter } from '../../../../src/venues/sim/index.js';
import { type SimMarket, type SimPartnerId } from '../../../../src/sim/index.js';
import type { VenueAdapter, VenueBalanceUpdate, VenueOrder, VenueOrderRequest } from '../../../../src/venues/types.js';
import { manualClock, newMarket, pickPosition } from './support.js';

interface Env {
  m: SimMarket;
  a: VenueAdapter;
  pos: string;
  clock: ReturnType<typeof manualClock>;
  order: (over?: Partial<VenueOrderRequest>) => Promise<VenueOrder>;
  book: (price: number, available: number, levels?: { price: number; available: number }[]) => void;
  balance: () => Promise<{ balance: number; held: number }>;
}

let seq = 0;

async function env(id: SimPartnerId, balance = 10_000): Promise<Env> {
  const m = newMarket(42);
  m.freeze(true);
  const clock = manualClock(m);
  const a = createSimAdapter(m, id, { clock: clock.now });
  await a.connect();
  const pos = pickPosition(m, id);
  if (m.catalog.partners.find((p) => p.partner_id === id)!.connectable) m.connectAccount('acct', { partner_id: id, balance });
  return {
    m,
    a,
    pos,
    clock,
    order: (over = {}) =>
      a.placeOrder({ client_order_id: `c${++seq}`, account_id: 'acct', position_hash: pos, order_type: 'market', amount: 10, max_price: 0.5, ...over }),
    book: (price, available, levels) => {
      m.setQuote({ partner_id: id, position_hash: pos, price, available, ...(levels ? { levels } : {}) });
    },
    balance: async () => {
      const b = await a.fetchBalance('acct');
      return { balance: b.balance, held: b.held };
    },
  };
}

async function venueError(p: Promise<unknown>): Promise<VenueError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VenueError);
    return e as VenueError;
  }
  throw new Error('expected VenueError');
}

describe('sim_exchange (cents grid, whole contracts, pq fee rounded up to the cent)', () => {
  let e: Env;
  beforeEach(async () => {
    e = await env('sim_exchange');
    e.book(0.4, 40, [{ price: 0.41, available: 41 }, { price: 0.45, available: 450 }]); // 100, 100, 1000 contracts
  });

  it('a market order fills whole contracts at the best level and charges the fee', async () => {
    const o = await e.order({ amount: 10 });
    expect(o).toMatchObject({ status: 'filled', filled_contracts: 25, filled_notional: 10, avg_price: 0.4, fees: 0.42, requested_amount: 10, currency: 'USD', warnings: [] });
    expect((await e.balance()).balance).toBeCloseTo(10_000 - 10.42, 6);
    // the book moved
    const d = await e.a.fetchDepth(e.pos);
    expect(d.levels[0]).toEqual({ price: 0.4, available: 30 });
  });

  it('walks levels up to max_price and kills the remainder (partially_filled)', async () => {
    const o = await e.order({ amount: 200, max_price: 0.42 });
    expect(o.status).toBe('partially_filled');
    expect(o.filled_contracts).toBe(200);
    expect(o.filled_notional).toBeCloseTo(81, 6);
    expect(o.avg_price).toBeCloseTo(0.405, 6);
    expect((await e.a.fetchDepth(e.pos)).levels).toEqual([{ price: 0.45, available: 450 }]);
  });

  it('rounds the stake down to whole contracts: the remainder is not a partial fill', async () => {
    const o = await e.order({ amount: 10.3 });
    expect(o).toMatchObject({ status: 'filled', filled_contracts: 25, filled_notional: 10 });
  });

  it('a stake that floors to zero contracts is unfillable; so is a fractional share count', async () => {
    expect(await e.order({ amount: 0.3 })).toMatchObject({ status: 'rejected', reject_code: 'unfillable' });
    expect(await e.order({ amount: undefined, shares: 0.5 })).toMatchObject({ status: 'rejected', reject_code: 'unfillable' });
    expect(await e.order({ amount: undefined, shares: 3.7 })).toMatchObject({ status: 'filled', filled_contracts: 3 });
  });

  it('an off-grid max_price is floored to the cent (warning), never filled above it', async () => {
    e.book(0.55, 55, [{ price: 0.56, available: 56 }]);
    const o = await e.order({ amount: 200, max_price: 0.559 });
    expect(o.warnings).toEqual(['price_off_tick']);
    expect(o.limit_price).toBe(0.55);
    expect(o).toMatchObject({ status: 'partially_filled', filled_contracts: 100, avg_price: 0.55 });
  });

  it('a max_price below the cent band is price_out_of_band', async () => {
    expect(await e.order({ max_price: 0.005 })).toMatchObject({ status: 'rejected', reject_code: 'price_out_of_band' });
  });

  it('a book priced above max_price is above_max_price; an empty book insufficient_live_depth', async () => {
    expect(await e.order({ max_price: 0.35 })).toMatchObject({ status: 'rejected', reject_code: 'above_max_price' });
    e.book(0.4, 0);
    expect(await e.order()).toMatchObject({ status: 'rejected', reject_code: 'insufficient_live_depth' });
  });

  it('fill-or-kill that cannot fill completely is insufficient_size and leaves the book alone', async () => {
    const o = await e.order({ amount: 200, max_price: 0.42, time_in_force: 'fok' });
    expect(o).toMatchObject({ status: 'rejected', reject_code: 'insufficient_size' });
    expect((await e.a.fetchDepth(e.pos)).levels[0]).toEqual({ price: 0.4, available: 40 });
  });

  it('above the venue maximum is above_max_order; over the balance insufficient_balance', async () => {
    expect(await e.order({ amount: 25_001, max_price: 0.99 })).toMatchObject({ status: 'rejected', reject_code: 'above_max_order' });
    const poor = await env('sim_exchange', 5);
    poor.book(0.4, 400);
    expect(await poor.order({ amount: 10 })).toMatchObject({ status: 'rejected', reject_code: 'insufficient_balance' });
  });

  it('an account that is not connected is venue_disabled', async () => {
    expect(await e.order({ account_id: 'stranger' })).toMatchObject({ status: 'rejected', reject_code: 'venue_disabled' });
  });

  it('a limit below the book rests with funds held, fills when the book comes to it, at its price (maker fee)', async () => {
    const updates: VenueOrder[] = [];
    const balances: VenueBalanceUpdate[] = [];
    e.a.subscribeOrderUpdates((u) => updates.push(u));
    e.a.subscribeBalances((b) => balances.push(b));
    const o = await e.order({ order_type: 'limit', amount: 9, max_price: 0.3 });
    expect(o).toMatchObject({ status: 'resting', filled_contracts: 0, remaining_contracts: 30, limit_price: 0.3 });
    expect(await e.balance()).toEqual({ balance: 10_000 - 9, held: 9 });
    expect(balances.at(-1)).toMatchObject({ cause: 'order_hold', held: 9, venue_order_id: o.venue_order_id });

    e.book(0.29, 2.9); // 10 contracts offered at 29c: crosses the 30c bid
    expect(updates.at(-1)).toMatchObject({ venue_order_id: o.venue_order_id, status: 'resting', filled_contracts: 10, remaining_contracts: 20, avg_price: 0.3 });
    expect(updates.at(-1)!.fees).toBeCloseTo(0.04, 6); // 0.0175·0.3·0.7·10 = 0.03675 → 0.04

    e.book(0.28, 28);
    const done = updates.at(-1)!;
    expect(done).toMatchObject({ status: 'filled', filled_contracts: 30, remaining_contracts: 0 });
    const b = await e.balance();
    expect(b.held).toBeCloseTo(0, 6);
    expect(b.balance).toBeCloseTo(10_000 - 9 - done.fees, 6);
  });

  it('a limit that crosses takes what it can and rests the rest', async () => {
    const o = await e.order({ order_type: 'limit', amount: undefined, shares: 150, max_price: 0.4 });
    expect(o).toMatchObject({ status: 'resting', filled_contracts: 100, remaining_contracts: 50, avg_price: 0.4 });
  });

  it('cancel releases the hold; cancelling twice or someone else order fails', async () => {
    const o = await e.order({ order_type: 'limit', amount: 9, max_price: 0.3 });
    const c = await e.a.cancelOrder({ account_id: 'acct', venue_order_id: o.venue_order_id });
    expect(c).toMatchObject({ status: 'cancelled', remaining_contracts: 0 });
    expect(await e.balance()).toEqual({ balance: 10_000, held: 0 });
    expect((await venueError(e.a.cancelOrder({ account_id: 'acct', venue_order_id: o.venue_order_id }))).code).toBe('order_not_cancellable');
    expect((await venueError(e.a.cancelOrder({ account_id: 'other', venue_order_id: o.venue_order_id }))).code).toBe('unknown_order');
    // a cancelled order no longer fills
    e.book(0.2, 100);
    expect((await e.a.fetchOrder('acct', o.venue_order_id)).filled_contracts).toBe(0);
  });

  it('the same client_order_id returns the same order (venue idempotency)', async () => {
    const a = await e.order({ client_order_id: 'dup' });
    const b = await e.order({ client_order_id: 'dup' });
    expect(b.venue_order_id).toBe(a.venue_order_id);
    expect((await e.balance()).balance).toBeCloseTo(10_000 - 10.42, 6);
  });

  it('accepts its own liquidity_hash and refuses another venue one', async () => {
    const lh = e.m.instrumentForPosition('sim_exchange', e.pos)!.liquidity_hash;
    expect(await e.order({ position_hash: undefined, liquidity_hash: lh })).toMatchObject({ status: 'filled', liquidity_hash: lh, position_hash: e.pos });
    const foreign = e.m.instrumentForPosition('sim_book01', e.pos)!.liquidity_hash;
    expect((await venueError(e.order({ position_hash: undefined, liquidity_hash: foreign }))).code).toBe('liquidity_hash_mismatch');
  });

  it('a position the venue does not list is insufficient_live_depth without reaching the venue', async () => {
    const unlisted = e.m.catalog.positions.find((p) => p.contest_id.startsWith('ct_s') && !e.m.instrumentForPosition('sim_exchange', p.position_hash))!;
    const o = await e.order({ position_hash: unlisted.position_hash });
    expect(o).toMatchObject({ status: 'rejected', reject_code: 'insufficient_live_depth', venue_order_id: '' });
  });
});

describe('sim_book01 (0-1 grid, stake increment, fractional contracts)', () => {
  let e: Env;
  beforeEach(async () => {
    e = await env('sim_book01');
    e.book(0.55, 550); // 1000 shares
  });

  it('floors the stake to the increment (warning) and fills fractional contracts with a pq fee', async () => {
    const o = await e.order({ amount: 10.007, max_price: 0.6 });
    expect(o.warnings).toEqual(['amount_off_increment']);
    expect(o.requested_amount).toBe(10);
    expect(o.status).toBe('filled');
    expect(o.filled_contracts).toBeCloseTo(18.181818, 6);
    expect(o.filled_notional).toBeCloseTo(10, 5);
    expect(o.fees).toBeCloseTo(0.02 * 0.55 * 0.45 * 18.181818, 6);
  });

  it('a limit off the 0.01 tick rounds down with a warning', async () => {
    const o = await e.order({ order_type: 'limit', amount: 5, max_price: 0.337 });
    expect(o).toMatchObject({ status: 'resting', limit_price: 0.33, warnings: ['price_off_tick'] });
  });

  it('below the minimum is below_min_order unless it takes the whole offer', async () => {
    expect(await e.order({ amount: 0.5 })).toMatchObject({ status: 'rejected', reject_code: 'below_min_order' });
    e.book(0.5, 0.6);
    expect(await e.order({ amount: 0.5 })).toMatchObject({ status: 'rejected', reject_code: 'below_min_order' });
    const whole = await e.order({ amount: 0.6 });
    expect(whole).toMatchObject({ status: 'filled', filled_notional: 0.6 });
  });

  it('a stake below one increment is below_min_order', async () => {
    expect(await e.order({ amount: 0.004 })).toMatchObject({ status: 'rejected', reject_code: 'below_min_order' });
  });
});

describe('sim_sportsbook (american odds, accept-by-id, market only, stake limits)', () => {
  let e: Env;
  beforeEach(async () => {
    e = await env('sim_sportsbook');
    e.book(0.52381, 300); // -110, up to $300
  });

  it('fills at the offered price whatever max_price allows, in whole dollars', async () => {
    const o = await e.order({ amount: 100.75, max_price: 0.6 });
    expect(o).toMatchObject({ status: 'filled', filled_notional: 100, avg_price: 0.52381, fees: 0, warnings: ['amount_off_increment'] });
    expect(o.filled_contracts).toBeCloseTo(100 / 0.52381, 4);
  });

  it('the offer above max_price is above_max_price (the price is not submitted)', async () => {
    expect(await e.order({ max_price: 0.5 })).toMatchObject({ status: 'rejected', reject_code: 'above_max_price' });
  });

  it('stake bounds: below 5 and above 1000 are refused; above the offer limit fills partially', async () => {
    expect(await e.order({ amount: 4, max_price: 0.6 })).toMatchObject({ status: 'rejected', reject_code: 'below_min_order' });
    expect(await e.order({ amount: 1001, max_price: 0.6 })).toMatchObject({ status: 'rejected', reject_code: 'above_max_order' });
    const o = await e.order({ amount: 500, max_price: 0.6 });
    expect(o).toMatchObject({ status: 'partially_filled', filled_notional: 300 });
  });

  it('has no limit orders and no cancel', async () => {
    expect(await e.order({ order_type: 'limit' })).toMatchObject({ status: 'rejected', reject_code: 'unsupported_order_type' });
    const err = await venueError(e.a.cancelOrder({ account_id: 'acct', venue_order_id: 'x' }));
    expect(err).toMatchObject({ code: 'capability_not_supported', kind: 'non_retryable' });
  });

  it('an offer outside its odds band is price_out_of_band', async () => {
    e.book(0.01, 100); // +9900: longer than the +5000 band
    expect(await e.order({ max_price: 0.6 })).toMatchObject({ status: 'rejected', reject_code: 'price_out_of_band' });
  });
});

describe('sim_p2p (async fills, flat-percent fee)', () => {
  it('a market order is pending with funds held, then the fill arrives on the order feed', async () => {
    const e = await env('sim_p2p');
    e.book(0.45, 450);
    const updates: VenueOrder[] = [];
    e.a.subscribeOrderUpdates((u) => updates.push(u));
    const o = await e.order({ amount: 90, max_price: 0.5 });
    expect(o).toMatchObject({ status: 'pending', filled_contracts: 0, avg_price: null });
    const held = await e.balance();
    expect(held.held).toBeCloseTo(90.9, 6);
    expect(held.balance).toBeCloseTo(10_000 - 90.9, 6);
    // the book is reserved at once
    expect((await e.a.fetchDepth(e.pos)).levels[0]!.available).toBeCloseTo(360, 6);

    e.clock.advance(500);
    expect(updates).toHaveLength(0);
    e.clock.advance(1500);
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ venue_order_id: o.venue_order_id, status: 'filled', filled_contracts: 200, filled_notional: 90, avg_price: 0.45, fees: 0.9 });
    expect(await e.balance()).toEqual({ balance: 10_000 - 90.9, held: 0 });
    expect((await e.a.fetchOrder('acct', o.venue_order_id)).status).toBe('filled');
  });

  it('async fills land even while the market is frozen; refusals are immediate', async () => {
    const e = await env('sim_p2p');
    e.book(0.45, 450);
    expect(await e.order({ max_price: 0.4 })).toMatchObject({ status: 'rejected', reject_code: 'above_max_price' });
    const o = await e.order();
    e.clock.advance(10_000);
    expect((await e.a.fetchOrder('acct', o.venue_order_id)).status).toBe('filled');
  });
});

describe('sim_quotes (quotes only)', () => {
  it('rejects every order with orders_not_supported and has no balances', async () => {
    const e = await env('sim_quotes');
    for (const order_type of ['market', 'limit'] as const) {
      expect(await e.order({ order_type })).toMatchObject({ status: 'rejected', reject_code: 'orders_not_supported', filled_contracts: 0 });
    }
    expect((await venueError(e.a.fetchBalance('acct'))).code).toBe('capability_not_supported');
  });
});

describe('practice (internal book)', () => {
  it('fills the whole stake in ATLAS at the best live price across real venues', async () => {
    const e = await env('practice');
    e.m.setQuote({ partner_id: 'sim_exchange', position_hash: e.pos, price: 0.47, available: 10 });
    e.m.setQuote({ partner_id: 'sim_book01', position_hash: e.pos, price: 0.44, available: 0.5 }); // under USD 1: ignored
    e.m.setQuote({ partner_id: 'sim_sportsbook', position_hash: e.pos, price: 0.45, available: 300 });
    e.m.setQuote({ partner_id: 'sim_p2p', position_hash: e.pos, price: 0.46, available: 300 });
    e.m.setQuote({ partner_id: 'sim_quotes', position_hash: e.pos, price: 0.46, available: 300 });
    const o = await e.order({ amount: 1000, max_price: 0.5 }); // far more than any book: no depth walk
    expect(o).toMatchObject({ status: 'filled', currency: 'ATLAS', filled_notional: 1000, avg_price: 0.45, fees: 0, liquidity_hash: null, position_hash: e.pos });
    expect(o.filled_contracts).toBeCloseTo(1000 / 0.45, 4);
    // naming another venue's liquidity_hash still fills on the internal book
    const lh = e.m.instrumentForPosition('sim_exchange', e.pos)!.liquidity_hash;
    expect(await e.order({ position_hash: undefined, liquidity_hash: lh })).toMatchObject({ partner_id: 'practice', status: 'filled', currency: 'ATLAS', avg_price: 0.45 });
  });

  it('no live price with USD 1 is no_live_price_for_paper; limit orders are not supported', async () => {
    const e = await env('practice');
    for (const v of ['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'] as const) {
      if (e.m.instrumentForPosition(v, e.pos)) e.m.setQuote({ partner_id: v, position_hash: e.pos, price: 0.5, available: 0 });
    }
    expect(await e.order()).toMatchObject({ status: 'rejected', reject_code: 'no_live_price_for_paper', currency: 'ATLAS' });
    expect(await e.order({ order_type: 'limit' })).toMatchObject({ status: 'rejected', reject_code: 'unsupported_order_type' });
  });

  it('below the practice minimum and above max_price are refused', async () => {
    const e = await env('practice');
    e.m.setQuote({ partner_id: 'sim_exchange', position_hash: e.pos, price: 0.45, available: 100 });
    expect(await e.order({ amount: 0.5, max_price: 0.99 })).toMatchObject({ status: 'rejected', reject_code: 'below_min_order' });
    const best = await e.order({ amount: 5, max_price: 0.99 });
    expect(await e.order({ amount: 5, max_price: best.avg_price! - 0.01 })).toMatchObject({ status: 'rejected', reject_code: 'above_max_price' });
  });
});
