/**
 * POST /flow/v1/auth/orders/preflight through the real app, PostgreSQL, Redis and the simulator
 * (books set with POST /sim/v1/quotes flow through ingest and compute into the feed the checks
 * read): every per-leg code preflight can give, each warning, the venue grid (whole contracts,
 * cents, american odds, increments), fees for the order's amount, limit orders resting, practice
 * legs at the best live price, verify_liquidity against the live book, the request-level 400/404/409
 * answers, halt, the acting account, and that nothing is written.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { openOpportunity } from '../../../src/store/pg/opportunities.js';
import { keyHeaders as H, organizationUser } from '../../support/accounts.js';
import { send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

let o: OrderStack;
let k: CreatedKey;
let acct: string;
let positions: string[];
let closedPosition: string;

beforeAll(async () => {
  o = await startOrderStack();
  const open = new Set(o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  const closed = new Set(o.market.catalog.contests.filter((c) => c.status !== 'open').map((c) => c.id));
  positions = o.market.catalog.positions.filter((p) => open.has(p.contest_id) && p.market_key === 'moneyline').map((p) => p.position_hash);
  closedPosition = o.market.catalog.positions.find((p) => closed.has(p.contest_id))!.position_hash;
  k = await o.key();
  acct = k.router_account_id;
  for (const [venue, balance] of [['sim_exchange', 5_000], ['sim_book01', 5_000], ['sim_sportsbook', 5_000], ['sim_p2p', 5_000]] as const) await o.connect(acct, venue, balance);
}, 120_000);
afterAll(async () => o?.close());

let used = 0;
/** A position no other test has touched (its feed holds only the books this test sets). */
const fresh = () => positions[used++]!;

type Leg = Record<string, unknown>;
const preflight = (body: Record<string, unknown>, key: CreatedKey = k, headers: Record<string, string> = {}) => send(o.s.built.app, 'POST', '/flow/v1/auth/orders/preflight', body, H(key, headers));
/** One leg's result (the call must answer 200). */
async function one(leg: Leg, extra: Record<string, unknown> = {}, key: CreatedKey = k) {
  const r = await preflight({ orders: [{ mode: 'real', ...leg }], ...extra }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.data.results).toHaveLength(1);
  return r.body.data.results[0];
}

describe('an accepted leg: the grid, the fill and its fees', () => {
  it('a whole-contract venue in cents: the stake rounds down to whole contracts, fees are for this amount', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 });
    expect(r).toMatchObject({
      index: 0,
      requested_partner_id: 'sim_exchange',
      accepted: true,
      rejected_code: null,
      rejected_reason: null,
      fix: null,
      warnings: [],
      currency: 'USD',
      normalized: { max_price: 0.5, amount: 10, contracts: 21, price_basis: 'book', price_format: 'cents', native_max_price: 50 },
      would_rest: false,
      expected_fill_price: 0.47,
      total_allocated: 9.87,
      unfilled_amount: 0.13,
      // pq fees: 0.07 and 0.0175 × p × (1 − p) × 21 contracts.
      total_taker_fee: 0.366177,
      total_maker_fee: 0.091544,
      total_cost_taker: 10.236177,
    });
    expect(r.venues).toEqual([{ partner_id: 'sim_exchange', expected_price: 0.47, allocated_amount: 9.87, fee_packet: { taker_price: 0.487437, maker_price: 0.474359, taker_fee: 0.366177, maker_fee: 0.091544 } }]);
    expect(r.message_user).toMatch(/21 contracts/);
  });

  it('walks the book level by level up to max_price', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.4, available: 4 }, { price: 0.45, available: 9 }, { price: 0.6, available: 500 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 12, max_price: 0.5 });
    // 10 contracts at 0.40 (4.00), then 17 at 0.45 (7.65): 27 contracts, 11.65; 0.35 buys no more.
    expect(r).toMatchObject({ accepted: true, total_allocated: 11.65, unfilled_amount: 0.35, normalized: { contracts: 27 } });
    expect(r.expected_fill_price).toBeCloseTo(11.65 / 27, 6);
  });

  it('a flat-percent fee venue in probability: fees are that percent of this notional', async () => {
    const h = fresh();
    await o.setBook('sim_p2p', h, [{ price: 0.5, available: 100 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_p2p', amount: 40, max_price: 0.55 });
    expect(r).toMatchObject({ accepted: true, total_allocated: 40, unfilled_amount: 0, normalized: { contracts: 80, price_format: 'probability', native_max_price: 0.55 }, total_taker_fee: 0.4, total_maker_fee: 0, total_cost_taker: 40.4 });
  });

  it('a leg named by liquidity_hash is the same leg', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const liq = JSON.parse((await o.hot.liquidity(h.split(':')[0]!))!) as { position_hash: string; partner_liquidities: { partner_id: string; liquidity_hash: string }[] }[];
    const lh = liq.find((p) => p.position_hash === h)!.partner_liquidities.find((e) => e.partner_id === 'sim_exchange')!.liquidity_hash;
    const byHash = await one({ liquidity_hash: lh, amount: 10, max_price: 0.5 });
    const byPosition = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 });
    expect(byHash).toEqual(byPosition);
    expect(byHash.requested_partner_id).toBe('sim_exchange');
  });
});

