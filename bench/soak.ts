/**
 * bench soak: nothing grows without bound. Every role in this one process, as `flow all` runs them
 * (ingest with the simulator at full speed, compute, api, gateway, the history writer), with the
 * simulator in churn mode: a contest opens every couple of seconds, goes live, finishes and settles
 * through the normal pipeline, so the closing path runs hundreds of times. A bounded client loop
 * reads liquidity and state of the contests meanwhile.
 *
 * Figures at start, after warm-up, in the middle and at the end: the process RSS, the shared Redis
 * server's used_memory (other tenants move it: shown, not judged), and the keys under this run's own
 * prefix with their summed MEMORY USAGE (the Redis figure that is ours). Target: RSS and our Redis
 * bytes grow no more than 10 % from warm-up to end (ratio end / warm-up ≤ 1.10); FAIL otherwise.
 * The event log is measured apart: it fills by design until each contest holds its retention
 * (10,000 events or 5 minutes, whichever is more), longer than a run's warm-up, so it is judged by
 * that rule instead: no contest log or feed may hold more than its retention allows.
 *
 *   npm run bench -- soak [--minutes 10] [--retention-seconds 20] [--churn-every-ms 2000]
 *
 * --retention-seconds 86400 keeps closed contests' hot state for the whole run (pruning off in
 * effect): the bench then fails, which is how to see that it can.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startRoles, type Running } from '../cli/roles/start.js';
import type { Runtime } from '../cli/runtime.js';
import { createKey } from '../src/store/pg/keys.js';
import { LOG_LIMITS, logKeys } from '../src/store/redis/eventlog.js';
import { benchRuntime, sleep } from './support/stack.js';
import { runIfMain } from './support/main.js';
import { Verdict } from './support/verdict.js';

const TARGET_RATIO = 1.1;

interface Sample {
  label: string;
  atS: number;
  rss: number;
  heapUsed: number;
  usedMemory: number;
  ourKeys: number;
  ourBytes: number;
  logBytes: number;
  logsOverBound: string[];
  contests: number;
  seen: number;
  meta: number;
  opened: number;
  settled: number;
  requests: number;
}

/** A full GC before each reading, so the figures compare live memory rather than garbage. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  return () => gc?.();
}

interface OurRedis {
  keys: number;
  /** Every key of ours but the event log's streams. */
  bytes: number;
  /** The event log: the contests' logs, the feed and the history stream. */
  logBytes: number;
  /** Streams holding more than their documented retention allows (see logOverBound). */
  logsOverBound: string[];
}

/**
 * Whether a stream of the event log holds more than its retention rule allows: a contest log more
 * than maxEvents, or more than minEvents while its oldest event is older than minAge (trimming
 * removes a few heads per append: a slack of 100 events and 30 s); the feed and the history stream
 * more than their caps (approximate trimming: one node of slack).
 */
function logOverBound(key: string, len: number, oldestMs: number | null, keys: { feed: string; hist: string }, nowMs: number): boolean {
  if (key === keys.feed) return len > LOG_LIMITS.feedMax + 200;
  if (key === keys.hist) return len > LOG_LIMITS.histMax + 200;
  if (len > LOG_LIMITS.maxEvents) return true;
  return len > LOG_LIMITS.minEvents + 100 && oldestMs !== null && nowMs - oldestMs > LOG_LIMITS.minAgeMs + 30_000;
}

