/**
 * The user's trade grants and execution-limit policy (spec "Orders: place" rule 9, "Organization
 * (Connect) endpoints") over HTTP, through the real app, PostgreSQL, Redis and the simulator's
 * venues with an execute worker: grants and limits set through the simulator's control API as the
 * hosted page would. Each limit type fails a leg with HTTP 200, execution_limit_exceeded, nothing
 * sent to the venue (the simulator's own record) and no money moved, and lets a leg within it
 * place; a missing trade grant is a 403 scope_not_granted naming the venue, for a player JWT and
 * for an organization acting for its user, with nothing written and the Idempotency-Key left free;
 * preflight says the same; the policy route takes hostile bodies without a 5xx.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../support/fuzz-seed.js';
import { clientOrderId } from '../../../api/rest/orders/execution.js';
import { signPlayerJwt } from '../../../src/jwt.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import type { SimPartnerId } from '../../../src/sim/personalities.js';
import { keyHeaders as H, organizationUser } from '../../support/accounts.js';
import { send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

let o: OrderStack;
/** Open moneyline positions of one league (several contests), and of another league. */
let sameLeague: string[];
let otherLeague: string[];
let league: string;

const START = 1_000;

beforeAll(async () => {
  o = await startOrderStack(11, { executeWaitMs: 4_000 });
  const open = o.market.catalog.contests.filter((c) => c.status === 'open');
  const byLeague = new Map<string, string[]>();
  for (const p of o.market.catalog.positions) {
    const c = open.find((x) => x.id === p.contest_id);
    if (!c || p.market_key !== 'moneyline') continue;
    (byLeague.get(c.league_id) ?? byLeague.set(c.league_id, []).get(c.league_id)!).push(p.position_hash);
  }
  const leagues = [...byLeague.entries()].sort((a, b) => b[1].length - a[1].length);
  [league, sameLeague] = leagues[0]!;
  otherLeague = leagues[1]![1];
  o.execute();
}, 120_000);
afterAll(async () => o?.close());

let used = 0;
/** A position of `league` no other test has touched. */
const fresh = () => sameLeague[used++]!;
let usedOther = 0;
const freshElsewhere = () => otherLeague[usedOther++]!;

type Leg = Record<string, unknown>;
const app = () => o.s.built.app;
const real = (position: string, partnerId: string, extra: Leg): Leg => ({ mode: 'real', position_hash: position, partner_id: partnerId, max_price: 0.5, ...extra });

/** A new account (its own workspace) with `venues` connected at START each. */
async function account(venues: string[] = ['sim_book01', 'sim_exchange']): Promise<CreatedKey> {
  const k = await o.key();
  for (const v of venues) await connect(k.router_account_id, v);
  return k;
}
const connect = async (acct: string, partnerId: string, extra: Record<string, unknown> = {}) => {
  const r = await send(app(), 'POST', `/sim/v1/accounts/${encodeURIComponent(acct)}/connect`, { partner_id: partnerId, balance: START, ...extra }, o.admin);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
};
const setPolicy = async (acct: string, limits: unknown[]) => {
  const r = await send(app(), 'POST', `/sim/v1/accounts/${encodeURIComponent(acct)}/policy`, { limits }, o.admin);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
};
const buy = (headers: Record<string, string>, body: Record<string, unknown>, key = randomUUID()) => send(app(), 'POST', '/flow/v1/auth/orders/buy', body, { ...headers, 'idempotency-key': key });
const preflight = (headers: Record<string, string>, body: Record<string, unknown>) => send(app(), 'POST', '/flow/v1/auth/orders/preflight', body, headers);

/** Everything a blocked or refused request must leave as it was: the service's records and the venues'. */
async function footprint(acct: string) {
  const q = async (sql: string) => Number((await o.s.rt.pool.query<{ n: string }>(sql, [acct])).rows[0]!.n);
  return {
    orders: await q('SELECT count(*)::text AS n FROM orders WHERE router_account_id = $1'),
    ledger: await q('SELECT count(*)::text AS n FROM balance_ledger b JOIN account_partners ap USING (account_partner_id) WHERE ap.router_account_id = $1'),
    keys: await q('SELECT count(*)::text AS n FROM idempotency_keys WHERE router_account_id = $1'),
    opportunities: await q('SELECT count(*)::text AS n FROM opportunities WHERE router_account_id = $1'),
    venues: (['sim_book01', 'sim_exchange', 'sim_p2p'] as SimPartnerId[]).map((p) => {
      const v = o.market._venue(p);
      return { orders: [...v.orders.values()].filter((x) => x.account_id === acct).length, balance: v.accounts.get(acct)?.balance ?? null };
    }),
  };
}
const venueOrders = (partner: SimPartnerId, acct: string, key: string, leg = 0) => [...o.market._venue(partner).orders.values()].filter((x) => x.client_order_id === clientOrderId(acct, key, leg));

