/**
 * bench rest: authenticated, rate-limited catalog reads (contest, contest markets, contest lists
 * per league, over every contest of the catalog) against a bare Fastify baseline answering the same
 * URLs from the same read cache and the same PostgreSQL queries, without authentication, rate
 * limiting or validation (bench/support/rest-servers.ts). The catalog version is bumped every
 * --invalidate-ms, as catalog writes do, so both caches keep missing and refilling.
 * Targets: median ratio flow / bare req/s ≥ 0.6, and the same ratio of server CPU per request
 * (bare / flow ≥ 0.6: it stays meaningful when the load generator, sharing this machine's cores, is
 * what limits req/s); misses are exercised (≥ 0.5 % of Flow's requests read the store); Flow answers
 * no error.
 * Bare and Flow are measured in alternating rounds (this machine's throughput drifts by tens of
 * percent between runs); the verdict uses the median of the per-round ratios.
 *   npm run bench -- rest [--seconds 5] [--rounds 5] [--connections 50] [--invalidate-ms 1000]
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { load, printTable, type LoadResult } from './support/autocannon.js';
import { runIfMain } from './support/main.js';
import { Verdict } from './support/verdict.js';

export default async function run(args: string[]): Promise<void> {
  return runRestScenario('rest', args);
}

const RATIO_TARGET = 0.6;
const MIN_MISS_RATE = 0.005;

interface Counters {
  flow_store_reads: number;
  bare_store_reads: number;
  cpu_us: number;
}

/** Shared by `rest` and `rest-liquidity`: the same harness, different URLs and data paths. */
export async function runRestScenario(scenario: 'rest' | 'liquidity', args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      seconds: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '5' },
      connections: { type: 'string', default: '50' },
      'invalidate-ms': { type: 'string', default: '1000' },
    },
  });
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const rounds = Number(values.rounds);
  const benchName = scenario === 'rest' ? 'rest' : 'rest-liquidity';
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./support/rest-servers.ts', import.meta.url).pathname, scenario], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_INVALIDATE_MS: values['invalidate-ms'] },
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    });
    const info = JSON.parse(line) as { flow_port: number; bare_port: number; api_key: string; paths: string[] };
    const flowUrl = `http://127.0.0.1:${info.flow_port}`;
    const bareUrl = `http://127.0.0.1:${info.bare_port}`;
    const counters = async (): Promise<Counters> => (await (await fetch(`${bareUrl}/__bench/counters`)).json()) as Counters;
    console.log(
      `bench ${benchName}: ${info.paths.length} URLs (${scenario === 'rest' ? `every contest and its markets, contest lists per league with page sizes 1-50; catalog version bumped every ${values['invalidate-ms']} ms` : 'the liquidity of every open contest, live market running'}), ` +
        `${seconds}s per run, ${rounds} rounds, ${connections} connections, servers in pid ${child.pid}`,
    );
    console.log(`  e.g. ${info.paths.slice(0, 3).join('  ')}`);
    const headers = { 'x-api-key': info.api_key };
    // Warm both (JIT, caches, pools) before measuring.
    await load('warmup', bareUrl, { seconds: 2, connections, paths: info.paths });
    await load('warmup', flowUrl, { seconds: 2, connections, headers, paths: info.paths });

    // The server process's CPU with no requests (the live pipeline in rest-liquidity, timers), per
    // second, is taken off each run's CPU so it is not charged to whichever side served fewer requests.
    const idle0 = await counters();
    const idleT0 = performance.now();
    await new Promise((r) => setTimeout(r, 3000));
    const idle1 = await counters();
    const backgroundUsPerS = (idle1.cpu_us - idle0.cpu_us) / ((performance.now() - idleT0) / 1000);
    console.log(`  server CPU with no requests: ${(backgroundUsPerS / 10_000).toFixed(1)} % of a core (taken off each run)`);
    const served = (cpu: number, seconds: number) => Math.max(0, cpu - backgroundUsPerS * seconds);

    const rows: (LoadResult & { extra: string })[] = [];
    const ratios: number[] = [];
    let flowRequests = 0;
    let flowReads = 0;
    let bareRequests = 0;
    let bareReads = 0;
    let flowFailures = 0;
    let flowCpu = 0;
    let bareCpu = 0;
    for (let r = 1; r <= rounds; r++) {
      const c0 = await counters();
      const bare = await load(`round ${r} bare fastify (same cache + store)`, bareUrl, { seconds, connections, paths: info.paths });
      const c1 = await counters();
      const flow = await load(`round ${r} flow (auth + rate limit + validation)`, flowUrl, { seconds, connections, headers, paths: info.paths });
      const c2 = await counters();
      const bareMiss = (c1.bare_store_reads - c0.bare_store_reads) / bare.requests;
      const flowMiss = (c2.flow_store_reads - c1.flow_store_reads) / flow.requests;
      // Server CPU per request, the figure that stays meaningful when the load generator is the limit.
      const bareServed = served(c1.cpu_us - c0.cpu_us, seconds);
      const flowServed = served(c2.cpu_us - c1.cpu_us, seconds);
      const bareUs = bareServed / bare.requests;
      const flowUs = flowServed / flow.requests;
      rows.push({ ...bare, extra: `${(bareMiss * 100).toFixed(1).padEnd(23)}${bareUs.toFixed(0)}` }, { ...flow, extra: `${(flowMiss * 100).toFixed(1).padEnd(23)}${flowUs.toFixed(0)}` });
      bareCpu += bareServed;
      flowCpu += flowServed;
      ratios.push(flow.rps / bare.rps);
      bareRequests += bare.requests;
      bareReads += c1.bare_store_reads - c0.bare_store_reads;
      flowRequests += flow.requests;
      flowReads += c2.flow_store_reads - c1.flow_store_reads;
      flowFailures += flow.errors + flow.non2xx;
    }
    printTable(rows, '% reading the store     server CPU µs / request');
    const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!;
    console.log(`\nratio flow / bare req/s per round: ${ratios.map((x) => x.toFixed(3)).join(', ')}; median ${median.toFixed(3)}`);
    console.log(`store reads (cache misses and revalidations) per request: flow ${(flowReads / flowRequests).toFixed(4)}, bare ${(bareReads / bareRequests).toFixed(4)}`);
    const cpuRatio = bareCpu / bareRequests / (flowCpu / flowRequests);
    console.log(`server CPU per request: flow ${(flowCpu / flowRequests).toFixed(0)} µs, bare ${(bareCpu / bareRequests).toFixed(0)} µs; ratio bare / flow ${cpuRatio.toFixed(3)}`);
    // How many requests each rate-limit script call counted (the gate's group commit), from /metrics.
    const metrics = await (await fetch(`${flowUrl}/metrics`)).text();
    const figure = (m: string) => Number(new RegExp(`^${m} (\\d+)`, 'm').exec(metrics)?.[1] ?? NaN);
    const checks = figure('flow_ratelimit_checks_total');
    const calls = figure('flow_ratelimit_script_calls_total');
    if (Number.isFinite(checks)) console.log(`rate-limit gate: ${checks} requests counted in ${calls} script calls (${(checks / calls).toFixed(1)} per call)`);

    const v = new Verdict(`bench ${benchName}`);
    v.atLeast('median ratio flow / bare req/s', median, RATIO_TARGET);
    v.atLeast('ratio bare / flow server CPU per request', cpuRatio, RATIO_TARGET);
    v.atLeast('flow requests that read the store (misses exercised)', (flowReads / flowRequests) * 100, MIN_MISS_RATE * 100, '%');
    v.atMost('flow errors + non-2xx answers', flowFailures, 0);
    v.print();
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

runIfMain(import.meta.url, run);
