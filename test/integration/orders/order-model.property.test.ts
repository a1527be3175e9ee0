/**
 * Issue 11, reliability: a property-based run (fast-check) of random buys (practice and real money,
 * market and resting limit, one to three legs, halt and check_all_first), cancels, deposits and
 * settlements from several concurrent clients (two of them sharing one account) over HTTP, with two
 * execute workers and the settler. After each run:
 *   - every answer is a 2xx or a documented 4xx, never a 5xx;
 *   - each practice wallet's balance (REST) is the sum of its ledger, every balance_after is the
 *     running sum, and no balance_after is ever negative;
 *   - no order without its ledger rows: a practice order has its one debit of its stake and, once
 *     settled, exactly the credit its result pays; a filled real order has its one hold, and at
 *     most one settlement row; the venue's record agrees with each real order, one venue order each;
 *   - venue calls of one (account, venue) never overlap in time (recorded by a wrapper on every
 *     venue adapter, which also slows each call so an overlap would show).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderSettler } from '../../../pipelines/settlement/settler.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import type { VenueAdapter, VenueCancelRequest, VenueOrderRequest } from '../../../src/venues/types.js';
import { keyHeaders as H } from '../../support/accounts.js';
import { eventually } from '../../support/e2e.js';
import { get, send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

const REAL = 'sim_book01';
const PRICE_VENUE = 'sim_exchange';
const RUNS = 10;
const CALL_MS = 5;

interface Call {
  key: string;
  start: number;
  end: number;
}
const calls: Call[] = [];

/** Every venue's order calls recorded per (account, venue) and slowed down a little. */
function recording(adapters: VenueAdapter[]): VenueAdapter[] {
  return adapters.map((a) => {
    const wrapped = Object.create(a) as VenueAdapter;
    const timed =
      <R extends { account_id: string }, T>(f: (req: R) => Promise<T>) =>
      async (req: R): Promise<T> => {
        const start = performance.now();
        await new Promise((r) => setTimeout(r, CALL_MS));
        try {
          return await f.call(a, req);
        } finally {
          calls.push({ key: `${req.account_id}/${a.id}`, start, end: performance.now() });
        }
      };
    wrapped.placeOrder = timed<VenueOrderRequest, Awaited<ReturnType<VenueAdapter['placeOrder']>>>(a.placeOrder);
    wrapped.cancelOrder = timed<VenueCancelRequest, Awaited<ReturnType<VenueAdapter['cancelOrder']>>>(a.cancelOrder);
    return wrapped;
  });
}

let o: OrderStack;
let settler: OrderSettler;
/** Open contests with two moneyline sides, handed out two per run (a run settles its own). */
let contests: { id: string; sides: [string, string] }[];

beforeAll(async () => {
  o = await startOrderStack(23, { executeWaitMs: 30_000, wrapAdapters: recording });
  o.execute({ concurrency: 4 });
  o.execute({ concurrency: 4 });
  settler = new OrderSettler({ pool: o.s.rt.pool, log: pino({ level: 'silent' }), metrics: o.s.rt.metrics, batchSize: 5 });
  const open = o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id);
  contests = open.flatMap((id) => {
    const ml = o.market.catalog.positions.filter((p) => p.contest_id === id && p.market_key === 'moneyline').map((p) => p.position_hash);
    return ml.length >= 2 ? [{ id, sides: [ml[0]!, ml[1]!] as [string, string] }] : [];
  });
  expect(contests.length).toBeGreaterThanOrEqual(2 * RUNS);
}, 120_000);
afterAll(async () => o?.close());

type Action =
  | { kind: 'deposit'; cents: number }
  | { kind: 'paper'; legs: { pos: number; cents: number }[]; halt: boolean; checkAll: boolean }
  | { kind: 'real'; legs: { pos: number; dollars: number; limit: boolean; low: boolean }[]; parallel: boolean }
  | { kind: 'cancel' }
  | { kind: 'settle'; contest: number; results: ['win' | 'lose' | 'push', 'win' | 'lose' | 'push'] };

const pos = fc.integer({ min: 0, max: 3 });
const result = fc.constantFrom<'win' | 'lose' | 'push'>('win', 'lose', 'push');
const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('deposit' as const), cents: fc.integer({ min: 0, max: 600_000 }) }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('paper' as const), legs: fc.array(fc.record({ pos, cents: fc.integer({ min: 1, max: 400_000 }) }), { minLength: 1, maxLength: 3 }), halt: fc.boolean(), checkAll: fc.boolean() }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('real' as const),
      legs: fc.array(fc.record({ pos, dollars: fc.integer({ min: 1, max: 400 }), limit: fc.boolean(), low: fc.boolean() }), { minLength: 1, maxLength: 2 }),
      parallel: fc.boolean(),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('cancel' as const) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('settle' as const), contest: fc.integer({ min: 0, max: 1 }), results: fc.tuple(result, result) }), weight: 1 },
);