async function ourRedis(rt: Runtime): Promise<OurRedis> {
  let cursor = '0';
  const out: OurRedis = { keys: 0, bytes: 0, logBytes: 0, logsOverBound: [] };
  const logPrefix = `${rt.ks.prefix}:ev:`;
  const shared = logKeys(rt.ks);
  const [secs, micros] = await rt.redis.time();
  const nowMs = Number(secs) * 1000 + Math.floor(Number(micros) / 1000);
  do {
    const [next, batch] = await rt.redis.scan(cursor, 'MATCH', `${rt.ks.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (batch.length === 0) continue;
    const p = rt.redis.pipeline();
    for (const k of batch) p.memory('USAGE', k);
    const res = await p.exec();
    for (const [i, [err, v]] of (res ?? []).entries()) {
      if (err || v === null) continue; // expired between SCAN and MEMORY USAGE
      const key = batch[i]!;
      out.keys++;
      if (key.startsWith(logPrefix) || key === shared.feed || key === shared.hist) {
        out.logBytes += Number(v);
        const [len, head] = await Promise.all([rt.redis.xlen(key), rt.redis.xrange(key, '-', '+', 'COUNT', 1)]);
        const oldest = head[0] ? Number(head[0][0].split('-')[0]) : null;
        if (logOverBound(key, len, oldest, shared, nowMs)) out.logsOverBound.push(`${key} (${len} events)`);
      } else out.bytes += Number(v);
    }
  } while (cursor !== '0');
  return out;
}

async function usedMemory(rt: Runtime): Promise<number> {
  const info = await rt.redis.info('memory');
  const m = /used_memory:(\d+)/.exec(info);
  return m ? Number(m[1]) : NaN;
}

const mb = (n: number) => `${(n / 1_048_576).toFixed(1)} MB`;

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      minutes: { type: 'string', default: '10' },
      'retention-seconds': { type: 'string', default: '20' },
      'churn-every-ms': { type: 'string', default: '2000' },
      'lead-ms': { type: 'string', default: '5000' },
      'duration-ms': { type: 'string', default: '20000' },
      activity: { type: 'string', default: '20' },
    },
  });
  const totalMs = Number(values.minutes) * 60_000;
  if (!(totalMs > 0)) throw new Error('--minutes must be a positive number');
  const retentionS = Number(values['retention-seconds']);
  // Warm-up: a quarter of the run (at most 2 min), and at least until the first churned contests have
  // lived, closed and outlived their retention and marker, so the steady state is what is compared.
  const lifeMs = Number(values['lead-ms']) + Number(values['duration-ms']) + 2 * retentionS * 1000 + 30_000;
  const warmMs = Math.max(Math.min(0.25 * totalMs, 120_000), Math.min(lifeMs, 0.8 * totalMs));
  const gc = collector();

  const dataDir = mkdtempSync(path.join(tmpdir(), 'flow-soak-'));
  const { rt, close } = await benchRuntime('soak', { PORT: '0', STREAM_PORT: '0', FLOW_DATA_DIR: dataDir, FLOW_HOT_RETENTION_SECONDS: String(retentionS) });
  let running: Running[] = [];
  try {
    // The roles `flow all` runs, started as the CLI starts them.
    const started = await startRoles(rt, ['ingest', 'compute', 'api', 'gateway'], {
      ingest: {
        simIntervalMs: 50,
        simChurn: { every_ms: Number(values['churn-every-ms']), lead_ms: Number(values['lead-ms']), duration_ms: Number(values['duration-ms']) },
      },
    });
    running = started.running;
    const ingest = started.ingest!;
    const compute = started.compute!;

    const market = ingest.sim!.market;
    market.setActivity(Number(values.activity));
    let opened = 0;
    let settled = 0;
    market.onContestOpened(() => opened++);
    market.onSettle((e) => e.contest_id.startsWith('ct_churn_') && settled++);

    const key = await createKey(rt.pool, rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test', workspaceName: 'soak' });
    const base = `http://127.0.0.1:${started.apiPort}/flow/v1`;
    let requests = 0;
    let serverErrors = 0;
    let timeouts = 0;
    const t0 = Date.now();
    const endAt = t0 + totalMs;
    // Reads of live contests, a few a second; each request times out, and the loop stops at endAt.
    const client = (async () => {
      while (Date.now() < endAt) {
        const ids = market.contestIds();
        const id = ids[Math.floor(Math.random() * ids.length)]!;
        for (const p of [`/contests/${id}/liquidity`, `/contests/${id}/state`]) {
          try {
            const r = await fetch(base + p, { headers: { 'x-api-key': key.api_key }, signal: AbortSignal.timeout(2_000) });
            await r.arrayBuffer();
            requests++;
            if (r.status >= 500) serverErrors++;
          } catch {
            timeouts++;
          }
        }
        await sleep(100);
      }
    })();

    const samples: Sample[] = [];
    const take = async (label: string): Promise<Sample> => {
      gc();
      const mem = process.memoryUsage();
      const ours = await ourRedis(rt);
      const s: Sample = {
        label,
        atS: (Date.now() - t0) / 1000,
        rss: mem.rss,
        heapUsed: mem.heapUsed,
        usedMemory: await usedMemory(rt),
        ourKeys: ours.keys,
        ourBytes: ours.bytes,
        logBytes: ours.logBytes,
        logsOverBound: ours.logsOverBound,
        contests: market.contestCount(),
        seen: ingest.ingester.seenSize(),
        meta: compute.processor.metaSize(),
        opened,
        settled,
        requests,
      };
      samples.push(s);
      process.stderr.write(
        `  ${label.padEnd(8)} ${s.atS.toFixed(0).padStart(4)}s  rss ${mb(s.rss)}  heap ${mb(s.heapUsed)}  redis used_memory ${mb(s.usedMemory)}  ours ${s.ourKeys} keys / ${mb(s.ourBytes)}  contests ${s.contests} (opened ${s.opened}, settled ${s.settled})  seen ${s.seen}  meta ${s.meta}  requests ${s.requests}\n`,
      );
      return s;
    };
    const until = async (ms: number) => {
      while (Date.now() < t0 + ms) {
        await sleep(Math.min(5_000, t0 + ms - Date.now()));
        if (Date.now() - t0 > 0) {
          const el = Math.round((Date.now() - t0) / 1000);
          if (el % 30 < 5) process.stderr.write(`  … ${el}s, contests opened ${opened}, settled ${settled}\n`);
        }
      }
    };

    const start = await take('start');
    await until(warmMs);
    const warm = await take('warm-up');
    await until(warmMs + (totalMs - warmMs) / 2);
    const middle = await take('middle');
    await until(totalMs);
    await client;
    const end = await take('end');

    const rssRatio = end.rss / warm.rss;
    const bytesRatio = end.ourBytes / warm.ourBytes;
    const overBound = [...new Set([...middle.logsOverBound, ...end.logsOverBound])];
    const usedRatio = end.usedMemory / warm.usedMemory;
    console.log(`bench soak: ${values.minutes} min, every role in one process, a contest opened every ${values['churn-every-ms']} ms (${values['duration-ms']} ms games), closed-contest retention ${retentionS} s`);
    console.log(`  target: RSS and our Redis bytes grow ≤ ${((TARGET_RATIO - 1) * 100).toFixed(0)} % from warm-up to end (ratio end / warm-up ≤ ${TARGET_RATIO.toFixed(2)})`);
    console.log(`  contests opened ${opened}, settled ${settled}; client requests ${requests} answered (${serverErrors} 5xx), ${timeouts} timed out after 2 s or failed`);
    console.log('  sample     at     RSS        heap       used_memory  our keys  our bytes  contests  seen     meta');
    for (const s of [start, warm, middle, end]) {
      console.log(
        `  ${s.label.padEnd(9)}${`${s.atS.toFixed(0)}s`.padStart(6)}  ${mb(s.rss).padStart(9)}  ${mb(s.heapUsed).padStart(9)}  ${mb(s.usedMemory).padStart(11)}  ${String(s.ourKeys).padStart(8)}  ${mb(s.ourBytes).padStart(9)}  ${String(s.contests).padStart(8)}  ${String(s.seen).padStart(7)}  ${String(s.meta).padStart(5)}`,
      );
    }
    console.log(`  our Redis keys warm-up → end      ${warm.ourKeys} → ${end.ourKeys}`);
    console.log(
      `  event log (contest logs, feed, history stream) ${mb(warm.logBytes)} → ${mb(end.logBytes)}: grows by design until each contest holds ${LOG_LIMITS.minEvents} events or ${LOG_LIMITS.minAgeMs / 60_000} min; judged by its retention rule instead`,
    );
    if (overBound.length) console.log(`  logs over their retention bound: ${overBound.slice(0, 5).join(', ')}`);
    console.log(`  ratio Redis used_memory end / warm-up ${usedRatio.toFixed(3)} (shared server: other tenants move it; not judged)`);
    const v = new Verdict('bench soak');
    v.atMost('RSS end / warm-up', rssRatio, TARGET_RATIO);
    v.atMost('our Redis bytes outside the event log, end / warm-up', bytesRatio, TARGET_RATIO);
    v.atMost('event-log streams holding more than their retention rule allows', overBound.length, 0);
    // A run in which no contest closed proves nothing about pruning.
    v.atLeast('contests settled through the pipeline', settled, 1);
    v.atMost('client answers 5xx', serverErrors, 0);
    v.print();
  } finally {
    for (const r of [...running].reverse()) await r.stop().catch((err) => console.error('stopping a role failed:', err));
    await close();
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
}

runIfMain(import.meta.url, run);
