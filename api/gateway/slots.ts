/**
 * Concurrent-connection slots per API key, shared by every gateway process through Redis.
 *
 * One sorted set per key: member = connection id, score = last heartbeat (ms). Each gateway refreshes
 * the scores of its own connections every heartbeat; entries older than the TTL are pruned before
 * counting, so the slots of a gateway that died free themselves within one TTL. Acquire is a Lua
 * script: prune, count and add happen atomically, so two gateways can never both take the last slot.
 */
import type { Keyspace, Redis } from '../../src/store/redis/client.js';
import { luaCommands } from '../../src/store/redis/script.js';

const ACQUIRE_LUA = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[3]) then return {0, n} end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, n + 1}
`;

type SlotRedis = Redis & {
  flowStreamSlot(key: string, now: number, staleBefore: number, max: number, connId: string, ttlMs: number): Promise<[number, number]>;
};

export class ConnectionSlots {
  private readonly redis: SlotRedis;
  /** Called by SHA: built when the gateway starts, on a connection other roles already use (src/store/redis/script.ts). */
  private readonly cmd: Pick<SlotRedis, 'flowStreamSlot'>;

  constructor(
    redis: Redis,
    private readonly ks: Keyspace,
    /** An entry not refreshed for this long is counted as gone. */
    readonly ttlMs: number,
  ) {
    this.redis = redis as SlotRedis;
    this.cmd = luaCommands(redis, { flowStreamSlot: { numberOfKeys: 1, lua: ACQUIRE_LUA } }) as unknown as Pick<SlotRedis, 'flowStreamSlot'>;
  }

  key(keyId: string): string {
    return this.ks.k('stream', 'conns', keyId);
  }

  /** Takes a slot for connId unless `max` live connections already hold one. */
  async acquire(keyId: string, connId: string, max: number, nowMs: number): Promise<{ ok: boolean; open: number }> {
    const [ok, open] = await this.cmd.flowStreamSlot(this.key(keyId), nowMs, nowMs - this.ttlMs, max, connId, this.ttlMs);
    return { ok: Number(ok) === 1, open: Number(open) };
  }

  /** Re-scores live connections (re-adding any pruned while this process was stalled). */
  async refresh(entries: Iterable<{ keyId: string; connId: string }>, nowMs: number): Promise<void> {
    const multi = this.redis.pipeline();
    const keys = new Set<string>();
    let n = 0;
    for (const e of entries) {
      const k = this.key(e.keyId);
      multi.zadd(k, nowMs, e.connId);
      keys.add(k);
      n++;
    }
    if (!n) return;
    for (const k of keys) multi.pexpire(k, this.ttlMs);
    await multi.exec();
  }

  async release(keyId: string, connId: string): Promise<void> {
    await this.redis.zrem(this.key(keyId), connId);
  }

  /** Live connections of a key across all gateways (for tests and diagnostics). */
  async count(keyId: string, nowMs: number): Promise<number> {
    return this.redis.zcount(this.key(keyId), nowMs - this.ttlMs, '+inf');
  }
}
