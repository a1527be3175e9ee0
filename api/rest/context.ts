/** What every REST route may use. Built once per process by the composition root (cli/). */
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/log.js';
import type { Cursors } from '../../src/pagination.js';
import type { Pool } from '../../src/store/pg/pool.js';
import type { Keyspace, Redis } from '../../src/store/redis/client.js';
import type { RequestGate } from '../../src/store/redis/gate.js';
import type { ClickHouseClient } from '../../src/store/clickhouse/client.js';
import type { Registry } from 'prom-client';
import type { LiveBookReader } from '../../src/domain/order-checks.js';
import type { AskPlanner } from '../mcp/planner.js';

export interface AppContext {
  config: Config;
  log: Logger;
  clock: Clock;
  pool: Pool;
  redis: Redis;
  ks: Keyspace;
  gate: RequestGate;
  cursors: Cursors;
  metrics: Registry;
  clickhouse?: ClickHouseClient;
  /** Venues' live books for a buy's verify_liquidity, where this process runs the venue adapters (absent: none read live). */
  live?: LiveBookReader;
  /** The planner of the MCP ask tool: an AI provider's, where one is configured (absent: the rule-based planner, api/mcp/rule-planner.ts). */
  askPlanner?: AskPlanner;
}
