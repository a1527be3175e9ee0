/**
 * A compute worker in its own process that takes a liquidity job and hangs inside it, so a test can
 * kill it mid-job (SIGKILL: no cleanup, the job stays active with a lock until the lock lapses).
 * Prints "taken" when a job is in its hands.
 */
import { pino } from 'pino';
import { LiquidityProcessor } from '../../pipelines/processors/liquidity.js';
import type { ComputePool } from '../../pipelines/compute-pool.js';
import { createPool } from '../../src/store/pg/pool.js';
import { createRedis, Keyspace } from '../../src/store/redis/client.js';
import { SignalStore } from '../../src/store/redis/signals.js';
import { HotState } from '../../src/store/redis/hot.js';

const env = process.env as Record<string, string>;
const redis = createRedis(env.REDIS_URL!);
const ks = new Keyspace(env.REDIS_PREFIX!);
const hanging = {
  liquidity: () => {
    process.stdout.write('taken\n');
    return new Promise(() => undefined);
  },
  heldSnapshots: () => [],
  close: async () => undefined,
} as unknown as ComputePool;
new LiquidityProcessor({
  redisUrl: env.REDIS_URL!,
  ks,
  pool: createPool(env.DATABASE_URL!, 2),
  hot: new HotState(redis, ks),
  signals: new SignalStore(redis, ks),
  compute: hanging,
  log: pino({ level: 'silent' }),
  now: Date.now,
  lockMs: 1_000,
});
