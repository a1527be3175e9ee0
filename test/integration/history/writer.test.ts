import { createServer } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TickEntry, TradePrint } from '../../../src/domain/stream.js';
import { createClickHouse, type ClickHouseClient } from '../../../src/store/clickhouse/client.js';
import { prepareHistoryStore } from '../../../src/store/clickhouse/schema.js';
import { BatchWriter, encodeTick, HistoryWriter, type Inserter, type TickRow } from '../../../src/store/clickhouse/writer.js';
import { TICK_COLUMNS } from '../../../src/store/clickhouse/schema.js';
import { count, openTestClickHouse, type TestClickHouse } from './support.js';

let tch: TestClickHouse;
let ch: ClickHouseClient;
const T0 = Date.parse('2026-11-20T12:00:00.000Z');

beforeAll(async () => {
  tch = openTestClickHouse();
  ch = tch.ch;
  await prepareHistoryStore(ch, { retentionDays: 0 });
});
afterAll(async () => tch?.close());

/** Each test writes its own contest, so counts never see another test's rows. */
let contestSeq = 0;
const nextContest = () => `ct_w${++contestSeq}`;
const row = (contest_id: string, i: number): TickRow => ({
  ts: T0 + i,
  contest_id,
  position_hash: `${contest_id}:mk:home:0:p:ft`,
  partner_id: 'vx',
  price: 0.5,
  available: i,
  liquidity_hash: `vx:${i}`,
});
const ticksOf = (contest: string) => count(ch, 'SELECT count() FROM ticks WHERE contest_id = {c:String}', { c: contest });

/** Records every insert and can be switched off like a ClickHouse outage. */
class Recording implements Inserter {
  calls: number[] = [];
  down = false;
  failWith: Error | null = null;
  constructor(private readonly real: Inserter) {}
  insert: Inserter['insert'] = async (params) => {
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    if (this.failWith) {
      const e = this.failWith;
      this.failWith = null;
      throw e;
    }
    const r = await this.real.insert(params);
    this.calls.push(Number(r.summary?.written_rows ?? -1));
    return r;
  };
}

async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('batching', () => {
  it('seals a batch at maxBatchRows and sends batches in order', async () => {
    const c = nextContest();
    const rec = new Recording(ch);
    const w = new BatchWriter(rec, 'ticks', TICK_COLUMNS, encodeTick, { maxBatchRows: 100, flushIntervalMs: 60_000 });
    for (let i = 0; i < 250; i++) w.write(row(c, i));
    expect(w.buffered).toBe(250);
    expect(await w.flush()).toBe(true);
    expect(rec.calls.length).toBe(3);
    expect(w.stats()).toMatchObject({ written: 250, buffered: 0, insertErrors: 0 });
    expect(await ticksOf(c)).toBe(250);
    await w.close();
  });

  it('flushes on the interval without being asked', async () => {
    const c = nextContest();
    const rec = new Recording(ch);
    const w = new BatchWriter(rec, 'ticks', TICK_COLUMNS, encodeTick, { maxBatchRows: 10_000, flushIntervalMs: 50 });
    for (let i = 0; i < 3; i++) w.write(row(c, i));
    expect(rec.calls).toEqual([]);
    await until(() => w.stats().written === 3);
    expect(rec.calls.length).toBe(1);
    expect(await ticksOf(c)).toBe(3);
    await w.close();
  });

  it('refuses invalid rows at write time and counts them', async () => {
    const c = nextContest();
    const reg = new Registry();
    const w = new BatchWriter(ch, 'ticks', TICK_COLUMNS, encodeTick, { metrics: reg, flushIntervalMs: 60_000 });
    expect(w.write({ ...row(c, 1), price: Number.NaN })).toBe(false);
    expect(w.write({ ...row(c, 2), ts: Number.POSITIVE_INFINITY })).toBe(false);
    expect(w.write({ ...row(c, 3), position_hash: undefined as never })).toBe(false);
    expect(w.write(row(c, 4))).toBe(true);
    await w.flush();
    expect(w.stats().dropped.invalid).toBe(3);
    expect(await ticksOf(c)).toBe(1);
    expect(await reg.metrics()).toContain('flow_history_rows_dropped_total{table="ticks",reason="invalid"} 3');
    await w.close();
  });
});

