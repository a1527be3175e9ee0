/**
 * Redis pub/sub between processes, only for what needs no durable log: `keys-revoked` (every
 * gateway and API process drops the key at once) and, in the same `bus:` namespace, the
 * `liquidity-changed` cache-invalidation topic the write scripts publish (src/store/redis/hot.ts).
 * No stream event comes through here: every event a client may need is in the event log
 * (src/store/redis/eventlog.ts), the private channels' included (relayed there from PostgreSQL's
 * account outbox).
 *
 * Pub/sub is fire-and-forget: a subscriber that is away misses the message. That suits these uses:
 * revocations are also found by the gateways' periodic key checks, a lost invalidation by the API's
 * 1 s version revalidation.
 */
import type { Keyspace, Redis } from './client.js';

export type BusTopic = 'keys-revoked';

export const busTopic = (ks: Keyspace, topic: BusTopic): string => ks.k('bus', topic);

/**
 * Subscribes a dedicated connection (a subscribed Redis connection can do nothing else) to the
 * given topics and calls back with their messages.
 */
export async function subscribeBus(subscriber: Redis, ks: Keyspace, topics: BusTopic[], onMessage: (topic: BusTopic, raw: string) => void): Promise<() => Promise<void>> {
  const byName = new Map(topics.map((t) => [busTopic(ks, t), t] as const));
  subscriber.on('message', (name: string, raw: string) => {
    const t = byName.get(name);
    if (t) onMessage(t, raw);
  });
  await subscriber.subscribe(...byName.keys());
  return async () => {
    await subscriber.unsubscribe(...byName.keys());
  };
}