describe('warnings: the order adjusted to the venue grid', () => {
  it('price_off_tick: a max_price between cents rounds down to the tick', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.4, available: 1_000 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.475 });
    expect(r).toMatchObject({ accepted: true, warnings: ['price_off_tick'], normalized: { max_price: 0.47, native_max_price: 47 } });
  });

  it('amount_off_increment: a cent-increment venue floors 10.005 to 10.00; a dollar-increment one 12.5 to 12', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.5, available: 1_000 }]);
    const cents = await one({ position_hash: h, partner_id: 'sim_book01', amount: 10.005, max_price: 0.6 });
    expect(cents).toMatchObject({ accepted: true, warnings: ['amount_off_increment'], normalized: { amount: 10, contracts: 20 }, total_allocated: 10, unfilled_amount: 0.005 });
    const h2 = fresh();
    await o.setBook('sim_sportsbook', h2, [{ price: 0.5, available: 1_000 }]);
    const dollars = await one({ position_hash: h2, partner_id: 'sim_sportsbook', amount: 12.5, max_price: 0.6 });
    expect(dollars).toMatchObject({ accepted: true, warnings: ['amount_off_increment'], normalized: { amount: 12 }, total_allocated: 12, unfilled_amount: 0.5 });
  });

  it('american odds: max_price goes onto the whole-point grid in the buyer’s favour (no warning on an accept-by-id venue)', async () => {
    const h = fresh();
    // 0.6 is −150 on the sportsbook's grid.
    await o.setBook('sim_sportsbook', h, [{ price: 0.6, available: 1_000 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_sportsbook', amount: 12, max_price: 0.61 });
    // 0.61 is −156.41; rounding toward +∞ gives −156, i.e. 156/256.
    expect(r).toMatchObject({ accepted: true, warnings: [], normalized: { price_format: 'american', native_max_price: -156, max_price: 0.609375, price_basis: 'offer', contracts: 20 }, expected_fill_price: 0.6, total_allocated: 12, total_taker_fee: 0 });
  });
});

describe('every per-leg code preflight gives', () => {
  it('orders_not_supported: a quotes-only venue', async () => {
    const h = fresh();
    await o.setBook('sim_quotes', h, [{ price: 0.5, available: 1_000 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_quotes', amount: 10, max_price: 0.6 });
    expect(r).toMatchObject({ accepted: false, rejected_code: 'orders_not_supported', fix: 'switch_venue', normalized: null, venues: [] });
    expect(r.message_user).toMatch(/does not take orders/);
  });

  it('venue_disabled: no connection, or credentials not validated', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const other = await o.key();
    const none = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }, {}, other);
    expect(none).toMatchObject({ accepted: false, rejected_code: 'venue_disabled', fix: 'connect_venue' });
    await o.connect(other.router_account_id, 'sim_exchange', 100, 'pending');
    const pending = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }, {}, other);
    expect(pending).toMatchObject({ accepted: false, rejected_code: 'venue_disabled' });
    expect(pending.rejected_reason).toMatch(/pending/);
  });

  it('insufficient_live_depth: an empty book, a venue that does not quote the position, a closed contest, an unknown position', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, []);
    expect(await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 })).toMatchObject({ rejected_code: 'insufficient_live_depth', fix: 'switch_venue' });
    expect(await one({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 })).toMatchObject({ rejected_code: 'insufficient_live_depth' });
    expect(await one({ position_hash: closedPosition, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 })).toMatchObject({ rejected_code: 'insufficient_live_depth', fix: 'choose_position' });
    expect(await one({ position_hash: 'ct_nope:moneyline:home:0:tm_x:ft', partner_id: 'sim_exchange', amount: 10, max_price: 0.5 })).toMatchObject({ rejected_code: 'insufficient_live_depth' });
    expect(await one({ liquidity_hash: 'sim_exchange:no-such-instrument', amount: 10, max_price: 0.5 })).toMatchObject({ rejected_code: 'insufficient_live_depth' });
  });

  it('above_max_price: the book is priced above max_price (retry higher)', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.6, available: 1_000 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.55 });
    expect(r).toMatchObject({ accepted: false, rejected_code: 'above_max_price', fix: 'raise_max_price', total_allocated: 0 });
  });

  it('insufficient_size: the book within max_price holds less than the order (retry smaller), with what would fill', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 5 }, { price: 0.6, available: 1_000 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 });
    expect(r).toMatchObject({ accepted: false, rejected_code: 'insufficient_size', fix: 'reduce_stake', total_allocated: 4.7, unfilled_amount: 5.3, normalized: { contracts: 10 } });
    expect(r.message_user).toMatch(/\$4\.70/);
  });

  it('unfillable: a stake or share count below one whole contract', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    expect(await one({ position_hash: h, partner_id: 'sim_exchange', amount: 0.3, max_price: 0.5 })).toMatchObject({ rejected_code: 'unfillable', fix: 'raise_stake' });
    expect(await one({ position_hash: h, partner_id: 'sim_exchange', shares: 0.5, max_price: 0.5 })).toMatchObject({ rejected_code: 'unfillable' });
    expect(await one({ position_hash: h, partner_id: 'sim_exchange', amount: 0.3, max_price: 0.5, order_type: 'limit' })).toMatchObject({ rejected_code: 'unfillable' });
  });

  it('below_min_order and above_max_order: the venue bounds in USD; a full fill of the offer waives the minimum where allowed', async () => {
    const h = fresh();
    await o.setBook('sim_sportsbook', h, [{ price: 0.5, available: 2_500 }]);
    expect(await one({ position_hash: h, partner_id: 'sim_sportsbook', amount: 3, max_price: 0.6 })).toMatchObject({ rejected_code: 'below_min_order', fix: 'raise_stake' });
    expect(await one({ position_hash: h, partner_id: 'sim_sportsbook', amount: 1_500, max_price: 0.6 })).toMatchObject({ rejected_code: 'above_max_order', fix: 'reduce_stake' });
    const h2 = fresh();
    await o.setBook('sim_book01', h2, [{ price: 0.3, available: 0.6 }]);
    expect(await one({ position_hash: h2, partner_id: 'sim_book01', amount: 0.5, max_price: 0.4 })).toMatchObject({ rejected_code: 'below_min_order' });
    expect(await one({ position_hash: h2, partner_id: 'sim_book01', amount: 0.6, max_price: 0.4 })).toMatchObject({ accepted: true, total_allocated: 0.6, normalized: { contracts: 2 } });
  });

  it('price_out_of_band: a limit below the venue’s lowest price, an accept-by-id offer outside its band', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    expect(await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.004 })).toMatchObject({ rejected_code: 'price_out_of_band', fix: 'raise_max_price' });
    const h2 = fresh();
    // −19900 is shorter than the sportsbook's −10000 limit.
    await o.setBook('sim_sportsbook', h2, [{ price: 0.995, available: 1_000 }]);
    expect(await one({ position_hash: h2, partner_id: 'sim_sportsbook', amount: 10, max_price: 0.999 })).toMatchObject({ rejected_code: 'price_out_of_band', fix: 'switch_venue' });
  });

  it('insufficient_balance: a synced balance refuses; the legs on one venue are summed; a stale balance only warns', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.5, available: 1_000 }]);
    const poor = await o.key();
    await o.connect(poor.router_account_id, 'sim_exchange', 6);
    const leg = { mode: 'real', position_hash: h, partner_id: 'sim_exchange', amount: 4, max_price: 0.5 };
    const r = await preflight({ orders: [leg, leg] }, poor);
    expect(r.status).toBe(200);
    // 8 contracts at 0.50 = 4.00 plus 0.14 taker fee each: the first fits in 6, the second does not.
    expect(r.body.data.results[0]).toMatchObject({ accepted: true, warnings: [] });
    expect(r.body.data.results[1]).toMatchObject({ accepted: false, rejected_code: 'insufficient_balance', fix: 'add_funds' });
    expect(r.body.data.halted_at_index).toBeNull();
    await o.s.rt.pool.query("UPDATE account_partners SET balance_as_of = now() - interval '1 hour' WHERE router_account_id = $1", [poor.router_account_id]);
    const stale = await preflight({ orders: [leg, leg] }, poor);
    expect(stale.body.data.results[1]).toMatchObject({ accepted: true, warnings: ['insufficient_balance'] });
  });

  it('no_live_price_for_paper: a practice leg where no real venue has a fresh quote with at least USD 1', async () => {
    const h = fresh();
    expect(await one({ mode: 'paper', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.6 })).toMatchObject({ rejected_code: 'no_live_price_for_paper', fix: 'retry_later', currency: 'ATLAS' });
    await o.setBook('sim_exchange', h, [{ price: 0.5, available: 0.5 }]);
    expect(await one({ mode: 'paper', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.6 })).toMatchObject({ rejected_code: 'no_live_price_for_paper' });
    expect(await one({ mode: 'paper', position_hash: closedPosition, partner_id: 'sim_exchange', amount: 10, max_price: 0.6 })).toMatchObject({ rejected_code: 'no_live_price_for_paper' });
  });

  it('a leg the router cannot plan: a test key’s leg without mode, an unknown venue (no code, the reason says why)', async () => {
    const h = fresh();
    const r = await preflight({ orders: [{ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }] });
    expect(r.body.data.results[0]).toMatchObject({ accepted: false, rejected_code: null, fix: 'choose_mode', currency: null });
    expect(r.body.data.results[0].rejected_reason).toMatch(/mode/);
    expect(await one({ position_hash: h, partner_id: 'nowhere', amount: 10, max_price: 0.5 })).toMatchObject({ accepted: false, rejected_code: null, fix: 'switch_venue' });
  });
});