/** Four clients on three accounts: clients 0 and 1 act for the same account at once. */
const ACCOUNT_OF_CLIENT = [0, 0, 1, 2] as const;

interface Answer {
  what: string;
  status: number;
  body: unknown;
}

async function runClient(k: CreatedKey, positions: readonly string[], run: { id: string; sides: [string, string] }[], actions: readonly Action[], answers: Answer[]): Promise<void> {
  const app = o.s.built.app;
  const note = (what: string, r: { status: number; body: unknown }) => answers.push({ what, status: r.status, body: r.body });
  for (const a of actions) {
    const idem = { 'idempotency-key': randomUUID() };
    if (a.kind === 'deposit') {
      note('deposit', await send(app, 'POST', '/flow/v1/auth/account/paper/deposit', { amount: a.cents / 100 }, H(k, idem)));
    } else if (a.kind === 'paper') {
      const orders = a.legs.map((l) => ({ position_hash: positions[l.pos], partner_id: PRACTICE_VENUE_NAMED, amount: l.cents / 100, max_price: 0.9, mode: 'paper' }));
      note('paper buy', await send(app, 'POST', '/flow/v1/auth/orders/buy', { orders, ...(a.halt ? { on_leg_failure: 'halt' } : {}), ...(a.checkAll ? { check_all_first: true } : {}) }, H(k, idem)));
    } else if (a.kind === 'real') {
      // A limit below the book (0.3 against 0.4) rests; a market order or a limit above it fills.
      const orders = a.legs.map((l) => ({ position_hash: positions[l.pos], partner_id: REAL, amount: l.dollars, max_price: l.limit && l.low ? 0.3 : 0.6, mode: 'real', ...(l.limit ? { order_type: 'limit' } : {}) }));
      note('real buy', await send(app, 'POST', '/flow/v1/auth/orders/buy', { orders, ...(a.parallel ? { placement: 'parallel' } : {}) }, H(k, idem)));
    } else if (a.kind === 'cancel') {
      const resting = await get(app, '/flow/v1/auth/orders/resting/me', H(k));
      note('resting', resting);
      const id = (resting.body as { data?: { orders?: { router_order_id: string }[] } }).data?.orders?.[0]?.router_order_id ?? 'ord_none';
      note('cancel', await send(app, 'POST', '/flow/v1/auth/orders/cancel', { router_order_id: id }, H(k)));
    } else {
      const c = run[a.contest]!;
      note('settle', await send(app, 'POST', `/sim/v1/contests/${c.id}/settle`, { results: { [c.sides[0]]: a.results[0], [c.sides[1]]: a.results[1] } }, o.admin));
    }
  }
}
/** A practice leg may name any venue; it fills on the internal book whatever it names. */
const PRACTICE_VENUE_NAMED = REAL;

