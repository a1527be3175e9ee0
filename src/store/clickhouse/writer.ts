/**
 * History rows into ClickHouse (chDB or a server: the same @clickhouse/client insert): the row
 * encoders and write metrics every history writer shares, and batched, non-blocking writers. The
 * live pipeline does not call these writers: its rows go through the history log in Redis, and the
 * log consumer (pipelines/history/consumer.ts) inserts them with these encoders. The batch writers
 * serve `flow history synthesize` and the benches: write() encodes the row to one TabSeparated line
 * and returns at once; a batch is sealed at `maxBatchRows` rows or every `flushIntervalMs`, and
 * sealed batches are sent oldest first, up to `concurrency` inserts at a time.
 *
 * When ClickHouse is unreachable, sealed batches wait and are retried with exponential backoff.
 * The buffer is bounded (`maxBufferedRows`): past it the oldest batches are dropped, because the
 * newest history is the most useful, and every dropped row is counted in
 * flow_history_rows_dropped_total{table,reason}. Nothing here throws into the caller.
 *
 * Why TabSeparated: measured against JSONEachRow and JSONCompactEachRow (bench/history-ingest.ts),
 * it is the cheapest to produce in JS and to parse in ClickHouse, and it passes through chDB's
 * text-only insert path unchanged (binary formats do not: chDB decodes the body as UTF-8).
 */
import { Readable } from 'node:stream';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TickRow } from '../../domain/history.js';
import type { TickEntry, TradePrint } from '../../domain/stream.js';
import type { Logger } from '../../log.js';
import type { ClickHouseClient } from './client.js';
import { POINT_COLUMNS, SYNTHETIC_COLUMN, TABLES, TICK_COLUMNS, TRADE_COLUMNS } from './schema.js';

/** The one client call a writer needs: tests substitute a client that fails on demand. */
export type Inserter = Pick<ClickHouseClient, 'insert'>;

export type DropReason = 'buffer_full' | 'rejected' | 'invalid' | 'shutdown' | 'closed';
const DROP_REASONS: readonly DropReason[] = ['buffer_full', 'rejected', 'invalid', 'shutdown', 'closed'];

export interface BatchWriterOptions {
  /** Rows per insert at most (a batch is sealed when it reaches this). */
  maxBatchRows?: number;
  /** A non-empty open batch is sealed and sent at least this often. */
  flushIntervalMs?: number;
  /** Rows held (open + sealed + in flight) before the oldest batches are dropped. */
  maxBufferedRows?: number;
  /** First retry delay after a failed insert; doubles per consecutive failure up to retryMaxMs. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Inserts in flight at once when batches queue up (ClickHouse parses two batches in parallel). */
  concurrency?: number;
  metrics?: Registry;
  log?: Pick<Logger, 'warn' | 'error'>;
}

export const WRITER_DEFAULTS = {
  maxBatchRows: 50_000,
  flushIntervalMs: 250,
  maxBufferedRows: 500_000,
  retryBaseMs: 250,
  retryMaxMs: 10_000,
  concurrency: 2,
} as const;

export interface WriterStats {
  table: string;
  /** Rows ClickHouse acknowledged. */
  written: number;
  /** Rows held now (open batch, sealed batches and the batch in flight). */
  buffered: number;
  dropped: Record<DropReason, number>;
  insertErrors: number;
  consecutiveFailures: number;
  lastError: string | null;
}

interface Batch {
  body: string;
  rows: number;
}

// ---- metrics: one set per registry, labelled by table ------------------------------------------

/** The history write metrics of a registry, shared by the batch writers and the history log writer. */
export interface WriterMetrics {
  written: Counter<'table'>;
  dropped: Counter<'table' | 'reason'>;
  errors: Counter<'table'>;
  seconds: Histogram<'table'>;
  writers: Set<BatchWriter<unknown>>;
}

const metricsByRegistry = new WeakMap<Registry, WriterMetrics>();

