/**
 * A practice buy's events through the durable path (issue 11): order.update and balance.update
 * written to the outbox in the buy's transaction, moved into the event log by the account-event
 * relay, delivered by the real gateway over WebSocket to the owner's orders and balance
 * subscriptions only.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountEventRelay } from '../../../pipelines/account-events/relay.js';
import { seedCatalog } from '../../../src/store/pg/catalog.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { buy, orderCatalog, orderMarket, paperLeg, type OrderMarket } from '../../support/orders.js';
import { startHarness, type Harness } from '../gateway/harness.js';

let h: Harness;
let relay: AccountEventRelay;
let m: OrderMarket;

beforeAll(async () => {
  h = await startHarness();
  const catalog = orderCatalog();
  await seedCatalog(h.s.rt.pool, catalog);
  m = await orderMarket(h.s, catalog);
  await m.quote(m.home, [{ partner: 'sim_exchange', price: 0.4, available: 500 }]);
  relay = new AccountEventRelay({ pool: h.s.rt.pool, databaseUrl: h.s.databaseUrl, redis: h.s.rt.redis, ks: h.s.rt.ks, log: h.s.rt.log, metrics: h.s.rt.metrics, pollMs: 60_000 }).start();
}, 90_000);
afterEach(async () => h.closeClients());
afterAll(async () => {
  await relay?.stop();
  await m?.close();
  await h?.close();
});

const ORDER_FIELDS = ['type', 'router_order_id', 'partner_id', 'status', 'fill_status', 'filled_amt', 'unfilled_amt', 'avg_price', 'timestamp'].sort();
const executionKey = (): Promise<CreatedKey> =>
  createKey(h.s.rt.pool, h.s.rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 });

describe('the orders channel', () => {
  it('the owner’s orders subscriber gets order.update with the spec’s fields, its balance subscriber the order_hold debit; another account gets neither', async () => {
    const owner = await executionKey();
    const other = await executionKey();
    const mine = await h.connect(owner.api_key);
    const theirs = await h.connect(other.api_key);
    for (const c of [mine, theirs]) {
      await c.request({ action: 'subscribe', channel: 'orders' });
      await c.request({ action: 'subscribe', channel: 'balance' });
    }

    const r = await buy(h.s, owner, { orders: [paperLeg(m.home, 12)] });
    expect(r.status).toBe(200);
    const id = r.body.data.results[0].venues[0].router_order_id as string;
    const order = await mine.next((x: any) => x.type === 'order.update', 5_000);
    expect(Object.keys(order).sort()).toEqual(ORDER_FIELDS);
    expect(order).toEqual({ type: 'order.update', router_order_id: id, partner_id: 'practice', status: 'open', fill_status: 'filled', filled_amt: 12, unfilled_amt: 0, avg_price: 0.4, timestamp: r.body.meta.timestamp });
    const balance = await mine.next((x: any) => x.type === 'balance.update', 5_000);
    expect(balance).toMatchObject({ partner_id: 'practice', currency: 'ATLAS', balance: 988, cause: 'order_hold', router_order_id: id, balance_version: 2 });

    // The other account's own buy is the sentinel: by the time it arrives, the owner's had long been routed.
    await buy(h.s, other, { orders: [paperLeg(m.home, 1)] });
    const own = await theirs.next((x: any) => x.type === 'order.update', 5_000);
    expect(own.router_order_id).not.toBe(id);
    await theirs.drain(() => true, 150);
    expect(theirs.all.filter((x: any) => x.router_order_id === id)).toEqual([]);
    await mine.drain(() => true, 150);
    expect(mine.all.filter((x: any) => x.type === 'order.update').map((x: any) => x.router_order_id)).toEqual([id]);
  });
});
