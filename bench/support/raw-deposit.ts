/**
 * The baseline of bench/wallet.ts: a practice deposit as one raw PostgreSQL transaction with `pg`,
 * no HTTP, no Fastify, no authentication. Its statements are not copied from the store: they are
 * captured from one deposit the real route serves (captureDepositStatements), so the baseline runs
 * exactly the SQL Flow runs, in the same order, and fails loudly when the route's transaction changes.
 * Only the way they are sent may differ (RawSettings): unnamed as Flow sends them, named (prepared
 * once per connection), or named and pipelined (two round trips instead of nine).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Registry } from 'prom-client';
import { buildApp } from '../../api/rest/app.js';
import { depositAmount, depositBalanceEvent, depositResponseBody } from '../../api/rest/account/wallet.js';
import { appContext, type Runtime } from '../../cli/runtime.js';
import { newId } from '../../src/ids.js';
import { canonicalFingerprint, IDEMPOTENCY_TTL_MS } from '../../src/store/pg/idempotency.js';
import { createPool } from '../../src/store/pg/pool.js';
import { PRACTICE_BALANCE_CAP, PRACTICE_OPENING_BALANCE, toEntry, type EntryRow } from '../../src/store/pg/wallet.js';
import type { Outcome } from './closed-loop.js';

export const DEPOSIT_PATH = '/flow/v1/auth/account/paper/deposit';

/** The deposit transaction's statements, in the order the route sends them, each recognized by its text. */
const STEPS = [
  ['begin', /^BEGIN$/],
  ['keyLock', /pg_try_advisory_xact_lock/],
  ['priorRecord', /^SELECT .* FROM idempotency_keys/s],
  ['accountLock', /FROM accounts .*FOR NO KEY UPDATE/s],
  ['openWallet', /INSERT INTO practice_ledger .*'opening_balance'.*ON CONFLICT DO NOTHING/s],
  ['appendEntry', /^WITH last AS .*INSERT INTO practice_ledger/s],
  ['outboxEvent', /^INSERT INTO account_outbox/],
  ['record', /^INSERT INTO idempotency_keys/],
  ['commit', /^COMMIT$/],
] as const;

export type DepositStatements = Record<(typeof STEPS)[number][0], string>;

/** Amounts are whole cents, 0.01 to 99.99 ATLAS: exact to add up in JS, and far below the balance cap. */
export const randomCents = (): number => 1 + Math.floor(Math.random() * 9999);
export const depositBody = (cents: number): string => JSON.stringify({ amount: cents / 100 });

/**
 * Serves one deposit for `apiKey` through the real app on a pool that records every statement, and
 * returns the statements of its transaction (BEGIN to COMMIT). The deposit lands like any other.
 */
export async function captureDepositStatements(rt: Runtime, apiKey: string, cents: number): Promise<DepositStatements> {
  const texts: string[] = [];
  const pool = createPool(rt.config.databaseUrl, 1);
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      texts.push(typeof a[0] === 'string' ? a[0] : (a[0] as { text: string }).text);
      return query(...a);
    };
  });
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
  const first = texts.indexOf('BEGIN');
  const tx = texts.slice(first, texts.indexOf('COMMIT', first) + 1).map((t) => t.trim());
  const recognized = tx.length === STEPS.length && STEPS.every(([, re], i) => re.test(tx[i]!));
  if (first < 0 || !recognized) {
    throw new Error(
      `the deposit route's transaction is not the one bench/support/raw-deposit.ts replays (${STEPS.map(([n]) => n).join(', ')}); ` +
        `update the baseline. Captured:\n${tx.map((t, i) => `  ${i + 1}. ${t.replace(/\s+/g, ' ').slice(0, 120)}`).join('\n')}`,
    );
  }
  return Object.fromEntries(STEPS.map(([name], i) => [name, tx[i]!])) as DepositStatements;
}

export interface RawSettings {
  name: string;
  /** Named statements: parsed and planned once per connection. */
  prepared: boolean;
  /** pg's pipeline mode: the statements up to the ledger entry in one round trip, the rest in a second. */
  pipelined: boolean;
}

export const RAW_SETTINGS: readonly RawSettings[] = [
  { name: 'raw pg, unnamed statements', prepared: false, pipelined: false },
  { name: 'raw pg, prepared statements', prepared: true, pipelined: false },
  { name: 'raw pg, prepared + pipelined', prepared: true, pipelined: true },
];

