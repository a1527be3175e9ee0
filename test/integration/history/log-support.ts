/** Shared by the history log writer tests: rows appended the way ingest and compute append them, and what must land. */
import { randomBytes } from 'node:crypto';
import type { TradePrint } from '../../../src/domain/stream.js';
import type { ClickHouseClient } from '../../../src/store/clickhouse/client.js';
import type { HotState } from '../../../src/store/redis/hot.js';
import { count } from './support.js';

export const T0 = Date.parse('2026-11-20T12:00:00.000Z');

/** A contest id no other test (or run, on a shared ClickHouse server) uses. */
export const uniqueContest = (tag: string) => `ct_${tag}_${randomBytes(4).toString('hex')}`;

export const tick = (contest: string, partner: string, i: number, price = 0.5) => ({
  ts: T0 + i * 1_000,
  contest_id: contest,
  position_hash: `${contest}:mk:home:0:p:ft`,
  partner_id: partner,
  price,
  available: 100 + i,
  liquidity_hash: `${partner}:${contest}:home`,
  source: 'streaming' as const,
});

export const print = (contest: string, id: string): TradePrint => ({
  partner_id: 'vx',
  partner_name: 'Venue X',
  venue_trade_id: id,
  venue_market_id: 'm1',
  liquidity_hash: `vx:${contest}:home`,
  position_hash: `${contest}:mk:home:0:p:ft`,
  router_contest_id: contest,
  router_market_id: 'rm1',
  taker_action: 'buy',
  price: 0.52,
  size_contracts: 10,
  notional_usd: 5.2,
  is_block: false,
  trader_id: null,
  trader_id_kind: null,
  executed_at: new Date(T0 + 30_000).toISOString(),
});

/** What appendAll() puts in the log for one contest. */
export const APPENDED = { ticks: 4, outliers: 1, points: 2, trades: 2 } as const;

/**
 * Appends a contest's history the way the pipeline does: compute stores a result that flags vy's
 * listing an outlier, with two consensus points; ingest writes two batches of quote changes (four
 * ticks, the vy one after the flag); two trade prints.
 */
export async function appendAll(hot: HotState, contest: string): Promise<void> {
  const vy = tick(contest, 'vy', 0);
  await hot.writeComputed(contest, 1, '[]', '{}', [], {
    hist: [{ table: 'points', rows: JSON.stringify([0, 1].map((i) => ({ ts: T0 + i * 1_000, contest_id: contest, position_hash: `${contest}:mk:home:0:p:ft`, price: 0.5 + i / 100 }))) }],
    outliers: [vy.liquidity_hash],
  });
  const batch1 = [tick(contest, 'vx', 1, 0.51), tick(contest, 'vx', 2, 0.52)];
  await hot.writeQuotes(contest, batch1, [{ table: 'ticks', rows: JSON.stringify(batch1), hashes: batch1.map((t) => t.liquidity_hash) }]);
  const batch2 = [tick(contest, 'vx', 3, 0.53), vy];
  await hot.writeQuotes(contest, batch2, [{ table: 'ticks', rows: JSON.stringify(batch2), hashes: batch2.map((t) => t.liquidity_hash) }]);
  for (const id of ['t1', 't2']) await hot.append(contest, [], [{ table: 'trades', rows: JSON.stringify([print(contest, id)]) }]);
}

/** Rows of the contest in each table (the rollups unmerged: a doubled insert would show). */
export async function landed(ch: ClickHouseClient, contest: string) {
  const c = (sql: string) => count(ch, sql, { c: contest });
  return {
    ticks: await c('SELECT count() FROM ticks WHERE contest_id = {c:String}'),
    outliers: await c('SELECT countIf(outlier) FROM ticks WHERE contest_id = {c:String}'),
    points: await c('SELECT count() FROM price_points WHERE contest_id = {c:String}'),
    trades: await c('SELECT count() FROM trades WHERE router_contest_id = {c:String}'),
    ticks1m: await c('SELECT count() FROM ticks_1m WHERE contest_id = {c:String}'),
    points1m: await c('SELECT count() FROM price_points_1m WHERE contest_id = {c:String}'),
  };
}
