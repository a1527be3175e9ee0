/**
 * What a route really sends to PostgreSQL and Redis, recorded from one request the real app serves,
 * so a bench's raw baseline replays the route's own statements instead of a copy that drifts from it
 * (bench/support/raw-deposit.ts, bench/support/raw-buy.ts).
 */
import { createPool, type Pool } from '../../src/store/pg/pool.js';
import { createRedis, type Redis } from '../../src/store/redis/client.js';

/** One statement as sent: its text (trimmed) and its parameters. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/**
 * A pool of one connection that records every statement sent on it, in order. `sent` is the live
 * list: clear it (`sent.length = 0`) to start a fresh recording.
 */
export function recordingPool(databaseUrl: string): { pool: Pool; sent: SentStatement[] } {
  const sent: SentStatement[] = [];
  const pool = createPool(databaseUrl, 1);
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      const q = a[0] as string | { text: string; values?: unknown[] };
      sent.push(typeof q === 'string' ? { text: q.trim(), values: Array.isArray(a[1]) ? (a[1] as unknown[]) : [] } : { text: q.text.trim(), values: q.values ?? [] });
      return query(...a);
    };
  });
  return { pool, sent };
}

/**
 * A Redis client of its own that records the name of every command sent on it (pipelined ones
 * included: ioredis sends each through sendCommand). `sent` is the live list, as above.
 */
export function recordingRedis(redisUrl: string): { redis: Redis; sent: string[] } {
  const sent: string[] = [];
  const redis = createRedis(redisUrl, { name: 'flow-bench-capture' });
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    sent.push(command.name);
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
  return { redis, sent };
}
