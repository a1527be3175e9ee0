/**
 * POST /flow/v1/auth/orders/buy through the real app, PostgreSQL and Redis (issue 11, the practice
 * slice): paper legs fill on the internal book at the best live price the liquidity processor
 * computed from venue quotes, debit the wallet in the transaction of their order row and events;
 * real-money legs go the real path (real-legs.test.ts); halt, check_all_first and parallel; the model and
 * opportunity checks; idempotency and races; tenant isolation.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Currency } from '../../../src/domain/account.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { lockAccount } from '../../../src/store/pg/accounts.js';
import { unarchiveModel } from '../../../src/store/pg/models.js';
import { openOpportunity } from '../../../src/store/pg/opportunities.js';
import { inTransaction } from '../../../src/store/pg/pool.js';
import { accountKey, expectOneEffect, keyHeaders as H, organizationUser } from '../../support/accounts.js';
import { get, send, type JsonResponse } from '../../support/http.js';
import { buy, orderCatalog, orderMarket, paperLeg, type OrderMarket } from '../../support/orders.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let m: OrderMarket;
const app = () => s.built.app;
beforeAll(async () => {
  const catalog = orderCatalog();
  s = await startStack({ catalog });
  m = await orderMarket(s, catalog);
  // The best live price of `home` is sim_book01's 0.52: the cheaper quotes do not count (under USD 1
  // available, stale, or the internal book's own).
  await m.quote(m.home, [
    { partner: 'sim_exchange', price: 0.55, available: 500 },
    { partner: 'sim_book01', price: 0.52, available: 300 },
    { partner: 'sim_sportsbook', price: 0.4, available: 0.5 },
    { partner: 'sim_p2p', price: 0.45, available: 800, stale: true },
    { partner: 'practice', price: 0.3, available: 1000 },
  ]);
  await m.quote(m.other, [{ partner: 'sim_exchange', price: 0.8, available: 1000 }]);
}, 90_000);
afterAll(async () => {
  await m?.close();
  await s?.close();
});

const key = () => accountKey(s);
const codeOf = (r: JsonResponse) => r.body?.error?.code;

async function ledgerOf(account: string) {
  const { rows } = await s.rt.pool.query<{ type: string; amount: string; balance_after: string; router_order_id: string | null; seq: number }>(
    'SELECT type, amount::text, balance_after::text, router_order_id, seq FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq',
    [account],
  );
  return rows;
}
async function ordersOf(account: string) {
  const { rows } = await s.rt.pool.query<{ router_order_id: string; leg_index: number; filled_notional: string; filled_shares: string; model_id: string | null; opportunity_id: string | null; client_order_id: string }>(
    'SELECT router_order_id, leg_index, filled_notional::text, filled_shares::text, model_id, opportunity_id, client_order_id FROM orders WHERE router_account_id = $1 ORDER BY created_at',
    [account],
  );
  return rows;
}
async function outboxOf(account: string) {
  const { rows } = await s.rt.pool.query<{ channel: string; event: any }>('SELECT channel, event FROM account_outbox WHERE router_account_id = $1 ORDER BY seq', [account]);
  return rows;
}
async function opportunitiesOf(account: string): Promise<number> {
  return (await s.rt.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM opportunities WHERE router_account_id = $1', [account])).rows[0]!.n;
}
/** The wallet balance, checked against the ledger: the newest balance_after is the sum of every amount. */
async function balanceOf(k: CreatedKey): Promise<number> {
  const { rows } = await s.rt.pool.query<{ sum: string; last: string }>(
    `SELECT coalesce(sum(amount), 0)::text AS sum,
            (SELECT balance_after::text FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT 1) AS last
       FROM practice_ledger WHERE router_account_id = $1`,
    [k.router_account_id],
  );
  expect(rows[0]!.sum).toBe(rows[0]!.last);
  const rest = (await get(app(), '/flow/v1/auth/account/paper', H(k))).body.data.balance;
  expect(rest).toBe(Number(rows[0]!.sum));
  return rest;
}
/** Nothing at all was written for the account: no order, no debit, no event, no opportunity. */
async function nothingWritten(account: string) {
  expect(await ordersOf(account)).toEqual([]);
  expect((await ledgerOf(account)).filter((e) => e.type !== 'opening_balance')).toEqual([]);
  expect(await outboxOf(account)).toEqual([]);
  expect(await opportunitiesOf(account)).toBe(0);
}