describe('limit orders', () => {
  it('would_rest below the best price: nothing fills now, the whole order rests at max_price', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.4, order_type: 'limit' });
    expect(r).toMatchObject({ accepted: true, would_rest: true, total_allocated: 0, unfilled_amount: 10, expected_fill_price: 0.4, normalized: { contracts: 25, price_basis: 'max_price' }, total_cost_taker: 10.42 });
  });

  it('takes what crosses and rests the rest; an empty book only rests', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 4.7 }]);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5, order_type: 'limit' });
    expect(r).toMatchObject({ accepted: true, would_rest: true, total_allocated: 4.7, unfilled_amount: 5.3, normalized: { contracts: 20 } });
    const h2 = fresh();
    await o.setBook('sim_exchange', h2, []);
    expect(await one({ position_hash: h2, partner_id: 'sim_exchange', amount: 10, max_price: 0.5, order_type: 'limit' })).toMatchObject({ accepted: true, would_rest: true, total_allocated: 0 });
  });
});

describe('practice legs', () => {
  it('fill at the best live price across real venues (fresh, at least USD 1), whatever venue was named', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 0.5 }]);
    await o.setBook('sim_p2p', h, [{ price: 0.46, available: 100 }]);
    const r = await one({ mode: 'paper', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 });
    expect(r).toMatchObject({
      accepted: true,
      requested_partner_id: 'sim_exchange',
      currency: 'ATLAS',
      expected_fill_price: 0.46,
      total_allocated: 10,
      unfilled_amount: 0,
      total_taker_fee: 0,
      total_cost_taker: 10,
      normalized: { amount: 10, contracts: 21.73913, price_basis: 'best_live_price' },
      venues: [{ partner_id: 'practice', expected_price: 0.46, allocated_amount: 10, fee_packet: { taker_price: 0.46, maker_price: 0.46, taker_fee: 0, maker_fee: 0 } }],
    });
    expect(await one({ mode: 'paper', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.45 })).toMatchObject({ rejected_code: 'above_max_price' });
    // The wallet opens at 1,000 ATLAS: more is refused, and preflight did not open it.
    expect(await one({ mode: 'paper', position_hash: h, partner_id: 'sim_exchange', amount: 1_500, max_price: 0.5 })).toMatchObject({ rejected_code: 'insufficient_balance', currency: 'ATLAS' });
    const { rows } = await o.s.rt.pool.query('SELECT count(*)::int AS n FROM practice_ledger WHERE router_account_id = $1', [acct]);
    expect(rows[0].n).toBe(0);
  });
});

