/**
 * Queue names and the typed map from queue to job payload (graphile-worker's task map). BullMQ queue
 * names cannot contain ':'; the deployment's REDIS_PREFIX is BullMQ's prefix.
 */
import type { ConnectionOptions, QueueOptions } from 'bullmq';
import { StoreUnavailable } from '../src/errors.js';
import { reconnectDelay, type Keyspace } from '../src/store/redis/client.js';

export interface JobMap {
  /** Recompute one contest from its venue state (payload carries no quotes: state lives in Redis). */
  liquidity: { contest_id: string };
  /**
   * Execute one real-money leg: its intent is in PostgreSQL (the job id is the router_order_id).
   * action cancel: carry out the venue-side cancel asked of the order (job id `cancel-<router_order_id>`),
   * on the same queue and under the same (account, venue) lock as placements.
   */
  execute: { router_order_id: string; action?: 'cancel' };
}

export type QueueName = keyof JobMap;

export const QUEUE_NAMES: { liquidity: 'liquidity' } = { liquidity: 'liquidity' };

/**
 * One execute queue per venue (docs/orders.md "Real-money legs"): a worker takes a venue's legs
 * only where that venue's adapter runs. ':' (which BullMQ refuses in a queue name) cannot occur.
 */
export const executeQueueName = (partnerId: string): string => `execute.${partnerId.replace(/[^A-Za-z0-9_.-]/g, '_')}`;

/** BullMQ wants a connection config per Queue/Worker; the URL is parsed once here. */
export function bullConnection(redisUrl: string): ConnectionOptions {
  const u = new URL(redisUrl);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    // BullMQ's blocking connections need null (a command waits out a reconnect rather than fail).
    maxRetriesPerRequest: null,
    // BullMQ's default waits at least 1 s and up to 20 s between attempts: after an outage of a few
    // seconds the queues came back 10-12 s after Redis did. Ours are back within RECONNECT_MAX_MS.
    retryStrategy: reconnectDelay,
  };
}

export function queueOptions(redisUrl: string, ks: Keyspace): QueueOptions {
  return { connection: bullConnection(redisUrl), prefix: ks.prefix };
}

/**
 * Waits for a queue add at most `ms`. BullMQ's connection waits out an outage (its blocking reads
 * need that), so an add in flight when Redis drops would wait for its return: past `ms` this
 * rejects with StoreUnavailable (`what` names the work) and the caller keeps its work for a retry.
 * Should the add still land later, the job's id or deduplication makes the retry join it.
 */
export async function addWithin<T>(add: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailable('redis', what)), ms);
  });
  try {
    return await Promise.race([add, late]);
  } finally {
    clearTimeout(timer);
    add.catch(() => undefined);
  }
}