async function model(k: CreatedKey, name = 'm') {
  const r = await send(app(), 'POST', '/flow/v1/auth/models', { model_name: name, model_description: '' }, H(k, { 'idempotency-key': randomUUID() }));
  expect(r.status).toBe(201);
  return r.body.data.model_id as string;
}
async function opportunity(k: CreatedKey, modelId: string | null, currency: Currency) {
  const r = await inTransaction(s.rt.pool, (c) => openOpportunity(c, { routerAccountId: k.router_account_id, modelId, currency }));
  if (!r.ok) throw new Error(r.refusal);
  return r.opportunity.opportunity_id;
}

const RESULT_FIELDS = ['index', 'status', 'sor_decision_id', 'requested_partner_id', 'filled_notional', 'filled_shares', 'unfilled_notional', 'avg_price', 'rejected_reason', 'rejected_code', 'venues'].sort();

describe('a practice leg', () => {
  it('fills on the internal book at the best live price across real venues, whatever venue it named, and debits the wallet in the same transaction as its order and events', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [{ liquidity_hash: m.lh('sim_exchange', m.home), amount: 10, max_price: 0.6, mode: 'paper' }] });
    expect(r.status).toBe(200);
    const [res] = r.body.data.results;
    expect(Object.keys(res).sort()).toEqual(RESULT_FIELDS);
    const [order] = await ordersOf(k.router_account_id);
    expect(res).toEqual({
      index: 0,
      status: 'completed',
      sor_decision_id: expect.stringMatching(/^sor_/),
      requested_partner_id: 'sim_exchange',
      filled_notional: 10,
      // 10 / 0.52 = 19.2307692…, cut to six decimals.
      filled_shares: 19.230769,
      unfilled_notional: 0,
      avg_price: 0.52,
      rejected_reason: null,
      rejected_code: null,
      venues: [{ partner_id: 'practice', success: true, router_order_id: order!.router_order_id, error: null }],
    });
    expect(r.body.data).toMatchObject({ halted_at_index: null, opportunity_id: order!.opportunity_id, model_id: null });
    expect(order).toMatchObject({ filled_notional: '10.000000', filled_shares: '19.230769', client_order_id: expect.stringMatching(/^fco_[0-9a-f]{32}$/) });

    const ledger = await ledgerOf(k.router_account_id);
    expect(ledger.map((e) => [e.type, e.amount, e.router_order_id])).toEqual([
      ['opening_balance', '1000.000000', null],
      ['bet_debit', '-10.000000', order!.router_order_id],
    ]);
    expect(await balanceOf(k)).toBe(990);

    const events = await outboxOf(k.router_account_id);
    expect(events.map((e) => [e.channel, e.event.type])).toEqual([
      ['orders', 'order.update'],
      ['balance', 'balance.update'],
    ]);
    expect(events[0]!.event).toEqual({
      type: 'order.update',
      router_order_id: order!.router_order_id,
      partner_id: 'practice',
      status: 'open',
      fill_status: 'filled',
      filled_amt: 10,
      unfilled_amt: 0,
      avg_price: 0.52,
      timestamp: r.body.meta.timestamp,
    });
    expect(events[1]!.event).toMatchObject({
      account_partner_id: `ap_practice_${k.router_account_id}`,
      partner_id: 'practice',
      currency: 'ATLAS',
      balance: 990,
      venue_balance: 990,
      pending: 0,
      balance_version: ledger[1]!.seq,
      cause: 'order_hold',
      router_order_id: order!.router_order_id,
    });

    // Read back: the internal book, in ATLAS, under the opportunity the buy opened (currency from this buy).
    const listed = (await get(app(), '/flow/v1/auth/orders', H(k))).body.data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      router_order_id: order!.router_order_id,
      partner_id: 'practice',
      partner: { partner_id: 'practice', internal_book: true },
      requested_partner_id: 'sim_exchange',
      currency: 'ATLAS',
      mode: 'paper',
      amount: 10,
      price: 0.52,
      fee: 0,
      amount_with_fee: 10,
      status: 'open',
      fill_status: 'filled',
      leg_status: 'completed',
      contest_id: m.contestId,
      position_hash: m.home,
      liquidity_hash: m.lh('sim_exchange', m.home),
      result: null,
    });
    const opp = (await get(app(), `/flow/v1/auth/opportunities/${order!.opportunity_id}`, H(k))).body.data;
    expect(opp).toMatchObject({ currency: 'ATLAS', model_id: null });
    expect(opp.legs.map((l: { router_order_id: string }) => l.router_order_id)).toEqual([order!.router_order_id]);
  });

  it('a shares leg stakes shares × price, rounded half up to six decimals', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [paperLeg(m.home, 0, { amount: undefined, shares: 7.000001 })] });
    // 7.000001 × 0.52 = 3.64000052 → 3.640001
    expect(r.body.data.results[0]).toMatchObject({ status: 'completed', filled_shares: 7.000001, filled_notional: 3.640001, avg_price: 0.52 });
    expect(await balanceOf(k)).toBe(996.359999);
  });

  it('with no live quote of at least USD 1 from a real venue: rejected no_live_price_for_paper, nothing written', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [paperLeg(m.away, 5)] });
    expect(r.status).toBe(200);
    expect(r.body.data.results[0]).toMatchObject({ status: 'rejected', rejected_code: 'no_live_price_for_paper', filled_notional: 0, unfilled_notional: 5, venues: [] });
    expect(r.body.data.opportunity_id).toBeNull();
    await nothingWritten(k.router_account_id);
  });

  it('priced above max_price: failed above_max_price; an unknown position or liquidity_hash, and more than six decimals: rejected without a code', async () => {
    const k = await key();
    const r = await buy(s, k, {
      orders: [
        paperLeg(m.home, 5, { max_price: 0.5 }),
        paperLeg('ct_nope:moneyline:home:0:tm_x:ft', 5),
        { liquidity_hash: 'sim_exchange:no-such-quote', amount: 5, max_price: 0.9, mode: 'paper' },
        paperLeg(m.home, 1.0000001),
      ],
    });
    expect(r.body.data.results.map((x: any) => [x.status, x.rejected_code])).toEqual([
      ['failed', 'above_max_price'],
      ['rejected', null],
      ['rejected', null],
      ['rejected', null],
    ]);
    for (const x of r.body.data.results) expect(x.rejected_reason).toEqual(expect.any(String));
    await nothingWritten(k.router_account_id);
  });

  it('larger than the wallet: failed insufficient_balance, no debit', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [paperLeg(m.home, 1000.01)] });
    expect(r.body.data.results[0]).toMatchObject({ status: 'failed', rejected_code: 'insufficient_balance', venues: [] });
    await nothingWritten(k.router_account_id);
    expect((await buy(s, k, { orders: [paperLeg(m.home, 1000)] })).body.data.results[0].status).toBe('completed');
    expect(await balanceOf(k)).toBe(0);
  });

  it('order_type limit on a paper leg: 400 unsupported_order_type, nothing placed (not even the other legs)', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [paperLeg(m.home, 5), paperLeg(m.home, 5, { order_type: 'limit' })] });
    expect(r.status).toBe(400);
    expect(codeOf(r)).toBe('unsupported_order_type');
    await nothingWritten(k.router_account_id);
  });
});

