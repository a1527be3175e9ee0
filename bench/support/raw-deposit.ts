/**
 * The baseline of bench/wallet.ts: a practice deposit as raw PostgreSQL with `pg`, no HTTP, no
 * Fastify, no authentication. The route does the whole deposit (the key's claim, the ledger entry,
 * its outbox event, the key's record) in one statement, flow_practice_deposit; the baseline sends
 * that same statement with the same parameters (src/store/pg/wallet.ts depositParams). Which
 * statement the route sends is not assumed: captureDepositStatements records it from one deposit
 * the real route serves and fails loudly when it is not the one replayed here. Only the way it is
 * sent may differ (RawSettings): unnamed as Flow sends it, or named (prepared once per connection).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Registry } from 'prom-client';
import { buildApp } from '../../api/rest/app.js';
import { depositAmount, depositEventBase } from '../../api/rest/account/wallet.js';
import { appContext, type Runtime } from '../../cli/runtime.js';
import { envelope } from '../../src/domain/envelope.js';
import { canonicalFingerprint, IDEMPOTENCY_TTL_MS } from '../../src/store/pg/idempotency.js';
import { depositParams, PRACTICE_DEPOSIT_SQL, type DepositResult } from '../../src/store/pg/wallet.js';
import type { Outcome } from './closed-loop.js';
import { recordingPool } from './sql-capture.js';

export const DEPOSIT_PATH = '/flow/v1/auth/account/paper/deposit';

/** The statements a served deposit sent (one: the whole deposit). */
export interface DepositStatements {
  deposit: string;
}

/** Amounts are whole cents, 0.01 to 99.99 ATLAS: exact to add up in JS, and far below the balance cap. */
export const randomCents = (): number => 1 + Math.floor(Math.random() * 9999);
export const depositBody = (cents: number): string => JSON.stringify({ amount: cents / 100 });

/**
 * Serves one deposit for `apiKey` through the real app on a pool that records every statement, and
 * returns what the deposit sent. The deposit lands like any other.
 */
export async function captureDepositStatements(rt: Runtime, apiKey: string, cents: number): Promise<DepositStatements> {
  const { pool, sent: recorded } = recordingPool(rt.config.databaseUrl);
  const built = await buildApp(appContext(rt, { pool, metrics: new Registry() }));
  try {
    const r = await built.app.inject({
      method: 'POST',
      url: DEPOSIT_PATH,
      headers: { 'x-api-key': apiKey, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      payload: depositBody(cents),
    });
    if (r.statusCode !== 201) throw new Error(`the capture deposit answered ${r.statusCode}: ${r.body}`);
  } finally {
    await built.close();
    await pool.end();
  }
  const texts = recorded.map((s) => s.text);
  // What the deposit itself sent: every statement on the account's records (authentication's key
  // lookups left out).
  const sent = texts.filter((t) => /practice|idempotency|outbox|accounts|BEGIN|COMMIT/i.test(t) && !/api_keys/.test(t));
  if (sent.length !== 1 || sent[0] !== PRACTICE_DEPOSIT_SQL) {
    throw new Error(
      `the deposit route no longer sends the one statement bench/support/raw-deposit.ts replays (${PRACTICE_DEPOSIT_SQL}); update the baseline. Captured:\n` +
        sent.map((t, i) => `  ${i + 1}. ${t.replace(/\s+/g, ' ').slice(0, 120)}`).join('\n'),
    );
  }
  return { deposit: sent[0] };
}

export interface RawSettings {
  name: string;
  /** A named statement: parsed and planned once per connection. */
  prepared: boolean;
}

export const RAW_SETTINGS: readonly RawSettings[] = [
  { name: 'raw pg, unnamed statement', prepared: false },
  { name: 'raw pg, prepared statement', prepared: true },
];

/** A pool for the raw baseline: `max` connections, as the service's pool has. */
export function rawPool(databaseUrl: string, max: number, _s: RawSettings): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * One deposit of `cents` on `account` with the route's statement and parameters, answering 'ok'
 * once committed; a refusal (key in use, a replay, no account, balance cap) answers its outcome;
 * anything else throws.
 */
export function rawDepositor(pool: pg.Pool, sql: DepositStatements, s: RawSettings): (account: string, cents: number) => Promise<Outcome> {
  return async (account, cents) => {
    const at = Date.now();
    const values = depositParams({
      routerAccountId: account,
      key: randomUUID(),
      fingerprint: canonicalFingerprint({ amount: cents / 100 }),
      amount: depositAmount(cents / 100),
      description: null,
      event: depositEventBase(account, at),
      meta: envelope(null, at).meta,
      ttlMs: IDEMPOTENCY_TTL_MS,
    });
    const { rows } = await pool.query<DepositResult>({ text: sql.deposit, values, ...(s.prepared ? { name: 'bench_wallet_deposit' } : {}) });
    const r = rows[0]!;
    return r.outcome === 'created' ? { ok: true } : { ok: false, refusal: r.outcome === 'balance_cap' ? '409 balance_cap' : r.outcome };
  };
}
