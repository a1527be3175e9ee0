/**
 * History tables in ClickHouse and their migrations. Every statement is idempotent (IF NOT EXISTS),
 * so several processes starting at once against one server cannot trip over each other; the
 * migrations table records which versions ran. See docs/history.md for the why of each key.
 */
import type { ClickHouseClient } from './client.js';

export const TABLES = {
  ticks: 'ticks',
  points: 'price_points',
  trades: 'trades',
  /** Per-minute closes kept by materialized views: what bucketed price history reads. */
  ticks1m: 'ticks_1m',
  points1m: 'price_points_1m',
  migrations: 'flow_history_migrations',
} as const;

/** Columns a writer sends, in TSV order. Time arrives as unix ms in an EPHEMERAL Int64 column. */
export const TICK_COLUMNS = ['ts_ms', 'contest_id', 'position_hash', 'partner_id', 'price', 'available', 'liquidity_hash', 'source', 'outlier'] as const;
export const POINT_COLUMNS = ['ts_ms', 'contest_id', 'position_hash', 'price'] as const;
export const TRADE_COLUMNS = [
  'executed_ms',
  'router_contest_id',
  'position_hash',
  'partner_id',
  'partner_name',
  'venue_trade_id',
  'venue_market_id',
  'liquidity_hash',
  'router_market_id',
  'taker_action',
  'price',
  'size_contracts',
  'notional_usd',
  'is_block',
  'trader_id',
  'trader_id_kind',
] as const;

export interface RetainedTable {
  table: string;
  time: string;
  partition: 'day' | 'month';
}

/** The tables history is written to, with their time column and partition grain. */
export const HISTORY_TABLES: readonly RetainedTable[] = [
  { table: TABLES.ticks, time: 'ts', partition: 'day' },
  { table: TABLES.points, time: 'ts', partition: 'day' },
  { table: TABLES.trades, time: 'executed_at', partition: 'month' },
];

/** Every table retention and prune apply to: the history tables and their per-minute rollups. */
export const RETAINED_TABLES: readonly RetainedTable[] = [
  ...HISTORY_TABLES,
  { table: TABLES.ticks1m, time: 'minute', partition: 'day' },
  { table: TABLES.points1m, time: 'minute', partition: 'day' },
];

/** Blocks per table whose insert tokens (or, for token-less inserts, data hashes) are remembered (migration 4). */
export const DEDUP_WINDOW_BLOCKS = 10_000;

export interface Migration {
  version: number;
  name: string;
  /** ClickHouse settings its statements run with. */
  settings?: Record<string, number | string>;
  statements: string[];
}

