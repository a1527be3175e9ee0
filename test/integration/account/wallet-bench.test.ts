/**
 * The baseline and the checks of bench/wallet.ts against real PostgreSQL: the raw side sends the
 * statement captured from the route and lands deposits the route's way under every setting (concurrently on shared accounts), refusals write nothing, and the ledger checks agree
 * with a correct tally and catch a stray entry, a missed count and a wrong sum.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureDepositStatements, RAW_SETTINGS, rawDepositor, rawPool, type DepositStatements } from '../../../bench/support/raw-deposit.js';
import { checkLedgers, AmountTally, tamperLedger } from '../../../bench/support/wallet-ledgers.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { PRACTICE_DEPOSIT_SQL } from '../../../src/store/pg/wallet.js';
import { send } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let statements: DepositStatements;
const pools: { end(): Promise<void> }[] = [];
const key = () => createKey(s.rt.pool, s.rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 });
beforeAll(async () => {
  s = await startStack({ catalog: null });
  statements = await captureDepositStatements(s.rt, (await key()).api_key, 123);
});
afterAll(async () => {
  for (const p of pools) await p.end();
  await s?.close();
});
const depositorFor = (i: number) => {
  const pool = rawPool(s.databaseUrl, 3, RAW_SETTINGS[i]!);
  pools.push(pool);
  return rawDepositor(pool, statements, RAW_SETTINGS[i]!);
};

describe('bench wallet: the raw baseline and the ledger checks', () => {
  it('captures the route’s one statement: the whole deposit', () => {
    expect(statements.deposit).toBe(PRACTICE_DEPOSIT_SQL);
  });

  it('lands raw deposits (every setting, concurrently on shared accounts) and Flow deposits alike; the checks agree with the tally', async () => {
    const a = await key();
    const b = await key();
    const tally = new AmountTally();
    for (let i = 0; i < RAW_SETTINGS.length; i++) {
      const deposit = depositorFor(i);
      const outs = await Promise.all(
        Array.from({ length: 24 }, async (_, n) => {
          const account = (n % 2 ? a : b).router_account_id;
          const cents = 1 + n * 37;
          const out = await deposit(account, cents);
          if (out.ok) tally.add(account, cents);
          return out;
        }),
      );
      expect(outs.every((o) => o.ok)).toBe(true);
    }
    const r = await send(s.built.app, 'POST', '/flow/v1/auth/account/paper/deposit', { amount: 0.07 }, { 'x-api-key': a.api_key, 'idempotency-key': crypto.randomUUID() });
    expect(r.status).toBe(201);
    tally.add(a.router_account_id, 7);
    expect(tally.total).toBe(RAW_SETTINGS.length * 24 + 1);

    const ok = await checkLedgers(s.rt.pool, [a.router_account_id, b.router_account_id], tally);
    expect(ok).toEqual({ accounts: 2, inconsistent: [], miscounted: [], misadded: [], unrecorded: [] });
    // The raw side's events carry the ledger's seq as balance_version, as the route's do.
    const { rows } = await s.rt.pool.query<{ v: number }>("SELECT (event->>'balance_version')::int AS v FROM account_outbox WHERE router_account_id = $1 ORDER BY seq", [b.router_account_id]);
    expect(rows.map((x) => x.v)).toEqual(Array.from({ length: RAW_SETTINGS.length * 12 }, (_, i) => i + 2));

    // A tally one deposit short (account a) or a cent off (account b) is caught, on that account only.
    const ta = tally.of(a.router_account_id);
    const tb = tally.of(b.router_account_id);
    const wrong = new AmountTally();
    for (let n = 0; n < ta.count - 1; n++) wrong.add(a.router_account_id, n === 0 ? ta.cents : 0);
    for (let n = 0; n < tb.count; n++) wrong.add(b.router_account_id, n === 0 ? tb.cents + 1 : 0);
    const off = await checkLedgers(s.rt.pool, [a.router_account_id, b.router_account_id], wrong);
    expect(off.miscounted).toEqual([expect.stringContaining(a.router_account_id)]);
    expect(off.unrecorded).toEqual([expect.stringContaining(a.router_account_id)]);
    expect(off.misadded).toEqual([expect.stringContaining(b.router_account_id)]);
    expect(off.inconsistent).toEqual([]);

    // A stray entry with a wrong balance_after fails the ledger, the count and the sum.
    await tamperLedger(s.rt.pool, a.router_account_id);
    const tampered = await checkLedgers(s.rt.pool, [a.router_account_id, b.router_account_id], tally);
    expect(tampered.inconsistent).toHaveLength(1);
    expect(tampered.miscounted).toHaveLength(1);
    expect(tampered.misadded).toHaveLength(1);
    expect(tampered.inconsistent[0]).toContain(a.router_account_id);
  });

  it('refuses a deposit over the balance cap under every setting and writes nothing', async () => {
    const k = await key();
    const account = k.router_account_id;
    await s.rt.pool.query(
      `INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after) VALUES ($1, 1, 'svl_cap_open', 'opening_balance', 1000, 1000),
              ($1, 2, 'svl_cap_adj', 'adjustment', 9998999.99, 9999999.99)`,
      [account],
    );
    for (let i = 0; i < RAW_SETTINGS.length; i++) {
      expect(await depositorFor(i)(account, 2)).toEqual({ ok: false, refusal: '409 balance_cap' });
    }
    const counts = await s.rt.pool.query<{ l: number; o: number; k: number }>(
      `SELECT (SELECT count(*) FROM practice_ledger WHERE router_account_id = $1) AS l,
              (SELECT count(*) FROM account_outbox WHERE router_account_id = $1) AS o,
              (SELECT count(*) FROM idempotency_keys WHERE router_account_id = $1) AS k`,
      [account],
    );
    expect(counts.rows[0]).toEqual({ l: 2, o: 0, k: 0 });
  });

  it('writes nothing for an account that does not exist', async () => {
    for (let i = 0; i < RAW_SETTINGS.length; i++) {
      const out = await depositorFor(i)('acct_missing', 5).catch((e: Error) => ({ ok: false, refusal: e.message }));
      expect(out.ok).toBe(false);
    }
    const { rows } = await s.rt.pool.query<{ n: number }>("SELECT count(*) AS n FROM practice_ledger WHERE router_account_id = 'acct_missing'");
    expect(rows[0]!.n).toBe(0);
  });
});
