/**
 * Kill tests of the trade-signal consumer (pipelines/signals/trades.ts): SIGKILLed at each step of a
 * batch, before its signals are upserted and after the upsert but before the windows are stored and
 * the batch acknowledged, a fresh consumer that takes over once the lease lapses examines the batch
 * again: every print counted once, the same signals (same ids), no second signal.update. And a
 * consumer the feed was trimmed past while it was stopped counts the prints it never saw.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComputePool } from '../../../pipelines/compute-pool.js';
import { TradeSignalConsumer, tradeSignalKeys, TRADE_SIGNALS_GROUP } from '../../../pipelines/signals/trades.js';
import { parseWindow } from '../../../src/compute/trade-signals.js';
import type { Signal } from '../../../src/domain/signals.js';
import type { TradePrint } from '../../../src/domain/stream.js';
import { LOG_LIMITS, logKeys, toLogEvent } from '../../../src/store/redis/eventlog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { SignalStore } from '../../../src/store/redis/signals.js';
import { buildSimCatalog } from '../../../src/sim/index.js';
import { ROOT } from '../../support/cli.js';
import { startStack, type TestStack } from '../../support/stack.js';

const LEASE_MS = 1_000;
let s: TestStack;
let hot: HotState;
let store: SignalStore;
let positions: { hash: string; contest: string }[];

beforeAll(async () => {
  const catalog = buildSimCatalog(11, Date.now());
  s = await startStack({ catalog });
  hot = new HotState(s.rt.redis, s.rt.ks);
  store = new SignalStore(s.rt.redis, s.rt.ks);
  const open = new Set(catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  const seen = new Set<string>();
  positions = [];
  for (const p of catalog.positions) {
    if (!open.has(p.contest_id) || p.market_key !== 'moneyline' || seen.has(p.contest_id)) continue;
    seen.add(p.contest_id);
    positions.push({ hash: p.position_hash, contest: p.contest_id });
  }
}, 60_000);
afterAll(async () => s?.close());

let seq = 0;
/** Appends prints to the event log as ingest does (one trades event each); returns their ids. */
async function append(pos: { hash: string; contest: string }, notionals: number[], over: Partial<TradePrint> = {}, into: HotState = hot): Promise<string[]> {
  const ids: string[] = [];
  for (const n of notionals) {
    const id = `kill-${++seq}`;
    const print: TradePrint = {
      partner_id: 'sim_exchange',
      partner_name: 'Sim Exchange',
      venue_trade_id: id,
      venue_market_id: 'vm',
      liquidity_hash: `sim_exchange:${pos.hash}`,
      position_hash: pos.hash,
      router_contest_id: pos.contest,
      router_market_id: pos.hash.split(':')[1]!,
      taker_action: 'buy',
      price: 0.5,
      size_contracts: n * 2,
      notional_usd: n,
      is_block: false,
      trader_id: null,
      trader_id_kind: null,
      executed_at: new Date().toISOString(),
      ...over,
    };
    const event = JSON.stringify({ type: 'trades', contest_id: pos.contest, trades: [print], timestamp: new Date().toISOString() });
    await into.append(pos.contest, [{ channel: 'trades', league_id: null, event }]);
    ids.push(id);
  }
  return ids;
}

/** Runs a consumer in a child process armed with `failpoint`; resolves with how it ended. */
async function runChild(failpoint: string): Promise<{ signal: NodeJS.Signals | null; code: number | null; stdout: string }> {
  // `node --import tsx`, not the tsx CLI: the CLI forks a second process that SIGKILL would not reach.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/integration/faults/trade-signals-child.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...s.env, FLOW_FAILPOINTS: failpoint, LEASE_MS: String(LEASE_MS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  const [code, signal] = (await new Promise((r) => child.once('exit', (...a) => r(a)))) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout };
}

