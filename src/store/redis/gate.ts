/**
 * The request gate: one Redis round trip per request checks both fixed rate-limit windows of the
 * caller's workspace, counts the request, and returns the counters for the X-RateLimit-* headers.
 * Atomic across any number of API processes: each window is one counter that a script increments
 * and checks, so no two requests can both take the last unit of budget.
 *
 * Who the caller is comes from PrincipalCache (src/store/principals.ts): an in-process cache over a
 * Redis copy over PostgreSQL, evicted on revocation through the bus. Keeping the principal out of the
 * script keeps the script to a handful of INCRs: measured, a Lua cjson decode per request halved
 * throughput under load.
 */
import type { PrincipalRecord } from '../../domain/principal.js';
import { windowsAt, type Windows } from '../../domain/ratelimit.js';
import type { Keyspace, Redis } from './client.js';

// The hot path is two INCRs: measured on this 2-core machine, every extra Redis command per request
// (a GET, a usage INCR) cost more throughput than the whole rest of the gate. A refused request is
// uncounted again inside the same script, so refusals never consume budget and never race.
// KEYS: minute counter, day counter. ARGV: rpm, rpd, minute ttl ms, day ttl ms, day-exempt flag.
const COUNT_LUA = `
local m = redis.call('INCR', KEYS[1])
if m == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
if m > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return {2, m - 1, tonumber(redis.call('GET', KEYS[2]) or '0')}
end
if ARGV[5] == '1' then return {1, m, tonumber(redis.call('GET', KEYS[2]) or '0')} end
local d = redis.call('INCR', KEYS[2])
if d == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
if d > tonumber(ARGV[2]) then
  redis.call('DECR', KEYS[2])
  redis.call('DECR', KEYS[1])
  return {3, m - 1, d - 1}
end
return {1, m, d}
`;

export interface GateOutcome {
  kind: 'allowed' | 'minute_exceeded' | 'day_exceeded';
  minuteCount: number;
  dayCount: number;
  windows: Windows;
}

type GateRedis = Redis & {
  flowCount(mk: string, dk: string, rpm: number, rpd: number, mttl: number, dttl: number, exempt: string): Promise<number[]>;
};

export const HOUR_MS = 3_600_000;
const NEGATIVE_TTL_MS = 30_000;
const POSITIVE_TTL_MS = 3_600_000;

/**
 * Usage counters (requests and errors per key per hour, for GET /auth/me) are statistics, not limits:
 * they are counted in process and added to Redis once a second in one pipeline, keeping them off
 * the per-request round trip. Another process's counts show up within a second.
 */
class UsageCounter {
  private pending = new Map<string, number>();
  private lastMs = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly ks: Keyspace,
    flushMs = 1_000,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), flushMs);
    this.timer.unref();
  }

  count(id: string, kind: 'h' | 'e', nowMs: number): void {
    // Keyed by id and kind only: the hour is fixed at flush time (a second's skew at an hour boundary).
    const k = kind === 'h' ? id : `${id}\u0000e`;
    this.pending.set(k, (this.pending.get(k) ?? 0) + 1);
    this.lastMs = nowMs;
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const hour = Math.floor(this.lastMs / HOUR_MS);
    const p = this.redis.pipeline();
    for (const [k, n] of batch) {
      const sep = k.indexOf('\u0000');
      const key = sep < 0 ? this.ks.k('usage', k, 'h', hour) : this.ks.k('usage', k.slice(0, sep), 'e', hour);
      p.incrby(key, n).pexpire(key, USAGE_TTL_MS);
    }
    await p.exec();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush().catch(() => undefined);
  }
}

const USAGE_TTL_MS = 8 * 86_400_000;

export class RequestGate {
  private readonly redis: GateRedis;
  private readonly usageCounter: UsageCounter;
  private readonly keyCache = new Map<string, { minuteIndex: number; dayIndex: number; minute: string; day: string }>();

  constructor(
    redis: Redis,
    private readonly ks: Keyspace,
  ) {
    this.redis = redis as GateRedis;
    this.usageCounter = new UsageCounter(redis, ks);
    if (!(this.redis as unknown as Record<string, unknown>).flowCount) {
      this.redis.defineCommand('flowCount', { numberOfKeys: 2, lua: COUNT_LUA });
    }
  }