/** The history write metrics registered on `registry` (created on first use, then shared). */
export function writerMetrics(registry: Registry): WriterMetrics {
  let m = metricsByRegistry.get(registry);
  if (m) return m;
  const writers = new Set<BatchWriter<unknown>>();
  m = {
    writers,
    written: new Counter({ name: 'flow_history_rows_written_total', help: 'History rows ClickHouse acknowledged', labelNames: ['table'], registers: [registry] }),
    dropped: new Counter({
      name: 'flow_history_rows_dropped_total',
      help: 'History rows dropped: buffer_full (ClickHouse unreachable past the buffer bound), rejected (ClickHouse refused the batch), invalid (row failed validation), shutdown/closed',
      labelNames: ['table', 'reason'],
      registers: [registry],
    }),
    errors: new Counter({ name: 'flow_history_insert_errors_total', help: 'Failed history inserts (each is retried or its batch dropped)', labelNames: ['table'], registers: [registry] }),
    seconds: new Histogram({
      name: 'flow_history_insert_seconds',
      help: 'Duration of one successful history insert',
      labelNames: ['table'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'flow_history_rows_buffered',
    help: 'History rows waiting for ClickHouse',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      this.reset();
      for (const w of writers) this.inc({ table: w.table }, w.buffered);
    },
  });
  metricsByRegistry.set(registry, m);
  return m;
}

// ---- TabSeparated encoding ---------------------------------------------------------------------

const TSV_SPECIAL = /[\\\t\n\r]/;
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A String field: escapes backslash, tab and line breaks; refuses non-strings. */
export function tsvString(s: unknown, field: string): string {
  if (typeof s !== 'string') throw new TypeError(`${field} must be a string`);
  return TSV_SPECIAL.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => TSV_ESCAPES[c]!) : s;
}

/** A Nullable(String) field: null/undefined is \N. */
export function tsvNullable(s: unknown, field: string): string {
  return s === null || s === undefined ? '\\N' : tsvString(s, field);
}

/** A Float64 field: finite numbers only. */
export function tsvNumber(n: unknown, field: string): string {
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new TypeError(`${field} must be a finite number`);
  return String(n);
}

/** Unix ms for an EPHEMERAL Int64 time column. */
export function tsvMs(ms: unknown, field: string): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new TypeError(`${field} must be unix milliseconds`);
  return String(Math.floor(ms));
}

// ---- the generic writer ------------------------------------------------------------------------

/** ClickHouse error codes that mean "this batch will never be accepted": retrying cannot help. */
const NON_RETRYABLE_CODES = new Set(['6', '16', '26', '27', '32', '33', '38', '41', '53', '62', '69', '70', '72', '117', '131', '691']);

/** False for errors that mean ClickHouse will never accept this batch as sent. */
export function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return !(typeof code === 'string' && NON_RETRYABLE_CODES.has(code));
}

export class BatchWriter<T> {
  readonly table: string;
  private readonly opts: Required<Omit<BatchWriterOptions, 'metrics' | 'log'>>;
  private readonly metrics: WriterMetrics;
  private readonly log: Pick<Logger, 'warn' | 'error'> | undefined;
  private readonly columns: string[];

  private lines: string[] = [];
  private sealed: Batch[] = [];
  private readonly inflight = new Set<Batch>();
  private readonly running = new Set<Promise<void>>();
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly interval: NodeJS.Timeout;
  private closed = false;
  private _buffered = 0;
  private readonly stat: WriterStats;

