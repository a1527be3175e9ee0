/**
 * Issue 10 item 7: the private channels through the durable event log. A practice deposit over REST
 * writes its balance.update to the PostgreSQL outbox; the account-event relay moves it into the
 * event log; the real gateway routes it over WebSocket to the subscribers of that account only.
 * The relay polls once a minute here, so a delivery within seconds is its NOTIFY wake-up at work.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountEventRelay } from '../../../pipelines/account-events/relay.js';
import { newId } from '../../../src/ids.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { enqueueAccountEvent } from '../../../src/store/pg/outbox.js';
import { inTransaction } from '../../../src/store/pg/pool.js';
import { get, send } from '../../support/http.js';
import { eventually, startHarness, type Harness } from '../gateway/harness.js';

let h: Harness;
let relay: AccountEventRelay;

beforeAll(async () => {
  h = await startHarness();
  relay = new AccountEventRelay({ pool: h.s.rt.pool, databaseUrl: h.s.databaseUrl, redis: h.s.rt.redis, ks: h.s.rt.ks, log: h.s.rt.log, metrics: h.s.rt.metrics, pollMs: 60_000 }).start();
});
afterEach(async () => h.closeClients());
afterAll(async () => {
  await relay?.stop();
  await h?.close();
});

const BALANCE_FIELDS = ['type', 'account_partner_id', 'partner_id', 'currency', 'balance', 'venue_balance', 'pending', 'balance_version', 'balance_as_of', 'cause', 'router_order_id', 'timestamp'];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const executionKey = (plan: 'scale' | 'organization' = 'scale', workspaceId?: string) =>
  createKey(h.s.rt.pool, h.s.rt.gate, { plan, keyType: 'execution', environment: 'test', workspaceId, rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 });

async function deposit(k: CreatedKey, amount: number, headers: Record<string, string> = {}) {
  const r = await send(h.s.built.app, 'POST', '/flow/v1/auth/account/paper/deposit', { amount }, { 'x-api-key': k.api_key, 'idempotency-key': randomUUID(), ...headers });
  expect(r.status).toBe(201);
  return r.body.data as { balance: number; svc_ledger_id: string };
}

const outboxRows = async () => Number((await h.s.rt.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM account_outbox')).rows[0]!.n);
const isBalance = (accountPartnerId: string) => (m: { type: string; account_partner_id?: string }) => m.type === 'balance.update' && m.account_partner_id === accountPartnerId;

describe('balance through the event log', () => {
  it('a practice deposit reaches the account’s balance subscriber as balance.update with every spec field; another account’s subscriber never gets it', async () => {
    const mine = await executionKey();
    const theirs = await executionKey();
    const a = await h.connect(mine.api_key);
    const b = await h.connect(theirs.api_key);
    for (const c of [a, b]) expect(await c.request({ action: 'subscribe', channel: 'balance' })).toEqual({ type: 'subscribed', channel: 'balance', contest_ids: null });

    const before = Date.now();
    const d = await deposit(mine, 250.25);
    const ev = await a.next(isBalance(`ap_practice_${mine.router_account_id}`), 5_000);
    const tookMs = Date.now() - before;
    const entry = (await get(h.s.built.app, '/flow/v1/auth/account/paper/ledger', { 'x-api-key': mine.api_key })).body.data.entries[0];
    expect(entry.ledger_id).toBe(d.svc_ledger_id);

    // Exactly the spec's fields: nothing missing, nothing added (no event_id: orders and balance have no resume).
    expect(Object.keys(ev).sort()).toEqual([...BALANCE_FIELDS].sort());
    expect(ev).toEqual({
      type: 'balance.update',
      account_partner_id: `ap_practice_${mine.router_account_id}`,
      partner_id: 'practice',
      currency: 'ATLAS',
      balance: 1250.25,
      venue_balance: 1250.25,
      pending: 0,
      balance_version: 2,
      balance_as_of: entry.created_at,
      cause: 'wallet',
      router_order_id: null,
      timestamp: expect.stringMatching(ISO_MS),
    });
    expect(ev.balance_as_of).toMatch(ISO_MS);
    // Woken by NOTIFY, not by its once-a-minute poll.
    expect(tookMs).toBeLessThan(3_000);

    // The other account's own deposit is a sentinel: by the time b has it, mine had long been routed.
    await deposit(theirs, 10);
    const own = await b.next(isBalance(`ap_practice_${theirs.router_account_id}`), 5_000);
    expect(own).toMatchObject({ balance: 1010, balance_version: 2 });
    await a.drain(() => true, 100);
    expect(b.all.filter((m) => m.type === 'balance.update' && m.account_partner_id !== own.account_partner_id)).toEqual([]);
    expect(a.all.filter((m) => m.type === 'balance.update' && m.account_partner_id !== ev.account_partner_id)).toEqual([]);
    // The relay deletes in the transaction it appended in, which may commit just after the delivery.
    await eventually(async () => expect(await outboxRows()).toBe(0));
  });

  it('versions increase with each deposit, and the latest version carries the balance REST reads', async () => {
    const k = await executionKey();
    const c = await h.connect(k.api_key);
    await c.request({ action: 'subscribe', channel: 'balance' });
    for (const amount of [1, 2.5, 3]) await deposit(k, amount);
    const got = [await c.next(), await c.next(), await c.next()];
    expect(got.map((m) => m.balance_version)).toEqual([2, 3, 4]);
    expect(got.map((m) => m.balance)).toEqual([1001, 1003.5, 1006.5]);
    expect((await get(h.s.built.app, '/flow/v1/auth/account/paper', { 'x-api-key': k.api_key })).body.data.balance).toBe(got[2]!.balance);
  });

  it('an organization key sees its sub-account’s deposit with all: true and with account_ids, and only what it named', async () => {
    const org = await executionKey('organization');
    const outsider = await executionKey();
    const sub = newId('acct');
    await h.s.rt.pool.query("INSERT INTO accounts (router_account_id, workspace_id, environment, external_user_id) VALUES ($1, $2, 'test', 'user-9')", [sub, org.workspace_id]);
    const all = await h.connect(org.api_key);
    const named = await h.connect(org.api_key);
    const other = await h.connect(outsider.api_key);
    expect(await all.request({ action: 'subscribe', channel: 'balance', all: true })).toMatchObject({ type: 'subscribed', all: true });
    expect(await named.request({ action: 'subscribe', channel: 'balance', account_ids: ['user-9'] })).toMatchObject({ type: 'subscribed', account_ids: ['user-9'] });
    await other.request({ action: 'subscribe', channel: 'balance' });

    await deposit(org, 5, { 'x-service-account': 'user-9' });
    await deposit(org, 7);
    await deposit(outsider, 1);
    expect(await all.next()).toMatchObject({ account_partner_id: `ap_practice_${sub}`, balance: 1005 });
    expect(await all.next()).toMatchObject({ account_partner_id: `ap_practice_${org.router_account_id}`, balance: 1007 });
    expect(await named.next()).toMatchObject({ account_partner_id: `ap_practice_${sub}`, balance: 1005 });
    expect(await other.next()).toMatchObject({ account_partner_id: `ap_practice_${outsider.router_account_id}` });
    await all.drain(() => true, 150);
    expect(named.all.filter((m) => m.type === 'balance.update')).toHaveLength(1);
    expect(all.all.filter((m) => m.type === 'balance.update')).toHaveLength(2);
    expect(other.all.filter((m) => m.type === 'balance.update')).toHaveLength(1);
  });

  it('orders take the same path: an order event in the outbox reaches the account’s orders subscriber, not its balance subscription', async () => {
    const k = await executionKey();
    const c = await h.connect(k.api_key);
    await c.request({ action: 'subscribe', channel: 'orders' });
    await c.request({ action: 'subscribe', channel: 'balance' });
    const order = { type: 'order.update', router_order_id: 'ord_relay_1', partner_id: 'practice', status: 'open', fill_status: 'unfilled', filled_amt: 0, unfilled_amt: 10, avg_price: 0, timestamp: new Date().toISOString() };
    await inTransaction(h.s.rt.pool, (tx) => enqueueAccountEvent(tx, k.router_account_id, 'orders', order));
    expect(await c.next(undefined, 5_000)).toEqual(order);
    await c.drain(() => true, 100);
    expect(c.all.filter((m) => m.type === 'balance.update')).toEqual([]);
  });
});
