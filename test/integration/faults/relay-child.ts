/**
 * An account-event relay in its own process, for kill tests: run with FLOW_FAILPOINTS naming a step
 * of the relay (relay.after-append), it dies there by SIGKILL. Otherwise it relays until the outbox
 * is empty, says "drained" and exits 0.
 */
import { pino } from 'pino';
import { AccountEventRelay } from '../../../pipelines/account-events/relay.js';
import { createPool } from '../../../src/store/pg/pool.js';
import { createRedis, Keyspace } from '../../../src/store/redis/client.js';

const env = process.env as Record<string, string>;
const pool = createPool(env.DATABASE_URL!, 2);
const redis = createRedis(env.REDIS_URL!);
const relay = new AccountEventRelay({ pool, databaseUrl: env.DATABASE_URL!, redis, ks: new Keyspace(env.REDIS_PREFIX!), log: pino({ level: 'silent' }), pollMs: 50, batchSize: Number(env.RELAY_BATCH ?? 500) }).start();
for (;;) {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM account_outbox');
  if (rows[0]!.n === 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write('drained\n');
await relay.stop();
await pool.end();
redis.disconnect();