/** A leg blocked by the policy: 200, failed, execution_limit_exceeded, never sent. */
function expectBlocked(res: any, reason: RegExp) {
  expect(res).toMatchObject({ status: 'failed', rejected_code: 'execution_limit_exceeded', filled_notional: 0, filled_shares: 0, venues: [] });
  expect(res.rejected_reason).toMatch(reason);
}

describe('each limit type blocks a real leg (200, failed, execution_limit_exceeded, nothing sent, no money moved); within it the leg places', () => {
  it('max_stake_per_order: the leg’s stake', async () => {
    const k = await account();
    const acct = k.router_account_id;
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 1_000 }]);
    expect(await setPolicy(acct, [{ type: 'max_stake_per_order', params: { amount: 20 } }])).toEqual({ router_account_id: acct, limits: [{ type: 'max_stake_per_order', params: { amount: 20 } }] });
    const before = await footprint(acct);
    const key = randomUUID();
    const r = await buy(H(k), { orders: [real(h, 'sim_book01', { amount: 20.01 })] }, key);
    expect(r.status).toBe(200);
    expectBlocked(r.body.data.results[0], /stake 20\.01 is above max_stake_per_order 20/);
    expect(r.body.data.results[0].unfilled_notional).toBe(20.01);
    expect(r.body.data.opportunity_id).toBeNull();
    expect(venueOrders('sim_book01', acct, key)).toEqual([]);
    // The answer is recorded under the key (a 200); nothing else moved.
    expect(await footprint(acct)).toEqual({ ...before, keys: before.keys + 1 });

    // check_all_first with halt: a later leg over the limit means zero exposure (rule 4).
    const zeroKey = randomUUID();
    const zero = await buy(H(k), { orders: [real(h, 'sim_book01', { amount: 5 }), real(h, 'sim_book01', { amount: 25 })], check_all_first: true, on_leg_failure: 'halt' }, zeroKey);
    expect(zero.body.data.halted_at_index).toBe(1);
    expect(zero.body.data.results[0]).toMatchObject({ status: 'rejected', rejected_code: 'halted_upstream' });
    expectBlocked(zero.body.data.results[1], /stake 25 is above max_stake_per_order 20/);
    expect([...venueOrders('sim_book01', acct, zeroKey, 0), ...venueOrders('sim_book01', acct, zeroKey, 1)]).toEqual([]);
    expect(await footprint(acct)).toEqual({ ...before, keys: before.keys + 2 });

    const ok = await buy(H(k), { orders: [real(h, 'sim_book01', { amount: 20 })] });
    expect(ok.body.data.results[0]).toMatchObject({ status: 'completed', filled_notional: 20, rejected_code: null });
    expect(o.market._venue('sim_book01').accounts.get(acct)!.balance).toBeLessThan(START);
  });

  it('max_stake_per_venue: the stake plus what the account has open there (filled, and resting at its limit); legs of one request add up; other venues are free', async () => {
    const k = await account(['sim_book01', 'sim_exchange']);
    const acct = k.router_account_id;
    const [h1, h2] = [fresh(), fresh()];
    await o.setBook('sim_book01', h1, [{ price: 0.4, available: 1_000 }]);
    await o.setBook('sim_book01', h2, [{ price: 0.4, available: 8 }, { price: 0.7, available: 500 }]);
    await o.setBook('sim_exchange', h1, [{ price: 0.5, available: 1_000 }]);
    // Open before the policy: USD 10 filled, and a limit order with 8 filled and 15 resting at its limit.
    expect((await buy(H(k), { orders: [real(h1, 'sim_book01', { amount: 10 })] })).body.data.results[0].status).toBe('completed');
    const limit = await buy(H(k), { orders: [real(h2, 'sim_book01', { shares: 50, order_type: 'limit' })] });
    expect(limit.body.data.results[0]).toMatchObject({ status: 'resting', filled_notional: 8, unfilled_notional: 15 });
    // 10 + 8 + 15 = 33 open on sim_book01; 40 allowed: 7 left.
    await setPolicy(acct, [{ type: 'max_stake_per_venue', params: { partner_id: 'sim_book01', amount: 40 } }]);
    const before = await footprint(acct);
    const key = randomUUID();
    const r = await buy(H(k), { orders: [real(h1, 'sim_book01', { amount: 7.01 })] }, key);
    expectBlocked(r.body.data.results[0], /stake 7\.01 plus 33 already open on sim_book01 is above max_stake_per_venue 40 \(7 left\)/);
    expect(venueOrders('sim_book01', acct, key)).toEqual([]);
    expect(await footprint(acct)).toEqual({ ...before, keys: before.keys + 1 });

    // Two legs of one request: 4 passes, 3.01 more would pass alone but not after it; sim_exchange is not limited.
    const two = await buy(H(k), { orders: [real(h1, 'sim_book01', { amount: 4 }), real(h1, 'sim_book01', { amount: 3.01 }), real(h1, 'sim_exchange', { amount: 100 })] });
    const [a, b, c] = two.body.data.results;
    expect(a).toMatchObject({ status: 'completed', filled_notional: 4 });
    expectBlocked(b, /stake 3\.01 plus 37 already open or staked by earlier orders of this request on sim_book01/);
    expect(c).toMatchObject({ status: 'completed', filled_notional: 100 });
    // Exactly at the limit places.
    expect((await buy(H(k), { orders: [real(h1, 'sim_book01', { amount: 3 })] })).body.data.results[0]).toMatchObject({ status: 'completed', filled_notional: 3 });
  });

  it('max_stake_per_venue under concurrency: eight buys at once of 30 each under a limit of 100 place exactly three', async () => {
    const k = await account(['sim_book01']);
    const acct = k.router_account_id;
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 10_000 }]);
    await setPolicy(acct, [{ type: 'max_stake_per_venue', params: { partner_id: 'sim_book01', amount: 100 } }]);
    // Each passes the request's own check (nothing open yet); only the check under the limits lock, with the intent, sees the others.
    const answers = await Promise.all(Array.from({ length: 8 }, () => buy(H(k), { orders: [real(h, 'sim_book01', { amount: 30 })] })));
    const results = answers.map((r) => r.body.data.results[0]);
    expect(results.filter((x) => x.status === 'completed')).toHaveLength(3);
    for (const x of results.filter((y) => y.status !== 'completed')) expect(x).toMatchObject({ status: 'failed', rejected_code: 'execution_limit_exceeded' });
    const atVenue = [...o.market._venue('sim_book01').orders.values()].filter((x) => x.account_id === acct);
    expect(atVenue.reduce((s, x) => s + x.filled_notional, 0)).toBe(90);
  });

  it('max_stake_per_league: across venues, for the position’s league only', async () => {
    const k = await account(['sim_book01', 'sim_exchange']);
    const acct = k.router_account_id;
    const [h1, h2, elsewhere] = [fresh(), fresh(), freshElsewhere()];
    await o.setBook('sim_book01', h1, [{ price: 0.4, available: 1_000 }]);
    await o.setBook('sim_exchange', h2, [{ price: 0.5, available: 1_000 }]);
    await o.setBook('sim_exchange', elsewhere, [{ price: 0.5, available: 1_000 }]);
    await setPolicy(acct, [{ type: 'max_stake_per_league', params: { league_id: league, amount: 25 } }]);
    expect((await buy(H(k), { orders: [real(h1, 'sim_book01', { amount: 15 })] })).body.data.results[0]).toMatchObject({ status: 'completed', filled_notional: 15 });
    const before = await footprint(acct);
    const key = randomUUID();
    const r = await buy(H(k), { orders: [real(h2, 'sim_exchange', { amount: 10.01 })] }, key);
    expectBlocked(r.body.data.results[0], new RegExp(`stake 10\\.01 plus 15 already open in league ${league} is above max_stake_per_league 25`));
    expect(venueOrders('sim_exchange', acct, key)).toEqual([]);
    expect(await footprint(acct)).toEqual({ ...before, keys: before.keys + 1 });
    // 20 whole contracts at 0.50: USD 10, exactly the 10 left.
    expect((await buy(H(k), { orders: [real(h2, 'sim_exchange', { amount: 10 })] })).body.data.results[0]).toMatchObject({ status: 'completed', filled_notional: 10 });
    expect((await buy(H(k), { orders: [real(elsewhere, 'sim_exchange', { amount: 200 })] })).body.data.results[0]).toMatchObject({ status: 'completed', filled_notional: 200 });
  });

  it('practice_only: no real-money leg, whatever its size; practice legs still fill', async () => {
    const k = await account(['sim_book01']);
    const acct = k.router_account_id;
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 1_000 }]);
    await setPolicy(acct, [{ type: 'practice_only', params: {} }]);
    const before = await footprint(acct);
    const key = randomUUID();
    const r = await buy(H(k), { orders: [real(h, 'sim_book01', { amount: 1 })], on_leg_failure: 'halt' }, key);
    expectBlocked(r.body.data.results[0], /practice_only/);
    expect(r.body.data.halted_at_index).toBe(0);
    expect(venueOrders('sim_book01', acct, key)).toEqual([]);
    expect(await footprint(acct)).toEqual({ ...before, keys: before.keys + 1 });
    const paper = await buy(H(k), { orders: [{ mode: 'paper', position_hash: h, partner_id: 'sim_book01', amount: 50, max_price: 0.5 }] });
    expect(paper.body.data.results[0]).toMatchObject({ status: 'completed', filled_notional: 50, venues: [{ partner_id: 'practice' }] });
    // Replacing the policy with none lifts it.
    expect(await setPolicy(acct, [])).toEqual({ router_account_id: acct, limits: [] });
    expect((await buy(H(k), { orders: [real(h, 'sim_book01', { amount: 1 })] })).body.data.results[0].status).toBe('completed');
  });
});