export const CLICKHOUSE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'ticks, price_points, trades',
    statements: [
      // Every quote change per venue. Queries always name a contest and (for venue series) a
      // partner, and usually positions: the key puts them first, time last.
      `CREATE TABLE IF NOT EXISTS ${TABLES.ticks} (
        ts_ms Int64 EPHEMERAL,
        ts DateTime64(3, 'UTC') DEFAULT fromUnixTimestamp64Milli(ts_ms, 'UTC') CODEC(DoubleDelta, LZ4),
        contest_id LowCardinality(String),
        position_hash String,
        partner_id LowCardinality(String),
        price Float64,
        available Float64,
        liquidity_hash String CODEC(ZSTD(1)),
        source Enum8('streaming' = 1, 'polling' = 2),
        outlier Bool
      ) ENGINE = MergeTree
      PARTITION BY toYYYYMMDD(ts)
      ORDER BY (contest_id, position_hash, partner_id, ts)
      SETTINGS ttl_only_drop_parts = 1`,
      // Consensus price per position, one row per change.
      `CREATE TABLE IF NOT EXISTS ${TABLES.points} (
        ts_ms Int64 EPHEMERAL,
        ts DateTime64(3, 'UTC') DEFAULT fromUnixTimestamp64Milli(ts_ms, 'UTC') CODEC(DoubleDelta, LZ4),
        contest_id LowCardinality(String),
        position_hash String,
        price Float64
      ) ENGINE = MergeTree
      PARTITION BY toYYYYMMDD(ts)
      ORDER BY (contest_id, position_hash, ts)
      SETTINGS ttl_only_drop_parts = 1`,
      // Trade prints. Reads are newest-first within a contest; a re-delivered print (same venue
      // trade id and time) collapses on merge and is also deduplicated at read time.
      `CREATE TABLE IF NOT EXISTS ${TABLES.trades} (
        executed_ms Int64 EPHEMERAL,
        executed_at DateTime64(3, 'UTC') DEFAULT fromUnixTimestamp64Milli(executed_ms, 'UTC'),
        router_contest_id LowCardinality(String),
        position_hash String,
        partner_id LowCardinality(String),
        partner_name LowCardinality(String),
        venue_trade_id String,
        venue_market_id String,
        liquidity_hash String,
        router_market_id LowCardinality(String),
        taker_action Enum8('buy' = 1, 'sell' = 2),
        price Float64,
        size_contracts Float64,
        notional_usd Float64,
        is_block Bool,
        trader_id Nullable(String),
        trader_id_kind LowCardinality(Nullable(String)),
        INDEX position_bf position_hash TYPE bloom_filter(0.01) GRANULARITY 1
      ) ENGINE = ReplacingMergeTree
      PARTITION BY toYYYYMM(executed_at)
      ORDER BY (router_contest_id, executed_at, partner_id, venue_trade_id)`,
    ],
  },
  {
    version: 2,
    name: 'per-minute closes (ticks_1m, price_points_1m)',
    statements: [
      // The close of every minute (argMax by time), kept up to date on insert by a materialized
      // view. A 24-hour 5m series reads 1,440 states per series instead of every tick in the day.
      `CREATE TABLE IF NOT EXISTS ${TABLES.points1m} (
        contest_id LowCardinality(String),
        position_hash String,
        minute DateTime('UTC'),
        close AggregateFunction(argMax, Float64, DateTime64(3, 'UTC'))
      ) ENGINE = AggregatingMergeTree
      PARTITION BY toYYYYMMDD(minute)
      ORDER BY (contest_id, position_hash, minute)
      SETTINGS ttl_only_drop_parts = 1`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${TABLES.points1m}_mv TO ${TABLES.points1m} AS
        SELECT contest_id, position_hash, toStartOfMinute(ts) AS minute, argMaxState(price, ts) AS close
        FROM ${TABLES.points} GROUP BY contest_id, position_hash, minute`,
      `CREATE TABLE IF NOT EXISTS ${TABLES.ticks1m} (
        contest_id LowCardinality(String),
        position_hash String,
        partner_id LowCardinality(String),
        minute DateTime('UTC'),
        close AggregateFunction(argMax, Float64, DateTime64(3, 'UTC'))
      ) ENGINE = AggregatingMergeTree
      PARTITION BY toYYYYMMDD(minute)
      ORDER BY (contest_id, position_hash, partner_id, minute)
      SETTINGS ttl_only_drop_parts = 1`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${TABLES.ticks1m}_mv TO ${TABLES.ticks1m} AS
        SELECT contest_id, position_hash, partner_id, toStartOfMinute(ts) AS minute, argMaxState(price, ts) AS close
        FROM ${TABLES.ticks} GROUP BY contest_id, position_hash, partner_id, minute`,
      // Rows written before the views existed. Running this twice is harmless: merging two equal
      // argMax states gives the same close.
      `INSERT INTO ${TABLES.points1m}
        SELECT contest_id, position_hash, toStartOfMinute(ts) AS minute, argMaxState(price, ts) AS close
        FROM ${TABLES.points} GROUP BY contest_id, position_hash, minute`,
      `INSERT INTO ${TABLES.ticks1m}
        SELECT contest_id, position_hash, partner_id, toStartOfMinute(ts) AS minute, argMaxState(price, ts) AS close
        FROM ${TABLES.ticks} GROUP BY contest_id, position_hash, partner_id, minute`,
    ],
  },
  {
    version: 3,
    name: 'synthetic flag on every history table',
    // MODIFY QUERY on a view (atomic, unlike drop and re-create, which would let an insert slip past
    // the rollup) is behind this switch on servers older than chDB's engine; as a statement setting
    // it is not stored in the view's definition.
    settings: { allow_experimental_alter_materialized_view_structure: 1 },
    statements: [
      // Rows written by `flow history synthesize` carry synthetic = true so reads can leave them out
      // (docs/history.md). Existing rows, the live pipeline's and imported ones, are real: false,
      // the type's default. The column has no DEFAULT expression because ClickHouse refuses a new
      // column with one in a sorting key, and the rollups and trades need it there (below).
      `ALTER TABLE ${TABLES.ticks} ADD COLUMN IF NOT EXISTS synthetic Bool`,
      `ALTER TABLE ${TABLES.points} ADD COLUMN IF NOT EXISTS synthetic Bool`,
      // In the key: a synthetic print and a real one that share venue, id and time must not replace
      // each other when ReplacingMergeTree merges.
      `ALTER TABLE ${TABLES.trades} ADD COLUMN IF NOT EXISTS synthetic Bool, MODIFY ORDER BY (router_contest_id, executed_at, partner_id, venue_trade_id, synthetic)`,
      // The per-minute closes keep real and synthetic rows apart (an aggregating merge would
      // otherwise fold them into one close), and their views carry the flag through.
      `ALTER TABLE ${TABLES.points1m} ADD COLUMN IF NOT EXISTS synthetic Bool, MODIFY ORDER BY (contest_id, position_hash, minute, synthetic)`,
      `ALTER TABLE ${TABLES.ticks1m} ADD COLUMN IF NOT EXISTS synthetic Bool, MODIFY ORDER BY (contest_id, position_hash, partner_id, minute, synthetic)`,
      `ALTER TABLE ${TABLES.points1m}_mv MODIFY QUERY
        SELECT contest_id, position_hash, toStartOfMinute(ts) AS minute, synthetic, argMaxState(price, ts) AS close
        FROM ${TABLES.points} GROUP BY contest_id, position_hash, minute, synthetic`,
      `ALTER TABLE ${TABLES.ticks1m}_mv MODIFY QUERY
        SELECT contest_id, position_hash, partner_id, toStartOfMinute(ts) AS minute, synthetic, argMaxState(price, ts) AS close
        FROM ${TABLES.ticks} GROUP BY contest_id, position_hash, partner_id, minute, synthetic`,
    ],
  },
  {
    version: 4,
    name: 'insert deduplication window on every history table and rollup',
    // The history log writer (pipelines/history) re-sends a batch whose acknowledgement a crash cut
    // off, with the same insert_deduplication_token: plain MergeTree only remembers tokens when this
    // window is above 0. The rollups need it too, or the views would add the re-sent batch's closes
    // a second time. 10,000 blocks per table: a re-send comes within seconds, a few blocks later.
    statements: [...HISTORY_TABLES.map((t) => t.table), TABLES.ticks1m, TABLES.points1m].map(
      (t) => `ALTER TABLE ${t} MODIFY SETTING non_replicated_deduplication_window = ${DEDUP_WINDOW_BLOCKS}`,
    ),
  },
];