  constructor(
    private readonly client: Inserter,
    table: string,
    columns: readonly string[],
    private readonly encode: (row: T) => string,
    options: BatchWriterOptions = {},
  ) {
    this.table = table;
    this.columns = [...columns];
    this.opts = {
      maxBatchRows: options.maxBatchRows ?? WRITER_DEFAULTS.maxBatchRows,
      flushIntervalMs: options.flushIntervalMs ?? WRITER_DEFAULTS.flushIntervalMs,
      maxBufferedRows: options.maxBufferedRows ?? WRITER_DEFAULTS.maxBufferedRows,
      retryBaseMs: options.retryBaseMs ?? WRITER_DEFAULTS.retryBaseMs,
      retryMaxMs: options.retryMaxMs ?? WRITER_DEFAULTS.retryMaxMs,
      concurrency: options.concurrency ?? WRITER_DEFAULTS.concurrency,
    };
    if (!(this.opts.maxBatchRows >= 1 && this.opts.maxBufferedRows >= 1 && this.opts.concurrency >= 1)) {
      throw new RangeError('maxBatchRows, maxBufferedRows and concurrency must be at least 1');
    }
    this.metrics = writerMetrics(options.metrics ?? new Registry());
    this.metrics.writers.add(this as BatchWriter<unknown>);
    this.log = options.log;
    this.stat = {
      table,
      written: 0,
      buffered: 0,
      dropped: Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>,
      insertErrors: 0,
      consecutiveFailures: 0,
      lastError: null,
    };
    this.interval = setInterval(() => {
      if (this.lines.length > 0) this.seal();
      this.kick();
    }, this.opts.flushIntervalMs);
    this.interval.unref();
  }

  get buffered(): number {
    return this._buffered;
  }

  stats(): WriterStats {
    return { ...this.stat, buffered: this._buffered, dropped: { ...this.stat.dropped } };
  }

  /** Queues one row; never blocks and never throws. False when the row was dropped at once. */
  write(row: T): boolean {
    if (this.closed) {
      this.drop('closed', 1);
      return false;
    }
    let line: string;
    try {
      line = this.encode(row);
    } catch (err) {
      this.drop('invalid', 1);
      if (this.stat.dropped.invalid <= 10 || this.stat.dropped.invalid % 10_000 === 0) {
        this.log?.warn({ table: this.table, err: (err as Error).message, invalid: this.stat.dropped.invalid }, 'history row refused');
      }
      return false;
    }
    this.lines.push(line);
    this._buffered++;
    if (this.lines.length >= this.opts.maxBatchRows) {
      this.seal();
      this.kick();
    }
    if (this._buffered > this.opts.maxBufferedRows) this.shed();
    return true;
  }

  /** Queues many rows; returns how many were accepted. */
  writeMany(rows: Iterable<T>): number {
    let n = 0;
    for (const r of rows) if (this.write(r)) n++;
    return n;
  }

  /**
   * Sends everything buffered now, skipping any retry wait. True when the buffer is empty
   * afterwards; false when an insert failed (the rows stay buffered and retries continue).
   */
  async flush(): Promise<boolean> {
    if (this.lines.length > 0) this.seal();
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    for (;;) {
      const failuresBefore = this.stat.insertErrors;
      this.kick();
      if (this.running.size === 0) break;
      await Promise.all([...this.running]);
      if (this.stat.insertErrors !== failuresBefore) return false;
      if (this.lines.length > 0) this.seal();
    }
    return this._buffered === 0;
  }

  /**
   * Stops the timer, then keeps flushing (honouring backoff) until the buffer is empty or
   * `timeoutMs` passes; what is left then is dropped as `shutdown`. Later writes are dropped as `closed`.
   */
  async close(timeoutMs = 5_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.interval);
    const deadline = Date.now() + timeoutMs;
    while (this._buffered > 0 && Date.now() < deadline) {
      if (await this.flush()) break;
      const wait = Math.min(this.backoffMs(), deadline - Date.now());
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await Promise.all([...this.running]);
    if (this.lines.length > 0) this.seal();
    const left = this.sealed.reduce((n, b) => n + b.rows, 0);
    if (left > 0) {
      this.sealed = [];
      this._buffered -= left;
      this.drop('shutdown', left);
      this.log?.error({ table: this.table, rows: left }, 'history rows dropped at shutdown: ClickHouse did not take them in time');
    }
    this.metrics.writers.delete(this as BatchWriter<unknown>);
  }