describe('verify_liquidity', () => {
  it('a fresh, deep venue is not read live; a thin one is, and the live book decides', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const deep = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }, { verify_liquidity: true });
    expect(deep.venues[0]).toMatchObject({ verified: false, live_available: null, live_price: null });
    const plain = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 });
    expect(plain.venues[0]).not.toHaveProperty('verified');
    // The venue's book empties; the feed has not seen it (no ingest).
    o.market.setQuote({ partner_id: 'sim_exchange', position_hash: h, price: 0.47, available: 0, levels: [] });
    const thin = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 400, max_price: 0.5 }, { verify_liquidity: true });
    expect(thin).toMatchObject({ accepted: false, rejected_code: 'insufficient_live_depth', venues: [{ verified: true, live_available: 0, live_price: null }] });
    expect(thin.rejected_reason).toMatch(/moved away/);
    // Without verify_liquidity the cached book stands.
    expect(await one({ position_hash: h, partner_id: 'sim_exchange', amount: 400, max_price: 0.5 })).toMatchObject({ accepted: true });
    // The live book refills deeper than the cache: the fill is estimated on it.
    o.market.setQuote({ partner_id: 'sim_exchange', position_hash: h, price: 0.45, available: 900, levels: [{ price: 0.45, available: 900 }] });
    const refilled = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 400, max_price: 0.5 }, { verify_liquidity: true });
    expect(refilled).toMatchObject({ accepted: true, expected_fill_price: 0.45, venues: [{ verified: true, live_available: 900, live_price: 0.45 }] });
  });

  it('a stale cached quote is read live however deep it is', async () => {
    const h = fresh();
    // Taken into the feed two minutes old: past the venue's 30 s freshness bound.
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }], 120_000);
    const r = await one({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }, { verify_liquidity: true });
    expect(r).toMatchObject({ accepted: true, venues: [{ verified: true, live_available: 1_000, live_price: 0.47 }] });
  });
});

