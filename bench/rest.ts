/**
 * bench rest: the authenticated, rate-limited catalog reads against bare Fastify serving the same
 * bytes, both in one child process, load from this process. Target: ratio ≥ 0.6.
 * Bare and Flow are measured in alternating rounds (this machine's throughput drifts by tens of percent
 * between runs); the verdict is the median of the per-round ratios.
 *   npm run bench -- rest [--seconds 5] [--rounds 5] [--connections 50]
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { load, printTable, type LoadResult } from './support/autocannon.js';
import { runIfMain } from './support/main.js';

export default async function run(args: string[]): Promise<void> {
  return runRestScenario('rest', args);
}

/** Shared by `rest` and `rest-liquidity`: the same harness, different paths. */
export async function runRestScenario(scenario: 'rest' | 'liquidity', args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' } } });
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const rounds = Number(values.rounds);
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./support/rest-servers.ts', import.meta.url).pathname, scenario], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    });
    const info = JSON.parse(line) as { flow_port: number; bare_port: number; api_key: string; paths: string[] };
    console.log(`bench ${scenario === 'rest' ? 'rest' : 'rest-liquidity'}: ${seconds}s per run, ${connections} connections, server in pid ${child.pid}`);
    const headers = { 'x-api-key': info.api_key };
    for (const path of info.paths) {
      const name = path.split('?')[0]!;
      // Warm both (JIT, caches, pools) before measuring.
      await load('warmup', `http://127.0.0.1:${info.bare_port}${path}`, { seconds: 2, connections });
      await load('warmup', `http://127.0.0.1:${info.flow_port}${path}`, { seconds: 2, connections, headers });
      const rows: LoadResult[] = [];
      const ratios: number[] = [];
      for (let r = 1; r <= rounds; r++) {
        const bare = await load(`round ${r} bare fastify ${name}`, `http://127.0.0.1:${info.bare_port}${path}`, { seconds, connections });
        const flow = await load(`round ${r} flow (auth+rate limit) ${name}`, `http://127.0.0.1:${info.flow_port}${path}`, { seconds, connections, headers });
        rows.push(bare, flow);
        ratios.push(flow.rps / bare.rps);
      }
      printTable(rows);
      const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!;
      console.log(`ratio flow / bare ${name}: rounds ${ratios.map((x) => x.toFixed(3)).join(', ')}; median ${median.toFixed(3)} (target ≥ 0.6) ${median >= 0.6 ? 'PASS' : 'BELOW TARGET'}\n`);
    }
    // How many requests each rate-limit script call counted (the gate's group commit), from /metrics.
    const metrics = await (await fetch(`http://127.0.0.1:${info.flow_port}/metrics`)).text();
    const figure = (m: string) => Number(new RegExp(`^${m} (\\d+)`, 'm').exec(metrics)?.[1] ?? NaN);
    const checks = figure('flow_ratelimit_checks_total');
    const calls = figure('flow_ratelimit_script_calls_total');
    console.log(`rate-limit gate: ${checks} requests counted in ${calls} script calls (${(checks / calls).toFixed(1)} per call)`);
  } finally {
    child.kill('SIGTERM');
  }
}

runIfMain(import.meta.url, run);
