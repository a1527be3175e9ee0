/**
 * Reads of the history tables: price-history series and trade prints. Every query is bounded by a
 * time window, by the contest (or one position) and by LIMIT, and ClickHouse does the bucketing and
 * the per-series budget. Parameters are bound ({name:Type}), never spliced into the SQL.
 */
import { bucketWidthMs, type Resolution } from '../../domain/history.js';
import type { TradePrint } from '../../domain/stream.js';
import type { ClickHouseClient } from './client.js';
import { HISTORY_TABLES, RETAINED_TABLES, TABLES } from './schema.js';

const MINUTE_MS = 60_000;
/** DateTime (the per-minute tables' type) ends in 2106. */
const MAX_MINUTE_MS = 4_294_967_040_000;

/** A query that runs past this is cancelled by ClickHouse rather than holding a request open. */
export const HISTORY_QUERY_TIMEOUT_S = 10;

/** Leaves out the rows `flow history synthesize` wrote (every history table and rollup has the flag). */
const REAL_ONLY = 'NOT synthetic';

export interface PriceHistoryQuery {
  contestId: string;
  /** Inclusive window bounds, unix ms. */
  from: number;
  to: number;
  /** The effective resolution (domain/history.ts effectiveResolution). */
  resolution: Resolution;
  /** Restrict to these positions; undefined = every position of the contest with rows in the window. */
  positionHashes?: string[];
  /** A venue's quoted price series (ticks); undefined = the consensus series (price_points). */
  partnerId?: string;
  /** Total point budget, shared evenly across series. */
  limit: number;
  /** Also read rows `flow history synthesize` wrote (default: real rows only). */
  includeSynthetic?: boolean;
}

export interface HistoryPoint {
  t: number;
  position_hash: string;
  price: number;
}

export interface PriceHistoryResult {
  points: HistoryPoint[];
  seriesTruncated: boolean;
}

/** The points as ClickHouse wrote them: a JSON array, ready to be placed in a response. */
export interface PriceHistoryJson {
  /** UTF-8 JSON array of point objects {"t","position_hash","price"}. */
  points: Buffer;
  count: number;
  seriesTruncated: boolean;
}

export interface BoundQuery {
  query: string;
  query_params: Record<string, unknown>;
}

/**
 * The one SQL statement behind GET contests/:id/price-history. Run with FORMAT JSONEachRow it
 * writes a JSON array whose elements are the response's point objects {t, position_hash, price},
 * in the response's order.
 *
 * Buckets are epoch-aligned (UTC) intervals [t, t + width): a point's t is the bucket start and its
 * price the close, the last row of the bucket (argMax by time). Only rows inside [from, to] count,
 * so the first and last buckets may be partial and the first t may precede from. A bucket with no
 * row yields no point (no forward fill). At tick resolution every row is a point. Bucketed series
 * merge the per-minute closes (ticks_1m, price_points_1m) of the whole minutes in the window with
 * the raw rows of the partial minutes at its edges: the same answer as bucketing the raw rows.
 *
 * Budget: series are ranked by position_hash; with S series and limit L each of the first
 * min(S, L) series keeps its first floor(L / min(S, L)) points in time order (the oldest, so a
 * caller pages on with from = last t + 1). When S > L the statement also returns the first point of
 * series L + 1: L + 1 lines can only mean "more series than the limit covers" (otherwise at most L
 * lines come back), and the reader drops that sentinel line.
 */
export function priceHistorySql(q: PriceHistoryQuery): BoundQuery {
  const { query: inner, query_params } = seriesSql(q);
  const query = `SELECT t, position_hash, price FROM (
  SELECT position_hash, t, price,
    row_number() OVER (PARTITION BY position_hash ORDER BY t) AS rn,
    dense_rank() OVER (ORDER BY position_hash) AS sr,
    uniqExact(position_hash) OVER () AS n
  FROM (${inner})
)
WHERE sr <= {limit:UInt32} + 1 AND rn <= intDiv({limit:UInt32}, least(n, {limit:UInt32}))
ORDER BY position_hash, t
SETTINGS output_format_json_array_of_rows = 1, output_format_json_quote_64bit_integers = 0, output_format_json_escape_forward_slashes = 0,
  max_execution_time = ${HISTORY_QUERY_TIMEOUT_S}`;
  return { query, query_params };
}