describe('trade grants: scope_not_granted', () => {
  it('a player JWT on a venue whose trade:execute the user withheld: 403 naming it, nothing written, the Idempotency-Key still free', async () => {
    const k = await account(['sim_exchange']);
    const acct = k.router_account_id;
    expect(await connect(acct, 'sim_book01', { scopes: ['balance:read'] })).toMatchObject({ partner_id: 'sim_book01', scopes: ['balance:read'] });
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 1_000 }]);
    await o.setBook('sim_exchange', h, [{ price: 0.5, available: 1_000 }]);
    const jwt = { authorization: `Bearer ${signPlayerJwt(o.s.rt.config.jwtSecret, acct, 600)}` };
    const before = await footprint(acct);
    const key = randomUUID();
    // The granted venue's leg comes first: it is not placed either (the request is refused whole).
    const body = { orders: [real(h, 'sim_exchange', { amount: 5 }), real(h, 'sim_book01', { amount: 5 })] };
    const r = await buy(jwt, body, key);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'scope_not_granted', details: { partner_id: 'sim_book01', index: 1, scope: 'trade:execute', partner_ids: ['sim_book01'] } });
    expect(await footprint(acct)).toEqual(before);
    // Preflight answers the same.
    const pf = await preflight(jwt, body);
    expect(pf.status).toBe(403);
    expect(pf.body.error).toMatchObject({ code: 'scope_not_granted', details: { partner_id: 'sim_book01' } });
    // Reconnecting without naming scopes keeps what the user chose.
    expect(await connect(acct, 'sim_book01')).toMatchObject({ scopes: ['balance:read'] });
    expect((await buy(jwt, body, key)).status).toBe(403);
    // Once granted, the same key and body place: the refusal consumed nothing.
    expect(await connect(acct, 'sim_book01', { scopes: ['trade:execute', 'balance:read'] })).toMatchObject({ scopes: ['balance:read', 'trade:execute'] });
    const ok = await buy(jwt, body, key);
    expect(ok.status).toBe(200);
    expect(ok.body.data.results.map((x: { status: string }) => x.status)).toEqual(['completed', 'completed']);
    expect(venueOrders('sim_book01', acct, key, 1)).toHaveLength(1);
  });

  it('an organization key acting for its user (X-Service-Account): connect:trade overrides neither the user’s grants nor their limits', async () => {
    const org = await o.key('execution', { plan: 'organization' });
    const ext = `user-${randomUUID()}`;
    const user = await organizationUser(o.s, org, ext);
    await connect(user, 'sim_book01', { scopes: ['balance:read', 'history:read'] });
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 1_000 }]);
    const as = H(org, { 'x-service-account': ext });
    const before = await footprint(user);
    const r = await buy(as, { orders: [real(h, 'sim_book01', { amount: 5 })] });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'scope_not_granted', details: { partner_id: 'sim_book01' } });
    expect(r.body.error.message).toMatch(/sim_book01/);
    expect(await footprint(user)).toEqual(before);
    // Granted, but the user's limit still holds for the organization.
    await connect(user, 'sim_book01', { scopes: ['trade:execute'] });
    await setPolicy(user, [{ type: 'max_stake_per_order', params: { amount: 5 } }]);
    const blocked = await buy(as, { orders: [real(h, 'sim_book01', { amount: 6 })] });
    expectBlocked(blocked.body.data.results[0], /max_stake_per_order 5/);
    expect((await buy(as, { orders: [real(h, 'sim_book01', { amount: 5 })] })).body.data.results[0].status).toBe('completed');
    // The organization's own account is another account, with its own (default) grants.
    expect((await footprint(org.router_account_id)).orders).toBe(0);
  });

  it('practice legs need no grant; a venue with no connection at all is the leg’s venue_disabled, not a 403', async () => {
    const k = await account([]);
    const acct = k.router_account_id;
    await connect(acct, 'sim_book01', { scopes: [] });
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 1_000 }]);
    const paper = await buy(H(k), { orders: [{ mode: 'paper', position_hash: h, partner_id: 'sim_book01', amount: 5, max_price: 0.5 }] });
    expect(paper.body.data.results[0].status).toBe('completed');
    const unconnected = await buy(H(k), { orders: [real(h, 'sim_exchange', { amount: 5 })] });
    expect(unconnected.status).toBe(200);
    expect(unconnected.body.data.results[0]).toMatchObject({ status: 'failed', rejected_code: 'venue_disabled' });
  });
});

