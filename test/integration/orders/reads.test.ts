/**
 * The order reads and the cancel (issue 11): GET orders (newest first, cursor paging, every filter,
 * sort=settled), GET orders/resting/me, GET orders/:id/resolution, POST orders/cancel, and tenant
 * isolation on every route. Orders are placed through the buy; settlement and resting orders (which
 * later slices write) are put in place with the store's own insert or a direct update.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { insertOrder, type NewOrder } from '../../../src/store/pg/orders.js';
import { inTransaction } from '../../../src/store/pg/pool.js';
import { accountKey, keyHeaders as H } from '../../support/accounts.js';
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
  await m.quote(m.home, [{ partner: 'sim_exchange', price: 0.5, available: 500 }]);
  await m.quote(m.other, [{ partner: 'sim_book01', price: 0.25, available: 500 }]);
}, 90_000);
afterAll(async () => {
  await m?.close();
  await s?.close();
});

const key = () => accountKey(s);
const codeOf = (r: JsonResponse) => r.body?.error?.code;
const O = '/flow/v1/auth/orders';
const ids = (r: JsonResponse): string[] => r.body.data.map((o: { router_order_id: string }) => o.router_order_id);

/** Places paper buys one after another; returns their order ids, oldest first. */
async function place(k: CreatedKey, legs: object[]): Promise<string[]> {
  const out: string[] = [];
  for (const leg of legs) {
    const r = await buy(s, k, { orders: [leg] });
    expect(r.body.data.results[0].status).toBe('completed');
    out.push(r.body.data.results[0].venues[0].router_order_id);
  }
  return out;
}

/** Settles an order as the settlement path will: result, winnings and time together. */
async function settle(id: string, result: 'win' | 'lose' | 'push' | 'cancelled', at: string) {
  await s.rt.pool.query(
    `UPDATE orders SET result = $2, winnings = CASE $2 WHEN 'win' THEN filled_shares WHEN 'lose' THEN 0 ELSE filled_notional END,
                       net_winnings = CASE $2 WHEN 'win' THEN filled_shares - filled_notional WHEN 'lose' THEN -filled_notional ELSE 0 END,
                       settled_at = $3, status = 'closed'
      WHERE router_order_id = $1`,
    [id, result, at],
  );
}

/** A resting real-money limit order, as the real-venue slice will write one. */
async function restingOrder(k: CreatedKey, over: Partial<NewOrder> = {}): Promise<string> {
  const id = `ord_${randomUUID()}`;
  await inTransaction(s.rt.pool, (c) =>
    insertOrder(c, {
      router_order_id: id,
      router_account_id: k.router_account_id,
      opportunity_id: null,
      model_id: null,
      idempotency_key: randomUUID(),
      leg_index: 0,
      client_order_id: `fco_${id}`,
      sor_decision_id: 'sor_test',
      partner_id: 'sim_exchange',
      requested_partner_id: 'sim_exchange',
      currency: 'USD',
      mode: 'real',
      order_type: 'limit',
      position_hash: m.home,
      liquidity_hash: null,
      price_partner_id: null,
      price_liquidity_hash: null,
      contest_id: m.contestId,
      title: 'Resting',
      requested_amount: '20',
      requested_shares: null,
      max_price: '0.4',
      amount: '20',
      avg_price: null,
      filled_notional: '0',
      filled_shares: '0',
      unfilled_notional: '20',
      fee: '0',
      leg_status: 'resting',
      status: 'open',
      fill_status: 'unfilled',
      rejected_code: null,
      rejected_reason: null,
      ...over,
    }),
  );
  return id;
}