/** The column that marks synthetic rows (migration 3); a writer appends it after the columns above. */
export const SYNTHETIC_COLUMN = 'synthetic';

const MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS ${TABLES.migrations} (
  version UInt32,
  name String,
  applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree ORDER BY version`;

/** Applies missing migrations; returns the versions it applied. */
export async function migrateClickHouse(ch: ClickHouseClient): Promise<number[]> {
  await ch.command({ query: MIGRATIONS_DDL });
  const rs = await ch.query({ query: `SELECT version FROM ${TABLES.migrations} FINAL ORDER BY version`, format: 'JSONEachRow' });
  const done = new Set((await rs.json<{ version: number }>()).map((r) => Number(r.version)));
  const applied: number[] = [];
  for (const m of CLICKHOUSE_MIGRATIONS) {
    if (done.has(m.version)) continue;
    for (const sql of m.statements) await ch.command({ query: sql, ...(m.settings ? { clickhouse_settings: m.settings } : {}) });
    await ch.insert({ table: TABLES.migrations, columns: ['version', 'name'], values: [{ version: m.version, name: m.name }], format: 'JSONEachRow' });
    applied.push(m.version);
  }
  return applied;
}

/** Reads the retention (days) a table's TTL currently enforces; 0 when it has none. */
export async function currentRetentionDays(ch: ClickHouseClient, table: string): Promise<number> {
  const rs = await ch.query({
    query: 'SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = {t:String}',
    query_params: { t: table },
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ engine_full: string }>();
  const m = /\bTTL\b.*?toIntervalDay\((\d+)\)/.exec(rows[0]?.engine_full ?? '');
  return m ? Number(m[1]) : 0;
}

/**
 * Makes every history table's TTL match `days` (0 = keep forever). Parts expire whole (daily
 * partitions, ttl_only_drop_parts), so data lives up to one partition longer than the retention.
 */
export async function applyRetention(ch: ClickHouseClient, days: number): Promise<{ table: string; from: number; to: number }[]> {
  if (!Number.isInteger(days) || days < 0) throw new RangeError(`retention days must be a non-negative integer, got ${days}`);
  const changed: { table: string; from: number; to: number }[] = [];
  for (const t of RETAINED_TABLES) {
    const current = await currentRetentionDays(ch, t.table);
    if (current === days) continue;
    await ch.command({
      query: days === 0 ? `ALTER TABLE ${t.table} REMOVE TTL` : `ALTER TABLE ${t.table} MODIFY TTL toDateTime(${t.time}) + toIntervalDay(${days})`,
    });
    changed.push({ table: t.table, from: current, to: days });
  }
  return changed;
}

/** Migrations, then retention: what every process that reads or writes history runs at start. */
export async function prepareHistoryStore(ch: ClickHouseClient, opts: { retentionDays: number }): Promise<void> {
  await migrateClickHouse(ch);
  await applyRetention(ch, opts.retentionDays);
}
