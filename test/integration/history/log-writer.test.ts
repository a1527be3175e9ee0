/**
 * The history writer on real Redis and chDB: rows appended with hot state (ingest's ticks, compute's
 * consensus points and outlier flags, trade prints) land in ClickHouse exactly once; a ClickHouse
 * outage keeps them pending until it ends; an insert whose answer was lost is re-sent and
 * deduplicated; bad rows and refused batches never hold the log up; one writer at a time.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_GROUP, historyKeys, HistoryConsumer, nextStreamId, prevStreamId, type HistoryConsumerOptions } from '../../../pipelines/history/consumer.js';
import { prepareHistoryStore } from '../../../src/store/clickhouse/schema.js';
import type { Inserter } from '../../../src/store/clickhouse/writer.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { APPENDED, appendAll, landed, T0, tick, uniqueContest } from './log-support.js';
import { count, openTestClickHouse, type TestClickHouse } from './support.js';

let s: TestStack;
let tch: TestClickHouse;
let hot: HotState;
let keys: ReturnType<typeof historyKeys>;
beforeAll(async () => {
  tch = openTestClickHouse();
  await prepareHistoryStore(tch.ch, { retentionDays: 0 });
  s = await startStack({ catalog: null });
  hot = new HotState(s.rt.redis, s.rt.ks);
  keys = historyKeys(s.rt.ks);
});
afterAll(async () => {
  await s?.close();
  await tch?.close();
});

const started: HistoryConsumer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => c.stop()));
});

function consumer(clickhouse: Inserter = tch.ch, opts: Partial<HistoryConsumerOptions> = {}): HistoryConsumer {
  const c = new HistoryConsumer({
    redis: s.rt.redis,
    redisUrl: s.rt.config.redisUrl,
    ks: s.rt.ks,
    clickhouse,
    log: pino({ level: 'silent' }),
    leaseMs: 600,
    lingerMs: 20,
    blockMs: 50,
    retryBaseMs: 20,
    retryMaxMs: 100,
    ...opts,
  });
  started.push(c);
  return c.start();
}

/** Passes inserts through, counting them; can fail like an unreachable server, or after the insert landed. */
class Flaky implements Inserter {
  inserts = 0;
  down = false;
  /** The next insert lands, then its answer is "lost". */
  loseNextAnswer = false;
  /** The next insert is refused for good. */
  refuseNext = false;
  constructor(private readonly real: Inserter) {}
  insert: Inserter['insert'] = async (params) => {
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    if (this.refuseNext) {
      this.refuseNext = false;
      throw Object.assign(new Error('Cannot parse input: expected tab'), { code: '27' });
    }
    const r = await this.real.insert(params);
    this.inserts++;
    if (this.loseNextAnswer) {
      this.loseNextAnswer = false;
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    return r;
  };
}

async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const closesOf = async (contest: string) => {
  const rs = await tch.ch.query({
    query: 'SELECT partner_id, argMaxMerge(close) AS close FROM ticks_1m WHERE contest_id = {c:String} GROUP BY partner_id ORDER BY partner_id',
    query_params: { c: contest },
    format: 'JSONEachRow',
  });
  return rs.json<{ partner_id: string; close: number }>();
};

describe('the history log into ClickHouse', () => {
  it('lands every appended row once, marks the ticks of listings compute flagged, and empties the stream', async () => {
    const contest = uniqueContest('once');
    await appendAll(hot, contest);
    const reg = new Registry();
    const c = consumer(tch.ch, { metrics: reg });
    await c.drain();
    expect(await landed(tch.ch, contest)).toMatchObject(APPENDED);
    const outlier = await count(tch.ch, "SELECT count() FROM ticks WHERE contest_id = {c:String} AND outlier AND partner_id = 'vy'", { c: contest });
    expect(outlier).toBe(1);
    // The rollup saw the ticks: each venue's close is its last price of the minute.
    expect(await closesOf(contest)).toEqual([
      { partner_id: 'vx', close: 0.53 },
      { partner_id: 'vy', close: 0.5 },
    ]);
    expect(await s.rt.redis.xlen(keys.hist)).toBe(0);
    expect(await s.rt.redis.exists(keys.plan)).toBe(0);
    expect(c.stats()).toMatchObject({ active: true, written: { ticks: 4, price_points: 2, trades: 2 }, invalid: 0, lostEntries: 0 });
    const text = await reg.metrics();
    expect(text).toContain('flow_history_rows_written_total{table="ticks"} 4');
    expect(text).toContain('flow_history_writer_active 1');
    expect(text).toContain('flow_history_log_backlog_entries 0');
  });

  it('keeps entries pending while ClickHouse is unreachable and lands them once it answers', async () => {
    const contest = uniqueContest('outage');
    const flaky = new Flaky(tch.ch);
    flaky.down = true;
    const c = consumer(flaky);
    await appendAll(hot, contest);
    await until(() => c.stats().insertErrors >= 3);
    // Nothing written, nothing acknowledged: the batch waits in Redis with its plan.
    expect(await landed(tch.ch, contest)).toMatchObject({ ticks: 0, points: 0, trades: 0 });
    expect(await s.rt.redis.xlen(keys.hist)).toBeGreaterThan(0);
    expect(await s.rt.redis.exists(keys.plan)).toBe(1);
    expect(await c.idle()).toBe(false);
    flaky.down = false;
    await c.drain();
    expect(await landed(tch.ch, contest)).toMatchObject(APPENDED);
  });

  it('re-sends a batch whose insert landed but whose answer was lost, and ClickHouse keeps it once, rollups included', async () => {
    const contest = uniqueContest('lost_answer');
    await appendAll(hot, contest);
    const flaky = new Flaky(tch.ch);
    flaky.loseNextAnswer = true;
    const c = consumer(flaky);
    await c.drain();
    expect(c.stats().insertErrors).toBe(1);
    const once = await landed(tch.ch, contest);
    expect(once).toMatchObject(APPENDED);
    // Every table's batch went in; the one whose answer was lost went in a second time, deduplicated.
    expect(flaky.inserts).toBeGreaterThan(3);
    // One batch per table here, so one per-minute row per venue in the rollup, not two.
    expect(once.ticks1m).toBe(2);
    expect(once.points1m).toBe(1);
  });

  it('drops rows that fail validation and a batch ClickHouse refuses for good, counts them, and carries on', async () => {
    const contest = uniqueContest('invalid');
    const reg = new Registry();
    const flaky = new Flaky(tch.ch);
    const c = consumer(flaky, { metrics: reg });
    const good = tick(contest, 'vx', 1);
    await hot.append(contest, [], [{ table: 'ticks', rows: JSON.stringify([good, { ...good, price: 'x' }, null]) }]);
    await hot.append(contest, [], [{ table: 'ticks', rows: 'not json' }]);
    await c.drain();
    expect(await count(tch.ch, 'SELECT count() FROM ticks WHERE contest_id = {c:String}', { c: contest })).toBe(1);
    expect(c.stats().invalid).toBe(3);
    expect(await reg.metrics()).toContain('flow_history_rows_dropped_total{table="ticks",reason="invalid"} 3');

    flaky.refuseNext = true;
    await hot.append(contest, [], [{ table: 'ticks', rows: JSON.stringify([tick(contest, 'vx', 2)]) }]);
    await c.drain();
    await hot.append(contest, [], [{ table: 'ticks', rows: JSON.stringify([tick(contest, 'vx', 3)]) }]);
    await c.drain();
    expect(c.stats().rejected).toBe(1);
    expect(await count(tch.ch, 'SELECT count() FROM ticks WHERE contest_id = {c:String}', { c: contest })).toBe(2);
  });

  it('counts entries the stream trimmed after a writer read them and before they were written, and moves on', async () => {
    const contest = uniqueContest('trimmed');
    // A writer read three entries and died before planning them; the stream then hit its cap.
    await s.rt.redis.xgroup('CREATE', keys.hist, HISTORY_GROUP, '0', 'MKSTREAM').catch(() => undefined);
    for (let i = 0; i < 3; i++) await hot.append(contest, [], [{ table: 'ticks', rows: JSON.stringify([tick(contest, 'vx', i)]) }]);
    const read = (await s.rt.redis.xreadgroup('GROUP', HISTORY_GROUP, 'writer', 'COUNT', 10, 'STREAMS', keys.hist, '>')) as [string, unknown[]][];
    expect(read[0]![1]).toHaveLength(3);
    await s.rt.redis.xtrim(keys.hist, 'MAXLEN', 0);
    await hot.append(contest, [], [{ table: 'ticks', rows: JSON.stringify([tick(contest, 'vx', 9)]) }]);
    const reg = new Registry();
    const c = consumer(tch.ch, { metrics: reg });
    await c.drain();
    expect(c.stats().lostEntries).toBe(3);
    expect(await reg.metrics()).toContain('flow_history_log_entries_lost_total 3');
    expect(await count(tch.ch, 'SELECT count() FROM ticks WHERE contest_id = {c:String}', { c: contest })).toBe(1);
  });

  it('recreates its consumer group after Redis lost its data', async () => {
    const c = consumer();
    const first = uniqueContest('before_loss');
    await appendAll(hot, first);
    await c.drain();
    await s.rt.redis.del(keys.hist);
    const second = uniqueContest('after_loss');
    await appendAll(hot, second);
    await c.drain();
    expect(await landed(tch.ch, second)).toMatchObject(APPENDED);
    expect(await landed(tch.ch, first)).toMatchObject(APPENDED);
  });
});

describe('one writer per deployment', () => {
  it('only the lease holder writes; the other takes over when it stops', async () => {
    const ia = new Flaky(tch.ch);
    const ib = new Flaky(tch.ch);
    const a = consumer(ia);
    const b = consumer(ib);
    const c1 = uniqueContest('lease1');
    await appendAll(hot, c1);
    await a.drain();
    expect(await landed(tch.ch, c1)).toMatchObject(APPENDED);
    const [active, standby, activeIns, standbyIns] = a.isActive() ? [a, b, ia, ib] : [b, a, ib, ia];
    expect(standby.isActive()).toBe(false);
    expect(activeIns.inserts).toBeGreaterThan(0);
    expect(standbyIns.inserts).toBe(0);

    await active.stop();
    const c2 = uniqueContest('lease2');
    await appendAll(hot, c2);
    await standby.drain();
    expect(await landed(tch.ch, c2)).toMatchObject(APPENDED);
    expect(standby.isActive()).toBe(true);
    expect(standbyIns.inserts).toBeGreaterThan(0);
  });

  it('a writer whose lease another took can neither plan nor acknowledge', async () => {
    const contest = uniqueContest('fenced');
    const flaky = new Flaky(tch.ch);
    flaky.down = true;
    const a = consumer(flaky, { leaseMs: 3_000 });
    await appendAll(hot, contest);
    await until(() => a.stats().insertErrors >= 1);
    // Another process takes the lease (as after a long stall of this one): `a` must stand down.
    await s.rt.redis.set(keys.lease, 'another-writer');
    flaky.down = false;
    await until(() => !a.isActive());
    expect(await s.rt.redis.get(keys.lease)).toBe('another-writer');
    // Its batch is still pending with its plan, for the holder to send.
    expect(await s.rt.redis.exists(keys.plan)).toBe(1);
    expect(await a.idle()).toBe(false);
    await s.rt.redis.del(keys.lease);
    await a.drain();
    expect(await landed(tch.ch, contest)).toMatchObject(APPENDED);
  });
});

describe('stream ids', () => {
  it('next and previous step by one sequence number, across a millisecond boundary too', () => {
    expect(nextStreamId('5-0')).toBe('5-1');
    expect(prevStreamId('5-1')).toBe('5-0');
    expect(prevStreamId('5-0')).toBe('4-18446744073709551615');
    expect(nextStreamId('4-18446744073709551614')).toBe('4-18446744073709551615');
    expect(prevStreamId('0-0')).toBe('0-0');
    expect(T0).toBeGreaterThan(0);
  });
});