/** The points of every series before the budget: (position_hash, t, price), unordered. */
export function seriesSql(q: PriceHistoryQuery): BoundQuery {
  const width = bucketWidthMs(q.resolution);
  const venue = q.partnerId !== undefined;
  const source = venue ? TABLES.ticks : TABLES.points;
  const series = [
    'contest_id = {contest:String}',
    ...(q.positionHashes ? ['position_hash IN {hashes:Array(String)}'] : []),
    ...(venue ? ['partner_id = {partner:String}'] : []),
    ...(q.includeSynthetic ? [] : [REAL_ONLY]),
  ].join(' AND ');
  const window = "ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')";
  const query_params: Record<string, unknown> = { contest: q.contestId, from: q.from, to: q.to, limit: q.limit };
  if (q.positionHashes) query_params.hashes = q.positionHashes;
  if (venue) query_params.partner = q.partnerId;

  let inner: string;
  if (width === null) {
    inner = `SELECT position_hash, toUnixTimestamp64Milli(ts) AS t, price FROM ${source} WHERE ${series} AND ${window}`;
  } else {
    query_params.width = width;
    // Whole minutes inside [from, to] come from the per-minute closes; the partial minutes at
    // either edge from the rows themselves, so only rows inside the window count.
    const fullFrom = Math.ceil(q.from / MINUTE_MS) * MINUTE_MS;
    const fullTo = Math.min(Math.floor((q.to + 1) / MINUTE_MS) * MINUTE_MS, MAX_MINUTE_MS);
    const bucket = 'toInt64(intDiv(toUnixTimestamp64Milli(ts), {width:Int64}) * {width:Int64})';
    if (fullFrom >= fullTo) {
      inner = `SELECT position_hash, ${bucket} AS t, argMax(price, ts) AS price FROM ${source} WHERE ${series} AND ${window} GROUP BY position_hash, t`;
    } else {
      query_params.full_from = fullFrom / 1000;
      query_params.full_to = fullTo / 1000;
      query_params.full_from_ms = fullFrom;
      query_params.full_to_ms = fullTo;
      const rollup = venue ? TABLES.ticks1m : TABLES.points1m;
      const edges =
        "((ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({full_from_ms:Int64}, 'UTC'))" +
        " OR (ts >= fromUnixTimestamp64Milli({full_to_ms:Int64}, 'UTC') AND ts <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')))";
      inner = `SELECT position_hash, t, argMaxMerge(close) AS price FROM (
      SELECT position_hash, toInt64(intDiv(toInt64(toUnixTimestamp(minute)) * 1000, {width:Int64}) * {width:Int64}) AS t, close
      FROM ${rollup} WHERE ${series} AND minute >= toDateTime({full_from:Int64}, 'UTC') AND minute < toDateTime({full_to:Int64}, 'UTC')
      UNION ALL
      SELECT position_hash, ${bucket} AS t, argMaxState(price, ts) AS close
      FROM ${source} WHERE ${series} AND ${edges} GROUP BY position_hash, t
    ) GROUP BY position_hash, t`;
    }
  }
  return { query: inner, query_params };
}

const EMPTY_ARRAY = Buffer.from('[]');
const ROW_START = Buffer.from('\n{');
const LAST_ROW_START = Buffer.from(',\n{');

