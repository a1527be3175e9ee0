/** Shared by the history integration tests: a chDB client in its own temp directory, per test file. */
import { createClickHouse, type ClickHouseClient } from '../../../src/store/clickhouse/client.js';
import { removeDataDir } from '../../support/stack.js';
import { tempDir } from '../../support/scratch.js';

export interface TestClickHouse {
  ch: ClickHouseClient;
  dataDir: string;
  close(): Promise<void>;
}

/** CLICKHOUSE_URL runs the same tests against a server (then the tables are shared: use unique ids). */
export function openTestClickHouse(): TestClickHouse {
  const dataDir = tempDir('history');
  const ch = createClickHouse({ url: process.env.CLICKHOUSE_URL ?? null, dataDir });
  return {
    ch,
    dataDir,
    async close() {
      await ch.close();
      removeDataDir(dataDir);
    },
  };
}

export async function count(ch: ClickHouseClient, sql: string, params: Record<string, unknown> = {}): Promise<number> {
  const rs = await ch.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  const rows = await rs.json<Record<string, unknown>>();
  return Number(Object.values(rows[0] ?? { n: 0 })[0]);
}

/** A query string from mixed string and number values. */
export const queryString = (q: Record<string, string | number>): string =>
  String(new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])));