describe('the request: 400, 404 and 409 before any leg is checked', () => {
  it('unsupported_order_type: limit on a venue without it, limit on a practice leg', async () => {
    const h = fresh();
    const bad = await preflight({ orders: [{ mode: 'real', position_hash: h, partner_id: 'sim_sportsbook', amount: 10, max_price: 0.5, order_type: 'limit' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'unsupported_order_type', details: { index: 0, partner_id: 'sim_sportsbook', supported_order_types: ['market'] } });
    const paper = await preflight({ orders: [{ mode: 'paper', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5, order_type: 'limit' }] });
    expect(paper.status).toBe(400);
    expect(paper.body.error.code).toBe('unsupported_order_type');
  });

  it('unknown fields, rules between fields and conflicting parameters', async () => {
    const leg = { mode: 'real', position_hash: fresh(), partner_id: 'sim_exchange', amount: 10, max_price: 0.5 };
    expect((await preflight({ orders: [{ ...leg, tip: 1 }] })).body.error.code).toBe('unknown_parameter');
    expect((await preflight({ orders: [leg], extra: true })).body.error.code).toBe('unknown_parameter');
    expect((await preflight({ orders: [{ ...leg, shares: 3 }] })).body.error.code).toBe('invalid_parameter');
    expect((await preflight({ orders: [leg], placement: 'parallel', on_leg_failure: 'halt' })).body.error.code).toBe('conflicting_parameters');
    expect((await preflight({ orders: Array.from({ length: 26 }, () => leg) })).body.error.code).toBe('too_many_legs');
  });

  it('the model and the opportunity: 404 model_not_found, 409 model_archived, 404 opportunity_not_found, 400 currency_mismatch and model_mismatch', async () => {
    const leg = { mode: 'real', position_hash: fresh(), partner_id: 'sim_exchange', amount: 10, max_price: 0.5 };
    const model = async (name: string) => (await send(o.s.built.app, 'POST', '/flow/v1/auth/models', { model_name: name, model_description: '' }, H(k, { 'idempotency-key': randomUUID() }))).body.data.model_id as string;
    const m1 = await model('one');
    const m2 = await model('two');
    const missing = await preflight({ orders: [leg], model_id: 'model_nope' });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'model_not_found']);
    const otherAccounts = await preflight({ orders: [leg], model_id: m1 }, await o.key());
    expect([otherAccounts.status, otherAccounts.body.error.code]).toEqual([404, 'model_not_found']);
    const archived = await model('archived');
    expect((await o.s.built.app.inject({ method: 'POST', url: `/flow/v1/auth/models/${archived}/archive`, headers: H(k) })).statusCode).toBe(200);
    const a = await preflight({ orders: [leg], model_id: archived });
    expect([a.status, a.body.error.code]).toEqual([409, 'model_archived']);
    const noOpp = await preflight({ orders: [leg], opportunity_id: 'opp_nope' });
    expect([noOpp.status, noOpp.body.error.code]).toEqual([404, 'opportunity_not_found']);
    const client = await o.s.rt.pool.connect();
    let atlas: string;
    try {
      const opened = await openOpportunity(client, { routerAccountId: acct, modelId: m1, currency: 'ATLAS' });
      if (!opened.ok) throw new Error(opened.refusal);
      atlas = opened.opportunity.opportunity_id;
    } finally {
      client.release();
    }
    const currency = await preflight({ orders: [leg], opportunity_id: atlas, model_id: m1 });
    expect([currency.status, currency.body.error.code]).toEqual([400, 'currency_mismatch']);
    const paperLeg = { ...leg, mode: 'paper' };
    const wrongModel = await preflight({ orders: [paperLeg], opportunity_id: atlas, model_id: m2 });
    expect([wrongModel.status, wrongModel.body.error.code]).toEqual([400, 'model_mismatch']);
    const ok = await preflight({ orders: [paperLeg], opportunity_id: atlas, model_id: m1 });
    expect(ok.status).toBe(200);
  });
});

