/**
 * Issue 11 item 6, exactly once: an order settler SIGKILLed in the middle of a contest's orders
 * (failpoint settle.after-order@N, in a child process, with orders in flight on other connections),
 * twice, then run to the end: every order is settled exactly once. Each paying practice order has
 * exactly one settlement_credit or refund and every wallet's balance is the sum of its ledger; each
 * paying real order has exactly one balance_ledger settlement row and one version bump; the outbox
 * holds exactly one order.settled per order and one balance.update per credit.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../../src/store/pg/keys.js';
import { recordConnection } from '../../../src/store/pg/partners.js';
import { recordContestSettlement } from '../../../src/store/pg/settlement.js';
import { ROOT } from '../../support/cli.js';
import { filledOrder, writeOrder } from '../../support/orders.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
beforeAll(async () => {
  s = await startStack({ catalog: null });
}, 60_000);
afterAll(async () => s?.close());

async function runSettler(failpoint: string, batch: number): Promise<{ signal: NodeJS.Signals | null; code: number | null; stdout: string }> {
  // `node --import tsx`, not the tsx CLI: the CLI forks a second process that SIGKILL would not reach.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/integration/faults/settle-child.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...s.env, FLOW_FAILPOINTS: failpoint, SETTLE_BATCH: String(batch) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  const [code, signal] = (await new Promise((r) => child.once('exit', (...a) => r(a)))) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout };
}

const q = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => (await s.rt.pool.query(sql, params)).rows as T[];
const settledCount = async () => (await q<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE settled_at IS NOT NULL'))[0]!.n;

describe('an order settler killed in the middle of a contest', () => {
  it('settles every order exactly once after restarts', async () => {
    const contest = 'ct_kill_001';
    const positions = ['win', 'lose', 'push'].map((r) => ({ position_hash: `${contest}:ml:${r}:0:p1:ft`, contest_id: contest, result: r as 'win' | 'lose' | 'push' }));
    const ACCOUNTS = 6;
    const PER_ACCOUNT = 50;
    const accounts: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const k = await createKey(s.rt.pool, s.rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test' });
      accounts.push(k.router_account_id);
      await recordConnection(s.rt.pool, { routerAccountId: k.router_account_id, partnerId: 'sim_exchange', credentialStatus: 'connected', reportsBalance: true, snapshot: { balance: 5_000, held: 0, ts_event: Date.now() - 60_000 } }, Date.now());
    }
    // Every fourth order real (sim_exchange, USD, with a fee), the rest practice; stakes with cents and fractional contracts.
    let n = 0;
    for (let j = 0; j < PER_ACCOUNT; j++) {
      for (const account of accounts) {
        n++;
        const p = positions[n % 3]!;
        const stake = `${1 + (n % 7)}.${String(n % 100).padStart(2, '0')}`;
        const real = n % 4 === 0;
        await writeOrder(s.rt.pool, filledOrder(account, p, { stake, shares: `${(n % 13) + 2}.123456`, price: '0.45', fee: real ? '0.05' : '0' }, real ? {} : { mode: 'paper' }));
      }
    }
    const TOTAL = ACCOUNTS * PER_ACCOUNT;
    for (const partner of ['practice', 'sim_exchange']) {
      await recordContestSettlement(s.rt.pool, { partner_id: partner, contest_id: contest, winner_participant_id: null, ts_event: Date.now(), results: positions.map(({ position_hash, result }) => ({ position_hash, result })) });
    }

    // Killed twice mid-way (after its 40th commit each time), with other orders in flight, then run to the end.
    expect(await runSettler('settle.after-order@40', 25)).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    const afterFirst = await settledCount();
    expect(afterFirst).toBeGreaterThanOrEqual(40);
    expect(afterFirst).toBeLessThan(TOTAL);
    expect(await runSettler('settle.after-order@40', 25)).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    const afterSecond = await settledCount();
    expect(afterSecond).toBeGreaterThanOrEqual(afterFirst + 40);
    expect(afterSecond).toBeLessThan(TOTAL);
    expect(await runSettler('', 25)).toMatchObject({ code: 0, stdout: 'drained\n' });
    expect(await settledCount()).toBe(TOTAL);

    // Each order: the result of its position, the formula's figures, closed.
    const wrong = await q(
      `SELECT o.router_order_id FROM orders o
        WHERE o.status <> 'closed' OR o.result IS DISTINCT FROM (CASE WHEN o.position_hash LIKE '%:win:%' THEN 'win' WHEN o.position_hash LIKE '%:lose:%' THEN 'lose' ELSE 'push' END)
           OR o.winnings <> (CASE o.result WHEN 'win' THEN o.filled_shares WHEN 'lose' THEN 0 ELSE o.filled_notional END)
           OR o.net_winnings <> o.winnings - o.fee`,
    );
    expect(wrong).toEqual([]);

    // Practice: exactly one settlement entry per paying order, none for a loss, each of the order's winnings.
    const practiceMismatch = await q(
      `SELECT o.router_order_id, count(l.ledger_id) AS entries
         FROM orders o LEFT JOIN practice_ledger l ON l.router_order_id = o.router_order_id AND l.type IN ('settlement_credit', 'refund')
        WHERE o.mode = 'paper'
        GROUP BY o.router_order_id, o.winnings, o.result
       HAVING count(l.ledger_id) <> (CASE WHEN o.winnings > 0 THEN 1 ELSE 0 END)
           OR coalesce(sum(l.amount), 0) <> o.winnings
           OR bool_or(l.type <> (CASE o.result WHEN 'win' THEN 'settlement_credit' ELSE 'refund' END))`,
    );
    expect(practiceMismatch).toEqual([]);
    // Every wallet: the balance is the sum of its ledger, and what the orders say it should be.
    const wallets = await q<{ router_account_id: string; last: string; sum: string; expected: string }>(
      `SELECT a.router_account_id,
              (SELECT balance_after::text FROM practice_ledger l WHERE l.router_account_id = a.router_account_id ORDER BY seq DESC LIMIT 1) AS last,
              (SELECT sum(amount)::text FROM practice_ledger l WHERE l.router_account_id = a.router_account_id) AS sum,
              (SELECT (1000 - sum(filled_notional) + sum(winnings))::text FROM orders o WHERE o.router_account_id = a.router_account_id AND o.mode = 'paper') AS expected
         FROM unnest($1::text[]) AS a(router_account_id)`,
      [accounts],
    );
    expect(wallets).toHaveLength(ACCOUNTS);
    for (const w of wallets) {
      expect(w.last).toBe(w.sum);
      expect(Number(w.last)).toBe(Number(w.expected));
    }

    // Real: exactly one settlement row per paying order, of its winnings; the version bumped once each.
    const realMismatch = await q(
      `SELECT o.router_order_id FROM orders o LEFT JOIN balance_ledger b ON b.router_order_id = o.router_order_id AND b.kind = 'settlement'
        WHERE o.mode = 'real' GROUP BY o.router_order_id, o.winnings
       HAVING count(b.entry_id) <> (CASE WHEN o.winnings > 0 THEN 1 ELSE 0 END) OR coalesce(sum(b.amount), 0) <> o.winnings`,
    );
    expect(realMismatch).toEqual([]);
    const versions = await q<{ v: number; rows: number }>(
      `SELECT ap.balance_version::int AS v, (SELECT count(*)::int FROM balance_ledger b WHERE b.account_partner_id = ap.account_partner_id AND b.kind = 'settlement') AS rows
         FROM account_partners ap WHERE ap.router_account_id = ANY($1::text[])`,
      [accounts],
    );
    // 1: the connect's snapshot.
    for (const v of versions) expect(v.v).toBe(1 + v.rows);

    // Events, in the outbox (no relay runs here): one order.settled per order, one balance.update per paying order.
    const settledEvents = await q<{ id: string; n: number }>(
      "SELECT event->>'router_order_id' AS id, count(*)::int AS n FROM account_outbox WHERE event->>'type' = 'order.settled' GROUP BY 1",
    );
    expect(settledEvents).toHaveLength(TOTAL);
    expect(settledEvents.every((e) => e.n === 1)).toBe(true);
    const balanceEvents = await q<{ n: number }>("SELECT count(*)::int AS n FROM account_outbox WHERE event->>'type' = 'balance.update' AND event->>'cause' = 'settlement'");
    const paying = await q<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE winnings > 0');
    expect(balanceEvents[0]!.n).toBe(paying[0]!.n);
    expect(await q("SELECT 1 FROM contest_settlements WHERE pending")).toEqual([]);
  }, 120_000);
});
