/**
 * A lease in Redis: one holder at a time per key, for as long as it keeps renewing. The value is the
 * holder's random token, set with NX and a lifetime (PX); the holder renews well before the lifetime
 * ends, and a process that dies simply stops renewing, so another takes over once it lapses.
 *
 * The holder's own belief (`held()`) ends a safety margin before the lifetime it was last granted,
 * so a holder that cannot reach Redis stops first; writes that must not come from a former holder
 * are also fenced in Redis itself (scripts compare the key's value with `token`).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from '../src/store/redis/client.js';
import { luaCommands } from '../src/store/redis/script.js';

// Takes the lease when free, renews it when ours; 1 when held afterwards.
const ACQUIRE_LUA = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
`;

const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type LeaseScripts = {
  flowLeaseAcquire(key: string, token: string, ttlMs: number): Promise<number>;
  flowLeaseRelease(key: string, token: string): Promise<number>;
};

export class Lease {
  /** This holder's value in the key: fenced scripts compare against it. */
  readonly token = randomUUID();
  private validUntil = 0;
  private readonly redis: LeaseScripts;

  constructor(
    redis: Redis,
    readonly key: string,
    readonly ttlMs: number,
  ) {
    this.redis = luaCommands(redis, {
      flowLeaseAcquire: { numberOfKeys: 1, lua: ACQUIRE_LUA },
      flowLeaseRelease: { numberOfKeys: 1, lua: RELEASE_LUA },
    }) as unknown as LeaseScripts;
  }

  /** True while the last grant is safely within its lifetime. */
  held(): boolean {
    return Date.now() < this.validUntil;
  }

  /** Takes the lease if free or renews it if ours; false when another holder has it. */
  async acquire(): Promise<boolean> {
    const asked = Date.now();
    const ok = (await this.redis.flowLeaseAcquire(this.key, this.token, this.ttlMs)) === 1;
    // Counted from before the request: the grant can only end later than this.
    this.validUntil = ok ? asked + this.ttlMs * 0.8 : 0;
    return ok;
  }

  /** Gives the lease up now (when ours), so a standby takes over without waiting for it to lapse. */
  async release(): Promise<void> {
    this.validUntil = 0;
    await this.redis.flowLeaseRelease(this.key, this.token);
  }

  /** Forgets the lease locally (a fenced write found another holder). */
  lost(): void {
    this.validUntil = 0;
  }
}
