/**
 * bench ingest: sustained quote changes per second through ingest → BullMQ → piscina compute → Redis
 * hot state, all in this process with the simulator at full speed. Target ≥ 20,000 changes/s.
 * Baseline in the same run: the same quotes written straight to Redis (HSET, pipelined), the floor
 * any pipeline that keeps venue state in Redis pays.
 *   npm run bench -- ingest [--seconds 10] [--rate 25000]
 */
import { parseArgs } from 'node:util';
import { startCompute, startIngest } from '../cli/roles/market.js';
import type { NormalizedQuote } from '../src/venues/types.js';
import { benchRuntime, sleep } from './support/stack.js';
import { runIfMain } from './support/main.js';

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { seconds: { type: 'string', default: '10' }, rate: { type: 'string', default: '40000' }, threads: { type: 'string', default: '1' } } });
  const seconds = Number(values.seconds);
  const rate = Number(values.rate);
  const { rt, close } = await benchRuntime('ingest');
  try {
    // The market is driven by burst() below, not by its timer.
    const ingest = await startIngest(rt, { simIntervalMs: 3_600_000 });
    ingest.sim!.market.stop();
    const compute = await startCompute(rt, { threads: Number(values.threads) });
    const market = ingest.sim!.market;
    const captured: NormalizedQuote[] = [];
    const ing = ingest.ingester;

    // Warm up: JIT, pools, first snapshots.
    for (let i = 0; i < 20; i++) {
      market.burst(rate / 100);
      await sleep(10);
    }
    await drain(rt, compute.processor, 15_000);

    const inBefore = ing.quotesIn;
    const flushedBefore = ing.quotesFlushed;
    const jobsBefore = compute.processor.processed;
    const t0 = performance.now();
    let produced = 0;
    const tickMs = 10;
    const perTick = (rate * tickMs) / 1000;
    const endAt = t0 + seconds * 1000;
    let next = t0;
    let lastLog = t0;
    while (performance.now() < endAt) {
      produced += market.burst(perTick);
      next += tickMs;
      const wait = next - performance.now();
      await sleep(wait > 0 ? wait : 0);
      if (performance.now() - lastLog > 2000) {
        lastLog = performance.now();
        const el = (lastLog - t0) / 1000;
        process.stderr.write(`  ${el.toFixed(0)}s produced ${produced} (${(produced / el).toFixed(0)}/s), computed jobs ${compute.processor.processed - jobsBefore}\n`);
      }
    }
    const tProduced = performance.now();
    await drain(rt, compute.processor, 60_000);
    const tDrained = performance.now();
    const accepted = ing.quotesIn - inBefore;
    const flushed = ing.quotesFlushed - flushedBefore;
    const jobs = compute.processor.processed - jobsBefore;
    // Quote changes that reached ingest (polled venues coalesce changes between polls, so fewer arrive
    // than the simulator made), over the time until the last of them was computed into hot state.
    const sustained = accepted / ((tDrained - t0) / 1000);

    // Baseline: the same number of quote writes straight into Redis, pipelined per 500.
    const sample = await sampleQuotes(rt, 2_000, captured);
    const baseKey = rt.ks.k('bench', 'baseline');
    const b0 = performance.now();
    for (let i = 0; i < accepted; i += 500) {
      const p = rt.redis.pipeline();
      for (let j = 0; j < 500 && i + j < accepted; j++) {
        const q = sample[(i + j) % sample.length]!;
        p.hset(baseKey, q.liquidity_hash, JSON.stringify(q));
      }
      await p.exec();
    }
    const baseline = accepted / ((performance.now() - b0) / 1000);
    await rt.redis.del(baseKey);

    console.log(`bench ingest: ${seconds}s at a target of ${rate} quote changes/s, ${values.threads} compute thread(s)`);
    console.log(`  produced by the simulator     ${produced} (${(produced / ((tProduced - t0) / 1000)).toFixed(0)}/s while producing)`);
    console.log(`  accepted by ingest            ${accepted}; written to venue state ${flushed} (coalesced per flush)`);
    console.log(`  liquidity jobs computed       ${jobs} (${(jobs / ((tDrained - t0) / 1000)).toFixed(0)}/s), drained ${((tDrained - tProduced) / 1000).toFixed(2)}s after the last change`);
    console.log(`  sustained through the pipeline ${sustained.toFixed(0)} quote changes/s (target ≥ 20000) ${sustained >= 20_000 ? 'PASS' : 'BELOW TARGET'}`);
    console.log(`  baseline raw Redis HSET       ${baseline.toFixed(0)} quote writes/s`);
    console.log(`  ratio pipeline / raw writes   ${(sustained / baseline).toFixed(3)}`);
    await ingest.stop();
    await compute.stop();
  } finally {
    await close();
  }
}

/** Waits until the liquidity queue holds nothing waiting or active. */
async function drain(rt: Awaited<ReturnType<typeof benchRuntime>>['rt'], processor: { worker: { isRunning(): boolean } }, timeoutMs: number): Promise<void> {
  const { Queue } = await import('bullmq');
  const { queueOptions } = await import('../pipelines/queues.js');
  const q = new Queue('liquidity', queueOptions(rt.config.redisUrl, rt.ks));
  const until = Date.now() + timeoutMs;
  try {
    await sleep(50); // let the last flush enqueue
    while (Date.now() < until) {
      const c = await q.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
      if (c.waiting + c.active + c.prioritized + c.delayed === 0) return;
      await sleep(20);
    }
    throw new Error('the liquidity queue did not drain in time');
  } finally {
    await q.close();
    void processor;
  }
}

async function sampleQuotes(rt: Awaited<ReturnType<typeof benchRuntime>>['rt'], n: number, out: NormalizedQuote[]): Promise<NormalizedQuote[]> {
  let cursor = '0';
  do {
    const [next, keys] = await rt.redis.scan(cursor, 'MATCH', rt.ks.k('vq', '*'), 'COUNT', 100);
    cursor = next;
    for (const k of keys) {
      const vals = await rt.redis.hvals(k);
      for (const v of vals) out.push(JSON.parse(v) as NormalizedQuote);
      if (out.length >= n) return out;
    }
  } while (cursor !== '0');
  return out;
}

runIfMain(import.meta.url, run);