  /** Checks and counts one request of this principal against its workspace's windows. */
  async check(p: Pick<PrincipalRecord, 'workspace_id' | 'key_id' | 'router_account_id' | 'rpm' | 'rpd'>, nowMs: number, exemptFromDay: boolean): Promise<GateOutcome> {
    const w = windowsAt(nowMs);
    this.usageCounter.count(usageId(p), 'h', nowMs);
    const keys = this.counterKeys(p.workspace_id, w);
    const res = await this.redis.flowCount(
      keys.minute,
      keys.day,
      p.rpm,
      p.rpd,
      w.minuteTtlMs,
      w.dayTtlMs,
      exemptFromDay ? '1' : '0',
    );
    const status = Number(res[0]);
    const kind = status === 1 ? 'allowed' : status === 2 ? 'minute_exceeded' : 'day_exceeded';
    return { kind, minuteCount: Number(res[1]), dayCount: Number(res[2]), windows: w };
  }

  /** Counter key names per workspace, rebuilt only when a window turns over (not per request). */
  private counterKeys(workspaceId: string, w: Windows): { minuteIndex: number; dayIndex: number; minute: string; day: string } {
    let k = this.keyCache.get(workspaceId);
    if (!k || k.minuteIndex !== w.minuteIndex || k.dayIndex !== w.dayIndex) {
      k = {
        minuteIndex: w.minuteIndex,
        dayIndex: w.dayIndex,
        minute: this.ks.k('rl', workspaceId, 'm', w.minuteIndex),
        day: this.ks.k('rl', workspaceId, 'd', w.dayIndex),
      };
      if (this.keyCache.size > 10_000) this.keyCache.clear();
      this.keyCache.set(workspaceId, k);
    }
    return k;
  }

  recordKey(kind: 'key' | 'acct', id: string): string {
    return this.ks.k('principal', kind, id);
  }

  /** The Redis copy of a principal record (shared by processes), or null. */
  async peek(recordKey: string): Promise<PrincipalRecord | null> {
    const raw = await this.redis.get(recordKey);
    return raw ? (JSON.parse(raw) as PrincipalRecord) : null;
  }

  async remember(recordKey: string, record: PrincipalRecord | { invalid: 'unknown' | 'revoked' }): Promise<void> {
    const ttl = 'invalid' in record && record.invalid ? NEGATIVE_TTL_MS : POSITIVE_TTL_MS;
    await this.redis.set(recordKey, JSON.stringify(record), 'PX', ttl);
  }

  async forget(recordKey: string): Promise<void> {
    await this.redis.del(recordKey);
  }

  /** Counts an error response against the caller's usage (for GET /auth/me). */
  countError(id: string, nowMs: number): void {
    this.usageCounter.count(id, 'e', nowMs);
  }

  close(): Promise<void> {
    return this.usageCounter.close();
  }

  /** Requests and errors counted in the hourly buckets of the last 24 hours and 7 days. */
  async usage(id: string, nowMs: number): Promise<{ requests24h: number; requests7d: number; errors24h: number }> {
    const hour = Math.floor(nowMs / HOUR_MS);
    const reqKeys: string[] = [];
    const errKeys: string[] = [];
    for (let i = 0; i < 168; i++) reqKeys.push(this.ks.k('usage', id, 'h', hour - i));
    for (let i = 0; i < 24; i++) errKeys.push(this.ks.k('usage', id, 'e', hour - i));
    // This process's not-yet-flushed counts first, so a caller always sees its own requests.
    await this.usageCounter.flush();
    const [req, err] = await Promise.all([this.redis.mget(reqKeys), this.redis.mget(errKeys)]);
    const sum = (xs: (string | null)[]) => xs.reduce((s, x) => s + (x ? Number(x) : 0), 0);
    return { requests24h: sum(req.slice(0, 24)), requests7d: sum(req), errors24h: sum(err) };
  }
}

/** Usage is counted per key, or per account for a JWT caller. */
export const usageId = (r: Pick<PrincipalRecord, 'key_id' | 'router_account_id'>): string => r.key_id ?? `acct:${r.router_account_id}`;