describe('GET orders', () => {
  it('lists newest first and pages with the cursor (limit at most 200)', async () => {
    const k = await key();
    const placed = await place(k, [1, 2, 3, 4, 5].map((a) => paperLeg(m.home, a)));
    const all = await get(app(), O, H(k));
    expect(ids(all)).toEqual([...placed].reverse());
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false, limit: 50 });
    const seen: string[] = [];
    let url = `${O}?limit=2`;
    for (;;) {
      const p = await get(app(), url, H(k));
      expect(p.status).toBe(200);
      seen.push(...ids(p));
      if (!p.body.pagination.has_more) break;
      url = `${O}?limit=2&cursor=${encodeURIComponent(p.body.pagination.next_cursor)}`;
    }
    expect(seen).toEqual([...placed].reverse());
    expect((await get(app(), `${O}?limit=201`, H(k))).status).toBe(400);
    // A cursor is bound to its list: another filter refuses it.
    const first = await get(app(), `${O}?limit=2`, H(k));
    const foreign = await get(app(), `${O}?limit=2&currency=ATLAS&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`, H(k));
    expect([foreign.status, codeOf(foreign)]).toEqual([400, 'invalid_cursor']);
  });

  it('filters: status, contest_id (comma list), currency, model_id, settled, result, sort=settled, from/to, settled_after/before, mm, opportunity_type', async () => {
    const k = await key();
    const mr = await send(app(), 'POST', '/flow/v1/auth/models', { model_name: 'f', model_description: '' }, H(k, { 'idempotency-key': randomUUID() }));
    const model = mr.body.data.model_id as string;
    const [a, b] = await place(k, [paperLeg(m.home, 1), paperLeg(m.other, 2)]);
    const withModel = await buy(s, k, { orders: [paperLeg(m.home, 3)], model_id: model });
    const c = withModel.body.data.results[0].venues[0].router_order_id as string;
    const resting = await restingOrder(k);
    await settle(a!, 'win', '2026-01-02T00:00:00.000Z');
    await settle(b!, 'lose', '2026-01-05T00:00:00.000Z');

    const q = async (query: string) => {
      const r = await get(app(), `${O}?${query}`, H(k));
      expect(r.status, query).toBe(200);
      return ids(r).sort();
    };
    const sorted = (...x: string[]) => [...x].sort();
    expect(await q('status=closed')).toEqual(sorted(a!, b!));
    expect(await q('status=open')).toEqual(sorted(c, resting));
    expect(await q('status=pending')).toEqual([]);
    expect(await q(`contest_id=${m.otherContestId}`)).toEqual([b]);
    expect(await q(`contest_id=${m.contestId},${m.otherContestId}`)).toEqual(sorted(a!, b!, c, resting));
    expect(await q('currency=USD')).toEqual([resting]);
    expect(await q('currency=ATLAS')).toEqual(sorted(a!, b!, c));
    expect(await q(`model_id=${model}`)).toEqual([c]);
    expect(await q('settled=true')).toEqual(sorted(a!, b!));
    expect(await q('settled=false')).toEqual(sorted(c, resting));
    expect(await q('result=win')).toEqual([a]);
    expect(await q('result=lose&currency=ATLAS')).toEqual([b]);
    expect(ids(await get(app(), `${O}?sort=settled`, H(k)))).toEqual([b, a]);
    expect(await q('sort=settled&from=2026-01-03T00:00:00Z')).toEqual([b]);
    expect(await q('sort=settled&to=2026-01-02T00:00:00Z')).toEqual([a]);
    expect(await q('settled_after=2026-01-03T00:00:00Z')).toEqual([b]);
    expect(await q('settled_before=2026-01-04T00:00:00Z')).toEqual([a]);
    // from/to on creation time by default.
    const { rows } = await s.rt.pool.query<{ t: string }>("SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS t FROM orders WHERE router_order_id = $1", [c]);
    expect(await q(`from=${encodeURIComponent(rows[0]!.t)}`)).toEqual(sorted(c, resting));
    expect(await q(`to=${encodeURIComponent(rows[0]!.t)}`)).toEqual(sorted(a!, b!, c));
    // No order of this build is a market-making order; opportunity_type narrows nothing yet.
    expect(await q('mm=true')).toEqual([]);
    expect(await q('mm=false')).toEqual(sorted(a!, b!, c, resting));
    expect(await q('opportunity_type=hedge')).toEqual(sorted(a!, b!, c, resting));
    for (const bad of ['status=done', 'result=maybe', 'currency=EUR', 'from=yesterday', 'sort=oldest', 'contest_id=a,,b']) {
      expect((await get(app(), `${O}?${bad}`, H(k))).status, bad).toBe(400);
    }
  });
});

