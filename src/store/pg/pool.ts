/** PostgreSQL: the system of record. Creates the database when missing, then migrates. */
import pg from 'pg';
import type { Logger } from '../../log.js';
import { MIGRATIONS } from './migrations.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// Return int8/numeric as numbers where the values are ours and bounded (counts, money with 2-6 dp).
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

const CONNECT_TIMEOUT_MS = 2_000;

export function createPool(databaseUrl: string, max = 10, log?: Logger): Pool {
  // connectionTimeoutMillis: with PostgreSQL unreachable a request fails in bounded time (and answers
  // 503, src/store/unavailable.ts) instead of waiting on the pool forever (pg's default).
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle client's connection can drop (server restart, admin termination); pg emits that on the
  // pool, and an 'error' event nobody listens to would kill the process. The pool replaces the client.
  pool.on('error', (err) => log?.warn({ err }, 'an idle PostgreSQL connection failed; it will be replaced'));
  return pool;
}

/** Creates the database named in the URL when it does not exist (connecting to `postgres`). */
export async function ensureDatabase(databaseUrl: string, log?: Logger): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
        log?.info({ database: name }, 'created database');
      } catch (err) {
        // Another process created it between our check and our CREATE.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

/** Applies pending migrations under an advisory lock so concurrent starters do not race. */
export async function migrate(pool: Pool, log?: Logger): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(727001)');
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    let applied = 0;
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
        applied++;
        log?.info({ version: m.version, name: m.name }, 'applied migration');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock(727001)').catch(() => undefined);
    client.release();
  }
}

/** Runs fn in a transaction, rolling back on any error. */
export async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Drops the database a URL names, closing its sessions first (for tests and benches). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
