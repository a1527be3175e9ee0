import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressLine, runHistoryCommand } from '../../../cli/history.js';
import { UsageError } from '../../../cli/keys.js';
import type { Runtime } from '../../../cli/runtime.js';
import type { TradePrint } from '../../../src/domain/stream.js';
import { historyCounts, partitionEndMs } from '../../../src/store/clickhouse/history.js';
import { applyRetention, currentRetentionDays, migrateClickHouse, TABLES } from '../../../src/store/clickhouse/schema.js';
import { SyntheticHistory, syntheticPositions, syntheticVenues, type SyntheticOptions } from '../../../src/store/clickhouse/synthetic.js';
import type { PricePointRow, TickRow } from '../../../src/store/clickhouse/writer.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { count, openTestClickHouse, type TestClickHouse } from './support.js';

let s: TestStack;
let tch: TestClickHouse;
let rt: Runtime;
const lines: string[] = [];
const out = (l: string) => void lines.push(l);

const P1 = 'ct_1:mk_ml:home:0:pt_nyc:ft';
const P2 = 'ct_1:mk_ml:away:0:pt_bos:ft';

beforeAll(async () => {
  tch = openTestClickHouse();
  s = await startStack();
  // The catalog's positions: definition jsonb carries position_hash and contest_id.
  for (const h of [P1, P2]) {
    await s.rt.pool.query('INSERT INTO positions (position_hash, contest_id, market_id, definition) VALUES ($1, $2, $3, $4)', [
      h,
      'ct_1',
      'mk_ml',
      JSON.stringify({ position_hash: h, contest_id: 'ct_1', market_id: 'mk_ml' }),
    ]);
  }
  rt = { ...s.rt, clickhouse: () => tch.ch };
});
afterAll(async () => {
  await s?.close();
  await tch?.close();
});

describe('schema', () => {
  it('migrations run once and record their version', async () => {
    const first = await migrateClickHouse(tch.ch);
    expect(first).toEqual([1, 2, 3, 4]);
    expect(await migrateClickHouse(tch.ch)).toEqual([]);
    expect(await count(tch.ch, `SELECT count() FROM ${TABLES.migrations} FINAL`)).toBe(4);
    for (const t of ['ticks', 'price_points', 'trades', 'ticks_1m', 'price_points_1m', 'ticks_1m_mv', 'price_points_1m_mv']) {
      expect(await count(tch.ch, 'SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', { t })).toBe(1);
    }
  });
  it('retention follows the configured days, and 0 removes the TTL', async () => {
    expect(await applyRetention(tch.ch, 30)).toHaveLength(5);
    for (const t of ['ticks', 'price_points', 'trades', 'ticks_1m', 'price_points_1m']) expect(await currentRetentionDays(tch.ch, t)).toBe(30);
    expect(await applyRetention(tch.ch, 30)).toEqual([]);
    await applyRetention(tch.ch, 7);
    expect(await currentRetentionDays(tch.ch, 'ticks')).toBe(7);
    await applyRetention(tch.ch, 0);
    for (const t of ['ticks', 'price_points', 'trades', 'ticks_1m', 'price_points_1m']) expect(await currentRetentionDays(tch.ch, t)).toBe(0);
  });
  it('partition ends', () => {
    expect(partitionEndMs('20261120', 'day')).toBe(Date.parse('2026-11-21T00:00:00Z'));
    expect(partitionEndMs('202611', 'month')).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(partitionEndMs('20261231', 'day')).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(partitionEndMs('tuple()', 'day')).toBeNull();
  });
});

describe('synthetic history', () => {
  const spec = (seed: number): SyntheticOptions => ({
    from: Date.parse('2026-11-20T00:00:00Z'),
    to: Date.parse('2026-11-20T01:00:00Z'),
    intervalMs: 10_000,
    seed,
    positions: syntheticPositions(3),
    venues: syntheticVenues(),
    tradeProbability: 0.2,
  });
  const collect = (o: SyntheticOptions) => {
    const rows: (TickRow | PricePointRow | TradePrint)[] = [];
    const g = new SyntheticHistory(o);
    for (let i = 0; i < g.steps; i++) g.step(i, { tick: (r) => rows.push(r), point: (r) => rows.push(r), trade: (p) => rows.push(p) });
    return rows;
  };
  it('is deterministic for a seed and differs across seeds', () => {
    const a = collect(spec(7));
    expect(a.length).toBeGreaterThan(500);
    expect(collect(spec(7))).toEqual(a);
    expect(collect(spec(8))).not.toEqual(a);
  });
  it('keeps prices inside (0, 1) and trades on publishing venues only', () => {
    const rows = collect(spec(3));
    const publishing = new Set(syntheticVenues().filter((v) => v.publishes_trades).map((v) => v.partner_id));
    for (const r of rows) {
      expect((r as { price: number }).price).toBeGreaterThan(0);
      expect((r as { price: number }).price).toBeLessThan(1);
      if ('venue_trade_id' in r) expect(publishing.has(r.partner_id)).toBe(true);
    }
    expect(rows.some((r) => 'venue_trade_id' in r)).toBe(true);
  });
});