describe('resting orders, resolution and cancel', () => {
  it('practice orders never rest; a resting order is listed until cancelled, and the cancel reports its unfilled remainder with an order.update', async () => {
    const k = await key();
    const [paper] = await place(k, [paperLeg(m.home, 4)]);
    expect((await get(app(), `${O}/resting/me`, H(k))).body.data).toEqual({ orders: [] });
    const id = await restingOrder(k);
    const listed = (await get(app(), `${O}/resting/me`, H(k))).body.data.orders;
    expect(listed).toEqual([
      {
        router_order_id: id,
        title: 'Resting',
        partner_id: 'sim_exchange',
        partner_name: expect.any(String),
        amount: 20,
        price: 0.4,
        fill_status: 'unfilled',
        currency: 'USD',
        contest_id: m.contestId,
        position_hash: m.home,
        filled_notional: 0,
        unfilled_notional: 20,
        created_at: expect.any(String),
      },
    ]);

    const c = await send(app(), 'POST', `${O}/cancel`, { router_order_id: id }, H(k));
    expect(c.status).toBe(200);
    expect(c.body.data).toEqual({ router_order_id: id, status: 'cancelled', unfilled_notional: 20 });
    expect((await get(app(), `${O}/resting/me`, H(k))).body.data.orders).toEqual([]);
    const { rows } = await s.rt.pool.query<{ event: any }>("SELECT event FROM account_outbox WHERE router_account_id = $1 AND channel = 'orders' ORDER BY seq DESC LIMIT 1", [k.router_account_id]);
    expect(rows[0]!.event).toMatchObject({ type: 'order.update', router_order_id: id, status: 'closed', fill_status: 'unfilled', filled_amt: 0, unfilled_amt: 20 });
    const read = (await get(app(), O, H(k))).body.data.find((o: any) => o.router_order_id === id);
    expect(read).toMatchObject({ status: 'closed', cancelled_at: expect.any(String) });

    // Not resting any more, and a practice order never was: 409 order_not_resting. Unknown: 404.
    for (const notResting of [id, paper]) {
      const again = await send(app(), 'POST', `${O}/cancel`, { router_order_id: notResting }, H(k));
      expect([again.status, codeOf(again)]).toEqual([409, 'order_not_resting']);
    }
    const unknown = await send(app(), 'POST', `${O}/cancel`, { router_order_id: 'ord_missing' }, H(k));
    expect([unknown.status, codeOf(unknown)]).toEqual([404, 'not_found']);
    expect((await send(app(), 'POST', `${O}/cancel`, { router_order_id: id, extra: 1 }, H(k))).status).toBe(400);
  });

  it('a partly filled resting order stays open after its cancel: its filled part awaits settlement', async () => {
    const k = await key();
    const id = await restingOrder(k, { filled_notional: '8', filled_shares: '20', unfilled_notional: '12', avg_price: '0.4', fill_status: 'partially_filled' });
    const c = await send(app(), 'POST', `${O}/cancel`, { router_order_id: id }, H(k));
    expect(c.body.data).toEqual({ router_order_id: id, status: 'cancelled', unfilled_notional: 12 });
    expect((await get(app(), O, H(k))).body.data[0]).toMatchObject({ status: 'open', fill_status: 'partially_filled' });
  });

  it('resolution: unresolved while open, the result once settled', async () => {
    const k = await key();
    const [id] = await place(k, [paperLeg(m.other, 5)]);
    const open = await get(app(), `${O}/${id}/resolution`, H(k));
    expect(open.body.data).toEqual({
      router_order_id: id,
      contest_id: m.otherContestId,
      position_hash: m.other,
      title: expect.any(String),
      currency: 'ATLAS',
      status: 'open',
      resolved: false,
      result: null,
      amount: 5,
      winnings: null,
      net_winnings: null,
      settled_at: null,
    });
    await settle(id!, 'win', '2026-02-01T00:00:00.000Z');
    // 5 ATLAS at 0.25 is 20 shares: a win pays 20.
    expect((await get(app(), `${O}/${id}/resolution`, H(k))).body.data).toMatchObject({ status: 'closed', resolved: true, result: 'win', winnings: 20, net_winnings: 15, settled_at: '2026-02-01T00:00:00.000Z' });
    expect((await get(app(), `${O}/ord_missing/resolution`, H(k))).status).toBe(404);
  });
});

describe('tenant isolation', () => {
  it('another account’s order is not found on every route, and absent from every list', async () => {
    const owner = await key();
    const other = await key();
    const [paper] = await place(owner, [paperLeg(m.home, 3)]);
    const resting = await restingOrder(owner);
    expect((await get(app(), O, H(other))).body.data).toEqual([]);
    expect((await get(app(), `${O}/resting/me`, H(other))).body.data.orders).toEqual([]);
    for (const id of [paper, resting]) {
      const r = await get(app(), `${O}/${id}/resolution`, H(other));
      expect([r.status, codeOf(r)]).toEqual([404, 'not_found']);
    }
    const c = await send(app(), 'POST', `${O}/cancel`, { router_order_id: resting }, H(other));
    expect([c.status, codeOf(c)]).toEqual([404, 'not_found']);
    // Still resting for its owner.
    expect((await get(app(), `${O}/resting/me`, H(owner))).body.data.orders.map((o: any) => o.router_order_id)).toEqual([resting]);
  });

  it('X-Service-Account from a key that is not an organization’s is 403 account_forbidden on every order route; a data key reads but cannot cancel', async () => {
    const k = await key();
    const victim = await key();
    const resting = await restingOrder(victim);
    const as = H(k, { 'x-service-account': victim.router_account_id });
    const answers = [
      await get(app(), O, as),
      await get(app(), `${O}/resting/me`, as),
      await get(app(), `${O}/${resting}/resolution`, as),
      await send(app(), 'POST', `${O}/cancel`, { router_order_id: resting }, as),
      await buy(s, k, { orders: [paperLeg(m.home, 1)] }, { headers: { 'x-service-account': victim.router_account_id } }),
    ];
    for (const r of answers) expect([r.status, codeOf(r)]).toEqual([403, 'account_forbidden']);
    const d = await accountKey(s, 'data');
    expect((await get(app(), O, H(d))).status).toBe(200);
    const c = await send(app(), 'POST', `${O}/cancel`, { router_order_id: resting }, H(d));
    expect([c.status, codeOf(c)]).toEqual([403, 'entitlement_required']);
    expect((await get(app(), `${O}/resting/me`, H(victim))).body.data.orders).toHaveLength(1);
  });
});