  /**
   * Waits until at most `rows` are buffered: backpressure for a bulk producer such as the backfill
   * (the live pipeline never waits). Throws once `failAfter` consecutive inserts have failed.
   */
  async settle(rows: number, failAfter = Infinity): Promise<void> {
    while (this._buffered > rows) {
      if (this.stat.consecutiveFailures >= failAfter) {
        throw new Error(`ClickHouse insert into ${this.table} failed ${this.stat.consecutiveFailures} times: ${this.stat.lastError}`);
      }
      if (this.lines.length >= this.opts.maxBatchRows || this.sealed.length === 0) this.seal();
      this.kick();
      if (this.running.size > 0) await Promise.race([...this.running]);
      else await new Promise((r) => setTimeout(r, Math.max(10, Math.min(this.backoffMs(), 200))));
    }
  }

  // ---- internals ----

  private drop(reason: DropReason, rows: number): void {
    this.stat.dropped[reason] += rows;
    this.metrics.dropped.inc({ table: this.table, reason }, rows);
  }

  private seal(): void {
    if (this.lines.length === 0) return;
    const rows = this.lines.length;
    const body = this.lines.join('');
    this.lines = [];
    this.sealed.push({ body, rows });
  }

  /** Drops the oldest batches not in flight until the buffer is within its bound. */
  private shed(): void {
    if (this.lines.length > 0) this.seal();
    let dropped = 0;
    while (this._buffered > this.opts.maxBufferedRows) {
      const idx = this.sealed.findIndex((b) => !this.inflight.has(b));
      if (idx < 0) break;
      const [b] = this.sealed.splice(idx, 1);
      this._buffered -= b!.rows;
      dropped += b!.rows;
    }
    if (dropped > 0) {
      this.drop('buffer_full', dropped);
      this.log?.warn({ table: this.table, rows: dropped, total: this.stat.dropped.buffer_full, lastError: this.stat.lastError }, 'history buffer full: oldest rows dropped');
    }
  }

  private backoffMs(): number {
    const n = Math.max(1, this.stat.consecutiveFailures);
    return Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** Math.min(20, n - 1));
  }

  /** Starts inserts for queued batches, up to `concurrency` at once, unless a retry is pending. */
  private kick(): void {
    while (!this.retryTimer && this.inflight.size < this.opts.concurrency) {
      const idx = this.sealed.findIndex((b) => !this.inflight.has(b));
      if (idx < 0) return;
      // Batches sealed by the timer during an outage are small: merge them into full-size inserts.
      while (idx + 1 < this.sealed.length) {
        const a = this.sealed[idx]!;
        const b = this.sealed[idx + 1]!;
        if (this.inflight.has(b) || a.rows + b.rows > this.opts.maxBatchRows) break;
        this.sealed.splice(idx, 2, { body: a.body + b.body, rows: a.rows + b.rows });
      }
      const batch = this.sealed[idx]!;
      this.inflight.add(batch);
      const p: Promise<void> = this.send(batch).finally(() => this.running.delete(p));
      this.running.add(p);
    }
  }

  private async send(batch: Batch): Promise<void> {
    const started = performance.now();
    try {
      await this.client.insert({
        table: this.table,
        columns: this.columns as [string, ...string[]],
        format: 'TabSeparated',
        values: Readable.from([batch.body], { objectMode: false }),
      });
    } catch (err) {
      this.inflight.delete(batch);
      this.stat.insertErrors++;
      this.stat.consecutiveFailures++;
      this.stat.lastError = (err as Error).message?.slice(0, 500) ?? String(err);
      this.metrics.errors.inc({ table: this.table });
      if (!isRetryable(err)) {
        if (this.removeBatch(batch)) this.drop('rejected', batch.rows);
        this.log?.error({ table: this.table, rows: batch.rows, err: this.stat.lastError }, 'ClickHouse refused a history batch; dropped');
        this.kick();
        return;
      }
      if (this.stat.consecutiveFailures === 1 || this.stat.consecutiveFailures % 20 === 0) {
        this.log?.warn({ table: this.table, failures: this.stat.consecutiveFailures, buffered: this._buffered, err: this.stat.lastError }, 'history insert failed; retrying');
      }
      if (!this.closed && !this.retryTimer) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          this.kick();
        }, this.backoffMs());
        this.retryTimer.unref();
      }
      return;
    }
    this.inflight.delete(batch);
    this.metrics.seconds.observe({ table: this.table }, (performance.now() - started) / 1000);
    this.removeBatch(batch);
    this.stat.written += batch.rows;
    this.metrics.written.inc({ table: this.table }, batch.rows);
    if (this.stat.consecutiveFailures > 0) {
      this.log?.warn({ table: this.table, after: this.stat.consecutiveFailures }, 'history inserts recovered');
    }
    this.stat.consecutiveFailures = 0;
    this.kick();
  }

  /** Removes a batch if it is still queued (shed() may have dropped it while it was in flight). */
  private removeBatch(batch: Batch): boolean {
    const idx = this.sealed.indexOf(batch);
    if (idx < 0) return false;
    this.sealed.splice(idx, 1);
    this._buffered -= batch.rows;
    return true;
  }
}

