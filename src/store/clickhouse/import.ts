/**
 * The store side of `flow history import`: rows already validated go to a private staging table
 * first, and reach the history table in one INSERT ... SELECT run inside ClickHouse, which also
 * feeds the per-minute rollups. A failure while staging (ClickHouse down, a batch refused) drops the
 * staging table and leaves the history tables untouched. Parquet files are decoded by ClickHouse
 * itself (the file() table function), so the embedded engine reads them where the CLI runs.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ImportKind, ImportRecord } from '../../domain/history-import.js';
import type { TickRow } from '../../domain/history.js';
import type { TradePrint } from '../../domain/stream.js';
import type { ClickHouseClient } from './client.js';
import { SYNTHETIC_COLUMN, TABLES, TICK_COLUMNS, TRADE_COLUMNS } from './schema.js';
import { encodeTick, encodeTrade } from './writer.js';

const STAGING_PREFIX = 'flow_import_';
/** A staging table this old belongs to an import that was killed: the next import drops it. */
const STALE_STAGING_MS = 86_400_000;

interface KindSpec {
  table: string;
  /** Columns the TSV lines carry (time as unix ms into the EPHEMERAL column). */
  columns: readonly string[];
  /** Stored columns moved from staging to the table (the synthetic flag stays false). */
  stored: readonly string[];
  encode: (row: never) => string;
}

const KINDS: Record<ImportKind, KindSpec> = {
  ticks: { table: TABLES.ticks, columns: TICK_COLUMNS, stored: ['ts', ...TICK_COLUMNS.slice(1), SYNTHETIC_COLUMN], encode: encodeTick },
  trades: { table: TABLES.trades, columns: TRADE_COLUMNS, stored: ['executed_at', ...TRADE_COLUMNS.slice(1), SYNTHETIC_COLUMN], encode: encodeTrade },
};

/** Drops staging tables left behind by imports that were killed more than a day ago. */
export async function dropStaleStaging(ch: ClickHouseClient, nowMs: number): Promise<string[]> {
  const rs = await ch.query({
    query: 'SELECT name FROM system.tables WHERE database = currentDatabase() AND startsWith(name, {p:String})',
    query_params: { p: STAGING_PREFIX },
    format: 'JSONEachRow',
  });
  const dropped: string[] = [];
  for (const { name } of await rs.json<{ name: string }>()) {
    const m = /^flow_import_(?:ticks|trades)_(\d{13})_[0-9a-f]+$/.exec(name);
    if (m && nowMs - Number(m[1]) > STALE_STAGING_MS) {
      await ch.command({ query: `DROP TABLE IF EXISTS ${name}` });
      dropped.push(name);
    }
  }
  return dropped;
}

/** One import's staging table. */
export class ImportStaging {
  private staged = 0;
  private done = false;

  private constructor(
    private readonly ch: ClickHouseClient,
    private readonly spec: KindSpec,
    readonly name: string,
  ) {}

  /** Creates the staging table: the history table's columns; no key, partitions, TTL or views. */
  static async open(ch: ClickHouseClient, kind: ImportKind, nowMs: number): Promise<ImportStaging> {
    const spec = KINDS[kind];
    // Only digits and hex: safe to place in the statement.
    const name = `${STAGING_PREFIX}${kind}_${String(Math.floor(nowMs)).padStart(13, '0')}_${randomBytes(6).toString('hex')}`;
    await ch.command({ query: `CREATE TABLE ${name} AS ${spec.table} ENGINE = MergeTree PARTITION BY tuple() PRIMARY KEY tuple() ORDER BY tuple()` });
    return new ImportStaging(ch, spec, name);
  }

  /** Rows staged so far. */
  get rows(): number {
    return this.staged;
  }

  /** Stages one batch of validated rows; throws if ClickHouse refuses it. */
  async insert(rows: readonly (TickRow | TradePrint)[]): Promise<void> {
    if (rows.length === 0) return;
    const encode = this.spec.encode as (r: TickRow | TradePrint) => string;
    let body = '';
    for (const r of rows) body += encode(r);
    await this.ch.insert({
      table: this.name,
      columns: this.spec.columns as [string, ...string[]],
      format: 'TabSeparated',
      values: Readable.from([body], { objectMode: false }),
    });
    this.staged += rows.length;
  }

  /** Moves every staged row into the history table in one statement, then drops the staging table. */
  async commit(): Promise<number> {
    const cols = this.spec.stored.join(', ');
    await this.ch.command({
      query: `INSERT INTO ${this.spec.table} (${cols}) SELECT ${cols} FROM ${this.name}`,
      // A recorded file may span years of daily partitions; the default cap (100) would refuse it.
      clickhouse_settings: { max_partitions_per_insert_block: '0' },
    });
    this.done = true;
    await this.discard();
    return this.staged;
  }

  /** Drops the staging table (idempotent); the history table is untouched unless commit() ran. */
  async discard(): Promise<void> {
    await this.ch.command({ query: `DROP TABLE IF EXISTS ${this.name}` });
  }

  get committed(): boolean {
    return this.done;
  }
}

const PARQUET_SETTINGS = {
  date_time_output_format: 'iso',
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_denormals: 0,
} as const;

/** Column names of a Parquet file, as ClickHouse reads them. */
export async function parquetColumns(ch: ClickHouseClient, file: string): Promise<{ columns: string[]; rows: number }> {
  const d = await ch.query({ query: 'DESCRIBE file({f:String}, Parquet)', query_params: { f: file }, format: 'JSONEachRow' });
  const columns = (await d.json<{ name: string }>()).map((c) => c.name);
  const c = await ch.query({
    query: 'SELECT count() AS n FROM file({f:String}, Parquet)',
    query_params: { f: file },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  return { columns, rows: Number((await c.json<{ n: number }>())[0]?.n ?? 0) };
}

/**
 * The records of a Parquet file in file order, `pageRows` at a time (each page is one query, so
 * memory stays bounded by the page, not the file). Times come out as ISO 8601 in UTC.
 */
export async function* parquetRecords(ch: ClickHouseClient, file: string, totalRows: number, pageRows = 100_000): AsyncGenerator<ImportRecord> {
  for (let offset = 0; offset < totalRows; offset += pageRows) {
    const rs = await ch.query({
      query: 'SELECT * FROM file({f:String}, Parquet) LIMIT {n:UInt64} OFFSET {o:UInt64}',
      query_params: { f: file, n: pageRows, o: offset },
      format: 'JSONEachRow',
      clickhouse_settings: { ...PARQUET_SETTINGS, input_format_parquet_preserve_order: 1 },
    });
    for (const r of await rs.json<Record<string, unknown>>()) yield r;
  }
}
