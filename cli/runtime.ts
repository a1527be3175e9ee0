/**
 * The composition root: opens the stores once per process and hands them to the roles. The only
 * place allowed to import from every layer (src, pipelines, api).
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { askPlannerFor } from '../api/mcp/provider-planner.js';
import type { AppContext } from '../api/rest/context.js';
import { systemClock, type Clock } from '../src/clock.js';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/log.js';
import { Cursors } from '../src/pagination.js';
import { createClickHouse, type ClickHouseClient } from '../src/store/clickhouse/client.js';
import { createPool, ensureDatabase, migrate, type Pool } from '../src/store/pg/pool.js';
import { createRedis, Keyspace, type Redis } from '../src/store/redis/client.js';
import { RequestGate } from '../src/store/redis/gate.js';
import { ensureKeyIndex } from '../src/store/principals.js';

export interface Runtime {
  config: Config;
  log: Logger;
  clock: Clock;
  pool: Pool;
  redis: Redis;
  ks: Keyspace;
  gate: RequestGate;
  cursors: Cursors;
  metrics: Registry;
  /** Opened on first use: only roles that read or write history pay for the engine. */
  clickhouse(): ClickHouseClient;
  close(): Promise<void>;
}

/** What the REST app needs of a runtime (the api role, tests and benches build it the same way). */
export function appContext(rt: Runtime, overrides: Partial<AppContext> = {}): AppContext {
  const ctx: AppContext = {
    config: rt.config,
    log: rt.log,
    clock: rt.clock,
    pool: rt.pool,
    redis: rt.redis,
    ks: rt.ks,
    gate: rt.gate,
    cursors: rt.cursors,
    metrics: rt.metrics,
    ...overrides,
  };
  // The MCP ask tool plans through the configured AI provider (FLOW_ASK_PROVIDER), else by rules.
  ctx.askPlanner ??= askPlannerFor(ctx);
  return ctx;
}

export async function openRuntime(config: Config, log: Logger, opts: { clock?: Clock; defaultMetrics?: boolean } = {}): Promise<Runtime> {
  await ensureDatabase(config.databaseUrl, log);
  const pool = createPool(config.databaseUrl, 10, log);
  await migrate(pool, log);
  const redis = createRedis(config.redisUrl, { name: 'flow' });
  await redis.ping();
  const ks = new Keyspace(config.redisPrefix);
  const metrics = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: metrics });
  let ch: ClickHouseClient | null = null;
  const gate = new RequestGate(redis, ks);
  // The key index answers unknown API keys without PostgreSQL once complete; built here when missing.
  // Should that fail, lookups ask PostgreSQL and the next one that finds the index incomplete retries.
  await ensureKeyIndex(gate, pool).catch((err: unknown) => log.warn({ err }, 'could not build the API key index now; unknown keys are checked in PostgreSQL until it is'));
  return {
    config,
    log,
    clock: opts.clock ?? systemClock,
    pool,
    redis,
    ks,
    gate,
    cursors: new Cursors(config.cursorSecret),
    metrics,
    clickhouse() {
      ch ??= createClickHouse({ url: config.clickhouseUrl, dataDir: config.dataDir });
      return ch;
    },
    async close() {
      await gate.close();
      await Promise.allSettled([pool.end(), redis.quit(), ch?.close()]);
    },
  };
}