// ---- the three history tables ------------------------------------------------------------------

export type { TickRow };

/** One consensus price of one position. */
export interface PricePointRow {
  ts: number;
  contest_id: string;
  position_hash: string;
  price: number;
}

export function encodeTick(r: TickRow): string {
  return `${tsvMs(r.ts, 'ts')}\t${tsvString(r.contest_id, 'contest_id')}\t${tsvString(r.position_hash, 'position_hash')}\t${tsvString(r.partner_id, 'partner_id')}\t${tsvNumber(r.price, 'price')}\t${tsvNumber(r.available, 'available')}\t${tsvString(r.liquidity_hash, 'liquidity_hash')}\t${r.source === 'polling' ? 'polling' : 'streaming'}\t${r.outlier ? 1 : 0}\n`;
}

export function encodePoint(r: PricePointRow): string {
  return `${tsvMs(r.ts, 'ts')}\t${tsvString(r.contest_id, 'contest_id')}\t${tsvString(r.position_hash, 'position_hash')}\t${tsvNumber(r.price, 'price')}\n`;
}

export function encodeTrade(t: TradePrint): string {
  const executed = Date.parse(t.executed_at);
  if (t.taker_action !== 'buy' && t.taker_action !== 'sell') throw new TypeError('taker_action must be buy or sell');
  return `${tsvMs(executed, 'executed_at')}\t${tsvString(t.router_contest_id, 'router_contest_id')}\t${tsvString(t.position_hash, 'position_hash')}\t${tsvString(t.partner_id, 'partner_id')}\t${tsvString(t.partner_name, 'partner_name')}\t${tsvString(t.venue_trade_id, 'venue_trade_id')}\t${tsvString(t.venue_market_id, 'venue_market_id')}\t${tsvString(t.liquidity_hash, 'liquidity_hash')}\t${tsvString(t.router_market_id, 'router_market_id')}\t${t.taker_action}\t${tsvNumber(t.price, 'price')}\t${tsvNumber(t.size_contracts, 'size_contracts')}\t${tsvNumber(t.notional_usd, 'notional_usd')}\t${t.is_block ? 1 : 0}\t${tsvNullable(t.trader_id, 'trader_id')}\t${tsvNullable(t.trader_id_kind, 'trader_id_kind')}\n`;
}