describe('legs this buy does not place itself', () => {
  it('real-money legs go to their venues (orders/real-legs.test.ts): without a connection each fails venue_disabled; nothing is written, nothing reaches the wallet', async () => {
    const live = await createKey(s.rt.pool, s.rt.gate, { plan: 'scale', keyType: 'execution', environment: 'live', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 });
    // A live key's leg without mode is real.
    const r = await buy(s, live, { orders: [{ position_hash: m.home, partner_id: 'sim_exchange', amount: 5, max_price: 0.9 }, { liquidity_hash: m.lh('sim_exchange', m.home), amount: 5, max_price: 0.9, mode: 'real' }] });
    expect(r.status).toBe(200);
    for (const x of r.body.data.results) expect(x).toMatchObject({ status: 'failed', rejected_code: 'venue_disabled', filled_notional: 0, venues: [] });
    expect(r.body.data.opportunity_id).toBeNull();
    await nothingWritten(live.router_account_id);
  });

  it('a test key’s leg without mode is rejected (the router cannot plan it); the others still go', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [{ position_hash: m.home, partner_id: 'sim_exchange', amount: 5, max_price: 0.9 }, paperLeg(m.home, 5)] });
    expect(r.body.data.results.map((x: any) => [x.status, x.rejected_code])).toEqual([
      ['rejected', null],
      ['completed', null],
    ]);
    expect(r.body.data.results[0].rejected_reason).toMatch(/must name its mode/);
  });

  it('paper and real legs in one buy: 400 currency_mismatch, nothing placed', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [paperLeg(m.home, 5), paperLeg(m.home, 5, { mode: 'real' })] });
    expect(r.status).toBe(400);
    expect(codeOf(r)).toBe('currency_mismatch');
    await nothingWritten(k.router_account_id);
  });
});