describe('halt', () => {
  it('halt stops at the first failing leg: the rest come back halted_upstream, unchecked; check_all_first checks every leg', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const good = { mode: 'real', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 };
    const bad = { ...good, max_price: 0.4 };
    const orders = [good, bad, good, { ...good, partner_id: 'sim_quotes' }];
    const halted = await preflight({ orders, on_leg_failure: 'halt' });
    expect(halted.body.data.halted_at_index).toBe(1);
    expect(halted.body.data.results.map((r: any) => [r.accepted, r.rejected_code])).toEqual([
      [true, null],
      [false, 'above_max_price'],
      [false, 'halted_upstream'],
      [false, 'halted_upstream'],
    ]);
    expect(halted.body.data.results[2]).toMatchObject({ fix: 'fix_earlier_leg', normalized: null, venues: [] });
    const continued = await preflight({ orders });
    expect(continued.body.data.halted_at_index).toBeNull();
    expect(continued.body.data.results.map((r: any) => r.rejected_code)).toEqual([null, 'above_max_price', null, 'orders_not_supported']);
    const allFirst = await preflight({ orders, on_leg_failure: 'halt', check_all_first: true, placement: 'parallel' });
    expect(allFirst.body.data.halted_at_index).toBe(1);
    expect(allFirst.body.data.results.map((r: any) => r.rejected_code)).toEqual([null, 'above_max_price', null, 'orders_not_supported']);
  });
});

