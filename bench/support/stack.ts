/** A bench runtime: its own database and Redis prefix (dropped at the end), the sim catalog seeded. */
import { pino } from 'pino';
import { openRuntime, type Runtime } from '../../cli/runtime.js';
import { seedSimCatalog } from '../../cli/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { dropDatabase } from '../../src/store/pg/pool.js';
import { deleteByPrefix } from '../../src/store/redis/client.js';
import { benchSecrets } from './bench-secrets.js';

export async function benchRuntime(name: string, env: Record<string, string> = {}): Promise<{ rt: Runtime; close(): Promise<void> }> {
  const base = process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432';
  const db = `flow_bench_${name}_${process.pid}`;
  const prefix = `flowbench_${name}_${process.pid}`;
  const config = loadConfig({ ...process.env, ...benchSecrets(), DATABASE_URL: `${base}/${db}`, REDIS_PREFIX: prefix, LOG_LEVEL: 'warn', ...env });
  const rt = await openRuntime(config, pino({ level: 'warn' }), { defaultMetrics: false });
  await seedSimCatalog(rt);
  return {
    rt,
    async close() {
      await deleteByPrefix(rt.redis, prefix);
      await rt.close();
      await dropDatabase(`${base}/${db}`);
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