async function checkInvariants(accounts: readonly string[]): Promise<void> {
  const db = o.s.rt.pool;
  // The practice wallets: balance = sum of the ledger, each balance_after the running sum, never negative.
  const { rows: ledger } = await db.query<{ router_account_id: string; seq: number; type: string; amount: string; balance_after: string; router_order_id: string | null; running: string }>(
    `SELECT router_account_id, seq, type, amount::text, balance_after::text, router_order_id,
            sum(amount) OVER (PARTITION BY router_account_id ORDER BY seq)::text AS running
       FROM practice_ledger WHERE router_account_id = ANY($1) ORDER BY router_account_id, seq`,
    [accounts],
  );
  for (const e of ledger) {
    expect(e.balance_after, `${e.router_account_id}#${e.seq}`).toBe(e.running);
    expect(Number(e.balance_after)).toBeGreaterThanOrEqual(0);
  }

  // Every order with its ledger rows.
  const { rows: orders } = await db.query<{
    router_order_id: string;
    router_account_id: string;
    mode: string;
    partner_id: string;
    client_order_id: string;
    amount: string;
    filled_notional: string;
    filled_shares: string;
    fee: string;
    result: string | null;
    winnings: string | null;
    venue_order_id: string | null;
    exec_state: string | null;
    debits: string[];
    credits: string[];
    holds: string[];
    settlements: number;
  }>(
    `SELECT o.router_order_id, o.router_account_id, o.mode, o.partner_id, o.client_order_id, o.amount::text, o.filled_notional::text,
            o.filled_shares::text, o.fee::text, o.result, o.winnings::text, o.venue_order_id, o.exec_state,
            coalesce((SELECT array_agg(l.amount::text) FROM practice_ledger l WHERE l.router_order_id = o.router_order_id AND l.type = 'bet_debit'), '{}') AS debits,
            coalesce((SELECT array_agg(l.type || ':' || l.amount::text) FROM practice_ledger l WHERE l.router_order_id = o.router_order_id AND l.type IN ('settlement_credit','refund')), '{}') AS credits,
            coalesce((SELECT array_agg(b.amount::text) FROM balance_ledger b WHERE b.router_order_id = o.router_order_id AND b.kind = 'hold'), '{}') AS holds,
            (SELECT count(*) FROM balance_ledger b WHERE b.router_order_id = o.router_order_id AND b.kind = 'settlement')::int AS settlements
       FROM orders o WHERE o.router_account_id = ANY($1)`,
    [accounts],
  );
  const atVenue = [...o.market._venue(REAL).orders.values()] as { id: string; client_order_id: string; account_id: string; filled_notional: number; filled_qty: number }[];
  for (const x of orders) {
    const at = `${x.mode} order ${x.router_order_id}`;
    if (x.mode === 'paper') {
      expect(x.debits, at).toEqual([(-Number(x.amount)).toFixed(6)]);
      const paid = x.result === 'win' ? [`settlement_credit:${x.winnings}`] : x.result === 'push' ? [`refund:${x.filled_notional}`] : [];
      expect(x.credits, at).toEqual(paid);
    } else {
      expect(x.exec_state, at).toBe('decided');
      const mine = atVenue.filter((v) => v.client_order_id === x.client_order_id);
      expect(mine.length, at).toBeLessThanOrEqual(1);
      if (mine[0]) {
        expect(x.venue_order_id, at).toBe(mine[0].id);
        expect(Number(x.filled_notional)).toBeCloseTo(mine[0].filled_notional, 6);
        expect(Number(x.filled_shares)).toBeCloseTo(mine[0].filled_qty, 6);
      }
      if (Number(x.filled_notional) > 0) expect(x.holds.length, at).toBeGreaterThanOrEqual(1);
      expect(x.settlements, at).toBeLessThanOrEqual(1);
    }
  }
  // Ledger rows never without their order.
  const ids = new Set(orders.map((x) => x.router_order_id));
  for (const e of ledger) if (e.router_order_id !== null) expect(ids.has(e.router_order_id), `ledger ${e.type} of ${e.router_order_id}`).toBe(true);

  // One (account, venue)'s venue calls never overlap.
  const byKey = new Map<string, Call[]>();
  for (const c of calls) byKey.set(c.key, [...(byKey.get(c.key) ?? []), c]);
  for (const [key, list] of byKey) {
    list.sort((x, y) => x.start - y.start);
    for (let i = 1; i < list.length; i++) expect(list[i]!.start, `${key} call ${i}`).toBeGreaterThanOrEqual(list[i - 1]!.end);
  }
}

describe('buys, cancels, deposits and settlements from concurrent clients', () => {
  it('keep the wallets equal to their ledgers, never negative, every order with its ledger rows, and one (account, venue) at a time', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(action, { minLength: 1, maxLength: 8 }), { minLength: 4, maxLength: 4 }), async (perClient) => {
        const run = contests.slice(2 * round, 2 * round + 2);
        round++;
        const positions = run.flatMap((c) => c.sides);
        for (const h of positions) {
          await o.setBook(PRICE_VENUE, h, [{ price: 0.45, available: 50_000 }]);
          await o.setBook(REAL, h, [{ price: 0.4, available: 50_000 }]);
        }
        const keys: CreatedKey[] = [];
        for (let i = 0; i < 3; i++) {
          const k = await o.key();
          await o.connect(k.router_account_id, REAL, 2_000);
          keys.push(k);
        }
        const answers: Answer[] = [];
        await Promise.all(perClient.map((actions, c) => runClient(keys[ACCOUNT_OF_CLIENT[c]!]!, positions, run, actions, answers)));
        for (const a of answers) expect(a.status, `${a.what}: ${JSON.stringify(a.body)}`).toBeLessThan(500);
        for (const a of answers.filter((x) => x.what.endsWith('buy'))) expect(a.status, `${a.what}: ${JSON.stringify(a.body)}`).toBe(200);

        // Legs decided, settlements recorded, then every order settled that can be.
        await eventually(
          async () => (await o.s.rt.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE router_account_id = ANY($1) AND mode = 'real' AND exec_state <> 'decided'`, [keys.map((k) => k.router_account_id)])).rows[0]!.n,
          (n) => n === 0,
          30_000,
        );
        await o.settlements.flush();
        await settler.drain();
        await checkInvariants(keys.map((k) => k.router_account_id));
        // The REST balance is the ledger's last balance_after (or zero before any entry).
        for (const k of keys) {
          const w = await get(o.s.built.app, '/flow/v1/auth/account/paper', H(k));
          const { rows } = await o.s.rt.pool.query<{ sum: string | null }>('SELECT sum(amount)::float8 AS sum FROM practice_ledger WHERE router_account_id = $1', [k.router_account_id]);
          expect(w.body.data.balance).toBeCloseTo(Number(rows[0]!.sum ?? 0), 6);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  }, 600_000);
});