describe('flow history', () => {
  const from = '2026-11-18T00:00:00Z';
  const to = '2026-11-19T12:00:00Z';

  it('backfill is refused with a message naming import and synthesize, and writes nothing', async () => {
    const before = (await historyCounts(tch.ch)).map((c) => c.rows);
    const err = await runHistoryCommand(rt, ['backfill', '--from', from, '--to', to], out).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/flow history import/);
    expect((err as Error).message).toMatch(/flow history synthesize/);
    expect((await historyCounts(tch.ch)).map((c) => c.rows)).toEqual(before);
  });

  it('synthesize reads positions and venues from PostgreSQL and writes every generated row, each marked synthetic', async () => {
    lines.length = 0;
    await runHistoryCommand(rt, ['synthesize', '--from', from, '--to', to, '--positions', '5', '--interval-ms', '60000'], out);
    expect(lines[0]).toContain('2 positions (catalog)');
    expect(lines[0]).toContain('1 venues');
    expect(lines[0]).toContain('marked synthetic');
    const counts = Object.fromEntries((await historyCounts(tch.ch)).map((c) => [c.table, c]));
    const m = /wrote ([\d,]+) synthetic ticks, ([\d,]+) consensus points, ([\d,]+) trades/.exec(lines.at(-1)!);
    expect(m).not.toBeNull();
    expect(counts.ticks!.rows).toBe(Number(m![1]!.replace(/,/g, '')));
    expect(counts.price_points!.rows).toBe(Number(m![2]!.replace(/,/g, '')));
    expect(counts.trades!.rows).toBe(Number(m![3]!.replace(/,/g, '')));
    for (const t of ['ticks', 'price_points', 'trades'] as const) expect(counts[t]!.synthetic).toBe(counts[t]!.rows);
    // The per-minute rollups carry the flag too, so bucketed reads can leave the rows out.
    for (const t of ['ticks_1m', 'price_points_1m']) {
      expect(await count(tch.ch, `SELECT count() FROM ${t} WHERE NOT synthetic`)).toBe(0);
      expect(await count(tch.ch, `SELECT count() FROM ${t}`)).toBeGreaterThan(0);
    }
    expect(counts.ticks!.rows).toBeGreaterThan(1000);
    expect(counts.ticks!.min_ms).toBeGreaterThanOrEqual(Date.parse(from));
    expect(counts.ticks!.max_ms).toBeLessThan(Date.parse(to));
    // Only the catalog's positions and its one non-practice venue.
    const hashes = await (await tch.ch.query({ query: 'SELECT DISTINCT position_hash, partner_id FROM ticks ORDER BY 1', format: 'JSONEachRow' })).json();
    expect(hashes).toEqual([
      { position_hash: P2, partner_id: 'fx_book' },
      { position_hash: P1, partner_id: 'fx_book' },
    ]);
  });

  it('status reports rows per table', async () => {
    lines.length = 0;
    await runHistoryCommand(rt, ['status', '--json'], out);
    const st = JSON.parse(lines[0]!);
    expect(st.retention_days).toBe(0);
    expect(st.tables.map((t: { table: string }) => t.table)).toEqual(['ticks', 'price_points', 'trades']);
    expect(st.tables[0].rows).toBeGreaterThan(0);
  });

  it('prune removes everything before --before (whole days dropped, the straddling day deleted) and keeps the rest', async () => {
    const cut = Date.parse('2026-11-19T06:00:00Z');
    const after = async (table: string, col: string) => count(tch.ch, `SELECT count() FROM ${table} WHERE ${col} >= fromUnixTimestamp64Milli({b:Int64}, 'UTC')`, { b: cut });
    const keep = { ticks: await after('ticks', 'ts'), points: await after('price_points', 'ts'), trades: await after('trades', 'executed_at') };
    expect(keep.ticks).toBeGreaterThan(0);
    lines.length = 0;
    await runHistoryCommand(rt, ['prune', '--before', '2026-11-19T06:00:00Z'], out);
    expect(lines.join('\n')).toMatch(/ticks: removed [\d,]+ rows \(1 whole partitions dropped\)/);
    const counts = Object.fromEntries((await historyCounts(tch.ch)).map((c) => [c.table, c]));
    expect(counts.ticks!.rows).toBe(keep.ticks);
    expect(counts.price_points!.rows).toBe(keep.points);
    expect(counts.trades!.rows).toBe(keep.trades);
    expect(counts.ticks!.min_ms).toBeGreaterThanOrEqual(cut);
    // The per-minute closes are cut at the same place, and still summarize what is left.
    for (const t of ['ticks_1m', 'price_points_1m']) {
      expect(await count(tch.ch, `SELECT count() FROM ${t} WHERE minute < toDateTime({b:Int64}, 'UTC')`, { b: cut / 1000 })).toBe(0);
    }
    expect(await count(tch.ch, 'SELECT uniqExact(contest_id, position_hash, partner_id, toStartOfMinute(ts)) FROM ticks')).toBe(
      await count(tch.ch, 'SELECT uniqExact(contest_id, position_hash, partner_id, minute) FROM ticks_1m'),
    );
  });

  it('prune without --before and with retention 0 prunes nothing', async () => {
    lines.length = 0;
    const before = (await historyCounts(tch.ch))[0]!.rows;
    await runHistoryCommand(rt, ['prune'], out);
    expect(lines[0]).toContain('nothing to prune');
    expect((await historyCounts(tch.ch))[0]!.rows).toBe(before);
  });

  it('refuses bad arguments with a usage error', async () => {
    await expect(runHistoryCommand(rt, ['synthesize', '--to', to], out)).rejects.toBeInstanceOf(UsageError);
    await expect(runHistoryCommand(rt, ['synthesize', '--from', 'soon', '--to', to], out)).rejects.toBeInstanceOf(UsageError);
    await expect(runHistoryCommand(rt, ['synthesize', '--from', to, '--to', from], out)).rejects.toThrow(/later/);
    await expect(runHistoryCommand(rt, ['synthesize', '--from', from, '--to', to, '--positions', '0'], out)).rejects.toBeInstanceOf(UsageError);
    await expect(runHistoryCommand(rt, ['prune', '--synthetic', '--before', from], out)).rejects.toBeInstanceOf(UsageError);
    await expect(runHistoryCommand(rt, ['prune', '--before', 'x'], out)).rejects.toBeInstanceOf(UsageError);
    await expect(runHistoryCommand(rt, ['nope'], out)).rejects.toBeInstanceOf(UsageError);
  });

  it('prune --synthetic removes every synthetic row and keeps real ones', async () => {
    await tch.ch.insert({
      table: 'ticks',
      columns: ['ts', 'contest_id', 'position_hash', 'partner_id', 'price', 'available', 'liquidity_hash', 'source', 'outlier'],
      values: [{ ts: '2026-11-19 07:00:00.000', contest_id: 'ct_1', position_hash: P1, partner_id: 'real_v', price: 0.4, available: 5, liquidity_hash: 'real_v:1', source: 'polling', outlier: false }],
      format: 'JSONEachRow',
    });
    expect((await historyCounts(tch.ch))[0]!.synthetic).toBeGreaterThan(0);
    lines.length = 0;
    await runHistoryCommand(rt, ['prune', '--synthetic'], out);
    const counts = await historyCounts(tch.ch);
    for (const c of counts) expect(c.synthetic).toBe(0);
    expect(counts[0]!.rows).toBe(1);
    expect(await count(tch.ch, 'SELECT count() FROM ticks_1m WHERE synthetic')).toBe(0);
    expect(await count(tch.ch, 'SELECT count() FROM ticks_1m')).toBe(1);
  });

  it('draws a progress bar with rows, rate and ETA', () => {
    const line = progressLine({ written: 50_000, generated: 60_000, expected: 100_000, fraction: 0.5, elapsedMs: 10_000, done: false }, 10);
    expect(line).toBe('[#####.....]  50.0%  50,000 rows written  5,000 rows/s  ETA 0:10');
  });
});
