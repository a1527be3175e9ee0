/**
 * The baseline and the checks of bench/orders.ts against real PostgreSQL and Redis: the capture
 * records what a served paper buy sends and keeps exactly its writes (its one statement and the relay's wake-up); the raw side replays
 * them for another account with fresh ids (the order, its debit and its events naming each other
 * as the route's do) under every statement setting, and through BullMQ round trips with the worker
 * here or in a process of its own; a refused write rolls back whole; and the end-of-run checks
 * agree with a correct tally and catch a missing leg, a wrong stake and a stray ledger entry.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOrders } from '../../../bench/support/orders-ledgers.js';
import { captureBuy, rawBuyer, type BuyCapture, type BuyTarget } from '../../../bench/support/raw-buy.js';
import { queueSettings, RawQueue } from '../../../bench/support/raw-queue.js';
import { AmountTally, tamperLedger } from '../../../bench/support/wallet-ledgers.js';
import { accountKey } from '../../support/accounts.js';
import { buy, orderCatalog, orderMarket, paperLeg, type OrderMarket } from '../../support/orders.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let m: OrderMarket;
let target: BuyTarget;
let capture: BuyCapture;
const pools: pg.Pool[] = [];
beforeAll(async () => {
  const catalog = orderCatalog();
  s = await startStack({ catalog });
  m = await orderMarket(s, catalog);
  await m.quote(m.home, [{ partner: 'sim_exchange', price: 0.5, available: 1000 }]);
  target = { position_hash: m.home, partner_id: 'sim_exchange', price: 0.5 };
  capture = await captureBuy(s.rt, await accountKey(s), target);
}, 90_000);
afterAll(async () => {
  for (const p of pools) await p.end();
  await m?.close();
  await s?.close();
});

const rawPool = () => {
  const p = new pg.Pool({ connectionString: s.databaseUrl, max: 3 });
  pools.push(p);
  return p;
};
const texts = (idx: number[]) => idx.map((i) => capture.statements[i]!.text);

describe('bench orders: the raw baseline and the checks', () => {
  it('keeps the buy’s writes (its one statement, then the relay’s wake-up: no transaction frame), and none of its reads', () => {
    const replayed = texts(capture.replayed);
    expect(replayed).toEqual([expect.stringMatching(/^SELECT \* FROM flow_paper_buy\(/), 'SELECT flow_account_outbox_wake()']);
    expect(capture.statements.some((x) => /^(BEGIN|COMMIT)$/i.test(x.text))).toBe(false);
    const left = capture.statements.map((_, i) => i).filter((i) => !capture.replayed.includes(i));
    // What is left out only reads (the paper terms, the catalog on a cold copy).
    for (const t of texts(left)) expect(t).toMatch(/^SELECT\b/i);
    for (const t of texts(left)) expect(t).not.toMatch(/\b(INSERT|DELETE|UPDATE)\b|flow_(idem|practice|paper_buy|account)/i);
    // Every row the buy writes is written by the replay: counted per replayed buy below.
    expect(new Set(capture.minted.map((id) => id.slice(0, id.indexOf('_'))))).toEqual(new Set(['ord', 'svl', 'opp', 'sor', 'fco']));
    expect(capture.redis.length).toBeGreaterThan(0);
  });

  it('lands raw buys (every setting, concurrently on shared accounts) and Flow buys alike; the checks agree with the tally', async () => {
    const a = await accountKey(s);
    const b = await accountKey(s);
    const ids = [a.router_account_id, b.router_account_id];
    const legs = new AmountTally();
    for (const prepared of [false, true]) {
      const buyRaw = rawBuyer(rawPool(), capture, { name: 't', prepared });
      const outs = await Promise.all(Array.from({ length: 10 }, (_, n) => buyRaw(ids[n % 2]!)));
      expect(outs).toEqual(Array.from({ length: 10 }, () => ({ ok: true })));
      for (let n = 0; n < 10; n++) legs.add(ids[n % 2]!, capture.cents);
    }
    const r = await buy(s, a, { orders: [paperLeg(m.home, 1.07)] });
    expect(r.body.data.results[0].status).toBe('completed');
    legs.add(a.router_account_id, 107);

    expect(await checkOrders(s.rt.pool, ids, legs)).toEqual({ accounts: 2, inconsistent: [], debits: [], orders: [], unrecorded: [] });
    // The replay's ids hang together as the route's do: each order's debit and both its events name it.
    const { rows } = await s.rt.pool.query<{ n: number; debits: number; order_events: number; hold_events: number; opportunities: number }>(
      `SELECT count(*)::int AS n,
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM practice_ledger l WHERE l.router_order_id = o.router_order_id AND l.router_account_id = o.router_account_id))::int AS debits,
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM account_outbox e WHERE e.router_account_id = o.router_account_id AND e.channel = 'orders' AND e.event->>'router_order_id' = o.router_order_id))::int AS order_events,
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM account_outbox e WHERE e.router_account_id = o.router_account_id AND e.channel = 'balance' AND e.event->>'router_order_id' = o.router_order_id))::int AS hold_events,
              count(DISTINCT o.opportunity_id)::int AS opportunities
         FROM orders o WHERE o.router_account_id = $1`,
      [b.router_account_id],
    );
    expect(rows[0]).toEqual({ n: 10, debits: 10, order_events: 10, hold_events: 10, opportunities: 10 });

    // A tally one leg short (account a) or a cent off (account b) is caught, on that account only.
    const ta = legs.of(a.router_account_id);
    const tb = legs.of(b.router_account_id);
    const wrong = new AmountTally();
    for (let n = 0; n < ta.count - 1; n++) wrong.add(a.router_account_id, n === 0 ? ta.cents : 0);
    for (let n = 0; n < tb.count; n++) wrong.add(b.router_account_id, n === 0 ? tb.cents + 1 : 0);
    const off = await checkOrders(s.rt.pool, ids, wrong);
    expect(off.debits).toEqual([expect.stringContaining(a.router_account_id), expect.stringContaining(b.router_account_id)]);
    expect(off.orders).toEqual([expect.stringContaining(a.router_account_id), expect.stringContaining(b.router_account_id)]);
    expect(off.unrecorded).toEqual([expect.stringContaining(a.router_account_id)]);
    expect(off.inconsistent).toEqual([]);

    // A stray entry with a wrong balance_after fails the ledger.
    await tamperLedger(s.rt.pool, a.router_account_id);
    const tampered = await checkOrders(s.rt.pool, ids, legs);
    expect(tampered.inconsistent).toEqual([expect.stringContaining(a.router_account_id)]);
  });

  it('BullMQ round trips, worker here or in a process of its own, land what they answer', async () => {
    const k = await accountKey(s);
    const legs = new AmountTally();
    const deps = { redisUrl: s.rt.config.redisUrl, prefix: s.rt.ks.prefix, databaseUrl: s.databaseUrl, poolMax: 3, capture };
    const settings = queueSettings(6, 3);
    for (const setting of [settings.find((x) => x.inProcess)!, settings.find((x) => !x.inProcess)!]) {
      const q = await RawQueue.start(deps, setting, `bench-orders-test-${randomUUID()}`);
      try {
        const outs = await Promise.all(Array.from({ length: 6 }, () => q.roundTrip(k.router_account_id)));
        expect(outs).toEqual(Array.from({ length: 6 }, () => ({ ok: true })));
        for (let n = 0; n < 6; n++) legs.add(k.router_account_id, capture.cents);
        expect(q.workerPid === null).toBe(setting.inProcess);
      } finally {
        await q.close();
      }
    }
    expect(await checkOrders(s.rt.pool, [k.router_account_id], legs)).toEqual({ accounts: 1, inconsistent: [], debits: [], orders: [], unrecorded: [] });
  }, 60_000);

  it('a refused debit rolls the whole raw transaction back: nothing written', async () => {
    const k = await accountKey(s);
    const account = k.router_account_id;
    // A wallet holding less than the capture's stake.
    await s.rt.pool.query(
      `INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after) VALUES ($1, 1, 'svl_low_open', 'opening_balance', 1000, 1000),
              ($1, 2, 'svl_low_adj', 'adjustment', -999.9, 0.1)`,
      [account],
    );
    for (const prepared of [false, true]) {
      expect(await rawBuyer(rawPool(), capture, { name: 't', prepared })(account)).toEqual({ ok: false, refusal: 'refused wallet' });
    }
    const { rows } = await s.rt.pool.query<{ l: number; o: number; e: number; k: number; p: number }>(
      `SELECT (SELECT count(*) FROM practice_ledger WHERE router_account_id = $1)::int AS l,
              (SELECT count(*) FROM orders WHERE router_account_id = $1)::int AS o,
              (SELECT count(*) FROM account_outbox WHERE router_account_id = $1)::int AS e,
              (SELECT count(*) FROM idempotency_keys WHERE router_account_id = $1)::int AS k,
              (SELECT count(*) FROM opportunities WHERE router_account_id = $1)::int AS p`,
      [account],
    );
    expect(rows[0]).toEqual({ l: 2, o: 0, e: 0, k: 0, p: 0 });
  });
});
