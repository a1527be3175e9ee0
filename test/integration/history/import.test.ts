/**
 * `flow history import` and `flow history synthesize` against real chDB, PostgreSQL and Redis: what
 * a file holds is exactly what the REST history serves afterwards; a file with one bad record is
 * reported by line and writes nothing; synthetic rows are marked and left out of the reads unless
 * FLOW_HISTORY_INCLUDE_SYNTHETIC says otherwise; and the real CLI's exit codes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../../api/rest/app.js';
import { historyRoutes } from '../../../api/rest/history/routes.js';
import { CommandFailed } from '../../../cli/errors.js';
import { runImportCommand } from '../../../cli/history-import.js';
import { runHistoryCommand } from '../../../cli/history.js';
import { UsageError } from '../../../cli/keys.js';
import { appContext, type Runtime } from '../../../cli/runtime.js';
import { ManualClock } from '../../../src/clock.js';
import { historyCounts } from '../../../src/store/clickhouse/history.js';
import { CLICKHOUSE_MIGRATIONS, prepareHistoryStore, TABLES } from '../../../src/store/clickhouse/schema.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { runCli } from '../../support/cli.js';
import { removeDataDir, startStack, type TestStack } from '../../support/stack.js';
import { count, openTestClickHouse, queryString, type TestClickHouse } from './support.js';
import { tempDir } from '../../support/scratch.js';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const M = 60_000;
const NOW = T0 + 3 * 3_600_000;
const C = 'ct_imp';
const A = `${C}:mk_ml:home:0:pt_a:ft`;
const B = `${C}:mk_ml:away:0:pt_b:ft`;

let s: TestStack;
let tch: TestClickHouse;
let rt: Runtime;
let dir: string;
let KEY: Record<string, string>;
let withSynthetic: BuiltApp;
const lines: string[] = [];
const out = (l: string) => void lines.push(l);
/** Progress goes here (a non-terminal stream: JSON lines). */
const progress: string[] = [];
const progressSink = Object.assign(new Writable({ write: (c, _e, cb) => (progress.push(String(c)), cb()) }), { isTTY: false });

const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const importFile = (args: string[]) => runImportCommand(rt, args, out, progressSink);
const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as Error);
const rows = async () => Object.fromEntries((await historyCounts(tch.ch)).map((c) => [c.table, c.rows]));

const venueSeries = async (app: BuiltApp, contest: string, partner: string, resolution = 'tick', from = T0 - 60 * M, to = T0 + 60 * M) => {
  const r = await app.app.inject({
    url: `/flow/v1/contests/${contest}/price-history?${queryString({ partner_id: partner, resolution, from, to })}`,
    headers: KEY,
  });
  expect(r.statusCode).toBe(200);
  return JSON.parse(r.body).data.points as { t: number; position_hash: string; price: number }[];
};
const trades = async (app: BuiltApp, contest: string) => {
  const r = await app.app.inject({ url: `/flow/v1/trades?${queryString({ contest_id: contest, since: T0 - 60 * M, limit: 1000 })}`, headers: KEY });
  expect(r.statusCode).toBe(200);
  return JSON.parse(r.body).data as Record<string, unknown>[];
};

beforeAll(async () => {
  dir = tempDir('import');
  tch = openTestClickHouse();
  // A store from before the synthetic flag: migrations 1 and 2 only, with a real row in it.
  await tch.ch.command({ query: 'CREATE TABLE flow_history_migrations (version UInt32, name String, applied_at DateTime64(3, \'UTC\') DEFAULT now64(3)) ENGINE = ReplacingMergeTree ORDER BY version' });
  for (const m of CLICKHOUSE_MIGRATIONS.slice(0, 2)) {
    for (const sql of m.statements) await tch.ch.command({ query: sql });
    await tch.ch.insert({ table: TABLES.migrations, columns: ['version', 'name'], values: [{ version: m.version, name: m.name }], format: 'JSONEachRow' });
  }
  await tch.ch.insert({
    table: 'ticks',
    columns: ['ts', 'contest_id', 'position_hash', 'partner_id', 'price', 'available', 'liquidity_hash', 'source', 'outlier'],
    values: [{ ts: '2026-11-20 11:00:00.000', contest_id: 'ct_old', position_hash: A, partner_id: 'v_old', price: 0.41, available: 9, liquidity_hash: 'v_old:a', source: 'streaming', outlier: false }],
    format: 'JSONEachRow',
  });
  s = await startStack({ clock: new ManualClock(NOW), plugins: [historyRoutes], clickhouse: tch.ch });
  await prepareHistoryStore(tch.ch, { retentionDays: 0 });
  rt = { ...s.rt, clickhouse: () => tch.ch };
  KEY = { 'x-api-key': (await createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'data', environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 })).api_key };
  withSynthetic = await buildApp(appContext(s.rt, { clickhouse: tch.ch, metrics: new Registry(), config: { ...s.rt.config, historyIncludeSynthetic: true } }), [historyRoutes]);
});

