/**
 * Issue 11, reliability: an execute process SIGKILLed many times at random points of a busy run
 * (buys of one to three real-money legs from several accounts on two venues, sequential and
 * parallel) and restarted each time. Some rounds die at a failpoint's Nth hit (before or after
 * the venue call, N drawn at random), others on a timer drawn at random, wherever the worker is
 * then. Afterwards the venue's record (the simulator, in this process: a venue outlives the
 * worker) and PostgreSQL agree on every order: nothing placed twice, no fill the venue booked is
 * lost, every intent decided, every hold booked once, every buy answered with what the venue did.
 * Seeded (FLOW_FUZZ_SEED), so a failure reproduces.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/domain/random.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { keyHeaders as H } from '../../support/accounts.js';
import { eventually } from '../../support/e2e.js';
import { get, send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';
import { executeChild, type ExecuteChild } from './execute-children.js';

const VENUES = ['sim_book01', 'sim_sportsbook'] as const;
const START = 5_000;
const ACCOUNTS = 4;
const ROUNDS = 8;
const BUYS_PER_ROUND = 6;
const SEED = Number(process.env.FLOW_FUZZ_SEED ?? 20_261_124);

let o: OrderStack;
let keys: CreatedKey[];
let positions: string[];

beforeAll(async () => {
  // A buy waits long enough for several workers to die under it and one to finish its legs.
  o = await startOrderStack(21, { executeWaitMs: 120_000 });
  const open = new Set(o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  positions = o.market.catalog.positions
    .filter((p) => open.has(p.contest_id) && p.market_key === 'moneyline')
    .map((p) => p.position_hash)
    .slice(0, 4);
  keys = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const k = await o.key();
    for (const v of VENUES) await o.connect(k.router_account_id, v, START);
    keys.push(k);
  }
  // Deep books: every leg fills whole, so what a leg did depends only on whether it was placed.
  for (const v of VENUES) for (const h of positions) await o.setBook(v, h, [{ price: 0.4, available: 1_000_000 }]);
}, 120_000);
afterAll(async () => o?.close());

interface VenueOrder {
  id: string;
  client_order_id: string;
  account_id: string;
  state: string;
  filled_notional: number;
  filled_qty: number;
  fee: number;
}
const venueOrders = (v: (typeof VENUES)[number]): VenueOrder[] => [...o.market._venue(v).orders.values()] as VenueOrder[];

interface OrderRow {
  router_order_id: string;
  router_account_id: string;
  partner_id: string;
  client_order_id: string;
  exec_state: string | null;
  leg_status: string;
  venue_order_id: string | null;
  filled_notional: number;
  filled_shares: number;
  fee: number;
}

async function realOrders(): Promise<OrderRow[]> {
  const { rows } = await o.s.rt.pool.query<OrderRow>(
    `SELECT router_order_id, router_account_id, partner_id, client_order_id, exec_state, leg_status, venue_order_id,
            filled_notional::float8 AS filled_notional, filled_shares::float8 AS filled_shares, fee::float8 AS fee
       FROM orders WHERE router_account_id = ANY($1) AND mode = 'real'`,
    [keys.map((k) => k.router_account_id)],
  );
  return rows;
}

describe('execute processes SIGKILLed at random points, many times', () => {
  it(`${ROUNDS} kills during ${ROUNDS * BUYS_PER_ROUND} buys: the venue and PostgreSQL agree on every order, nothing placed twice or lost`, async () => {
    const rnd = mulberry32(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const buys: { k: CreatedKey; legs: number; answer: Promise<{ status: number; body: any }> }[] = [];
    const deaths: string[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      // Thirds: die at the Nth venue call's start, at the Nth return, or on a timer wherever the worker is.
      const how = round % 3;
      const nth = 1 + Math.floor(rnd() * 4);
      const fp = how === 0 ? `execute.before-place@${nth}` : how === 1 ? `execute.after-place@${nth}` : '';
      const child: ExecuteChild = executeChild(o.s.env, o.adapters, fp);
      await child.ready;
      for (let b = 0; b < BUYS_PER_ROUND; b++) {
        const k = pick(keys);
        const legs = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({
          position_hash: pick(positions),
          partner_id: pick(VENUES),
          amount: 5 + Math.floor(rnd() * 36),
          max_price: 0.6,
          mode: 'real',
        }));
        const body = { orders: legs, ...(rnd() < 0.5 ? { placement: 'parallel' } : {}) };
        buys.push({ k, legs: legs.length, answer: send(o.s.built.app, 'POST', '/flow/v1/auth/orders/buy', body, H(k, { 'idempotency-key': randomUUID() })) });
      }
      // A failpoint that is not reached in time (its worker found too few legs) is a timer kill.
      const timer = how === 2 ? 30 + Math.floor(rnd() * 600) : 4_000;
      const killed = await Promise.race([child.exit, new Promise<null>((r) => setTimeout(() => r(null), timer))]);
      const status = killed ?? (await child.kill());
      expect(status.signal).toBe('SIGKILL');
      deaths.push(killed ? fp : `timer ${timer} ms`);
    }

    // A last worker that lives: it takes over every leg the dead left and decides it.
    const last = executeChild(o.s.env, o.adapters, '');
    try {
      await last.ready;
      const answers = await Promise.all(buys.map((b) => b.answer));
      for (const [i, r] of answers.entries()) {
        expect(r.status, `buy ${i}`).toBe(200);
        expect(r.body.data.results).toHaveLength(buys[i]!.legs);
        for (const res of r.body.data.results) expect(res.status, JSON.stringify(res)).toBe('completed');
      }
      const undecided = await eventually(realOrders, (rows) => rows.every((x) => x.exec_state === 'decided'), 30_000);
      expect(undecided.filter((x) => x.exec_state !== 'decided')).toEqual([]);
    } finally {
      expect(await last.stop()).toEqual({ code: 0, signal: null });
    }
    expect(deaths.length).toBe(ROUNDS);

    const rows = await realOrders();
    const legCount = buys.reduce((n, b) => n + b.legs, 0);
    expect(rows).toHaveLength(legCount);
    for (const v of VENUES) {
      const atVenue = venueOrders(v).filter((x) => keys.some((k) => k.router_account_id === x.account_id));
      // Never twice: one venue order per client order id.
      const byClient = new Map<string, VenueOrder[]>();
      for (const x of atVenue) byClient.set(x.client_order_id, [...(byClient.get(x.client_order_id) ?? []), x]);
      for (const [cid, list] of byClient) expect(list, `${v} ${cid}`).toHaveLength(1);
      // Never lost, and booked as the venue did it: each row of this venue is its one venue order.
      const mine = rows.filter((r) => r.partner_id === v);
      expect(mine).toHaveLength(atVenue.length);
      for (const r of mine) {
        const x = byClient.get(r.client_order_id)?.[0];
        expect(x, `${r.router_order_id} has no order at ${v}`).toBeDefined();
        expect(r).toMatchObject({ leg_status: 'completed', venue_order_id: x!.id });
        expect(r.filled_notional).toBeCloseTo(x!.filled_notional, 6);
        expect(r.filled_shares).toBeCloseTo(x!.filled_qty, 6);
        expect(r.fee).toBeCloseTo(x!.fee, 6);
      }
    }

    // Every hold booked once, and each account's expected balance is the venue's balance.
    const { rows: holds } = await o.s.rt.pool.query<{ router_order_id: string; n: number; amount: number }>(
      `SELECT b.router_order_id, count(*)::int AS n, sum(b.amount)::float8 AS amount
         FROM balance_ledger b JOIN account_partners ap USING (account_partner_id)
        WHERE ap.router_account_id = ANY($1) GROUP BY b.router_order_id`,
      [keys.map((k) => k.router_account_id)],
    );
    const holdOf = new Map(holds.map((h) => [h.router_order_id, h]));
    for (const r of rows) {
      const h = holdOf.get(r.router_order_id);
      expect(h?.n, r.router_order_id).toBe(1);
      expect(h!.amount).toBeCloseTo(-(r.filled_notional + r.fee), 6);
    }
    for (const k of keys) {
      const partners = (await get(o.s.built.app, '/flow/v1/auth/account/partners', H(k))).body.data.account_partners as { partner_id: string; expected_balance: number }[];
      for (const v of VENUES) {
        const venueBalance = o.market._venue(v).accounts.get(k.router_account_id)!.balance;
        const spent = rows.filter((r) => r.router_account_id === k.router_account_id && r.partner_id === v).reduce((s, r) => s + r.filled_notional + r.fee, 0);
        expect(venueBalance).toBeCloseTo(START - spent, 6);
        expect(partners.find((p) => p.partner_id === v)!.expected_balance).toBeCloseTo(venueBalance, 6);
      }
    }
  }, 400_000);
});