describe('the acting account', () => {
  it('X-Service-Account from a key that is not an organization’s is 403 account_forbidden, whatever the body', async () => {
    for (const body of [{ orders: [{ mode: 'real', position_hash: fresh(), partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }] }, {}, { nonsense: true }]) {
      const r = await preflight(body, k, { 'x-service-account': 'someone-else' });
      expect([r.status, r.body.error.code]).toEqual([403, 'account_forbidden']);
    }
  });

  it('an organization acting for its user sees the user’s connections and wallet, not its own', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const org = await o.key('execution', { plan: 'organization' });
    await o.connect(org.router_account_id, 'sim_exchange', 1_000);
    const user = await organizationUser(o.s, org, 'user-1');
    const leg = { mode: 'real', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 };
    expect((await preflight({ orders: [leg] }, org)).body.data.results[0].accepted).toBe(true);
    const asUser = await preflight({ orders: [leg] }, org, { 'x-service-account': 'user-1' });
    expect(asUser.body.data.results[0]).toMatchObject({ accepted: false, rejected_code: 'venue_disabled' });
    await o.connect(user, 'sim_exchange', 1_000);
    expect((await preflight({ orders: [leg] }, org, { 'x-service-account': 'user-1' })).body.data.results[0].accepted).toBe(true);
    const stranger = await preflight({ orders: [leg] }, org, { 'x-service-account': 'not-ours' });
    expect([stranger.status, stranger.body.error.code]).toEqual([403, 'account_forbidden']);
  });

  it('needs account:read only: a data key may preflight', async () => {
    const data = await o.key('data');
    const r = await preflight({ orders: [{ mode: 'paper', position_hash: fresh(), partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }] }, data);
    expect(r.status).toBe(200);
  });
});

describe('preflight writes nothing', () => {
  it('no row in any table changes, no wallet opens, an Idempotency-Key leaves no record', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    const newcomer = await o.key();
    await o.connect(newcomer.router_account_id, 'sim_exchange', 100);
    const { rows: tables } = await o.s.rt.pool.query<{ name: string }>("SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
    const snapshot = async () => {
      const out: Record<string, string> = {};
      for (const t of tables) out[t.name] = (await o.s.rt.pool.query(`SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM ${t.name} x`)).rows[0].h;
      return out;
    };
    const before = await snapshot();
    const legs = [
      { mode: 'real', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 },
      { mode: 'paper', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 },
      { mode: 'real', position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5, order_type: 'limit' },
    ];
    for (const extra of [{}, { verify_liquidity: true }, { on_leg_failure: 'halt', check_all_first: true }]) {
      const r = await preflight({ orders: legs, ...extra }, newcomer, { 'idempotency-key': randomUUID() });
      expect(r.status).toBe(200);
      expect(r.body.data.results.every((x: any) => x.accepted)).toBe(true);
    }
    expect(await snapshot()).toEqual(before);
  });
});
