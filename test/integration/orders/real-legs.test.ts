/**
 * Real-money legs end to end (issue 11, slice 3): POST orders/buy through the real app, PostgreSQL,
 * Redis (BullMQ) and the simulator's venues, with an execute worker on the venue adapters. A leg
 * runs the preflight checks, is written as an intent, placed under its client_order_id and decided
 * with its ledger hold and events; the venue's record and PostgreSQL agree. Also: whole-contract
 * rounding, a venue's refusal, venue_disabled, halt and check_all_first, parallel across venues,
 * a resting limit (cancelled at its venue), an async-fill venue, the bounded wait without a worker, a resumed buy, and one
 * placement for 50 concurrent buys with one key.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../../api/rest/orders/execution.js';
import { BUY_OPERATION } from '../../../api/rest/orders/buy.js';
import { canonicalFingerprint } from '../../../src/store/pg/idempotency.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { recordSnapshot } from '../../../src/store/pg/partners.js';
import type { SimPartnerId } from '../../../src/sim/personalities.js';
import { expectOneEffect, keyHeaders as H } from '../../support/accounts.js';
import { eventually } from '../../support/e2e.js';
import { get, send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

let o: OrderStack;
let k: CreatedKey;
let acct: string;
let positions: string[];

const START_BALANCE = 5_000;

beforeAll(async () => {
  o = await startOrderStack(11, { executeWaitMs: 4_000 });
  const open = new Set(o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  positions = o.market.catalog.positions.filter((p) => open.has(p.contest_id) && p.market_key === 'moneyline').map((p) => p.position_hash);
  k = await o.key();
  acct = k.router_account_id;
  // sim_sportsbook stays unconnected (venue_disabled).
  for (const venue of ['sim_exchange', 'sim_book01', 'sim_p2p']) await o.connect(acct, venue, START_BALANCE);
  o.execute();
}, 120_000);
afterAll(async () => o?.close());

let used = 0;
/** A position no other test has touched. */
const fresh = () => positions[used++]!;

type Leg = Record<string, unknown>;
const app = () => o.s.built.app;
const buy = (body: Record<string, unknown>, key: string = randomUUID(), as: CreatedKey = k) => send(app(), 'POST', '/flow/v1/auth/orders/buy', body, H(as, { 'idempotency-key': key }));
const real = (leg: Leg): Leg => ({ mode: 'real', ...leg });

/** The simulator's own orders of `partner` under a client order id (its record of what was placed). */
const venueOrders = (partner: SimPartnerId, clientId: string) => [...o.market._venue(partner).orders.values()].filter((x) => x.client_order_id === clientId);
const venueAccount = (partner: SimPartnerId, account = acct) => o.market._venue(partner).accounts.get(account)!;

async function orderRows(account = acct) {
  const { rows } = await o.s.rt.pool.query(
    `SELECT router_order_id, leg_index, client_order_id, partner_id, exec_state, leg_status, status, fill_status, attempts, venue_order_id,
            filled_notional::text, filled_shares::text, unfilled_notional::text, amount::text, fee::text, avg_price::text,
            send_amount::text, send_shares::text, limit_price::text, rejected_code, idempotency_key::text
       FROM orders WHERE router_account_id = $1 ORDER BY created_at`,
    [account],
  );
  return rows;
}
async function holds(partner: string, account = acct) {
  const { rows } = await o.s.rt.pool.query<{ kind: string; amount: string; router_order_id: string; at_ms: number }>(
    `SELECT b.kind, b.amount::text, b.router_order_id, (extract(epoch FROM b.created_at) * 1000)::float8 AS at_ms
       FROM balance_ledger b JOIN account_partners ap USING (account_partner_id)
      WHERE ap.router_account_id = $1 AND ap.partner_id = $2 ORDER BY b.entry_id`,
    [account, partner],
  );
  return rows;
}
async function outbox(account = acct) {
  const { rows } = await o.s.rt.pool.query<{ channel: string; event: any }>('SELECT channel, event FROM account_outbox WHERE router_account_id = $1 ORDER BY seq', [account]);
  return rows;
}
async function connection(partner: string, account: CreatedKey = k) {
  const r = await get(app(), '/flow/v1/auth/account/partners', H(account));
  expect(r.status).toBe(200);
  return r.body.data.account_partners.find((p: { partner_id: string }) => p.partner_id === partner);
}
const clearOutbox = () => o.s.rt.pool.query('DELETE FROM account_outbox');

