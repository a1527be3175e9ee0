/**
 * bench rest: the authenticated, rate-limited catalog reads against bare Fastify serving the same
 * bytes, both in one child process, load from this process. Target: ratio ≥ 0.6.
 *   npm run bench -- rest [--seconds 10] [--connections 50]
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
  const { values } = parseArgs({ args, options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' } } });
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
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
    const rows: LoadResult[] = [];
    for (const path of info.paths) {
      // Warm both (JIT, caches, pools) before measuring.
      await load('warmup', `http://127.0.0.1:${info.bare_port}${path}`, { seconds: 2, connections });
      await load('warmup', `http://127.0.0.1:${info.flow_port}${path}`, { seconds: 2, connections, headers: { 'x-api-key': info.api_key } });
      const bare = await load(`bare fastify ${path.split('?')[0]}`, `http://127.0.0.1:${info.bare_port}${path}`, { seconds, connections });
      const flow = await load(`flow (auth+rate limit) ${path.split('?')[0]}`, `http://127.0.0.1:${info.flow_port}${path}`, {
        seconds,
        connections,
        headers: { 'x-api-key': info.api_key },
      });
      rows.push(bare, flow);
    }
    printTable(rows);
    for (let i = 0; i < rows.length; i += 2) {
      const ratio = rows[i + 1]!.rps / rows[i]!.rps;
      console.log(`ratio ${rows[i + 1]!.name} / bare: ${ratio.toFixed(3)} (target ≥ 0.6) ${ratio >= 0.6 ? 'PASS' : 'BELOW TARGET'}`);
    }
  } finally {
    child.kill('SIGTERM');
  }
}

runIfMain(import.meta.url, run);
