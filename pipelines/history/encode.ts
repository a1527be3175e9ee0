/**
 * History log entries → one TabSeparated body per ClickHouse table, through the same encoders (and
 * so the same validation) as every other history writer. A row that fails validation is left out
 * and counted: it can never become valid, so it must not hold the log up.
 */
import type { TickRow } from '../../src/domain/history.js';
import type { TradePrint } from '../../src/domain/stream.js';
import { POINT_COLUMNS, TABLES, TICK_COLUMNS, TRADE_COLUMNS } from '../../src/store/clickhouse/schema.js';
import { encodePoint, encodeTick, encodeTrade, type PricePointRow } from '../../src/store/clickhouse/writer.js';
import type { HistEntry, HistTable } from '../../src/store/redis/eventlog.js';

export interface TableSpec {
  table: string;
  columns: readonly string[];
}

/** Where each kind of history entry goes. */
export const HIST_TABLES: Readonly<Record<HistTable, TableSpec>> = {
  ticks: { table: TABLES.ticks, columns: TICK_COLUMNS },
  points: { table: TABLES.points, columns: POINT_COLUMNS },
  trades: { table: TABLES.trades, columns: TRADE_COLUMNS },
};

export interface TableBody {
  kind: HistTable;
  body: string;
  rows: number;
}

export interface EncodedBatch {
  /** Tables with at least one valid row, in HIST_TABLES order. */
  bodies: TableBody[];
  /** Rows left out per table because they failed validation (an unknown kind counts under its own name). */
  invalid: Map<string, number>;
  /** The first validation error seen, for the log. */
  firstError: string | null;
}

const KINDS = Object.keys(HIST_TABLES) as HistTable[];

function encodeRow(kind: HistTable, row: unknown, outliers: ReadonlySet<string>): string {
  switch (kind) {
    case 'ticks': {
      const t = row as TickRow;
      // The flag is the entry's, not the row's: compute marked these hashes when the rows were appended.
      if (t !== null && typeof t === 'object') t.outlier = outliers.has(t.liquidity_hash);
      return encodeTick(t);
    }
    case 'points':
      return encodePoint(row as PricePointRow);
    case 'trades':
      return encodeTrade(row as TradePrint);
  }
}

/** Encodes the entries of one batch; never throws on bad input. */
export function encodeEntries(entries: readonly HistEntry[]): EncodedBatch {
  const lines = new Map<HistTable, string[]>();
  const invalid = new Map<string, number>();
  let firstError: string | null = null;
  const refuse = (table: string, n: number, err: unknown) => {
    invalid.set(table, (invalid.get(table) ?? 0) + n);
    firstError ??= err instanceof Error ? err.message : String(err);
  };
  for (const e of entries) {
    const spec = HIST_TABLES[e.table] as TableSpec | undefined;
    let rows: unknown;
    try {
      rows = JSON.parse(e.rows);
    } catch (err) {
      refuse(spec?.table ?? String(e.table), 1, err);
      continue;
    }
    if (!spec || !Array.isArray(rows)) {
      refuse(spec?.table ?? String(e.table), Array.isArray(rows) ? rows.length : 1, new TypeError(`history entry ${e.id}: unknown table or rows not an array`));
      continue;
    }
    let out = lines.get(e.table);
    if (!out) lines.set(e.table, (out = []));
    const outliers = new Set(e.outliers);
    for (const r of rows) {
      try {
        out.push(encodeRow(e.table, r, outliers));
      } catch (err) {
        refuse(spec.table, 1, err);
      }
    }
  }
  const bodies: TableBody[] = [];
  for (const kind of KINDS) {
    const l = lines.get(kind);
    if (l?.length) bodies.push({ kind, body: l.join(''), rows: l.length });
  }
  return { bodies, invalid, firstError };
}
