/**
 * The account-event relay against real PostgreSQL and Redis: it drains a backlog of thousands in
 * bounded batches, two relays together neither double nor reorder an account's events, an idle
 * relay wakes on NOTIFY (also after its LISTEN session was dropped, and polls when it cannot
 * listen), a failing append deletes nothing and is retried with backoff, and the feed it appends
 * to stays capped.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccountEventRelay, type AccountEventRelayOptions } from '../../../pipelines/account-events/relay.js';
import { LISTEN_RETRY_MS } from '../../../src/store/pg/listen.js';
import { claimAccountEvents, enqueueAccountEvent } from '../../../src/store/pg/outbox.js';
import { inTransaction } from '../../../src/store/pg/pool.js';
import { createRedis } from '../../../src/store/redis/client.js';
import { AccountEventLog, EventLogReader, logKeys, type AccountLogEvent } from '../../../src/store/redis/eventlog.js';
import { eventually, sleep } from '../gateway/harness.js';
import { REDIS_URL, startStack, type TestStack } from '../../support/stack.js';
import { feedAccountEvents as feedAccountEventsOf, outboxRows as outboxRowsOf } from '../../support/account-events.js';

let s: TestStack;
const relays: AccountEventRelay[] = [];
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  s = await startStack({ catalog: null });
});
afterAll(async () => {
  for (const r of relays) await r.stop();
  await s?.close();
});
beforeEach(async () => {
  for (const r of relays.splice(0)) await r.stop();
  await s.rt.pool.query('DELETE FROM account_outbox');
  await s.rt.redis.del(logKeys(s.rt.ks).feed);
});

function startRelay(o: Partial<AccountEventRelayOptions> = {}): AccountEventRelay {
  const r = new AccountEventRelay({ pool: s.rt.pool, databaseUrl: s.databaseUrl, redis: s.rt.redis, ks: s.rt.ks, log: silent, ...o }).start();
  relays.push(r);
  return r;
}

const outboxRows = () => outboxRowsOf(s);
const feedAccountEvents = () => feedAccountEventsOf(s);

const balanceEvent = (account: string, version: number) => ({ type: 'balance.update', account_partner_id: `ap_practice_${account}`, balance_version: version });

describe('the account-event relay', () => {
  it('drains a backlog of 5,000 rows in bounded batches; two relays double nothing and keep each account’s order', async () => {
    const ACCOUNTS = 10;
    const PER_ACCOUNT = 500;
    // Interleaved accounts, each with versions 1..500 in seq order (no NOTIFY: the relays find them on start).
    await s.rt.pool.query(
      `INSERT INTO account_outbox (router_account_id, channel, event)
       SELECT 'acct_bl_' || (i % $1::int), 'balance',
              jsonb_build_object('type', 'balance.update', 'account_partner_id', 'ap_practice_acct_bl_' || (i % $1::int), 'balance_version', i / $1::int + 1)
         FROM generate_series(0, $1::int * $2::int - 1) AS i ORDER BY i`,
      [ACCOUNTS, PER_ACCOUNT],
    );
    expect(await outboxRows()).toBe(ACCOUNTS * PER_ACCOUNT);
    const metrics = new Registry();
    const a = startRelay({ batchSize: 200, metrics });
    const b = startRelay({ batchSize: 200, metrics });
    await eventually(async () => expect(await outboxRows()).toBe(0), 30_000);

    expect(a.stats.relayed + b.stats.relayed).toBe(ACCOUNTS * PER_ACCOUNT);
    expect(Math.max(a.stats.largestBatch, b.stats.largestBatch)).toBeLessThanOrEqual(200);
    expect(a.stats.batches + b.stats.batches).toBeGreaterThanOrEqual((ACCOUNTS * PER_ACCOUNT) / 200);
    const events = await feedAccountEvents();
    expect(events).toHaveLength(ACCOUNTS * PER_ACCOUNT);
    const versions = new Map<string, number[]>();
    for (const e of events) {
      expect(e.channel).toBe('balance');
      const v = JSON.parse(e.event) as { balance_version: number; account_partner_id: string };
      expect(v.account_partner_id).toBe(`ap_practice_${e.account_id}`);
      versions.set(e.account_id, [...(versions.get(e.account_id) ?? []), v.balance_version]);
    }
    expect(versions.size).toBe(ACCOUNTS);
    const inOrder = Array.from({ length: PER_ACCOUNT }, (_, i) => i + 1);
    for (const [account, vs] of versions) expect(vs, account).toEqual(inOrder);
    const relayed = (await metrics.getSingleMetric('flow_account_events_relayed_total')!.get()).values;
    expect(relayed).toEqual([expect.objectContaining({ labels: { channel: 'balance' }, value: ACCOUNTS * PER_ACCOUNT })]);
  }, 60_000);

  it('while one relay holds some of an account’s rows, another takes none of that account’s (so it cannot append them out of order)', async () => {
    for (const [account, v] of [['acct_x', 1], ['acct_x', 2], ['acct_x', 3], ['acct_y', 1]] as const) {
      await inTransaction(s.rt.pool, (tx) => enqueueAccountEvent(tx, account, 'balance', balanceEvent(account, v)));
    }
    const c1 = await s.rt.pool.connect();
    const c2 = await s.rt.pool.connect();
    try {
      await c1.query('BEGIN');
      const first = await claimAccountEvents(c1, 2);
      expect(first.map((r) => [r.router_account_id, JSON.parse(r.event).balance_version])).toEqual([['acct_x', 1], ['acct_x', 2]]);
      await c2.query('BEGIN');
      const second = await claimAccountEvents(c2, 10);
      // acct_x's third row is free of row locks, but its account is held: skipped.
      expect(second.map((r) => [r.router_account_id, JSON.parse(r.event).balance_version])).toEqual([['acct_y', 1]]);
      await c2.query('COMMIT');
      await c1.query('ROLLBACK');
      // Once the holder is done, acct_x's rows are free again, oldest first.
      await c2.query('BEGIN');
      expect((await claimAccountEvents(c2, 10)).map((r) => JSON.parse(r.event).balance_version)).toEqual([1, 2, 3, 1]);
      await c2.query('ROLLBACK');
    } finally {
      c1.release();
      c2.release();
    }
  });

  it('an idle relay wakes on the NOTIFY of a committed enqueue, not on its poll; a rolled-back one sends nothing', async () => {
    const r = startRelay({ pollMs: 60_000 });
    await sleep(300); // its first look found nothing: it is asleep on a one-minute poll
    await inTransaction(s.rt.pool, async (tx) => {
      await enqueueAccountEvent(tx, 'acct_rb', 'balance', balanceEvent('acct_rb', 1));
      throw new Error('roll back');
    }).catch(() => undefined);
    const t0 = Date.now();
    await inTransaction(s.rt.pool, (tx) => enqueueAccountEvent(tx, 'acct_n', 'orders', { type: 'order.update', router_order_id: 'o1' }));
    await eventually(async () => expect(await feedAccountEvents()).toHaveLength(1), 5_000, 10);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(await feedAccountEvents()).toEqual([{ account_id: 'acct_n', channel: 'orders', event: '{"type":"order.update","router_order_id":"o1"}' }]);
    await eventually(async () => expect(await outboxRows()).toBe(0));
    expect(r.stats.relayed).toBe(1);
  });

  it('a LISTEN session that PostgreSQL drops is opened again: the idle relay still wakes on NOTIFY', async () => {
    const r = startRelay({ pollMs: 60_000 });
    await sleep(300);
    const killed = await s.rt.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`);
    expect(killed.rowCount).toBe(1);
    await sleep(LISTEN_RETRY_MS + 500);
    const t0 = Date.now();
    await inTransaction(s.rt.pool, (tx) => enqueueAccountEvent(tx, 'acct_l', 'balance', balanceEvent('acct_l', 1)));
    await eventually(async () => expect(await feedAccountEvents()).toHaveLength(1), 5_000, 10);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(r.stats.errors).toBe(0);
  });

  it('without LISTEN the slow poll still moves rows (a missed notification costs at most one poll)', async () => {
    startRelay({ listen: false, pollMs: 200 });
    await sleep(100);
    await inTransaction(s.rt.pool, (tx) => enqueueAccountEvent(tx, 'acct_p', 'balance', balanceEvent('acct_p', 7)));
    await eventually(async () => expect(await feedAccountEvents()).toHaveLength(1), 3_000);
    await eventually(async () => expect(await outboxRows()).toBe(0));
  });

  it('while Redis refuses the append nothing is deleted and retries back off; once Redis answers, every row is relayed once', async () => {
    const redis = createRedis(REDIS_URL, { name: 'flow-test-relay' });
    await redis.ping();
    redis.disconnect(); // closed for good until connect(): every append fails at once
    const r = startRelay({ redis, pollMs: 60_000, retryBaseMs: 100, retryMaxMs: 400 });
    for (let v = 1; v <= 3; v++) await inTransaction(s.rt.pool, (tx) => enqueueAccountEvent(tx, 'acct_r', 'balance', balanceEvent('acct_r', v)));
    await sleep(1_000);
    // Backoff: 100, 200, 400, 400 ms... a handful of attempts in a second, not a busy loop.
    expect(r.stats.errors).toBeGreaterThanOrEqual(2);
    expect(r.stats.errors).toBeLessThanOrEqual(6);
    expect(await outboxRows()).toBe(3);
    expect(await feedAccountEvents()).toEqual([]);
    await redis.connect();
    await eventually(async () => expect(await outboxRows()).toBe(0), 5_000);
    const vs = (await feedAccountEvents()).map((e) => (JSON.parse(e.event) as { balance_version: number }).balance_version);
    expect(vs).toEqual([1, 2, 3]);
    await r.stop();
    redis.disconnect();
  });

  it('the feed stays capped whatever the relays append', async () => {
    const log = new AccountEventLog(s.rt.redis, s.rt.ks, { feedMax: 300 });
    const batch = Array.from({ length: 250 }, (_, i) => ({ account_id: 'acct_cap', channel: 'balance' as const, event: `{"n":${i}}` }));
    for (let i = 0; i < 8; i++) expect(await log.append(batch)).toBe(250);
    const len = await s.rt.redis.xlen(logKeys(s.rt.ks).feed);
    // MAXLEN ~ trims whole radix-tree nodes (100 entries by default): at most one node over the cap.
    expect(len).toBeGreaterThanOrEqual(300);
    expect(len).toBeLessThan(500);
  });
});
