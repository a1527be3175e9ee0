/**
 * A history writer in its own process, for kill tests: run with FLOW_FAILPOINTS naming a step of the
 * writer (history.before-insert, history.after-insert), it dies there by SIGKILL. Should it get
 * through a batch without dying, it says "drained" and exits 0, and the test fails on that.
 */
import { pino } from 'pino';
import { HistoryConsumer } from '../../../pipelines/history/consumer.js';
import { createClickHouse } from '../../../src/store/clickhouse/client.js';
import { createRedis, Keyspace } from '../../../src/store/redis/client.js';

const env = process.env as Record<string, string>;
const redis = createRedis(env.REDIS_URL!);
const ch = createClickHouse({ url: env.CLICKHOUSE_URL ?? null, dataDir: env.FLOW_DATA_DIR! });
const consumer = new HistoryConsumer({
  redis,
  redisUrl: env.REDIS_URL!,
  ks: new Keyspace(env.REDIS_PREFIX!),
  clickhouse: ch,
  log: pino({ level: 'silent' }),
  leaseMs: Number(env.LEASE_MS ?? 1_000),
  lingerMs: 20,
  blockMs: 50,
}).start();
await consumer.drain(30_000);
process.stdout.write('drained\n');
await consumer.stop();
await ch.close();
redis.disconnect();
