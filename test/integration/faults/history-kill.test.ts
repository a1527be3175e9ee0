/**
 * Kill tests of the history writer: killed (SIGKILL) at each step of a batch, before its insert and
 * after the insert landed but before the acknowledgement, a fresh writer that takes over once the
 * lease lapses leaves every row in ClickHouse exactly once, the per-minute rollups included.
 *
 * chDB allows one process per data directory: this process opens it only while no child runs.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyKeys, HistoryConsumer } from '../../../pipelines/history/consumer.js';
import { createClickHouse, type ClickHouseClient } from '../../../src/store/clickhouse/client.js';
import { prepareHistoryStore } from '../../../src/store/clickhouse/schema.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { ROOT } from '../../support/cli.js';
import { removeDataDir, startStack, type TestStack } from '../../support/stack.js';
import { APPENDED, appendAll, landed, uniqueContest } from '../history/log-support.js';
import { tempDir } from '../../support/scratch.js';

const LEASE_MS = 1_000;
let s: TestStack;
let dataDir: string;
let hot: HotState;
const openCh = () => createClickHouse({ url: process.env.CLICKHOUSE_URL ?? null, dataDir });

beforeAll(async () => {
  s = await startStack({ catalog: null });
  hot = new HotState(s.rt.redis, s.rt.ks);
  dataDir = tempDir('history-kill');
  const ch = openCh();
  await prepareHistoryStore(ch, { retentionDays: 0 });
  await ch.close();
});
afterAll(async () => {
  await s?.close();
  if (dataDir) removeDataDir(dataDir);
});

/** Runs a writer in a child process armed with `failpoint`; resolves with how it ended. */
async function runChild(failpoint: string): Promise<{ signal: NodeJS.Signals | null; code: number | null; stdout: string }> {
  // `node --import tsx`, not the tsx CLI: the CLI forks a second process that SIGKILL would not reach.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/integration/faults/history-child.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...s.env, FLOW_DATA_DIR: dataDir, FLOW_FAILPOINTS: failpoint, LEASE_MS: String(LEASE_MS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  const [code, signal] = (await new Promise((r) => child.once('exit', (...a) => r(a)))) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout };
}

/** A fresh writer in this process, after the killed one's lease lapsed: writes everything left. */
async function restart(ch: ClickHouseClient): Promise<void> {
  const c = new HistoryConsumer({ redis: s.rt.redis, redisUrl: s.rt.config.redisUrl, ks: s.rt.ks, clickhouse: ch, log: pino({ level: 'silent' }), leaseMs: LEASE_MS, lingerMs: 20, blockMs: 50 }).start();
  try {
    await c.drain(30_000);
  } finally {
    await c.stop();
  }
}

describe('a history writer killed mid-batch', () => {
  it('after its insert landed and before the acknowledgement: the successor re-sends it and every row is there once', async () => {
    const contest = uniqueContest('kill_after');
    await appendAll(hot, contest);
    const died = await runChild('history.after-insert');
    expect(died).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    // The batch is planned and still pending: nothing was acknowledged.
    expect(await s.rt.redis.exists(historyKeys(s.rt.ks).plan)).toBe(1);
    expect(await s.rt.redis.xlen(historyKeys(s.rt.ks).hist)).toBeGreaterThan(0);
    const ch = openCh();
    try {
      const before = await landed(ch, contest);
      expect(before).toMatchObject(APPENDED);
      await restart(ch);
      // The same rows, the rollups not counted twice.
      expect(await landed(ch, contest)).toEqual(before);
      expect(await s.rt.redis.exists(historyKeys(s.rt.ks).plan)).toBe(0);
    } finally {
      await ch.close();
    }
  }, 60_000);

  it('before its insert: nothing landed, the successor writes it once', async () => {
    const contest = uniqueContest('kill_before');
    await appendAll(hot, contest);
    const died = await runChild('history.before-insert');
    expect(died).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    expect(await s.rt.redis.exists(historyKeys(s.rt.ks).plan)).toBe(1);
    const ch = openCh();
    try {
      expect(await landed(ch, contest)).toMatchObject({ ticks: 0, points: 0, trades: 0, ticks1m: 0 });
      await restart(ch);
      expect(await landed(ch, contest)).toMatchObject({ ...APPENDED, ticks1m: 2, points1m: 1 });
    } finally {
      await ch.close();
    }
  }, 60_000);
});
