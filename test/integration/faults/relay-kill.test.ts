/**
 * Issue 10 item 7, reliability: an account-event relay SIGKILLed after its Redis append and before
 * its PostgreSQL delete (failpoint relay.after-append, in a child process) loses nothing: the rows
 * stay in the outbox, a restarted relay appends them again (a duplicate, which clients drop by
 * balance_version) and the outbox ends empty. Through the real REST deposit and the real gateway.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../../src/store/pg/keys.js';
import { EventLogReader, logKeys, type AccountLogEvent } from '../../../src/store/redis/eventlog.js';
import { ROOT } from '../../support/cli.js';
import { send } from '../../support/http.js';
import { startHarness, type Harness } from '../gateway/harness.js';
import { feedAccountEvents as feedAccountEventsOf, outboxRows as outboxRowsOf } from '../../support/account-events.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

/** Runs a relay in a child process; resolves with how it ended. */
async function runRelay(failpoint: string, batch = 500): Promise<{ signal: NodeJS.Signals | null; code: number | null; stdout: string }> {
  // `node --import tsx`, not the tsx CLI: the CLI forks a second process that SIGKILL would not reach.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/integration/faults/relay-child.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...h.s.env, FLOW_FAILPOINTS: failpoint, RELAY_BATCH: String(batch) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  const [code, signal] = (await new Promise((r) => child.once('exit', (...a) => r(a)))) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout };
}

const outboxRows = () => outboxRowsOf(h.s);
const feedAccountEvents = () => feedAccountEventsOf(h.s);

describe('an account-event relay killed between its append and its delete', () => {
  it('a deposit’s balance.update reaches the subscriber, again after the restart, and the outbox ends empty', async () => {
    const k = await createKey(h.s.rt.pool, h.s.rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test' });
    const c = await h.connect(k.api_key);
    await c.request({ action: 'subscribe', channel: 'balance' });
    const r = await send(h.s.built.app, 'POST', '/flow/v1/auth/account/paper/deposit', { amount: 42 }, { 'x-api-key': k.api_key, 'idempotency-key': randomUUID() });
    expect(r.status).toBe(201);
    expect(await outboxRows()).toBe(1);

    expect(await runRelay('relay.after-append')).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    // The append landed (the gateway delivered it); the delete never committed.
    const first = await c.next((m) => m.type === 'balance.update', 5_000);
    expect(first).toMatchObject({ balance: 1042, balance_version: 2, cause: 'wallet' });
    expect(await outboxRows()).toBe(1);

    expect(await runRelay('')).toMatchObject({ code: 0, stdout: 'drained\n' });
    const second = await c.next((m) => m.type === 'balance.update', 5_000);
    // The same event once more: at least once, and the copy is one clients drop by its version.
    expect(second).toEqual(first);
    expect(await outboxRows()).toBe(0);
    await c.drain(() => true, 150);
    expect(c.all.filter((m) => m.type === 'balance.update')).toHaveLength(2);
  }, 60_000);

  it('killed in the middle of a backlog: every row reaches the log at least once, only the killed batch twice, and the outbox ends empty', async () => {
    await h.s.rt.redis.del(logKeys(h.s.rt.ks).feed);
    const ROWS = 1_200;
    const BATCH = 100;
    await h.s.rt.pool.query(
      `INSERT INTO account_outbox (router_account_id, channel, event)
       SELECT 'acct_k' || (i % 7), 'orders', jsonb_build_object('type', 'order.update', 'router_order_id', 'ord_' || i)
         FROM generate_series(1, $1::int) AS i ORDER BY i`,
      [ROWS],
    );
    // Dies in its fourth batch: three committed, the fourth appended and not deleted.
    expect(await runRelay('relay.after-append@4', BATCH)).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    expect(await outboxRows()).toBe(ROWS - 3 * BATCH);
    expect(await feedAccountEvents()).toHaveLength(4 * BATCH);
    expect(await runRelay('', BATCH)).toMatchObject({ code: 0, stdout: 'drained\n' });
    expect(await outboxRows()).toBe(0);

    const counts = new Map<string, number>();
    for (const e of await feedAccountEvents()) {
      const id = (JSON.parse(e.event) as { router_order_id: string }).router_order_id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect(counts.size).toBe(ROWS);
    const twice = [...counts].filter(([, n]) => n === 2).map(([id]) => Number(id.slice(4)));
    expect(twice).toEqual(Array.from({ length: BATCH }, (_, i) => 3 * BATCH + 1 + i));
    expect([...counts.values()].every((n) => n <= 2)).toBe(true);
  }, 60_000);
});