afterAll(async () => {
  await withSynthetic?.close();
  await s?.close();
  await tch?.close();
  if (dir) removeDataDir(dir);
});

describe('migration 3 on an existing store', () => {
  it('adds the flag with existing rows real, still served, rollups included', async () => {
    expect(await count(tch.ch, 'SELECT count() FROM ticks WHERE NOT synthetic')).toBe(1);
    expect(await venueSeries(s.built, 'ct_old', 'v_old')).toEqual([{ t: T0 - 60 * M, position_hash: A, price: 0.41 }]);
    // 5m buckets over a day read the per-minute rollup, migrated in place.
    expect(await venueSeries(s.built, 'ct_old', 'v_old', '5m', T0 - 12 * 60 * M, T0 + 12 * 60 * M)).toEqual([{ t: T0 - 60 * M, position_hash: A, price: 0.41 }]);
  });
});

describe('flow history import', () => {
  it('imports a CSV of ticks: exactly its rows, served by the REST history', async () => {
    const csv = file(
      'ticks.csv',
      '\ufeffts,contest_id,position_hash,partner_id,price,available,liquidity_hash,source,outlier\r\n' +
        `${T0},${C},${A},vx,0.41,120.5,"vx:a,1",streaming,false\r\n` +
        `2026-11-20T12:01:00.500Z,${C},${A},vx,0.42,99,"vx:a,1",,\r\n` +
        `${T0 + 2 * M},${C},${B},vx,0.58,10,vx:b,polling,true\r\n` +
        `${T0 + 3 * M},${C},${A},vy,0.40,1000,vy:a,streaming,false\r\n`,
    );
    lines.length = 0;
    progress.length = 0;
    await importFile([csv]);
    expect(lines.at(-1)).toMatch(/^imported 4 ticks from .*ticks\.csv into ticks/);
    // Series in position_hash order (…:away:… before …:home:…), each in time order.
    expect(await venueSeries(s.built, C, 'vx')).toEqual([
      { t: T0 + 2 * M, position_hash: B, price: 0.58 },
      { t: T0, position_hash: A, price: 0.41 },
      { t: T0 + M + 500, position_hash: A, price: 0.42 },
    ]);
    expect(await venueSeries(s.built, C, 'vy')).toEqual([{ t: T0 + 3 * M, position_hash: A, price: 0.4 }]);
    const stored = await (
      await tch.ch.query({
        query: `SELECT toUnixTimestamp64Milli(ts) AS t, partner_id, available, liquidity_hash, source, outlier, synthetic FROM ticks WHERE contest_id = '${C}' ORDER BY t`,
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      })
    ).json();
    expect(stored).toEqual([
      { t: T0, partner_id: 'vx', available: 120.5, liquidity_hash: 'vx:a,1', source: 'streaming', outlier: false, synthetic: false },
      { t: T0 + M + 500, partner_id: 'vx', available: 99, liquidity_hash: 'vx:a,1', source: 'streaming', outlier: false, synthetic: false },
      { t: T0 + 2 * M, partner_id: 'vx', available: 10, liquidity_hash: 'vx:b', source: 'polling', outlier: true, synthetic: false },
      { t: T0 + 3 * M, partner_id: 'vy', available: 1000, liquidity_hash: 'vy:a', source: 'streaming', outlier: false, synthetic: false },
    ]);
    // Not a terminal: structured progress lines, one phase after another.
    const phases = progress.map((l) => JSON.parse(l)).filter((p) => p.event === 'history_import_progress').map((p) => p.phase);
    expect(phases).toEqual(['validate', 'stage', 'move']);
    // No staging table is left behind.
    expect(await count(tch.ch, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND startsWith(name, 'flow_import_')")).toBe(0);
  });

  it('imports a JSONL of trades: exactly its prints, served by GET /flow/v1/trades', async () => {
    const base = { router_contest_id: C, position_hash: A, partner_id: 'vx', partner_name: 'Venue X', venue_market_id: 'm1', liquidity_hash: 'vx:a', router_market_id: 'mk_ml' };
    const jsonl = file(
      'trades.jsonl',
      [
        { ...base, venue_trade_id: 't1', taker_action: 'buy', price: 0.6, size_contracts: 10, executed_at: '2026-11-20T12:10:00Z' },
        '',
        { ...base, venue_trade_id: 't2', taker_action: 'sell', price: '0.25', size_contracts: '4', notional_usd: 1, is_block: true, trader_id: 'w1', trader_id_kind: 'wallet', executed_at: T0 + 20 * M },
        { ...base, partner_id: 'vy', partner_name: null, venue_trade_id: 't3', taker_action: 'buy', price: 1, size_contracts: 0.5, executed_at: T0 + 30 * M },
      ]
        .map((r) => (typeof r === 'string' ? r : JSON.stringify(r)))
        .join('\n'),
    );
    lines.length = 0;
    await importFile([jsonl]);
    expect(lines.at(-1)).toMatch(/^imported 3 trades .* into trades/);
    const common = { router_contest_id: C, position_hash: A, venue_market_id: 'm1', router_market_id: 'mk_ml' };
    expect(await trades(s.built, C)).toEqual([
      { ...common, partner_id: 'vy', partner_name: 'vy', venue_trade_id: 't3', liquidity_hash: 'vx:a', taker_action: 'buy', price: 1, size_contracts: 0.5, notional_usd: 0.5, is_block: false, trader_id: null, trader_id_kind: null, executed_at: new Date(T0 + 30 * M).toISOString() },
      { ...common, partner_id: 'vx', partner_name: 'Venue X', venue_trade_id: 't2', liquidity_hash: 'vx:a', taker_action: 'sell', price: 0.25, size_contracts: 4, notional_usd: 1, is_block: true, trader_id: 'w1', trader_id_kind: 'wallet', executed_at: new Date(T0 + 20 * M).toISOString() },
      { ...common, partner_id: 'vx', partner_name: 'Venue X', venue_trade_id: 't1', liquidity_hash: 'vx:a', taker_action: 'buy', price: 0.6, size_contracts: 10, notional_usd: 6, is_block: false, trader_id: null, trader_id_kind: null, executed_at: new Date(T0 + 10 * M).toISOString() },
    ]);
  });

  it('refuses a CSV with a bad row, naming its line, and writes nothing', async () => {
    const before = await rows();
    const good = (i: number) => `${T0 + i * 1000},ct_bad,${A},vx,0.5,1,vx:a`;
    const text = ['ts,contest_id,position_hash,partner_id,price,available,liquidity_hash', good(1), good(2), '"multi', 'line",x', good(3)];
    // Line 4-5 hold one quoted field spanning two lines (a valid record with too few fields); line 7 a price of 1.5.
    text.push(`${T0},ct_bad,${A},vx,1.5,1,vx:a`, good(4));
    const err = await failure(importFile([file('bad.csv', text.join('\n'))]));
    expect(err).toBeInstanceOf(CommandFailed);
    expect(err!.message).toMatch(/2 bad lines \(of 6\); nothing was imported/);
    expect(err!.message).toMatch(/line 4: 2 fields where the header names 7/);
    expect(err!.message).toMatch(/line 7: price 1\.5 is not a 0-1 probability/);
    expect(await rows()).toEqual(before);
  });

  it('lists the first 20 bad rows and counts the rest; ids with control characters, future times, bad JSON', async () => {
    const before = await rows();
    const ok = { ts: T0, contest_id: 'ct_bad', position_hash: A, partner_id: 'vx', price: 0.5, available: 1, liquidity_hash: 'vx:a' };
    const recs = [JSON.stringify(ok), '{"ts": oops', JSON.stringify({ ...ok, contest_id: 'ct\u0000x' }), JSON.stringify({ ...ok, ts: NOW + 2 * 86_400_000 }), JSON.stringify({ ...ok, extra: 1 })];
    for (let i = 0; i < 21; i++) recs.push(JSON.stringify({ ...ok, price: -1 }));
    const err = await failure(importFile([file('many.jsonl', recs.join('\n'))]));
    expect(err).toBeInstanceOf(CommandFailed);
    const msg = err!.message;
    expect(msg).toMatch(/25 bad lines \(of 26\)/);
    expect(msg).toMatch(/line 2: not JSON/);
    expect(msg).toMatch(/line 3: contest_id contains a control character/);
    expect(msg).toMatch(/line 4: ts .* is in the future/);
    expect(msg).toMatch(/line 5: unknown field extra/);
    expect(msg.split('\n').filter((l) => /^ {2}line \d+:/.test(l))).toHaveLength(20);
    expect(msg).toMatch(/\.\.\. and 5 more/);
    expect(await rows()).toEqual(before);
  });

  it('refuses a header that lacks a column or has an unknown one', async () => {
    const err = await failure(importFile([file('hdr.csv', `ts,contest_id,position_hash,partner_id,price,liquidity_hash,colour\n${T0},c,p,v,0.5,l,red\n`)]));
    expect(err).toBeInstanceOf(CommandFailed);
    expect(err!.message).toMatch(/line 1: missing required column available; unknown column "colour"/);
  });

  it('usage mistakes are UsageError: no file, unknown extension, unknown kind, undetectable kind', async () => {
    expect(await failure(importFile([]))).toBeInstanceOf(UsageError);
    expect(await failure(importFile([path.join(dir, 'missing.csv')]))).toBeInstanceOf(UsageError);
    expect(await failure(importFile([file('x.txt', 'a')]))).toBeInstanceOf(UsageError);
    expect(await failure(importFile([file('y.csv', 'a,b\n1,2\n'), '--kind', 'quotes']))).toBeInstanceOf(UsageError);
    const e = await failure(importFile([file('z.csv', 'a,b\n1,2\n')]));
    expect(e).toBeInstanceOf(UsageError);
    expect(e!.message).toMatch(/--kind ticks\|trades/);
  });

  it('--dry-run validates and writes nothing', async () => {
    const before = await rows();
    lines.length = 0;
    await importFile([file('dry.csv', `ts,contest_id,position_hash,partner_id,price,available,liquidity_hash\n${T0},ct_dry,${A},vx,0.5,1,vx:a\n`), '--dry-run']);
    expect(lines.at(-1)).toMatch(/1 ticks rows are valid .* nothing was imported \(--dry-run\)/);
    expect(await rows()).toEqual(before);
  });

  it.skipIf(Boolean(process.env.CLICKHOUSE_URL))('imports Parquet through the embedded engine', async () => {
    const pq = path.join(dir, 'ticks.parquet');
    await tch.ch.command({
      query: `INSERT INTO FUNCTION file({f:String}, Parquet)
        SELECT toInt64(${T0} + number * 1000) AS ts, 'ct_pq' AS contest_id, {a:String} AS position_hash, 'vp' AS partner_id,
               0.3 + number / 100 AS price, 5.0 AS available, 'vp:a' AS liquidity_hash FROM numbers(3)`,
      query_params: { f: pq, a: A },
    });
    lines.length = 0;
    await importFile([pq]);
    expect(lines.at(-1)).toMatch(/^imported 3 ticks/);
    expect(await venueSeries(s.built, 'ct_pq', 'vp')).toEqual([
      { t: T0, position_hash: A, price: 0.3 },
      { t: T0 + 1000, position_hash: A, price: 0.31 },
      { t: T0 + 2000, position_hash: A, price: 0.32 },
    ]);
  });
});

describe('synthetic rows', () => {
  it('are marked, left out of the REST history by default, and served when FLOW_HISTORY_INCLUDE_SYNTHETIC is set', async () => {
    lines.length = 0;
    await runHistoryCommand(rt, ['synthesize', '--from', String(T0 - 30 * M), '--to', String(T0 + 30 * M), '--positions', '2', '--interval-ms', '10000'], out);
    expect(lines.at(-1)).toMatch(/synthetic ticks/);
    // The catalog's positions and venues (the fixture catalog), every row marked.
    const [{ contest_id: sc, partner_id: sv }] = await (
      await tch.ch.query({ query: 'SELECT contest_id, partner_id, count() AS n FROM ticks WHERE synthetic GROUP BY ALL ORDER BY n DESC LIMIT 1', format: 'JSONEachRow' })
    ).json<{ contest_id: string; partner_id: string }>();
    const synTicks = await count(tch.ch, 'SELECT count() FROM ticks WHERE contest_id = {c:String} AND partner_id = {v:String}', { c: sc, v: sv });
    expect(synTicks).toBeGreaterThan(10);
    expect(await count(tch.ch, 'SELECT countIf(NOT synthetic) FROM ticks WHERE contest_id = {c:String}', { c: sc })).toBe(0);
    const tradeContest = await count(tch.ch, 'SELECT count() FROM trades WHERE synthetic AND router_contest_id = {c:String}', { c: sc });
    expect(tradeContest).toBeGreaterThan(0);
    // Default: raw rows and the per-minute rollups alike leave them out, and trades too.
    expect(await venueSeries(s.built, sc, sv)).toEqual([]);
    expect(await venueSeries(s.built, sc, sv, '5m', T0 - 12 * 60 * M, T0 + 12 * 60 * M)).toEqual([]);
    expect(await trades(s.built, sc)).toEqual([]);
    // Served when the deployment asks for them.
    expect(await venueSeries(withSynthetic, sc, sv)).toHaveLength(synTicks);
    expect((await venueSeries(withSynthetic, sc, sv, '5m', T0 - 12 * 60 * M, T0 + 12 * 60 * M)).length).toBeGreaterThan(0);
    expect(await trades(withSynthetic, sc)).toHaveLength(tradeContest);
    // Real rows stay served either way.
    expect(await venueSeries(s.built, C, 'vy')).toHaveLength(1);
    expect(await venueSeries(withSynthetic, C, 'vy')).toHaveLength(1);
  });
});

describe('the real CLI', () => {
  it('exit codes: 1 with the bad line and nothing written, 2 for usage and backfill, 0 on success', async () => {
    const env = { ...s.env, CLICKHOUSE_URL: process.env.CLICKHOUSE_URL ?? '' };
    const bad = file('cli-bad.csv', `ts,contest_id,position_hash,partner_id,price,available,liquidity_hash\n${T0},ct_cli,${A},vx,0.5,1,vx:a\n${T0},ct_cli,${A},vx,0.5,-3,vx:a\n`);
    const r1 = await runCli(['history', 'import', bad], env);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toMatch(/line 3: available -3 is negative/);
    expect(r1.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    const st = await runCli(['history', 'status', '--json'], env);
    expect(st.code).toBe(0);
    expect(JSON.parse(st.stdout).tables.map((t: { rows: number }) => t.rows)).toEqual([0, 0, 0]);

    expect((await runCli(['history', 'import'], env)).code).toBe(2);
    const bf = await runCli(['history', 'backfill', '--from', '2026-11-01', '--to', '2026-11-02'], env);
    expect(bf.code).toBe(2);
    expect(bf.stderr).toMatch(/flow history synthesize/);

    const good = file('cli-good.jsonl', JSON.stringify({ ts: T0, contest_id: 'ct_cli', position_hash: A, partner_id: 'vx', price: 0.5, available: 1, liquidity_hash: 'vx:a' }) + '\n');
    const r2 = await runCli(['history', 'import', good], env);
    expect(r2.code).toBe(0);
    expect(r2.stdout).toMatch(/imported 1 ticks/);
    expect(r2.stderr).toMatch(/"event":"history_import_progress"/);
    const st2 = await runCli(['history', 'status', '--json'], env);
    expect(JSON.parse(st2.stdout).tables[0]).toMatchObject({ table: 'ticks', rows: 1, synthetic: 0 });
  }, 120_000);
});