describe('halt, check_all_first and parallel', () => {
  const statuses = (r: JsonResponse) => r.body.data.results.map((x: any) => [x.status, x.rejected_code]);
  const priced = () => paperLeg(m.home, 5);
  const unpriced = () => paperLeg(m.away, 5);

  it('continue (default): every leg is attempted in array order', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [unpriced(), priced(), priced()] });
    expect(statuses(r)).toEqual([['rejected', 'no_live_price_for_paper'], ['completed', null], ['completed', null]]);
    expect(r.body.data.halted_at_index).toBeNull();
    expect((await ordersOf(k.router_account_id)).map((o) => o.leg_index)).toEqual([1, 2]);
  });

  it('halt: the first failed or rejected leg stops the rest (halted_upstream); placed legs stay placed', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [priced(), unpriced(), priced()], on_leg_failure: 'halt' });
    expect(statuses(r)).toEqual([['completed', null], ['rejected', 'no_live_price_for_paper'], ['rejected', 'halted_upstream']]);
    expect(r.body.data.halted_at_index).toBe(1);
    expect((await ordersOf(k.router_account_id)).map((o) => o.leg_index)).toEqual([0]);
    expect(await balanceOf(k)).toBe(995);
    // A failed leg halts as well.
    const f = await buy(s, k, { orders: [paperLeg(m.home, 5000), priced()], on_leg_failure: 'halt' });
    expect(statuses(f)).toEqual([['failed', 'insufficient_balance'], ['rejected', 'halted_upstream']]);
    expect(f.body.data.halted_at_index).toBe(0);
  });

  it('check_all_first alone: failing legs are skipped, the others placed', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [priced(), unpriced(), priced()], check_all_first: true });
    expect(statuses(r)).toEqual([['completed', null], ['rejected', 'no_live_price_for_paper'], ['completed', null]]);
    expect(r.body.data.halted_at_index).toBeNull();
  });

  it('check_all_first with halt: any pre-check failure means zero exposure', async () => {
    const k = await key();
    const r = await buy(s, k, { orders: [priced(), unpriced(), priced()], check_all_first: true, on_leg_failure: 'halt' });
    expect(statuses(r)).toEqual([['rejected', 'halted_upstream'], ['rejected', 'no_live_price_for_paper'], ['rejected', 'halted_upstream']]);
    expect(r.body.data).toMatchObject({ halted_at_index: 1, opportunity_id: null });
    await nothingWritten(k.router_account_id);
  });

  it('check_all_first sums the paper stakes against the wallet in leg order (a leg that does not fit is skipped, a later smaller one may)', async () => {
    const k = await key();
    const legs = [paperLeg(m.home, 600), paperLeg(m.home, 600), paperLeg(m.home, 300)];
    const halted = await buy(s, k, { orders: legs, check_all_first: true, on_leg_failure: 'halt' });
    expect(statuses(halted)).toEqual([['rejected', 'halted_upstream'], ['failed', 'insufficient_balance'], ['rejected', 'halted_upstream']]);
    await nothingWritten(k.router_account_id);
    const skipped = await buy(s, k, { orders: legs, check_all_first: true });
    expect(statuses(skipped)).toEqual([['completed', null], ['failed', 'insufficient_balance'], ['completed', null]]);
    expect(await balanceOf(k)).toBe(100);
  });

  it('parallel with halt needs check_all_first (400 conflicting_parameters); parallel legs share the wallet and serialize, and one’s failure does not stop another', async () => {
    const k = await key();
    const bad = await buy(s, k, { orders: [priced()], placement: 'parallel', on_leg_failure: 'halt' });
    expect(bad.status).toBe(400);
    expect(codeOf(bad)).toBe('conflicting_parameters');
    await nothingWritten(k.router_account_id);
    const r = await buy(s, k, { orders: [paperLeg(m.home, 600), paperLeg(m.home, 600), paperLeg(m.home, 300)], placement: 'parallel' });
    expect(statuses(r)).toEqual([['completed', null], ['failed', 'insufficient_balance'], ['completed', null]]);
    expect(r.body.data.halted_at_index).toBeNull();
    const k2 = await key();
    const ok = await buy(s, k2, { orders: [priced(), paperLeg(m.other, 5)], placement: 'parallel', on_leg_failure: 'halt', check_all_first: true });
    expect(statuses(ok)).toEqual([['completed', null], ['completed', null]]);
    expect(ok.body.data.results[1].avg_price).toBe(0.8);
  });
});

