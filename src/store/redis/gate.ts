/**
 * The request gate: one Redis round trip per request resolves the caller from its cached principal
 * record, checks both fixed rate-limit windows of its workspace, counts the request, and returns
 * the counters for the X-RateLimit-* headers. Atomic across any number of API processes.
 *
 * The principal record is a cache of PostgreSQL (the key table is the source of truth): on a miss the
 * caller loads it and calls `remember`, then retries. Unknown and revoked keys are cached as negative
 * records briefly so a flood of bad keys cannot reach PostgreSQL.
 */
import type { PrincipalRecord } from '../../domain/principal.js';
import { windowsAt, type Windows } from '../../domain/ratelimit.js';
import type { Keyspace, Redis } from './client.js';

// Keys other than KEYS[1] are derived inside the script from the workspace id, which only the record
// knows; fine on a single Redis or a primary/replica pair (not Redis Cluster, documented).
const GATE_LUA = `
local rec = redis.call('GET', KEYS[1])
if not rec then return {0} end
local r = cjson.decode(rec)
if r.invalid then return {-1, rec} end
local p = ARGV[1]
local mk = p .. ':rl:' .. r.workspace_id .. ':m:' .. ARGV[2]
local dk = p .. ':rl:' .. r.workspace_id .. ':d:' .. ARGV[3]
-- cjson decodes JSON null as a truthy userdata, so test for it explicitly.
local kid = r.key_id
if kid == nil or kid == cjson.null then kid = 'acct:' .. r.router_account_id end
local uk = p .. ':usage:' .. kid .. ':h:' .. ARGV[7]
if redis.call('INCR', uk) == 1 then redis.call('PEXPIRE', uk, 691200000) end
local m = tonumber(redis.call('GET', mk) or '0')
local d = tonumber(redis.call('GET', dk) or '0')
if m >= tonumber(r.rpm) then return {2, rec, m, d} end
local exemptDay = ARGV[6] == '1'
if (not exemptDay) and d >= tonumber(r.rpd) then return {3, rec, m, d} end
m = redis.call('INCR', mk)
if m == 1 then redis.call('PEXPIRE', mk, ARGV[4]) end
if not exemptDay then
  d = redis.call('INCR', dk)
  if d == 1 then redis.call('PEXPIRE', dk, ARGV[5]) end
end
return {1, rec, m, d}
`;

export type GateOutcome =
  | { kind: 'miss' }
  | { kind: 'invalid'; reason: 'unknown' | 'revoked' }
  | { kind: 'allowed' | 'minute_exceeded' | 'day_exceeded'; record: PrincipalRecord; minuteCount: number; dayCount: number; windows: Windows };

type GateRedis = Redis & {
  flowGate(key: string, prefix: string, mi: number, di: number, mttl: number, dttl: number, exempt: string, hour: number): Promise<unknown[]>;
};

export const HOUR_MS = 3_600_000;
const NEGATIVE_TTL_MS = 30_000;
const POSITIVE_TTL_MS = 3_600_000;

export class RequestGate {
  private readonly redis: GateRedis;
  // Parsing the same record JSON on every request costs more than the lookup; memoize by string.
  private readonly parsed = new Map<string, PrincipalRecord>();

  constructor(
    redis: Redis,
    private readonly ks: Keyspace,
  ) {
    this.redis = redis as GateRedis;
    if (!(this.redis as unknown as Record<string, unknown>).flowGate) {
      this.redis.defineCommand('flowGate', { numberOfKeys: 1, lua: GATE_LUA });
    }
  }

  recordKey(kind: 'key' | 'acct', id: string): string {
    return this.ks.k('principal', kind, id);
  }

  async check(recordKey: string, nowMs: number, exemptFromDay: boolean): Promise<GateOutcome> {
    const w = windowsAt(nowMs);
    const res = await this.redis.flowGate(
      recordKey,
      this.ks.prefix,
      w.minuteIndex,
      w.dayIndex,
      w.minuteTtlMs,
      w.dayTtlMs,
      exemptFromDay ? '1' : '0',
      Math.floor(nowMs / HOUR_MS),
    );
    const status = Number(res[0]);
    if (status === 0) return { kind: 'miss' };
    const record = this.parse(String(res[1]));
    if (status === -1) return { kind: 'invalid', reason: record.invalid ?? 'unknown' };
    const kind = status === 1 ? 'allowed' : status === 2 ? 'minute_exceeded' : 'day_exceeded';
    return { kind, record, minuteCount: Number(res[2]), dayCount: Number(res[3]), windows: w };
  }

  async remember(recordKey: string, record: PrincipalRecord | { invalid: 'unknown' | 'revoked' }): Promise<void> {
    const ttl = 'invalid' in record && record.invalid ? NEGATIVE_TTL_MS : POSITIVE_TTL_MS;
    await this.redis.set(recordKey, JSON.stringify(record), 'PX', ttl);
  }

  async forget(recordKey: string): Promise<void> {
    await this.redis.del(recordKey);
  }

  /** Counts an error response against the caller's usage (for GET /auth/me). */
  countError(idForUsage: string, nowMs: number): void {
    const k = this.ks.k('usage', idForUsage, 'e', Math.floor(nowMs / HOUR_MS));
    this.redis.multi().incr(k).pexpire(k, 2 * 86_400_000).exec().catch(() => undefined);
  }

  /** Requests and errors counted in the hourly buckets covering the last `hours` hours. */
  async usage(idForUsage: string, nowMs: number): Promise<{ requests24h: number; requests7d: number; errors24h: number }> {
    const hour = Math.floor(nowMs / HOUR_MS);
    const reqKeys: string[] = [];
    const errKeys: string[] = [];
    for (let i = 0; i < 168; i++) reqKeys.push(this.ks.k('usage', idForUsage, 'h', hour - i));
    for (let i = 0; i < 24; i++) errKeys.push(this.ks.k('usage', idForUsage, 'e', hour - i));
    const [req, err] = await Promise.all([this.redis.mget(reqKeys), this.redis.mget(errKeys)]);
    const sum = (xs: (string | null)[]) => xs.reduce((s, x) => s + (x ? Number(x) : 0), 0);
    return { requests24h: sum(req.slice(0, 24)), requests7d: sum(req), errors24h: sum(err) };
  }

  private parse(s: string): PrincipalRecord {
    let r = this.parsed.get(s);
    if (!r) {
      r = JSON.parse(s) as PrincipalRecord;
      if (this.parsed.size > 10_000) this.parsed.clear();
      this.parsed.set(s, r);
    }
    return r;
  }
}

/** Usage is counted per key, or per account for a JWT caller. */
export const usageId = (r: Pick<PrincipalRecord, 'key_id' | 'router_account_id'>): string => r.key_id ?? `acct:${r.router_account_id}`;
