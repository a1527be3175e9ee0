/**
 * Redis: queues, hot state, pub/sub, rate-limit counters. Every key and queue carries the
 * configured prefix so several deployments (and test runs) share one server safely.
 */
import { Redis } from 'ioredis';

export type { Redis };

/**
 * How soon to try again after a lost connection: quickly, and never more than RECONNECT_MAX_MS apart,
 * so every client (commands, subscribers, BullMQ's) is back within a fraction of a second of Redis.
 * ioredis' and BullMQ's defaults grow to 2 s and 20 s: measured, stream events then took 10-12 s to
 * flow again after an outage of a few seconds.
 */
export const RECONNECT_MAX_MS = 250;
export const reconnectDelay = (attempt: number): number => Math.min(25 * attempt, RECONNECT_MAX_MS);

/**
 * A command connection that fails fast while Redis is away, so callers can answer 503 at once
 * instead of hanging until it returns:
 * - maxRetriesPerRequest 0: a command in flight when the connection drops is rejected right away
 *   (ioredis fails the whole queue on each lost connection), and one issued while reconnecting is
 *   rejected at the next failed attempt (at most RECONNECT_MAX_MS later);
 * - autoResendUnfulfilledCommands off: a command Redis may already have executed (a counting script)
 *   is never sent a second time after the reconnect, so nothing is counted twice;
 * - commandTimeout: a connection that hangs without closing fails its commands too.
 * The offline queue stays on so commands issued while the first connection opens wait for it.
 * BullMQ builds its own connections (pipelines/queues.ts): its blocking ones need the opposite.
 */
export function createRedis(url: string, opts: { lazyConnect?: boolean; name?: string } = {}): Redis {
  return new Redis(url, {
    lazyConnect: opts.lazyConnect ?? false,
    connectionName: opts.name,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
    enableAutoPipelining: true,
  });
}

const COMMAND_TIMEOUT_MS = 5_000;

/** Builds prefixed key names: keyspace('flow').k('apikey', hash) → 'flow:apikey:<hash>'. */
export class Keyspace {
  constructor(readonly prefix: string) {
    if (prefix.includes(':') && prefix.endsWith(':')) throw new Error('REDIS_PREFIX must not end with ":"');
  }
  k(...parts: (string | number)[]): string {
    return `${this.prefix}:${parts.join(':')}`;
  }
  /** BullMQ queue names cannot contain ':'; the prefix is passed to BullMQ separately. */
  queue(name: string): string {
    if (name.includes(':')) throw new Error(`queue name ${name} must not contain ':'`);
    return name;
  }
}

/** Deletes every key under `prefix:` (SCAN, never KEYS: it does not block the server). */
export async function deleteByPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) n += await redis.unlink(...keys);
  } while (cursor !== '0');
  return n;
}
