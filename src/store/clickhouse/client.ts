/**
 * ClickHouse behind one module: embedded chDB (default, FLOW_DATA_DIR/clickhouse) or a server when
 * CLICKHOUSE_URL is set. Both speak the same @clickhouse/client API, so writers and queries have a
 * single code path.
 */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export type { ClickHouseClient };

export interface ClickHouseOptions {
  url: string | null;
  dataDir: string;
  database?: string;
  /** The client's own logging of server-mode request failures (default ERROR; OFF when the caller logs them). */
  logLevel?: 'OFF' | 'ERROR' | 'WARN' | 'INFO' | 'DEBUG' | 'TRACE';
}

export function createClickHouse(opts: ClickHouseOptions): ClickHouseClient {
  if (opts.url) {
    return createClient({
      url: opts.url,
      database: opts.database,
      ...(opts.logLevel ? { log: { level: ClickHouseLogLevel[opts.logLevel] } } : {}),
      clickhouse_settings: { date_time_output_format: 'iso' },
    });
  }
  const dir = path.join(opts.dataDir, 'clickhouse');
  mkdirSync(dir, { recursive: true });
  // chdb/connection ships CommonJS only; require keeps the named export typed and resolvable.
  const require = createRequire(import.meta.url);
  const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
  return createClient({ connection: createChdbConnection({ path: dir }) } as Parameters<typeof createClient>[0]);
}