describe('a real market leg', () => {
  it('is placed under its client_order_id with the preflight plan (whole contracts), booked as the venue filled it, with one hold and its events', async () => {
    const h = fresh();
    await o.setBook('sim_exchange', h, [{ price: 0.47, available: 1_000 }]);
    await clearOutbox();
    const key = randomUUID();
    const r = await buy({ orders: [real({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 })] }, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [res] = r.body.data.results;
    // $10 at 0.47 on a whole-contract venue: 21 contracts, $9.87 booked, $0.13 unfilled.
    expect(res).toMatchObject({ index: 0, status: 'completed', requested_partner_id: 'sim_exchange', filled_notional: 9.87, filled_shares: 21, unfilled_notional: 0.13, avg_price: 0.47, rejected_code: null, rejected_reason: null });
    expect(res.venues).toEqual([{ partner_id: 'sim_exchange', success: true, router_order_id: expect.stringMatching(/^ord_/), error: null }]);
    expect(r.body.data.opportunity_id).toMatch(/^opp_/);

    // The venue's record: one order under the derived client id, and what it booked is what we booked.
    const cid = clientOrderId(acct, key, 0);
    const placed = venueOrders('sim_exchange', cid);
    expect(placed).toHaveLength(1);
    const v = placed[0]!;
    // The venue killed the $0.13 it could not fill (less than a contract): a partial fill, as the venue says.
    expect(v).toMatchObject({ state: 'PARTIAL', filled_qty: 21, filled_notional: 9.87, requested_notional: 10 });
    expect(v.fee).toBeGreaterThan(0);
    const cost = Number((9.87 + v.fee).toFixed(6));

    const [row] = (await orderRows()).filter((x) => x.client_order_id === cid);
    expect(row).toMatchObject({
      exec_state: 'decided',
      leg_status: 'completed',
      status: 'open',
      fill_status: 'partially_filled',
      attempts: 1,
      venue_order_id: v.id,
      filled_notional: '9.870000',
      filled_shares: '21.000000',
      unfilled_notional: '0.130000',
      amount: '10.000000',
      fee: v.fee.toFixed(6),
      avg_price: '0.47',
      send_amount: '10.000000',
      send_shares: null,
      limit_price: '0.5',
    });
    // One hold: what filled plus its fee, dated with the venue's booking time.
    const ledger = await holds('sim_exchange');
    expect(ledger).toEqual([{ kind: 'hold', amount: (-cost).toFixed(6), router_order_id: row.router_order_id, at_ms: v.ts }]);

    // expected = the snapshot (before the fill) + the hold = what the venue itself now says.
    const conn = await connection('sim_exchange');
    expect(conn).toMatchObject({ balance: START_BALANCE, expected_balance: venueAccount('sim_exchange').balance, pending: -cost });
    // A snapshot taken after the booking shows the fill itself: the hold no longer counts.
    const adapter = o.adapters.find((a) => a.id === 'sim_exchange')!;
    const snap = await adapter.fetchBalance(acct);
    await recordSnapshot(o.s.rt.pool, conn.account_partner_id, { balance: snap.balance, held: snap.held, ts_event: snap.ts_event }, Date.now());
    expect(await connection('sim_exchange')).toMatchObject({ balance: snap.balance, expected_balance: snap.balance, pending: 0 });

    // order.update, and balance.update (order_hold) with the version the connection moved to.
    const events = (await outbox()).filter((e) => e.event.router_order_id === row.router_order_id);
    expect(events.map((e) => [e.channel, e.event.type])).toEqual([
      ['balance', 'balance.update'],
      ['orders', 'order.update'],
    ]);
    expect(events[1]!.event).toMatchObject({ partner_id: 'sim_exchange', status: 'open', fill_status: 'partially_filled', filled_amt: 9.87, unfilled_amt: 0.13, avg_price: 0.47 });
    expect(events[0]!.event).toMatchObject({ cause: 'order_hold', partner_id: 'sim_exchange', currency: 'USD', venue_balance: START_BALANCE, balance: START_BALANCE - cost, pending: -cost, account_partner_id: conn.account_partner_id });
    const version = (await o.s.rt.pool.query<{ v: number }>('SELECT balance_version AS v FROM account_partners WHERE account_partner_id = $1', [conn.account_partner_id])).rows[0]!.v;
    // Connect landed version 1, the hold 2, the snapshot above 3.
    expect(events[0]!.event.balance_version).toBe(version - 1);

    // The same key and body: the first answer, and nothing placed again.
    const again = await buy({ orders: [real({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 })] }, key);
    expect(again.body).toEqual(r.body);
    expect(venueOrders('sim_exchange', cid)).toHaveLength(1);
    expect(await holds('sim_exchange')).toHaveLength(1);
  });

  it('refused by the venue (its book moved above max_price after the feed was read): failed with the venue’s code, the order closed, nothing held', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 500 }]);
    // The venue's book moves; the feed still shows 0.45.
    const moved = await send(app(), 'POST', '/sim/v1/quotes', { partner_id: 'sim_book01', position_hash: h, price: 0.6, available: 500, levels: [{ price: 0.6, available: 500 }] }, o.admin);
    expect(moved.status).toBe(200);
    const before = await holds('sim_book01');
    const key = randomUUID();
    const r = await buy({ orders: [real({ position_hash: h, partner_id: 'sim_book01', amount: 20, max_price: 0.5 })] }, key);
    expect(r.status).toBe(200);
    const [res] = r.body.data.results;
    expect(res).toMatchObject({ status: 'failed', rejected_code: 'above_max_price', filled_notional: 0, filled_shares: 0, unfilled_notional: 20 });
    expect(res.rejected_reason).toMatch(/above the limit/);
    expect(res.venues).toEqual([{ partner_id: 'sim_book01', success: false, router_order_id: expect.stringMatching(/^ord_/), error: res.rejected_reason }]);
    const cid = clientOrderId(acct, key, 0);
    expect(venueOrders('sim_book01', cid).map((x) => x.state)).toEqual(['REJECTED']);
    const [row] = (await orderRows()).filter((x) => x.client_order_id === cid);
    expect(row).toMatchObject({ exec_state: 'decided', leg_status: 'failed', status: 'closed', fill_status: 'unfilled', rejected_code: 'above_max_price', filled_notional: '0.000000' });
    expect(await holds('sim_book01')).toEqual(before);
    const events = (await outbox()).filter((e) => e.event.router_order_id === row.router_order_id);
    expect(events.map((e) => e.event.type)).toEqual(['order.update']);
    expect(events[0]!.event).toMatchObject({ status: 'closed', fill_status: 'unfilled', filled_amt: 0 });
  });

  it('on a venue the account has not connected: failed venue_disabled before anything is written or sent', async () => {
    const h = fresh();
    await o.setBook('sim_sportsbook', h, [{ price: 0.5, available: 500 }]);
    const rowsBefore = (await orderRows()).length;
    const r = await buy({ orders: [real({ position_hash: h, partner_id: 'sim_sportsbook', amount: 20, max_price: 0.6 })] });
    expect(r.body.data.results[0]).toMatchObject({ status: 'failed', rejected_code: 'venue_disabled', venues: [], unfilled_notional: 20 });
    expect(r.body.data.opportunity_id).toBeNull();
    expect(await orderRows()).toHaveLength(rowsBefore);
    expect(o.market._venue('sim_sportsbook').orders.size).toBe(0);
  });

  it('verify_liquidity: a thin cached book is read live; one that moved away fails insufficient_live_depth, nothing written or sent', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 25 }]);
    await send(app(), 'POST', '/sim/v1/quotes', { partner_id: 'sim_book01', position_hash: h, price: 0.6, available: 25, levels: [{ price: 0.6, available: 25 }] }, o.admin);
    const key = randomUUID();
    const r = await buy({ orders: [real({ position_hash: h, partner_id: 'sim_book01', amount: 20, max_price: 0.5 })], verify_liquidity: true }, key);
    expect(r.body.data.results[0]).toMatchObject({ status: 'failed', rejected_code: 'insufficient_live_depth', venues: [] });
    expect(r.body.data.results[0].rejected_reason).toMatch(/live book moved away/);
    expect((await orderRows()).filter((x) => x.idempotency_key === key)).toEqual([]);
    expect(venueOrders('sim_book01', clientOrderId(acct, key, 0))).toEqual([]);
  });

  it('shares on a probability venue; a limit order rests with what crossed booked and the rest held at its limit', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.4, available: 8 }, { price: 0.7, available: 500 }]);
    const key = randomUUID();
    // 50 contracts at a 0.5 limit: 20 cross at 0.4 ($8), 30 rest at 0.5 ($15).
    const r = await buy({ orders: [real({ position_hash: h, partner_id: 'sim_book01', shares: 50, max_price: 0.5, order_type: 'limit' })] }, key);
    const [res] = r.body.data.results;
    expect(res).toMatchObject({ status: 'resting', filled_shares: 20, filled_notional: 8, unfilled_notional: 15, avg_price: 0.4, rejected_code: null });
    expect(res.venues[0].success).toBe(true);
    const v = venueOrders('sim_book01', clientOrderId(acct, key, 0))[0]!;
    expect(v).toMatchObject({ state: 'OPEN', filled_qty: 20, open_qty: 30 });
    const [row] = (await orderRows()).filter((x) => x.client_order_id === clientOrderId(acct, key, 0));
    expect(row).toMatchObject({ leg_status: 'resting', status: 'open', fill_status: 'partially_filled', send_shares: '50.000000', send_amount: null });
    const hold = (await holds('sim_book01')).find((x) => x.router_order_id === row.router_order_id)!;
    expect(Number(hold.amount)).toBeCloseTo(-(8 + v.fee + 15), 6);
    // The venue moved what it holds for the resting part out of the spendable balance, as the hold does.
    const conn = await connection('sim_book01');
    expect(conn.expected_balance).toBeCloseTo(venueAccount('sim_book01').balance, 6);
    const resting = await get(app(), '/flow/v1/auth/orders/resting/me', H(k));
    expect(resting.body.data.orders.map((x: { router_order_id: string }) => x.router_order_id)).toContain(row.router_order_id);
    // Working at the venue: the cancel goes to the venue (through its execute queue), which releases the remainder.
    const cancel = await send(app(), 'POST', '/flow/v1/auth/orders/cancel', { router_order_id: row.router_order_id }, H(k));
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    expect(cancel.body.data).toEqual({ router_order_id: row.router_order_id, status: 'cancelled', unfilled_notional: 15 });
    expect(venueOrders('sim_book01', clientOrderId(acct, key, 0))[0]).toMatchObject({ state: 'CANCELLED', open_qty: 0 });
    expect((await holds('sim_book01')).filter((x) => x.router_order_id === row.router_order_id).map((x) => [x.kind, x.amount])).toEqual([
      ['hold', hold.amount],
      ['release', '15.000000'],
    ]);
    const still = await get(app(), '/flow/v1/auth/orders/resting/me', H(k));
    expect(still.body.data.orders.map((x: { router_order_id: string }) => x.router_order_id)).not.toContain(row.router_order_id);
  });

  it('on an async-fill venue: pending, which does not halt, with the plan’s commitment (notional + estimated taker fee) held', async () => {
    const h = fresh();
    await o.setBook('sim_p2p', h, [{ price: 0.5, available: 500 }]);
    const key = randomUUID();
    const r = await buy({ orders: [real({ position_hash: h, partner_id: 'sim_p2p', amount: 10, max_price: 0.6 }), real({ position_hash: h, partner_id: 'sim_p2p', amount: 5, max_price: 0.6 })], on_leg_failure: 'halt' }, key);
    // pending does not halt.
    expect(r.body.data.results.map((x: { status: string }) => x.status)).toEqual(['pending', 'pending']);
    expect(r.body.data.halted_at_index).toBeNull();
    expect(r.body.data.results[0].rejected_reason).toMatch(/confirms fills later/);
    const commitments = (await o.s.rt.pool.query<{ c: string }>('SELECT commitment::text AS c FROM orders WHERE idempotency_key = $1 ORDER BY leg_index', [key])).rows.map((x) => x.c);
    // sim_p2p's 1% taker fee on top of the stake.
    expect(commitments).toEqual(['10.100000', '5.050000']);
    expect((await holds('sim_p2p')).map((x) => x.amount)).toEqual(commitments.map((c) => `-${c}`));
    for (const i of [0, 1]) expect(venueOrders('sim_p2p', clientOrderId(acct, key, i)).map((x) => x.state)).toEqual(['PENDING']);
  });
});