describe('models and opportunities (rule 8: checked before anything, nothing written when refused)', () => {
  it('model_id is recorded on every order and on the opportunity the buy opens; joining it adds legs', async () => {
    const k = await key();
    const mid = await model(k);
    const first = await buy(s, k, { orders: [paperLeg(m.home, 5), paperLeg(m.other, 5)], model_id: mid });
    expect(first.body.data.model_id).toBe(mid);
    const opp = first.body.data.opportunity_id as string;
    const second = await buy(s, k, { orders: [paperLeg(m.home, 2)], model_id: mid, opportunity_id: opp });
    expect(second.body.data).toMatchObject({ opportunity_id: opp, model_id: mid });
    const orders = await ordersOf(k.router_account_id);
    expect(orders.map((o) => [o.model_id, o.opportunity_id])).toEqual([
      [mid, opp],
      [mid, opp],
      [mid, opp],
    ]);
    const read = (await get(app(), `/flow/v1/auth/opportunities/${opp}`, H(k))).body.data;
    expect(read).toMatchObject({ model_id: mid, model_name: 'm', currency: 'ATLAS' });
    expect(read.legs).toHaveLength(3);
    expect((await get(app(), `/flow/v1/auth/orders?model_id=${mid}`, H(k))).body.data.map((o: any) => o.model_name)).toEqual(['m', 'm', 'm']);
  });

  it('refusals: model_not_found (unknown or another account’s), model_archived, opportunity_not_found, currency_mismatch, model_mismatch', async () => {
    const k = await key();
    const other = await key();
    const mine = await model(k, 'mine');
    const second = await model(k, 'second');
    const theirs = await model(other, 'theirs');
    const archived = await model(k, 'old');
    const usd = await opportunity(k, mine, 'USD');
    const ofMine = await opportunity(k, mine, 'ATLAS');
    const noModel = await opportunity(k, null, 'ATLAS');
    const ofArchived = await opportunity(k, archived, 'ATLAS');
    expect((await send(app(), 'POST', `/flow/v1/auth/models/${archived}/archive`, {}, H(k))).status).toBe(200);
    const foreign = await opportunity(other, theirs, 'ATLAS');
    const legs = [paperLeg(m.home, 5)];
    const cases: [unknown, number, string][] = [
      [{ orders: legs, model_id: 'mdl_missing' }, 404, 'model_not_found'],
      [{ orders: legs, model_id: theirs }, 404, 'model_not_found'],
      [{ orders: legs, model_id: archived }, 409, 'model_archived'],
      [{ orders: legs, opportunity_id: 'opp_missing' }, 404, 'opportunity_not_found'],
      [{ orders: legs, opportunity_id: foreign }, 404, 'opportunity_not_found'],
      // A USD opportunity joined by a practice buy.
      [{ orders: legs, opportunity_id: usd, model_id: mine }, 400, 'currency_mismatch'],
      [{ orders: legs, opportunity_id: ofMine, model_id: second }, 400, 'model_mismatch'],
      [{ orders: legs, opportunity_id: noModel, model_id: mine }, 400, 'model_mismatch'],
      // Naming no model takes the opportunity's, and it is archived.
      [{ orders: legs, opportunity_id: ofArchived }, 409, 'model_archived'],
    ];
    const before = await opportunitiesOf(k.router_account_id);
    for (const [body, status, code] of cases) {
      const r = await buy(s, k, body);
      expect([r.status, codeOf(r)], JSON.stringify(body)).toEqual([status, code]);
    }
    expect(await ordersOf(k.router_account_id)).toEqual([]);
    expect((await ledgerOf(k.router_account_id)).filter((e) => e.type !== 'opening_balance')).toEqual([]);
    expect(await outboxOf(k.router_account_id)).toEqual([]);
    expect(await opportunitiesOf(k.router_account_id)).toBe(before);

    // A request naming no model files its orders under the joined opportunity's.
    const joined = await buy(s, k, { orders: legs, opportunity_id: ofMine });
    expect(joined.body.data).toMatchObject({ opportunity_id: ofMine, model_id: mine });
    expect((await ordersOf(k.router_account_id))[0]!.model_id).toBe(mine);
  });
});

