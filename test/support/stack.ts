/**
 * A real stack for integration tests: its own PostgreSQL database and Redis key prefix (so files run
 * in parallel and never see each other), dropped and deleted at the end.
 */
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { buildApp, type BuiltApp, type RoutePlugin } from '../../api/rest/app.js';
import { appContext, openRuntime, type Runtime } from '../../cli/runtime.js';
import type { Clock } from '../../src/clock.js';
import type { LiveBookReader } from '../../src/domain/order-checks.js';
import type { ClickHouseClient } from '../../src/store/clickhouse/client.js';
import { loadConfig, type Config } from '../../src/config.js';
import { seedCatalog, type CatalogSeed } from '../../src/store/pg/catalog.js';
import { bumpCatalogVersion } from '../../src/store/redis/catalog-version.js';
import { deleteByPrefix } from '../../src/store/redis/client.js';
import { dropDatabase as dropDatabaseAt } from '../../src/store/pg/pool.js';
import { FIXTURE_CATALOG } from './fixture-catalog.js';
import { holdToContract } from './openapi-contract.js';
import { tempDir } from './scratch.js';

/** The server the tests create their databases on: TEST_DATABASE_URL, else the server of DATABASE_URL
 * (the one `infra/services.sh` brought up), else the local default. */
export const PG_BASE = process.env.TEST_DATABASE_URL ?? maintenanceUrl(process.env.DATABASE_URL) ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function maintenanceUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const u = new URL(url);
  u.pathname = '/postgres';
  return u.toString();
}
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Removes a test's data directory. Embedded chDB may still write its own logs there for a while
 * after its client closed (the engine lives as long as the process) and recreate it: what is left
 * is removed by the run's teardown (test/support/global-setup.ts), which knows it by the run's tag.
 */
export function removeDataDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  } catch {
    /* left to the run's teardown */
  }
}

export interface TestStack {
  config: Config;
  rt: Runtime;
  built: BuiltApp;
  databaseUrl: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

export function testNames(): { database: string; prefix: string; databaseUrl: string } {
  const tag = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const url = new URL(PG_BASE);
  url.pathname = `/flow_test_${tag}`;
  return {
    database: `flow_test_${tag}`,
    prefix: `flowtest_${tag}`,
    databaseUrl: url.toString(),
  };
}

/** A fresh data directory for a test's service; its owner removes it (removeDataDir). */
export function newDataDir(): string {
  return tempDir('test');
}

export async function dropDatabase(name: string): Promise<void> {
  const url = new URL(PG_BASE);
  url.pathname = `/${name}`;
  await dropDatabaseAt(url.toString());
}

export const deletePrefix = (rt: Runtime, prefix: string): Promise<number> => deleteByPrefix(rt.redis, prefix);

export async function startStack(
  opts: {
    clock?: Clock;
    catalog?: CatalogSeed | null;
    plugins?: RoutePlugin[];
    clickhouse?: ClickHouseClient;
    /** Check every inject() response against the served OpenAPI document (default true). */
    contract?: boolean;
    /** More configuration variables (e.g. FLOW_EXECUTE_WAIT_MS). */
    env?: Record<string, string>;
    /** The venues' live books for the buy's verify_liquidity (the adapters of an ingest role). */
    live?: LiveBookReader;
  } = {},
): Promise<TestStack> {
  const names = { ...testNames(), dataDir: newDataDir() };
  const env = {
    DATABASE_URL: names.databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: names.prefix,
    FLOW_DATA_DIR: names.dataDir,
    FLOW_JWT_SECRET: 'test-jwt-secret',
    FLOW_ADMIN_TOKEN: 'test-admin',
    FLOW_CURSOR_SECRET: 'test-cursor-secret',
    ...opts.env,
  };
  const config = loadConfig(env);
  const rt = await openRuntime(config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), { clock: opts.clock, defaultMetrics: false });
  if (opts.catalog !== null) {
    await seedCatalog(rt.pool, opts.catalog ?? FIXTURE_CATALOG);
    await bumpCatalogVersion(rt.redis, rt.ks);
  }
  const built = await buildApp(appContext(rt, { ...(opts.clickhouse ? { clickhouse: opts.clickhouse } : {}), ...(opts.live ? { live: opts.live } : {}) }), opts.plugins ?? []);
  if (opts.contract !== false) await holdToContract(built.app);
  return {
    config,
    rt,
    built,
    databaseUrl: names.databaseUrl,
    env,
    async close() {
      await built.close();
      await deletePrefix(rt, names.prefix);
      await rt.close();
      await dropDatabase(names.database);
      removeDataDir(names.dataDir);
    },
  };
}
