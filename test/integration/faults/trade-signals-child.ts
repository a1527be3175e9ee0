/**
 * A trade-signal consumer in its own process, for kill tests: run with FLOW_FAILPOINTS naming a step
 * of a batch (trade-signals.before-upsert, trade-signals.before-commit), it dies there by SIGKILL.
 * Should it get through without dying, it says "drained" and exits 0, and the test fails on that.
 */
import { pino } from 'pino';
import { ComputePool } from '../../../pipelines/compute-pool.js';
import { TradeSignalConsumer } from '../../../pipelines/signals/trades.js';
import { createPool } from '../../../src/store/pg/pool.js';
import { createRedis, Keyspace } from '../../../src/store/redis/client.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { SignalStore } from '../../../src/store/redis/signals.js';

const env = process.env as Record<string, string>;
const redis = createRedis(env.REDIS_URL!);
const ks = new Keyspace(env.REDIS_PREFIX!);
const pool = createPool(env.DATABASE_URL!, 2);
const compute = new ComputePool(1);
const consumer = new TradeSignalConsumer({
  redis,
  redisUrl: env.REDIS_URL!,
  ks,
  pool,
  hot: new HotState(redis, ks),
  signals: new SignalStore(redis, ks),
  compute,
  log: pino({ level: 'silent' }),
  now: Date.now,
  leaseMs: Number(env.LEASE_MS ?? 1_000),
  blockMs: 50,
}).start();
await consumer.drain(30_000);
process.stdout.write('drained\n');
await consumer.stop();
await compute.close();
await pool.end();
redis.disconnect();