describe('races with the model', () => {
  it('a buy waits for an unarchive that holds the account, instead of deadlocking with it (both lock account, then model)', async () => {
    const k = await key();
    const mid = await model(k, 'locks');
    let pending!: Promise<JsonResponse>;
    await inTransaction(s.rt.pool, async (c) => {
      // What unarchiveModel does: the account first, then the model row FOR UPDATE.
      expect(await lockAccount(c, k.router_account_id)).toBe(true);
      pending = buy(s, k, { orders: [paperLeg(m.home, 2)], model_id: mid });
      // Time for the buy to take whatever it takes before it blocks.
      await new Promise((r) => setTimeout(r, 300));
      const r = await unarchiveModel(c, k.router_account_id, mid);
      expect(r.ok).toBe(true);
    });
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body.data.results[0].status).toBe('completed');
  });

  it('buys naming a model while it is archived and unarchived: each buy is placed or refused 409 model_archived, never a deadlock or a 5xx; placed orders found the model active', async () => {
    const k = await key();
    const mid = await model(k, 'racing');
    const M = `/flow/v1/auth/models/${mid}`;
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => buy(s, k, { orders: [paperLeg(m.home, 1)], model_id: mid })),
      ...Array.from({ length: 12 }, (_, i) => send(app(), 'POST', `${M}/${i % 2 ? 'unarchive' : 'archive'}`, {}, H(k))),
    ]);
    const buys = answers.slice(0, 12);
    for (const r of answers.slice(12)) expect(r.status).toBe(200);
    for (const r of buys) {
      if (r.status === 200) expect(r.body.data.results[0].status).toBe('completed');
      else expect([r.status, codeOf(r)]).toEqual([409, 'model_archived']);
    }
    const placed = buys.filter((r) => r.status === 200).length;
    expect(await ordersOf(k.router_account_id)).toHaveLength(placed);
    expect(await balanceOf(k)).toBe(1000 - placed);
  });
});