describe('preflight', () => {
  it('gives execution_limit_exceeded with the numbers, a fix and a message for the user; sums the request’s legs; writes nothing', async () => {
    const k = await account(['sim_book01']);
    const acct = k.router_account_id;
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 1_000 }]);
    await setPolicy(acct, [
      { type: 'max_stake_per_order', params: { amount: 15 } },
      { type: 'max_stake_per_venue', params: { partner_id: 'sim_book01', amount: 25 } },
    ]);
    const before = await footprint(acct);
    const r = await preflight(H(k), { orders: [real(h, 'sim_book01', { amount: 15.5 }), real(h, 'sim_book01', { amount: 15 }), real(h, 'sim_book01', { amount: 10.01 }), real(h, 'sim_book01', { amount: 10 })] });
    expect(r.status).toBe(200);
    const [a, b, c, d] = r.body.data.results;
    expect(a).toMatchObject({ accepted: false, rejected_code: 'execution_limit_exceeded', fix: 'reduce_stake', rejected_reason: 'stake 15.5 is above max_stake_per_order 15', normalized: { amount: 15.5 } });
    expect(a.message_user).toBe('Your trading limits allow at most $15.00 per order; this one stakes $15.50. Reduce the stake.');
    expect(b).toMatchObject({ accepted: true, total_allocated: 15 });
    expect(c).toMatchObject({ accepted: false, rejected_code: 'execution_limit_exceeded', fix: 'reduce_stake' });
    expect(c.message_user).toMatch(/\$15\.00 is already open or staked by earlier orders of this request, so this order can stake at most \$10\.00/);
    expect(d).toMatchObject({ accepted: true });
    expect(await footprint(acct)).toEqual(before);
    // practice_only: the real leg is refused, the practice one is not.
    await setPolicy(acct, [{ type: 'practice_only' }]);
    const one = await preflight(H(k), { orders: [real(h, 'sim_book01', { amount: 1 }), { mode: 'paper', position_hash: h, partner_id: 'sim_book01', amount: 1, max_price: 0.5 }] });
    expect(one.body.data.results.map((x: { accepted: boolean; rejected_code: string | null; fix: string | null }) => [x.accepted, x.rejected_code, x.fix])).toEqual([
      [false, 'execution_limit_exceeded', 'choose_mode'],
      [true, null, null],
    ]);
  });
});

