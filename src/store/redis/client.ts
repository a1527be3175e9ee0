/**
 * Redis: queues, hot state, pub/sub, rate-limit counters. Every key and queue carries the
 * configured prefix so several deployments (and test runs) share one server safely.
 */
import { Redis } from 'ioredis';

export type { Redis };

export function createRedis(url: string, opts: { lazyConnect?: boolean; name?: string } = {}): Redis {
  return new Redis(url, {
    lazyConnect: opts.lazyConnect ?? false,
    connectionName: opts.name,
    // BullMQ needs this null on blocking connections; harmless elsewhere and avoids
    // surprising MaxRetriesPerRequestError under load.
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
  });
}

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