/** Runs a statement and returns ClickHouse's output bytes as they came (chDB or server alike). */
export async function execBytes(ch: ClickHouseClient, q: BoundQuery, format: string): Promise<Buffer> {
  const { stream } = await ch.exec({ query: `${q.query}\nFORMAT ${format}`, query_params: q.query_params });
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * Runs priceHistorySql with ClickHouse writing the JSON array itself (JSONEachRow as an array of
 * rows): the response embeds those bytes, with no parse, no re-serialization and no re-encoding of
 * up to 50,000 points. Only the sentinel row (see priceHistorySql) is cut off when present.
 */
export async function queryPriceHistoryJson(ch: ClickHouseClient, q: PriceHistoryQuery): Promise<PriceHistoryJson> {
  if (q.positionHashes && q.positionHashes.length === 0) return { points: EMPTY_ARRAY, count: 0, seriesTruncated: false };
  const sql = priceHistorySql(q);
  let out = await execBytes(ch, sql, 'JSONEachRow');
  let count = 0;
  for (let i = out.indexOf(ROW_START); i !== -1; i = out.indexOf(ROW_START, i + 2)) count++;
  if (count === 0) return { points: EMPTY_ARRAY, count: 0, seriesTruncated: false };
  let seriesTruncated = false;
  if (count > q.limit) {
    // The sentinel: the first point of series limit + 1 (see priceHistorySql), always the last row.
    seriesTruncated = true;
    const cut = out.lastIndexOf(LAST_ROW_START);
    out = Buffer.concat([out.subarray(0, cut), Buffer.from('\n]')]);
    count--;
  } else {
    let end = out.length;
    while (end > 0 && (out[end - 1] === 0x0a || out[end - 1] === 0x20)) end--;
    out = out.subarray(0, end);
  }
  return { points: out, count, seriesTruncated };
}

/** The same result as objects, for callers that want to work with the points. */
export async function queryPriceHistory(ch: ClickHouseClient, q: PriceHistoryQuery): Promise<PriceHistoryResult> {
  const r = await queryPriceHistoryJson(ch, q);
  return { points: JSON.parse(r.points.toString('utf8')) as HistoryPoint[], seriesTruncated: r.seriesTruncated };
}

// ---- trades ------------------------------------------------------------------------------------

export interface TradesQuery {
  contestId?: string;
  positionHash?: string;
  /** A venue by partner_id, or by name (case-insensitive). */
  partner?: string;
  /** Inclusive lower bound, unix ms. */
  since: number;
  /** Exclusive upper bound, unix ms; null = open. */
  until: number | null;
  minNotionalUsd?: number;
  limit: number;
  /** Also read prints `flow history synthesize` wrote (default: real prints only). */
  includeSynthetic?: boolean;
}

const TRADE_SELECT = `partner_id, partner_name, venue_trade_id, venue_market_id, liquidity_hash, position_hash,
  router_contest_id, router_market_id, taker_action, price, size_contracts, notional_usd, is_block,
  trader_id, trader_id_kind, toUnixTimestamp64Milli(executed_at) AS executed_ms`;

type TradeRowTuple = [string, string, string, string, string, string, string, string, 'buy' | 'sell', number, number, number, boolean, string | null, string | null, number];

/** Newest first; a print delivered twice (same venue and venue trade id) is returned once. */
export function tradesSql(q: TradesQuery): BoundQuery {
  if (q.contestId === undefined && q.positionHash === undefined) throw new RangeError('a trades query needs a contest or a position');
  const where = ["executed_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')", ...(q.includeSynthetic ? [] : [REAL_ONLY])];
  const query_params: Record<string, unknown> = { since: q.since, limit: q.limit };
  if (q.until !== null) {
    where.push("executed_at < fromUnixTimestamp64Milli({until:Int64}, 'UTC')");
    query_params.until = q.until;
  }
  if (q.contestId !== undefined) {
    where.push('router_contest_id = {contest:String}');
    query_params.contest = q.contestId;
  }
  if (q.positionHash !== undefined) {
    where.push('position_hash = {position:String}');
    query_params.position = q.positionHash;
  }
  if (q.partner !== undefined) {
    where.push('(partner_id = {partner:String} OR lowerUTF8(partner_name) = lowerUTF8({partner:String}))');
    query_params.partner = q.partner;
  }
  if (q.minNotionalUsd !== undefined) {
    where.push('notional_usd >= {min_notional:Float64}');
    query_params.min_notional = q.minNotionalUsd;
  }
  const query = `SELECT ${TRADE_SELECT} FROM ${TABLES.trades}
WHERE ${where.join(' AND ')}
ORDER BY executed_at DESC, partner_id, venue_trade_id
LIMIT 1 BY partner_id, venue_trade_id
LIMIT {limit:UInt32}
SETTINGS output_format_json_quote_64bit_integers = 0, max_execution_time = ${HISTORY_QUERY_TIMEOUT_S}`;
  return { query, query_params };
}

export async function queryTrades(ch: ClickHouseClient, q: TradesQuery): Promise<TradePrint[]> {
  const rs = await ch.query({ ...tradesSql(q), format: 'JSONCompact' });
  const { data } = await rs.json<TradeRowTuple>();
  return data.map((r) => ({
    partner_id: r[0],
    partner_name: r[1],
    venue_trade_id: r[2],
    venue_market_id: r[3],
    liquidity_hash: r[4],
    position_hash: r[5],
    router_contest_id: r[6],
    router_market_id: r[7],
    taker_action: r[8],
    price: r[9],
    size_contracts: r[10],
    notional_usd: r[11],
    is_block: r[12] === true || (r[12] as unknown) === 1,
    trader_id: r[13],
    trader_id_kind: r[14],
    executed_at: new Date(Number(r[15])).toISOString(),
  }));
}

// ---- retention and inspection ------------------------------------------------------------------

export interface TableCount {
  table: string;
  rows: number;
  /** Of those, rows `flow history synthesize` wrote. */
  synthetic: number;
  min_ms: number | null;
  max_ms: number | null;
}

export async function historyCounts(ch: ClickHouseClient): Promise<TableCount[]> {
  const out: TableCount[] = [];
  for (const t of HISTORY_TABLES) {
    const rs = await ch.query({
      query: `SELECT count() AS rows, countIf(synthetic) AS synthetic, toUnixTimestamp64Milli(min(${t.time})) AS min_ms, toUnixTimestamp64Milli(max(${t.time})) AS max_ms
              FROM ${t.table} SETTINGS output_format_json_quote_64bit_integers = 0`,
      format: 'JSONEachRow',
    });
    const [r] = await rs.json<{ rows: number; synthetic: number; min_ms: number; max_ms: number }>();
    const rows = Number(r?.rows ?? 0);
    out.push({ table: t.table, rows, synthetic: Number(r?.synthetic ?? 0), min_ms: rows ? Number(r!.min_ms) : null, max_ms: rows ? Number(r!.max_ms) : null });
  }
  return out;
}

/** End (exclusive, unix ms) of a partition of toYYYYMMDD / toYYYYMM, from its id. */
export function partitionEndMs(partitionId: string, grain: 'day' | 'month'): number | null {
  if (grain === 'day') {
    const m = /^(\d{4})(\d{2})(\d{2})$/.exec(partitionId);
    return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + 1) : null;
  }
  const m = /^(\d{4})(\d{2})$/.exec(partitionId);
  return m ? Date.UTC(Number(m[1]), Number(m[2]), 1) : null;
}