describe('halt, check_all_first and parallel on real legs', () => {
  it('halt: a leg the venue refuses stops the rest (halted_upstream), placed legs stay placed', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 500 }]);
    await o.setBook('sim_exchange', h, [{ price: 0.45, available: 500 }]);
    await send(app(), 'POST', '/sim/v1/quotes', { partner_id: 'sim_exchange', position_hash: h, price: 0.7, available: 500, levels: [{ price: 0.7, available: 500 }] }, o.admin);
    const key = randomUUID();
    const r = await buy(
      {
        orders: [
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
        ],
        on_leg_failure: 'halt',
      },
      key,
    );
    expect(r.body.data.results.map((x: { status: string; rejected_code: string | null }) => [x.status, x.rejected_code])).toEqual([
      ['completed', null],
      ['failed', 'above_max_price'],
      ['rejected', 'halted_upstream'],
    ]);
    expect(r.body.data.halted_at_index).toBe(1);
    expect(venueOrders('sim_book01', clientOrderId(acct, key, 2))).toEqual([]);
    expect((await orderRows()).filter((x) => x.idempotency_key === key).map((x) => x.leg_index)).toEqual([0, 1]);
  });

  it('halt: a pre-check failure stops the rest without writing them', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 500 }]);
    await o.setBook('sim_sportsbook', h, [{ price: 0.45, available: 500 }]);
    const key = randomUUID();
    const r = await buy(
      {
        orders: [
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_sportsbook', amount: 10, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
        ],
        on_leg_failure: 'halt',
      },
      key,
    );
    expect(r.body.data.results.map((x: { status: string; rejected_code: string | null }) => [x.status, x.rejected_code])).toEqual([
      ['completed', null],
      ['failed', 'venue_disabled'],
      ['rejected', 'halted_upstream'],
    ]);
    expect(r.body.data.halted_at_index).toBe(1);
    expect((await orderRows()).filter((x) => x.idempotency_key === key).map((x) => x.leg_index)).toEqual([0]);
  });

  it('check_all_first with halt: one failing pre-check means zero exposure (nothing written, nothing sent)', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 500 }]);
    const key = randomUUID();
    const r = await buy(
      {
        orders: [
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.4 }),
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
        ],
        check_all_first: true,
        on_leg_failure: 'halt',
      },
      key,
    );
    expect(r.body.data.results.map((x: { status: string; rejected_code: string | null }) => [x.status, x.rejected_code])).toEqual([
      ['rejected', 'halted_upstream'],
      ['failed', 'above_max_price'],
      ['rejected', 'halted_upstream'],
    ]);
    expect(r.body.data.halted_at_index).toBe(1);
    expect(r.body.data.opportunity_id).toBeNull();
    expect((await orderRows()).filter((x) => x.idempotency_key === key)).toEqual([]);
    for (const i of [0, 1, 2]) expect(venueOrders('sim_book01', clientOrderId(acct, key, i))).toEqual([]);
  });

  it('check_all_first alone: affordability summed per venue up front; the leg that does not fit is skipped, the others placed', async () => {
    const poor = await o.key();
    await o.connect(poor.router_account_id, 'sim_book01', 25);
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 5_000 }]);
    const key2 = randomUUID();
    const r = await buy(
      {
        orders: [
          real({ position_hash: h, partner_id: 'sim_book01', amount: 15, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_book01', amount: 15, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_book01', amount: 5, max_price: 0.5 }),
        ],
        check_all_first: true,
      },
      key2,
      poor,
    );
    expect(r.body.data.results.map((x: { status: string; rejected_code: string | null }) => [x.status, x.rejected_code])).toEqual([
      ['completed', null],
      ['failed', 'insufficient_balance'],
      ['completed', null],
    ]);
    const spent = [0, 2].map((i) => venueOrders('sim_book01', clientOrderId(poor.router_account_id, key2, i))[0]!);
    expect(venueAccount('sim_book01', poor.router_account_id).balance).toBeCloseTo(25 - spent.reduce((t, x) => t + x.filled_notional + x.fee, 0), 6);
    expect(venueOrders('sim_book01', clientOrderId(poor.router_account_id, key2, 1))).toEqual([]);
  });

  it('parallel: legs on different venues are placed at once, each venue’s legs in array order', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 500 }]);
    await o.setBook('sim_exchange', h, [{ price: 0.45, available: 500 }]);
    const key = randomUUID();
    const r = await buy(
      {
        orders: [
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }),
          real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }),
        ],
        placement: 'parallel',
      },
      key,
    );
    expect(r.body.data.results.map((x: { status: string }) => x.status)).toEqual(['completed', 'completed', 'completed']);
    const book01 = [0, 2].map((i) => venueOrders('sim_book01', clientOrderId(acct, key, i))[0]!);
    // The venue's order ids are sequential: leg 0 reached sim_book01 before leg 2.
    expect(Number(book01[0]!.id.split('-o')[1])).toBeLessThan(Number(book01[1]!.id.split('-o')[1]));
    expect(venueOrders('sim_exchange', clientOrderId(acct, key, 1))).toHaveLength(1);
  });
});