describe('POST /sim/v1/accounts/:id/policy', () => {
  it('refuses what it cannot take with a code naming why, and keeps the limits it had', async () => {
    const k = await account([]);
    const acct = k.router_account_id;
    const kept = [{ type: 'max_stake_per_order', params: { amount: 12.5 } }];
    await setPolicy(acct, kept);
    const cases: [unknown, number, string][] = [
      [{ limits: [{ type: 'max_loss', params: { amount: 1 } }] }, 400, 'unknown_limit_type'],
      [{ limits: [{ type: 'max_stake_per_order', params: {} }] }, 400, 'invalid_limit_params'],
      [{ limits: [{ type: 'max_stake_per_order', params: { amount: 1.0000001 } }] }, 400, 'invalid_limit_params'],
      [{ limits: [{ type: 'max_stake_per_venue', params: { partner_id: 'nope', amount: 1 } }] }, 400, 'invalid_limit_params'],
      [{ limits: [{ type: 'max_stake_per_venue', params: { partner_id: 'practice', amount: 1 } }] }, 400, 'invalid_limit_params'],
      [{ limits: [{ type: 'max_stake_per_league', params: { league_id: 'nope', amount: 1 } }] }, 400, 'invalid_limit_params'],
      [{ limits: [{ type: 'practice_only' }, { type: 'practice_only' }] }, 400, 'duplicate_limit'],
      [{ limits: [{ type: 'max_stake_per_order', params: { amount: 1, max: 2 } }] }, 400, 'unknown_parameter'],
      [{ limits: [{ type: 'max_stake_per_order', params: { amount: -1 } }] }, 400, 'invalid_parameter'],
      [{ limits: [{ type: 'max_stake_per_order', params: { amount: '5' } }] }, 400, 'invalid_parameter'],
      [{ limits: [], extra: true }, 400, 'unknown_parameter'],
      [{}, 400, 'invalid_parameter'],
    ];
    for (const [body, status, code] of cases) {
      const r = await send(app(), 'POST', `/sim/v1/accounts/${acct}/policy`, body, o.admin);
      expect([r.status, r.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
    }
    const missing = await send(app(), 'POST', '/sim/v1/accounts/acct_nobody/policy', { limits: [] }, o.admin);
    expect([missing.status, missing.body.error.code]).toEqual([404, 'account_not_found']);
    expect((await send(app(), 'POST', `/sim/v1/accounts/${acct}/policy`, { limits: [] }, {})).status).toBe(401);
    const stored = await o.s.rt.pool.query('SELECT type, amount::text FROM execution_limits WHERE router_account_id = $1', [acct]);
    expect(stored.rows).toEqual([{ type: 'max_stake_per_order', amount: '12.500000' }]);
    // connect: an unknown or repeated grant is refused before anything is recorded.
    for (const scopes of [['trade:everything'], ['trade:execute', 'trade:execute'], 'trade:execute']) {
      const r = await send(app(), 'POST', `/sim/v1/accounts/${acct}/connect`, { partner_id: 'sim_book01', balance: 1, scopes }, o.admin);
      expect(r.status).toBe(400);
    }
    expect((await o.s.rt.pool.query('SELECT 1 FROM account_partners WHERE router_account_id = $1', [acct])).rowCount).toBe(0);
  });

  it('hostile bodies: never a 5xx; a refusal leaves the stored limits as they were', async () => {
    const k = await account([]);
    const acct = k.router_account_id;
    await setPolicy(acct, [{ type: 'practice_only' }]);
    const stored = async () => (await o.s.rt.pool.query('SELECT position, type, partner_id, league_id, amount::text FROM execution_limits WHERE router_account_id = $1 ORDER BY position', [acct])).rows;
    let expected = await stored();
    const id = fc.oneof(fc.constantFrom('sim_book01', 'sim_exchange', 'practice', league, ''), fc.string(), fc.string({ unit: 'binary' }));
    const amount = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(1e12, 1e12 + 1, 0.1234567, 5), fc.string(), fc.constant(null));
    const limit = fc.record(
      {
        type: fc.oneof(fc.constantFrom('max_stake_per_order', 'max_stake_per_venue', 'max_stake_per_league', 'practice_only'), fc.string({ unit: 'binary' })),
        params: fc.oneof(fc.record({ amount, partner_id: id, league_id: id, other: fc.anything() }, { requiredKeys: [] }), fc.anything()),
        extra: fc.anything(),
      },
      { requiredKeys: ['type'] },
    );
    const body = fc.oneof(fc.record({ limits: fc.array(limit, { maxLength: 60 }) }), fc.record({ limits: fc.anything() }), fc.anything());
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const r = await send(app(), 'POST', `/sim/v1/accounts/${acct}/policy`, JSON.stringify(b) ?? 'null', o.admin);
        expect([200, 400]).toContain(r.status);
        if (r.status === 400) {
          expect(typeof r.body.error.code).toBe('string');
          expect(await stored()).toEqual(expected);
        } else {
          expected = await stored();
          expect(expected).toHaveLength(r.body.data.limits.length);
        }
      }),
      { numRuns: 150 },
    );
  });
});
