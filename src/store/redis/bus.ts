/**
 * Redis pub/sub between processes, for what needs no durable log: `keys-revoked` (every gateway
 * closes the key's connections at once), the private channels `orders` and `balance` (routed by
 * account; nothing produces them yet), and, in the same `bus:` namespace, the `liquidity-changed`
 * cache-invalidation topic the write scripts publish (src/store/redis/hot.ts). Stream events
 * of the public channels do not come through here: they are appended to the event log in the
 * script that stores their state, and gateways read them there (src/store/redis/eventlog.ts).
 *
 * Pub/sub is fire-and-forget: a subscriber that is away misses the message. That suits these uses:
 * revocations are also found by the gateways' periodic key checks, a lost invalidation by the API's
 * 1 s version revalidation, and orders/balance carry no event id or resume (the spec excludes them
 * from resume; clients fetch that state over REST).
 */
import type { BusMessage, StreamChannel } from '../../domain/stream.js';
import type { Keyspace, Redis } from './client.js';

export const busTopic = (ks: Keyspace, channel: StreamChannel | 'keys-revoked'): string => ks.k('bus', channel);

/** Wire format: routing header JSON, a newline, then the client event verbatim (no re-serialization). */
export function encodeBusMessage(m: BusMessage): string {
  return `${JSON.stringify({ c: m.contest_id, l: m.league_id, a: m.account_id ?? null })}\n${m.event}`;
}

export function decodeBusMessage(channel: StreamChannel, raw: string): BusMessage {
  const nl = raw.indexOf('\n');
  const head = JSON.parse(raw.slice(0, nl)) as { c: string | null; l: string | null; a: string | null };
  return { channel, contest_id: head.c, league_id: head.l, account_id: head.a, event: raw.slice(nl + 1) };
}

export class BusPublisher {
  constructor(
    private readonly redis: Redis,
    private readonly ks: Keyspace,
  ) {}

  publish(m: BusMessage): Promise<number> {
    return this.redis.publish(busTopic(this.ks, m.channel), encodeBusMessage(m));
  }
}

/**
 * Subscribes a dedicated connection (a subscribed Redis connection can do nothing else) to the
 * given channels and calls back with decoded messages.
 */
export async function subscribeBus(
  subscriber: Redis,
  ks: Keyspace,
  channels: (StreamChannel | 'keys-revoked')[],
  onMessage: (channel: StreamChannel | 'keys-revoked', raw: string) => void,
): Promise<() => Promise<void>> {
  const topics = new Map(channels.map((c) => [busTopic(ks, c), c] as const));
  subscriber.on('message', (topic: string, raw: string) => {
    const c = topics.get(topic);
    if (c) onMessage(c, raw);
  });
  await subscriber.subscribe(...topics.keys());
  return async () => {
    await subscriber.unsubscribe(...topics.keys());
  };
}