describe('Idempotency-Key on real legs', () => {
  it('50 concurrent buys with one key: one placement at the venue and one hold; the others replay it or are told it is in use', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 5_000 }]);
    const key = randomUUID();
    const body = { orders: [real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 })] };
    const answers = await Promise.all(Array.from({ length: 50 }, () => buy(body, key)));
    const ok = expectOneEffect(answers.map((a) => ({ status: a.status, body: JSON.stringify(a.body) })), 200);
    expect(JSON.parse(ok.body).data.results[0].status).toBe('completed');
    const cid = clientOrderId(acct, key, 0);
    expect(venueOrders('sim_book01', cid)).toHaveLength(1);
    const rows = (await orderRows()).filter((x) => x.client_order_id === cid);
    expect(rows).toHaveLength(1);
    expect((await holds('sim_book01')).filter((x) => x.router_order_id === rows[0]!.router_order_id)).toHaveLength(1);
    expect(JSON.stringify((await buy(body, key)).body)).toBe(ok.body);
  });

  it('a buy whose runner died (its lease lapsed, an intent written and never enqueued) is resumed by the same key: the leg is placed once, the record finished', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 5_000 }]);
    const key = randomUUID();
    const body = { orders: [real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }), real({ position_hash: h, partner_id: 'sim_book01', amount: 4, max_price: 0.5 })] };
    // What a runner leaves when it dies right after committing leg 0's intent: the record running
    // under a lease, the intent undecided, no job.
    const scope = { account: acct, key, fp: canonicalFingerprint(body) };
    await o.s.rt.pool.query(
      `INSERT INTO idempotency_keys (router_account_id, idempotency_key, operation, fingerprint, state, lease_owner, lease_until, expires_at)
       VALUES ($1, $2, $3, $4, 'running', 'lease_dead', clock_timestamp() + interval '1 hour', now() + interval '1 day')`,
      [scope.account, key, BUY_OPERATION, scope.fp],
    );
    // While the lease is live the key is in use.
    const busy = await buy(body, key);
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('idempotency_key_in_use');
    // Leg 0's intent, as the dead runner wrote it.
    const { rows } = await o.s.rt.pool.query<{ id: string }>(
      `INSERT INTO orders (router_order_id, router_account_id, idempotency_key, leg_index, client_order_id, sor_decision_id, partner_id, requested_partner_id, currency, mode, order_type,
                           position_hash, contest_id, title, requested_amount, max_price, amount, unfilled_notional, leg_status, status, fill_status,
                           exec_state, send_amount, limit_price, commitment)
       VALUES ('ord_resumed_' || substr(md5($2), 1, 8), $1, $2::uuid, 0, $3, 'sor_dead', 'sim_book01', 'sim_book01', 'USD', 'real', 'market', $4, split_part($4, ':', 1), 't', 10, 0.5, 10, 10,
               'pending', 'pending', 'unfilled', 'intent', 10, 0.5, 10)
       RETURNING router_order_id AS id`,
      [acct, key, clientOrderId(acct, key, 0), h],
    );
    await o.s.rt.pool.query(`UPDATE idempotency_keys SET lease_until = clock_timestamp() - interval '1 second' WHERE idempotency_key = $1`, [key]);
    const r = await buy(body, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.results.map((x: { status: string }) => x.status)).toEqual(['completed', 'completed']);
    // Leg 0 is the dead runner's order (its id, its decision id), placed once; leg 1 ran as new.
    expect(r.body.data.results[0].venues[0].router_order_id).toBe(rows[0]!.id);
    expect(r.body.data.results[0].sor_decision_id).toBe('sor_dead');
    expect(venueOrders('sim_book01', clientOrderId(acct, key, 0))).toHaveLength(1);
    expect(venueOrders('sim_book01', clientOrderId(acct, key, 1))).toHaveLength(1);
    const rec = await o.s.rt.pool.query('SELECT state, lease_owner FROM idempotency_keys WHERE idempotency_key = $1', [key]);
    expect(rec.rows[0]).toEqual({ state: 'done', lease_owner: null });
    expect((await buy(body, key)).body).toEqual(r.body);
  });

  it('a request-level refusal (rule 8) writes no record: the corrected request may reuse the key', async () => {
    const h = fresh();
    await o.setBook('sim_book01', h, [{ price: 0.45, available: 5_000 }]);
    const key = randomUUID();
    const leg = real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 });
    const bad = await buy({ orders: [leg], model_id: 'mdl_nope' }, key);
    expect(bad.status).toBe(404);
    expect(bad.body.error.code).toBe('model_not_found');
    const good = await buy({ orders: [leg] }, key);
    expect(good.status).toBe(200);
    expect(good.body.data.results[0].status).toBe('completed');
  });
});