export interface PruneResult {
  table: string;
  rowsBefore: number;
  rowsRemoved: number;
  partitionsDropped: number;
}

/**
 * Removes every row older than `before` (rounded down to the minute): whole partitions that end by
 * then are dropped (cheap), and the rows of the partition that straddles the boundary are deleted.
 */
export async function pruneHistory(ch: ClickHouseClient, before: number): Promise<PruneResult[]> {
  // Whole minutes only, so the per-minute closes and the rows they summarize are cut at the same place.
  const beforeMs = Math.floor(before / 60_000) * 60_000;
  const out: PruneResult[] = [];
  for (const t of RETAINED_TABLES) {
    const count = async () => {
      const rs = await ch.query({
        query: `SELECT count() AS n FROM ${t.table} WHERE ${t.time} < fromUnixTimestamp64Milli({before:Int64}, 'UTC') SETTINGS output_format_json_quote_64bit_integers = 0`,
        query_params: { before: beforeMs },
        format: 'JSONEachRow',
      });
      return Number((await rs.json<{ n: number }>())[0]?.n ?? 0);
    };
    const rowsBefore = await count();
    let partitionsDropped = 0;
    if (rowsBefore > 0) {
      const rs = await ch.query({
        query: 'SELECT DISTINCT partition_id FROM system.parts WHERE database = currentDatabase() AND table = {t:String} AND active',
        query_params: { t: t.table },
        format: 'JSONEachRow',
      });
      for (const { partition_id } of await rs.json<{ partition_id: string }>()) {
        const end = partitionEndMs(partition_id, t.partition);
        if (end !== null && end <= beforeMs) {
          // partition_id is digits only here (partitionEndMs matched it), so it is safe to inline.
          await ch.command({ query: `ALTER TABLE ${t.table} DROP PARTITION ID '${partition_id}'` });
          partitionsDropped++;
        }
      }
      if ((await count()) > 0) {
        await ch.command({
          query: `ALTER TABLE ${t.table} DELETE WHERE ${t.time} < fromUnixTimestamp64Milli({before:Int64}, 'UTC') SETTINGS mutations_sync = 2`,
          query_params: { before: beforeMs },
        });
      }
    }
    const left = rowsBefore > 0 ? await count() : 0;
    out.push({ table: t.table, rowsBefore, rowsRemoved: rowsBefore - left, partitionsDropped });
  }
  return out;
}

/** Removes every row `flow history synthesize` wrote, from the history tables and their rollups. */
export async function pruneSynthetic(ch: ClickHouseClient): Promise<{ table: string; rowsRemoved: number }[]> {
  const out: { table: string; rowsRemoved: number }[] = [];
  for (const t of RETAINED_TABLES) {
    const n = async () => {
      const rs = await ch.query({
        query: `SELECT count() AS n FROM ${t.table} WHERE synthetic SETTINGS output_format_json_quote_64bit_integers = 0`,
        format: 'JSONEachRow',
      });
      return Number((await rs.json<{ n: number }>())[0]?.n ?? 0);
    };
    const before = await n();
    if (before > 0) await ch.command({ query: `ALTER TABLE ${t.table} DELETE WHERE synthetic SETTINGS mutations_sync = 2` });
    out.push({ table: t.table, rowsRemoved: before - (before > 0 ? await n() : 0) });
  }
  return out;
}
