/**
 * Issue 11 item 3, never twice, never lost: an execute worker SIGKILLed in the middle of a leg (in a
 * child process, failpoints execute.before-place: the intent marked sent, the venue not called yet;
 * execute.after-place: the venue holds the order, PostgreSQL does not know) is followed by another
 * worker that reconciles (places again under the same client_order_id) before deciding. The venue's
 * record (the simulator, in this process, as a venue lives outside the worker) and PostgreSQL agree:
 * one order at the venue, booked once, one hold, and the buy that was waiting answers with it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../../api/rest/orders/execution.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { keyHeaders as H } from '../../support/accounts.js';
import { get, send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';
import { executeChild as spawnChild } from './execute-children.js';

const VENUE = 'sim_book01';
const START = 1_000;

let o: OrderStack;
let positions: string[];

beforeAll(async () => {
  // The buy waits long enough for a worker to die and another to take the leg over.
  o = await startOrderStack(14, { executeWaitMs: 60_000 });
  const open = new Set(o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  positions = o.market.catalog.positions.filter((p) => open.has(p.contest_id) && p.market_key === 'moneyline').map((p) => p.position_hash);
}, 120_000);
afterAll(async () => o?.close());

/** An execute worker in a child process whose venue calls reach this process's simulator. */
const executeChild = (failpoint: string) => spawnChild(o.s.env, o.adapters, failpoint);

const venueOrders = (clientId: string) => [...o.market._venue(VENUE).orders.values()].filter((x) => x.client_order_id === clientId);

async function orderRow(clientId: string) {
  const { rows } = await o.s.rt.pool.query(
    `SELECT router_order_id, exec_state, leg_status, attempts, venue_order_id, filled_notional::float8 AS filled_notional, filled_shares::float8 AS filled_shares, fee::float8 AS fee
       FROM orders WHERE client_order_id = $1`,
    [clientId],
  );
  return rows[0];
}
async function holdsOf(account: string) {
  const { rows } = await o.s.rt.pool.query<{ amount: string; router_order_id: string }>(
    `SELECT b.amount::text, b.router_order_id FROM balance_ledger b JOIN account_partners ap USING (account_partner_id) WHERE ap.router_account_id = $1`,
    [account],
  );
  return rows;
}

describe('an execute worker killed in the middle of a leg', () => {
  it.each([
    ['execute.after-place', 'the venue holds the order, PostgreSQL does not know'],
    ['execute.before-place', 'marked sent, the venue never called'],
  ])('at %s (%s): the next worker reconciles, the venue and PostgreSQL agree, nothing is placed twice', async (failpoint) => {
    const k: CreatedKey = await o.key();
    const account = k.router_account_id;
    await o.connect(account, VENUE, START);
    const h = positions.shift()!;
    await o.setBook(VENUE, h, [{ price: 0.4, available: 5_000 }]);

    const first = executeChild(failpoint);
    await first.ready;
    const key = randomUUID();
    const cid = clientOrderId(account, key, 0);
    const buying = send(o.s.built.app, 'POST', '/flow/v1/auth/orders/buy', { orders: [{ position_hash: h, partner_id: VENUE, amount: 20, max_price: 0.5, mode: 'real' }] }, H(k, { 'idempotency-key': key }));

    expect(await first.exit).toEqual({ code: null, signal: 'SIGKILL' });
    // Where it died: the intent was marked sent (committed before the venue call) and nothing decided.
    expect(await orderRow(cid)).toMatchObject({ exec_state: 'sent', attempts: 1, leg_status: 'pending' });
    expect(venueOrders(cid)).toHaveLength(failpoint === 'execute.after-place' ? 1 : 0);
    expect(await holdsOf(account)).toEqual([]);

    const second = executeChild('');
    try {
      await second.ready;
      const r = await buying;
      expect(r.status).toBe(200);
      const [res] = r.body.data.results;
      expect(res).toMatchObject({ status: 'completed', filled_notional: 20, filled_shares: 50, unfilled_notional: 0, avg_price: 0.4 });

      // The venue placed it once; its one order is the one PostgreSQL booked, once.
      const placed = venueOrders(cid);
      expect(placed).toHaveLength(1);
      const v = placed[0]!;
      expect(v).toMatchObject({ state: 'FILLED', filled_notional: 20, filled_qty: 50 });
      expect(o.market._venue(VENUE).accounts.get(account)!.balance).toBeCloseTo(START - 20 - v.fee, 6);
      expect(await orderRow(cid)).toMatchObject({ exec_state: 'decided', leg_status: 'completed', attempts: 2, venue_order_id: v.id, filled_notional: 20, filled_shares: 50, fee: v.fee });
      const holds = await holdsOf(account);
      expect(holds).toEqual([{ amount: (-(20 + v.fee)).toFixed(6), router_order_id: res.venues[0].router_order_id }]);
      const conn = (await get(o.s.built.app, '/flow/v1/auth/account/partners', H(k))).body.data.account_partners.find((p: { partner_id: string }) => p.partner_id === VENUE);
      expect(conn.expected_balance).toBeCloseTo(o.market._venue(VENUE).accounts.get(account)!.balance, 6);
    } finally {
      expect(await second.stop()).toEqual({ code: 0, signal: null });
    }
  }, 90_000);
});