describe('without an execute worker', () => {
  let lone: OrderStack;
  beforeAll(async () => {
    lone = await startOrderStack(12, { executeWaitMs: 700 });
  }, 120_000);
  afterAll(async () => lone?.close());

  it('a leg is answered pending after the bounded wait and the legs after it are not placed; a worker started later places it, within the intent’s TTL', async () => {
    const lk = await lone.key();
    await lone.connect(lk.router_account_id, 'sim_book01', 1_000);
    const open = new Set(lone.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
    const h = lone.market.catalog.positions.find((p) => open.has(p.contest_id) && p.market_key === 'moneyline')!.position_hash;
    await lone.setBook('sim_book01', h, [{ price: 0.45, available: 5_000 }]);
    const key = randomUUID();
    const t0 = Date.now();
    const r = await send(lone.s.built.app, 'POST', '/flow/v1/auth/orders/buy', { orders: [real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }), real({ position_hash: h, partner_id: 'sim_book01', amount: 5, max_price: 0.5 })] }, H(lk, { 'idempotency-key': key }));
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(r.status).toBe(200);
    const [first, second] = r.body.data.results;
    expect(first).toMatchObject({ status: 'pending', filled_notional: 0, unfilled_notional: 10, rejected_code: null });
    expect(first.rejected_reason).toMatch(/not decided within 0.7 s/);
    expect(first.venues[0]).toMatchObject({ partner_id: 'sim_book01', success: true });
    expect(second).toMatchObject({ status: 'rejected', rejected_code: null, venues: [] });
    expect(second.rejected_reason).toMatch(/leg 0 was not decided/);
    expect(lone.market._venue('sim_book01').orders.size).toBe(0);

    lone.execute();
    const id = first.venues[0].router_order_id;
    const decided = await eventually(
      async () => (await lone.s.rt.pool.query<{ leg_status: string }>('SELECT leg_status FROM orders WHERE router_order_id = $1 AND exec_state = $2', [id, 'decided'])).rows[0]?.leg_status,
      (s) => s !== undefined,
      10_000,
    );
    expect(decided).toBe('completed');
    expect([...lone.market._venue('sim_book01').orders.values()].map((x) => x.client_order_id)).toEqual([clientOrderId(lk.router_account_id, key, 0)]);
    // The buy's answer is what it said then.
    const replay = await send(lone.s.built.app, 'POST', '/flow/v1/auth/orders/buy', { orders: [real({ position_hash: h, partner_id: 'sim_book01', amount: 10, max_price: 0.5 }), real({ position_hash: h, partner_id: 'sim_book01', amount: 5, max_price: 0.5 })] }, H(lk, { 'idempotency-key': key }));
    expect(replay.body).toEqual(r.body);
  });

  /** An undecided intent as a buy leaves it (written `agoMs` ago), on sim_book01. */
  async function intent(k: CreatedKey, h: string, agoMs: number, state: 'intent' | 'sent' = 'intent') {
    const key = randomUUID();
    const { rows } = await lone.s.rt.pool.query<{ id: string }>(
      `INSERT INTO orders (router_order_id, router_account_id, idempotency_key, leg_index, client_order_id, sor_decision_id, partner_id, requested_partner_id, currency, mode, order_type,
                           position_hash, contest_id, title, requested_amount, max_price, amount, unfilled_notional, leg_status, status, fill_status,
                           exec_state, send_amount, limit_price, commitment, created_at)
       VALUES ('ord_' || md5($2), $1, $2::uuid, 0, $3, 'sor_t', 'sim_book01', 'sim_book01', 'USD', 'real', 'market', $4, split_part($4, ':', 1), 't', 10, 0.5, 10, 10,
               'pending', 'pending', 'unfilled', $6, 10, 0.5, 10, clock_timestamp() - $5 * interval '1 millisecond')
       RETURNING router_order_id AS id`,
      [k.router_account_id, key, clientOrderId(k.router_account_id, key, 0), h, agoMs, state],
    );
    return { id: rows[0]!.id, cid: clientOrderId(k.router_account_id, key, 0) };
  }
  const decided = (id: string) => lone.s.rt.pool.query('SELECT exec_state, leg_status, status, rejected_reason FROM orders WHERE router_order_id = $1', [id]).then((r) => r.rows[0]);

  it('an intent nobody enqueued (its api died first) is swept onto its venue’s queue and placed; one never sent past the TTL fails unsent, one sent is reconciled however old', async () => {
    const lk = await lone.key();
    await lone.connect(lk.router_account_id, 'sim_book01', 1_000);
    const open = new Set(lone.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
    const h = lone.market.catalog.positions.filter((p) => open.has(p.contest_id) && p.market_key === 'moneyline')[1]!.position_hash;
    await lone.setBook('sim_book01', h, [{ price: 0.45, available: 5_000 }]);
    const swept = await intent(lk, h, 20_000);
    const expired = await intent(lk, h, 120_000);
    const reconciled = await intent(lk, h, 120_000, 'sent');
    const p = lone.execute({ sweepAfterMs: 5_000, intentTtlMs: 60_000 });
    expect(await p.sweep()).toBeGreaterThanOrEqual(3);
    const states = await eventually(() => Promise.all([swept, expired, reconciled].map((x) => decided(x.id))), (rows) => rows.every((r) => r.exec_state === 'decided'), 10_000);
    expect(states[0]).toMatchObject({ leg_status: 'completed', status: 'open' });
    expect(states[1]).toMatchObject({ leg_status: 'failed', status: 'closed' });
    expect(states[1].rejected_reason).toMatch(/not sent/);
    expect(states[2]).toMatchObject({ leg_status: 'completed' });
    const venue = [...lone.market._venue('sim_book01').orders.values()].map((x) => x.client_order_id);
    expect(venue).toContain(swept.cid);
    expect(venue).toContain(reconciled.cid);
    expect(venue).not.toContain(expired.cid);
    // A young intent is left to the buy that wrote it.
    const young = await intent(lk, h, 0);
    await p.sweep();
    expect((await decided(young.id)).exec_state).toBe('intent');
  });
});