/** A fresh consumer in this process (it takes over once the killed one's lease lapsed) until everything is examined. */
async function restart(): Promise<TradeSignalConsumer> {
  const compute = new ComputePool(1);
  const c = new TradeSignalConsumer({ redis: s.rt.redis, redisUrl: s.rt.config.redisUrl, ks: s.rt.ks, pool: s.rt.pool, hot, signals: store, compute, log: pino({ level: 'silent' }), now: Date.now, leaseMs: LEASE_MS, blockMs: 50 }).start();
  try {
    await c.drain(30_000);
  } finally {
    await c.stop();
    await compute.close();
  }
  return c;
}

const signalsOf = async (contest: string): Promise<Signal[]> => (await store.live(Date.now())).find((x) => x.contestId === contest)?.signals ?? [];
async function updates(contest: string): Promise<Signal[][]> {
  const raw = (await s.rt.redis.xrange(logKeys(s.rt.ks).events(contest), '-', '+')) as [string, string[]][];
  return raw.map((e) => toLogEvent(contest, e)).filter((e) => e.channel === 'signal').map((e) => (JSON.parse(e.event) as { signals: Signal[] }).signals);
}
const windowIds = async (hash: string) => parseWindow(await s.rt.redis.get(tradeSignalKeys(s.rt.ks).window(hash)))?.prints.map((p) => p[1]) ?? null;
const pending = async () => Number(((await s.rt.redis.xpending(logKeys(s.rt.ks).feed, TRADE_SIGNALS_GROUP)) as [number])[0]);

describe('a trade-signal consumer killed mid-batch', () => {
  it('before the upsert: nothing written, the batch pending; the successor finds the flow once, every print counted once', async () => {
    const pos = positions[0]!;
    const ids = await append(pos, [200, 200, 200, 200, 200]);
    expect(await runChild('trade-signals.before-upsert')).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    expect(await signalsOf(pos.contest)).toEqual([]);
    expect(await windowIds(pos.hash)).toBeNull();
    expect(await pending()).toBeGreaterThan(0);
    const c = await restart();
    expect(c.stats()).toMatchObject({ prints: 5, duplicates: 0 });
    const flow = (await signalsOf(pos.contest)).find((x) => x.signal_type === 'flow_imbalance')!;
    expect(flow.evidence).toMatchObject({ buy_notional_usd: 1_000, venues: [{ partner_id: 'sim_exchange', trades: 5, notional_usd: 1_000 }] });
    expect(await updates(pos.contest)).toHaveLength(1);
    expect(await windowIds(pos.hash)).toEqual(ids);
    expect(await pending()).toBe(0);
  });

  it('after the upsert, before the commit: the successor upserts the same signal (no second update) and counts the print once', async () => {
    const pos = positions[1]!;
    const [id] = await append(pos, [3_000]);
    expect(await runChild('trade-signals.before-commit')).toMatchObject({ signal: 'SIGKILL', stdout: '' });
    const before = await signalsOf(pos.contest);
    expect(before.map((x) => x.dedupe_key)).toEqual([`whale_trade:sim_exchange:${id}`]);
    expect(await windowIds(pos.hash)).toBeNull();
    expect(await pending()).toBeGreaterThan(0);
    const c = await restart();
    expect(c.stats()).toMatchObject({ prints: 1, duplicates: 0 });
    expect(await signalsOf(pos.contest)).toEqual(before);
    expect(await updates(pos.contest)).toEqual([before]);
    expect(await windowIds(pos.hash)).toEqual([id]);
    expect(await pending()).toBe(0);
  });

  it('stopped while the feed was trimmed past it: the successor counts exactly the entries it never saw and examines the rest', async () => {
    const pos = positions[2]!;
    await append(pos, [10]);
    await restart();
    // A deployment whose feed keeps only a few entries: 300 prints while no consumer runs.
    const tight = new HotState(s.rt.redis, s.rt.ks, { logLimits: { ...LOG_LIMITS, feedMax: 10 } });
    await append(pos, Array(300).fill(10), { taker_action: 'sell' }, tight);
    const held = await s.rt.redis.xlen(logKeys(s.rt.ks).feed);
    expect(held).toBeLessThan(300);
    const c = await restart();
    expect(c.stats()).toMatchObject({ lost: 300 - held, prints: held, duplicates: 0 });
    expect(await windowIds(pos.hash)).toHaveLength(held + 1);
  });
});