export type HistoryWriterOptions = BatchWriterOptions & {
  /**
   * Marks every row synthetic (schema migration 3). Only `flow history synthesize` sets it: the
   * reads leave such rows out unless told otherwise.
   */
  synthetic?: boolean;
  /** Per-table overrides (trades are few: a smaller batch keeps them prompt). */
  ticks?: BatchWriterOptions;
  points?: BatchWriterOptions;
  trades?: BatchWriterOptions;
};

/**
 * The three batch writers behind one object (flow history synthesize, tests). ticks(), consensus()
 * and trades() take the shapes of the stream events (TickEntry, consensus points, TradePrint); the
 * live pipeline writes through the history log instead (pipelines/history/consumer.ts).
 */
export class HistoryWriter {
  readonly tickWriter: BatchWriter<TickRow>;
  readonly pointWriter: BatchWriter<PricePointRow>;
  readonly tradeWriter: BatchWriter<TradePrint>;

  constructor(client: Inserter, opts: HistoryWriterOptions = {}) {
    const { ticks, points, trades, synthetic, ...common } = opts;
    const cols = (c: readonly string[]) => (synthetic ? [...c, SYNTHETIC_COLUMN] : c);
    // Each encoder ends its line with '\n'; a synthetic row gets one more field, the flag.
    const enc = <T>(f: (r: T) => string) => (synthetic ? (r: T) => `${f(r).slice(0, -1)}\t1\n` : f);
    this.tickWriter = new BatchWriter(client, TABLES.ticks, cols(TICK_COLUMNS), enc(encodeTick), { ...common, ...ticks });
    this.pointWriter = new BatchWriter(client, TABLES.points, cols(POINT_COLUMNS), enc(encodePoint), { ...common, ...points });
    this.tradeWriter = new BatchWriter(client, TABLES.trades, cols(TRADE_COLUMNS), enc(encodeTrade), { ...common, ...trades });
  }

  writeTick(row: TickRow): boolean {
    return this.tickWriter.write(row);
  }

  writePoint(row: PricePointRow): boolean {
    return this.pointWriter.write(row);
  }

  writeTrade(print: TradePrint): boolean {
    return this.tradeWriter.write(print);
  }

  /** Tick entries as a ticks stream event carries them, timed by their as_of. */
  ticks(contestId: string, ticks: readonly TickEntry[], _changed?: unknown, atMs?: number): void {
    for (const t of ticks) {
      const asOf = Date.parse(t.as_of);
      this.tickWriter.write({
        ts: Number.isFinite(asOf) ? asOf : (atMs ?? Date.now()),
        contest_id: contestId,
        position_hash: t.position_hash,
        partner_id: t.partner_id,
        price: t.price,
        available: t.available,
        liquidity_hash: t.liquidity_hash,
        source: t.source,
        outlier: t.outlier,
      });
    }
  }

  /** Consensus prices that changed, at `atMs`. A null price (no consensus) is skipped. */
  consensus(contestId: string, points: readonly { position_hash: string; price: number | null }[], atMs: number): void {
    for (const p of points) {
      if (p.price === null) continue;
      this.pointWriter.write({ ts: atMs, contest_id: contestId, position_hash: p.position_hash, price: p.price });
    }
  }

  /** Trade prints exactly as the trades stream event carries them. */
  trades(prints: readonly TradePrint[]): void {
    for (const p of prints) this.tradeWriter.write(p);
  }

  async flush(): Promise<boolean> {
    const r = await Promise.all([this.tickWriter.flush(), this.pointWriter.flush(), this.tradeWriter.flush()]);
    return r.every(Boolean);
  }

  async close(timeoutMs?: number): Promise<void> {
    await Promise.all([this.tickWriter.close(timeoutMs), this.pointWriter.close(timeoutMs), this.tradeWriter.close(timeoutMs)]);
  }

  stats(): { ticks: WriterStats; points: WriterStats; trades: WriterStats } {
    return { ticks: this.tickWriter.stats(), points: this.pointWriter.stats(), trades: this.tradeWriter.stats() };
  }
}
