/**
 * The history writer on its own thread (what the compute role runs), on real Redis and chDB: the
 * thread's batches land through this thread's ClickHouse client; its metrics
 * appear in the owner's registry; a thread that dies is started again and picks the log up; stop
 * ends the thread and frees the lease for the next writer.
 */
import { Registry } from 'prom-client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyKeys } from '../../../pipelines/history/consumer.js';
import { HistoryWriterThread, type WriterThreadData } from '../../../pipelines/history/writer-thread.js';
import { prepareHistoryStore } from '../../../src/store/clickhouse/schema.js';
import type { Inserter } from '../../../src/store/clickhouse/writer.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { APPENDED, appendAll, landed, uniqueContest } from './log-support.js';
import { openTestClickHouse, type TestClickHouse } from './support.js';

let s: TestStack;
let tch: TestClickHouse;
let hot: HotState;
let data: WriterThreadData;
beforeAll(async () => {
  tch = openTestClickHouse();
  await prepareHistoryStore(tch.ch, { retentionDays: 0 });
  s = await startStack({ catalog: null });
  hot = new HotState(s.rt.redis, s.rt.ks);
  data = {
    redisUrl: s.rt.config.redisUrl,
    redisPrefix: s.rt.ks.prefix,
    logLevel: 'silent',
    consumer: { leaseMs: 600, lingerMs: 20, blockMs: 50 },
  };
});
afterAll(async () => {
  await s?.close();
  await tch?.close();
});

const silent = pino({ level: 'silent' });

async function until(cond: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the history writer thread', () => {
  it('lands the log through the owner\'s ClickHouse client, with its metrics in the owner\'s registry', async () => {
    const reg = new Registry();
    const w = await HistoryWriterThread.start(data, { clickhouse: tch.ch, log: silent, metrics: reg });
    try {
      const contest = uniqueContest('thread');
      await appendAll(hot, contest);
      await w.drain();
      expect(await landed(tch.ch, contest)).toMatchObject(APPENDED);
      expect(await w.stats()).toMatchObject({ active: true, written: { ticks: 4, price_points: 2, trades: 2 } });
      const text = await reg.metrics();
      expect(text).toContain('flow_history_rows_written_total{table="ticks"} 4');
      expect(text).toContain('flow_history_writer_active 1');
      expect(text).toMatch(/# TYPE flow_history_insert_seconds histogram/);
    } finally {
      await w.stop();
    }
  });

  it('carries the owner\'s insert errors back with their codes: retried when transient, dropped when refused', async () => {
    const failures = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('Cannot parse input: expected tab'), { code: '27' }),
    ];
    const tables: string[] = [];
    const clickhouse: Inserter = {
      insert: async (params) => {
        const fail = params.table === 'ticks' ? failures.shift() : undefined;
        tables.push(`${params.table}${fail ? ` ${fail.code}` : ''}`);
        if (fail) throw fail;
        return tch.ch.insert(params);
      },
    };
    const w = await HistoryWriterThread.start(data, { clickhouse, log: silent });
    try {
      const contest = uniqueContest('errors');
      await appendAll(hot, contest);
      await w.drain();
      // The ticks insert failed to connect: the whole batch was re-sent (the others deduplicated);
      // then it was refused for good and only that table's rows were dropped.
      expect(tables.filter((t) => t.startsWith('ticks'))).toEqual(['ticks ECONNREFUSED', 'ticks 27']);
      const st = await w.stats();
      expect(st.rejected).toBe(APPENDED.ticks);
      expect(await landed(tch.ch, contest)).toMatchObject({ ticks: 0, points: APPENDED.points, trades: APPENDED.trades });
    } finally {
      await w.stop();
    }
  });

  it('is started again when it dies, and the restarted thread writes what came meanwhile', async () => {
    const logged: string[] = [];
    const log = { info: () => undefined, warn: () => undefined, error: (_o: unknown, msg?: string) => void logged.push(String(msg)) } as never;
    const w = await HistoryWriterThread.start(data, { clickhouse: tch.ch, log });
    try {
      const worker = (w as unknown as { host: { thread: { terminate(): Promise<number> } } }).host.thread;
      await worker.terminate();
      await expect(w.stats()).rejects.toThrow(/not running/);
      const contest = uniqueContest('restart');
      await appendAll(hot, contest);
      // Back after about a second (RESTART_MIN_MS); the new thread waits out the dead one's lease.
      await until(async () => (await w.idle().catch(() => false)) === true);
      expect(await landed(tch.ch, contest)).toMatchObject(APPENDED);
      expect(logged.some((m) => m.includes('ended unexpectedly'))).toBe(true);
    } finally {
      await w.stop();
    }
  });

  it('stop ends the thread and gives the lease up at once', async () => {
    const w = await HistoryWriterThread.start(data, { clickhouse: tch.ch, log: silent });
    await until(async () => (await w.stats()).active);
    const lease = historyKeys(s.rt.ks).lease;
    expect(await s.rt.redis.exists(lease)).toBe(1);
    await w.stop();
    expect(await s.rt.redis.exists(lease)).toBe(0);
    await expect(w.stats()).rejects.toThrow(/not running/);
  });
});