/** A pool for the raw baseline: `max` connections, as the service's pool has. */
export function rawPool(databaseUrl: string, max: number, s: RawSettings): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, pipeline: s.pipelined });
  pool.on('error', () => undefined);
  return pool;
}

class Refusal extends Error {}

type Landed = EntryRow & { seq: number };

/**
 * One deposit of `cents` on `account` as the route does it (same statements, same checks, same
 * event and record), answering 'ok' once committed; a refusal (key in use, a replay, no account,
 * balance cap) rolls back and answers its status; anything else throws.
 */
export function rawDepositor(pool: pg.Pool, sql: DepositStatements, s: RawSettings): (account: string, cents: number) => Promise<Outcome> {
  const q = (step: keyof DepositStatements, values: unknown[]): pg.QueryConfig => ({ text: sql[step], values, ...(s.prepared ? { name: `bench_wallet_${step}` } : {}) });
  return async (account, cents) => {
    const key = randomUUID();
    const amount = depositAmount(cents / 100);
    const fingerprint = canonicalFingerprint({ amount: cents / 100 });
    const lockQ = q('keyLock', [`${account}/${key}`]);
    const priorQ = q('priorRecord', [account, key]);
    const accountQ = q('accountLock', [account]);
    const openQ = q('openWallet', [account, newId('svl'), PRACTICE_OPENING_BALANCE]);
    const appendQ = q('appendEntry', [account, newId('svl'), 'deposit', amount, null, null, String(PRACTICE_BALANCE_CAP)]);
    const check = (lock: pg.QueryResult, prior: pg.QueryResult, acct: pg.QueryResult, appended: pg.QueryResult<Landed>): Landed => {
      if (!(lock.rows[0] as { ok: boolean }).ok) throw new Refusal('409 idempotency_key_in_use');
      if (prior.rowCount) throw new Refusal('409 a record for a fresh key');
      if (!acct.rowCount) throw new Refusal('404 not_found');
      if (!appended.rows[0]) throw new Refusal('409 balance_cap');
      return appended.rows[0];
    };
    const rest = (landed: Landed): pg.QueryConfig[] => {
      const { seq, ...row } = landed;
      const entry = toEntry(row);
      const at = Date.now();
      const event = depositBalanceEvent(account, { entry, seq }, at);
      return [
        q('outboxEvent', [account, 'balance', JSON.stringify(event)]),
        q('record', [account, key, 'paper.deposit', fingerprint, 201, depositResponseBody(entry, at), IDEMPOTENCY_TTL_MS]),
      ];
    };
    const client = await pool.connect();
    let open = false;
    try {
      if (s.pipelined) {
        // Sent together; what the route decides between statements is decided on their results, and a
        // refusal rolls back what was sent past it (the same outcome, the same rows).
        open = true;
        const [, lock, prior, acct, , appended] = await settled([client.query(sql.begin), client.query(lockQ), client.query(priorQ), client.query(accountQ), client.query(openQ), client.query<Landed>(appendQ)]);
        const [outbox, record] = rest(check(lock!, prior!, acct!, appended as pg.QueryResult<Landed>));
        await settled([client.query(outbox!), client.query(record!), client.query(sql.commit)]);
      } else {
        await client.query(sql.begin);
        open = true;
        const lock = await client.query(lockQ);
        const prior = await client.query(priorQ);
        const acct = await client.query(accountQ);
        await client.query(openQ);
        const landed = check(lock, prior, acct, await client.query<Landed>(appendQ));
        for (const stmt of rest(landed)) await client.query(stmt);
        await client.query(sql.commit);
      }
      open = false;
      return { ok: true };
    } catch (err) {
      // In pipeline mode a COMMIT after a failed statement ends the transaction quietly (as ROLLBACK);
      // a ROLLBACK with none open is only a notice.
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      if (err instanceof Refusal) return { ok: false, refusal: err.message };
      throw err;
    } finally {
      client.release();
    }
  };
}

/** Waits for every pipelined query (none may be left running on the connection), then throws the first failure. */
async function settled(queries: Promise<pg.QueryResult>[]): Promise<pg.QueryResult[]> {
  const results = await Promise.allSettled(queries);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<pg.QueryResult>).value);
}