describe('Idempotency-Key', () => {
  it('the same key and body replay the first answer byte for byte and move nothing again; another body is 422; no key is 400', async () => {
    const k = await key();
    const idem = randomUUID();
    const body = { orders: [paperLeg(m.home, 25)] };
    const first = await app().inject({ method: 'POST', url: '/flow/v1/auth/orders/buy', headers: { ...H(k), 'content-type': 'application/json', 'idempotency-key': idem }, payload: JSON.stringify(body) });
    // Same body, other key order and spacing.
    const again = await app().inject({ method: 'POST', url: '/flow/v1/auth/orders/buy', headers: { ...H(k), 'content-type': 'application/json', 'idempotency-key': idem.toUpperCase() }, payload: JSON.stringify({ orders: [{ mode: 'paper', max_price: 0.99, amount: 25, partner_id: 'sim_exchange', position_hash: m.home }] }, null, 2) });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(await ordersOf(k.router_account_id)).toHaveLength(1);
    expect(await balanceOf(k)).toBe(975);
    const reused = await buy(s, k, { orders: [paperLeg(m.home, 26)] }, { key: idem });
    expect([reused.status, codeOf(reused)]).toEqual([422, 'idempotency_key_reused']);
    const none = await buy(s, k, body, { key: null });
    expect([none.status, codeOf(none)]).toEqual([400, 'idempotency_key_required']);
    // A refused request records nothing: corrected, the same key places it.
    const idem2 = randomUUID();
    expect((await buy(s, k, { orders: [paperLeg(m.home, 5)], model_id: 'mdl_missing' }, { key: idem2 })).status).toBe(404);
    expect((await buy(s, k, { orders: [paperLeg(m.home, 5)] }, { key: idem2 })).status).toBe(200);
  });

  it('50 concurrent buys with one key → one order and one debit; the others replay it or are told it is in use', async () => {
    const k = await key();
    const idem = randomUUID();
    const payload = JSON.stringify({ orders: [paperLeg(m.home, 7.5)] });
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const r = await app().inject({ method: 'POST', url: '/flow/v1/auth/orders/buy', headers: { ...H(k), 'content-type': 'application/json', 'idempotency-key': idem }, payload });
        return { status: r.statusCode, body: r.body };
      }),
    );
    const one = expectOneEffect(answers, 200);
    expect(await ordersOf(k.router_account_id)).toHaveLength(1);
    expect((await ledgerOf(k.router_account_id)).filter((e) => e.type === 'bet_debit')).toHaveLength(1);
    expect(await balanceOf(k)).toBe(992.5);
    const replay = await app().inject({ method: 'POST', url: '/flow/v1/auth/orders/buy', headers: { ...H(k), 'content-type': 'application/json', 'idempotency-key': idem }, payload });
    expect(replay.body).toBe(one.body);
  });

  it('concurrent buys with their own keys never overdraw the wallet, and the balance is the sum of the ledger', async () => {
    const k = await key();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => buy(s, k, { orders: [paperLeg(i % 2 ? m.home : m.other, 60)] })));
    const completed = answers.filter((a) => a.body.data.results[0].status === 'completed');
    const refused = answers.filter((a) => a.body.data.results[0].rejected_code === 'insufficient_balance');
    expect([completed.length, refused.length]).toEqual([16, 4]);
    expect(await balanceOf(k)).toBe(40);
    const debits = (await ledgerOf(k.router_account_id)).filter((e) => e.type === 'bet_debit');
    const orders = await ordersOf(k.router_account_id);
    expect(debits).toHaveLength(16);
    // Each debit names its order and moved exactly its notional.
    const byId = new Map(orders.map((o) => [o.router_order_id, o.filled_notional]));
    for (const d of debits) expect(`-${byId.get(d.router_order_id!)}`).toBe(d.amount);
  });
});

describe('who may buy', () => {
  it('a data key is refused (403 entitlement_required); X-Service-Account from a key that is not an organization’s is 403 account_forbidden', async () => {
    const d = await accountKey(s, 'data');
    const r = await buy(s, d, { orders: [paperLeg(m.home, 5)] });
    expect([r.status, codeOf(r)]).toEqual([403, 'entitlement_required']);
    const k = await key();
    const other = await key();
    const f = await buy(s, k, { orders: [paperLeg(m.home, 5)] }, { headers: { 'x-service-account': other.router_account_id } });
    expect([f.status, codeOf(f)]).toEqual([403, 'account_forbidden']);
    await nothingWritten(other.router_account_id);
    await nothingWritten(k.router_account_id);
  });

  it('an organization buys for its user: the order and debit are the user’s', async () => {
    const org = await accountKey(s, 'execution', { plan: 'organization' });
    const user = await organizationUser(s, org, 'buyer-1');
    const r = await buy(s, org, { orders: [paperLeg(m.home, 5)] }, { headers: { 'x-service-account': 'buyer-1' } });
    expect(r.body.data.results[0].status).toBe('completed');
    expect(await ordersOf(user)).toHaveLength(1);
    expect(await ordersOf(org.router_account_id)).toEqual([]);
    expect((await get(app(), '/flow/v1/auth/orders', H(org, { 'x-service-account': 'buyer-1' }))).body.data).toHaveLength(1);
    expect((await get(app(), '/flow/v1/auth/orders', H(org))).body.data).toEqual([]);
  });
});