describe('ClickHouse outage', () => {
  it('an unreachable server: write() never throws, the buffer stays bounded, drops are counted', async () => {
    const port = await closedPort();
    const dead = createClickHouse({ url: `http://127.0.0.1:${port}`, dataDir: tch.dataDir, logLevel: 'OFF' });
    const reg = new Registry();
    const w = new BatchWriter(dead, 'ticks', TICK_COLUMNS, encodeTick, {
      maxBatchRows: 10,
      maxBufferedRows: 50,
      flushIntervalMs: 20,
      retryBaseMs: 10,
      retryMaxMs: 40,
      metrics: reg,
    });
    const c = nextContest();
    const started = performance.now();
    for (let i = 0; i < 200; i++) expect(w.write(row(c, i))).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
    await until(() => w.stats().insertErrors >= 3);
    for (let i = 200; i < 300; i++) w.write(row(c, i));
    const st = w.stats();
    expect(st.written).toBe(0);
    expect(st.buffered).toBeLessThanOrEqual(50);
    expect(st.dropped.buffer_full).toBeGreaterThanOrEqual(250);
    expect(st.dropped.buffer_full + st.buffered).toBe(300);
    expect(st.consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(st.lastError).toMatch(/ECONNREFUSED|connect/i);
    const text = await reg.metrics();
    expect(text).toContain(`flow_history_rows_dropped_total{table="ticks",reason="buffer_full"} ${st.dropped.buffer_full}`);
    expect(text).toMatch(/flow_history_insert_errors_total\{table="ticks"\} [1-9]/);
    expect(text).toContain(`flow_history_rows_buffered{table="ticks"} ${st.buffered}`);
    expect(await w.flush()).toBe(false);
    await w.close(100);
    const end = w.stats();
    expect(end.buffered).toBe(0);
    expect(end.dropped.buffer_full + end.dropped.shutdown).toBe(300);
    expect(w.write(row(c, 999))).toBe(false);
    expect(w.stats().dropped.closed).toBe(1);
    await dead.close();
  });

  it('keeps the newest rows when it has to drop', async () => {
    const rec = new Recording(ch);
    rec.down = true;
    const w = new BatchWriter(rec, 'ticks', TICK_COLUMNS, encodeTick, { maxBatchRows: 10, maxBufferedRows: 30, flushIntervalMs: 60_000, retryBaseMs: 5_000 });
    const c = nextContest();
    for (let i = 0; i < 100; i++) w.write(row(c, i));
    // The first batch went out (and failed) while the writes ran; flush() reports that failure.
    expect(await w.flush()).toBe(false);
    rec.down = false;
    expect(await w.flush()).toBe(true);
    const rs = await ch.query({ query: 'SELECT min(available) AS lo, max(available) AS hi, count() AS n FROM ticks WHERE contest_id = {c:String}', query_params: { c }, format: 'JSONEachRow' });
    const [r] = await rs.json<{ lo: number; hi: number; n: string }>();
    // The first batch was in flight when the buffer overflowed and survives; the rest kept are the newest.
    expect(Number(r!.n)).toBe(w.stats().written);
    expect(r!.hi).toBe(99);
    expect(w.stats().written).toBeLessThanOrEqual(40);
    expect(w.stats().dropped.buffer_full + w.stats().written).toBe(100);
    await w.close();
  });

  it('recovers: buffered rows land once ClickHouse answers again, in order, without loss', async () => {
    const rec = new Recording(ch);
    rec.down = true;
    const w = new BatchWriter(rec, 'ticks', TICK_COLUMNS, encodeTick, { maxBatchRows: 10, flushIntervalMs: 20, retryBaseMs: 10, retryMaxMs: 50 });
    const c = nextContest();
    for (let i = 0; i < 35; i++) w.write(row(c, i));
    expect(await w.flush()).toBe(false);
    await until(() => w.stats().insertErrors >= 2);
    expect(await ticksOf(c)).toBe(0);
    expect(w.stats().buffered).toBe(35);
    rec.down = false;
    await until(() => w.stats().written === 35);
    expect(w.stats()).toMatchObject({ buffered: 0, consecutiveFailures: 0 });
    expect(Object.values(w.stats().dropped).every((n) => n === 0)).toBe(true);
    expect(await ticksOf(c)).toBe(35);
    // Small batches sealed during the outage were merged back to full-size inserts.
    expect(rec.calls.every((n) => n <= 10)).toBe(true);
    expect(rec.calls.length).toBeLessThanOrEqual(4);
    await w.close();
  });

  it('a batch ClickHouse refuses as malformed is dropped as rejected; later batches still land', async () => {
    const rec = new Recording(ch);
    const w = new BatchWriter(rec, 'ticks', TICK_COLUMNS, encodeTick, { maxBatchRows: 10, flushIntervalMs: 60_000, retryBaseMs: 10 });
    const c = nextContest();
    rec.failWith = Object.assign(new Error('Cannot parse input: expected tab'), { code: '27' });
    for (let i = 0; i < 20; i++) w.write(row(c, i));
    await w.flush();
    await until(() => w.stats().written === 10);
    expect(w.stats().dropped.rejected).toBe(10);
    expect(await ticksOf(c)).toBe(10);
    await w.close();
  });

  it('close() gives up after its timeout and counts what was left as shutdown', async () => {
    const rec = new Recording(ch);
    rec.down = true;
    const w = new BatchWriter(rec, 'ticks', TICK_COLUMNS, encodeTick, { maxBatchRows: 10, flushIntervalMs: 60_000, retryBaseMs: 10 });
    const c = nextContest();
    for (let i = 0; i < 15; i++) w.write(row(c, i));
    const t = Date.now();
    await w.close(150);
    expect(Date.now() - t).toBeLessThan(2_000);
    expect(w.stats().dropped.shutdown).toBe(15);
  });
});

describe('HistoryWriter', () => {
  it('stores ticks from bus TickEntries, consensus points and trade prints exactly', async () => {
    const c = nextContest();
    const w = new HistoryWriter(ch, { flushIntervalMs: 60_000 });
    const entry: TickEntry = {
      position_hash: `${c}:mk:home:0:p:ft`,
      partner_id: 'vx',
      partner_name: 'Venue X',
      price: 0.42,
      american_odds: '+138',
      available: 250.5,
      liquidity_hash: 'vx:m\t1\\x',
      fee_packet: null,
      actionable: true,
      buy_id: 'b1',
      source: 'polling',
      outlier: true,
      median: 0.4,
      as_of: new Date(T0 + 1234).toISOString(),
      is_stale: false,
    };
    w.ticks(c, [entry], [], T0);
    w.consensus(c, [{ position_hash: entry.position_hash, price: 0.41 }, { position_hash: 'ignored', price: null }], T0 + 5);
    const print: TradePrint = {
      partner_id: 'vx',
      partner_name: 'Venue "X"\nNew line',
      venue_trade_id: 'tr\\1',
      venue_market_id: 'M',
      liquidity_hash: 'vx:m',
      position_hash: entry.position_hash,
      router_contest_id: c,
      router_market_id: 'mk',
      taker_action: 'sell',
      price: 0.41,
      size_contracts: 3.5,
      notional_usd: 1.435,
      is_block: false,
      trader_id: null,
      trader_id_kind: null,
      executed_at: new Date(T0 + 999).toISOString(),
    };
    w.trades([print]);
    expect(await w.flush()).toBe(true);
    const ticks = await (
      await ch.query({
        query: `SELECT toUnixTimestamp64Milli(ts) AS ts, position_hash, partner_id, price, available, liquidity_hash, source, outlier
                FROM ticks WHERE contest_id = {c:String} SETTINGS output_format_json_quote_64bit_integers = 0`,
        query_params: { c },
        format: 'JSONEachRow',
      })
    ).json();
    expect(ticks).toEqual([
      { ts: T0 + 1234, position_hash: entry.position_hash, partner_id: 'vx', price: 0.42, available: 250.5, liquidity_hash: 'vx:m\t1\\x', source: 'polling', outlier: true },
    ]);
    const points = await (
      await ch.query({
        query: `SELECT toUnixTimestamp64Milli(ts) AS ts, position_hash, price FROM price_points WHERE contest_id = {c:String} SETTINGS output_format_json_quote_64bit_integers = 0`,
        query_params: { c },
        format: 'JSONEachRow',
      })
    ).json();
    expect(points).toEqual([{ ts: T0 + 5, position_hash: entry.position_hash, price: 0.41 }]);
    const { queryTrades } = await import('../../../src/store/clickhouse/history.js');
    expect(await queryTrades(ch, { contestId: c, since: T0, until: null, limit: 10 })).toEqual([print]);
    expect(w.stats().points.written).toBe(1);
    await w.close();
  });
});
