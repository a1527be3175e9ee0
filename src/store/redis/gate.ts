/**
 * The request gate: checks both fixed rate-limit windows of the caller's workspace, counts the
 * request, and returns the counts for the X-RateLimit-* headers, in at most one Redis round trip per
 * request, shared by every request of the same windows that is waiting at the time (group commit).
 * Atomic across any number of API processes: each window is one counter that a script moves and
 * checks, so no two requests can both take the last unit of budget.
 *
 * Who the caller is comes from PrincipalCache (src/store/principals.ts): an in-process cache over a
 * Redis copy over PostgreSQL, evicted on revocation through the bus. Keeping the principal out of the
 * script keeps it to arithmetic: measured, a Lua cjson decode per request halved throughput under load.
 */
import type { PrincipalRecord } from '../../domain/principal.js';
import { countInOrder, windowsAt, type CountedRequest, type Windows } from '../../domain/ratelimit.js';
import { StoreUnavailable } from '../../errors.js';
import { asStoreUnavailable } from '../unavailable.js';
import type { Keyspace, Redis } from './client.js';

// The requests of one lane (see RequestGate.check) go to Redis in one script call: measured on this
// 2-core machine, the per-command cost in Redis and in the client, not the counting, was what the gate
// cost. The script moves the counters as if each request had run alone, in arrival order (the loop of
// countInOrder in src/domain/ratelimit.ts), and returns only the counts before the call: the caller
// replays the same loop for each request's verdict and X-RateLimit-* figures, so Redis does no
// per-request work beyond arithmetic. Consecutive requests with the same limits arrive as one group
// (the common case: one key, many requests), counted in closed form: identical requests are admitted
// until the first refusal, and every later one is refused too because a refusal changes nothing.
// KEYS: minute counter, day counter. ARGV: minute ttl ms, day ttl ms, then per group: the number of
// requests, rpm, rpd, day-exempt flag. Returns the minute and day counts before the call.
const COUNT_LUA = `
local m0 = tonumber(redis.call('GET', KEYS[1]) or '0')
local d0 = tonumber(redis.call('GET', KEYS[2]) or '0')
local m, d = m0, d0
for i = 3, #ARGV, 4 do
  local room = tonumber(ARGV[i + 1]) - m
  local exempt = ARGV[i + 3] == '1'
  if not exempt then
    local dayRoom = tonumber(ARGV[i + 2]) - d
    if dayRoom < room then room = dayRoom end
  end
  if room > 0 then
    local n = tonumber(ARGV[i])
    if room < n then n = room end
    m = m + n
    if not exempt then d = d + n end
  end
end
if m > m0 then
  if m0 == 0 then redis.call('SET', KEYS[1], m, 'PX', ARGV[1]) else redis.call('INCRBY', KEYS[1], m - m0) end
end
if d > d0 then
  if d0 == 0 then redis.call('SET', KEYS[2], d, 'PX', ARGV[2]) else redis.call('INCRBY', KEYS[2], d - d0) end
end
return {m0, d0}
`;

export interface GateOutcome {
  kind: 'allowed' | 'minute_exceeded' | 'day_exceeded';
  minuteCount: number;
  dayCount: number;
  windows: Windows;
}

type GateRedis = Redis & {
  flowCount(mk: string, dk: string, ...ttlsThenPerRequest: number[]): Promise<number[]>;
};

interface CounterKeys {
  minuteIndex: number;
  dayIndex: number;
  minute: string;
  day: string;
  /** Both names: requests that share it share one script call. */
  pair: string;
}

/** A queued request: what the script counts, and whom to answer. */
interface Waiter extends CountedRequest {
  cb: (err: unknown, outcome?: GateOutcome) => void;
  windows: Windows;
}

interface QueuedBatch {
  minuteTtlMs: number;
  dayTtlMs: number;
  /** In arrival order. */
  waiters: Waiter[];
}

/**
 * The script's ARGV: the ttls, then each run of consecutive requests with equal limits as one group
 * (n, rpm, rpd, exempt), so a burst of one key is a single group however long it is.
 */
function scriptArgs(b: QueuedBatch): number[] {
  const args = [b.minuteTtlMs, b.dayTtlMs];
  let last: Waiter | undefined;
  for (const w of b.waiters) {
    if (last && w.rpm === last.rpm && w.rpd === last.rpd && w.dayExempt === last.dayExempt) args[args.length - 4]!++;
    else args.push(1, w.rpm, w.rpd, w.dayExempt ? 1 : 0);
    last = w;
  }
  return args;
}

/**
 * The longest a script call may go unanswered before its requests are refused (503): the issue's
 * bound is an answer within 1 s, and a healthy call takes well under a millisecond of Redis time.
 */
export const GATE_CALL_TIMEOUT_MS = 750;

/** The requests of one pair of windows: at most one script call in flight, the rest queued. */
interface Lane {
  pair: string;
  minute: string;
  day: string;
  queued: QueuedBatch | null;
  inFlight: boolean;
  /** Listed to be sent at the end of this event-loop turn. */
  ready: boolean;
}

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
    // While Redis is away the counts stay here (one entry per key) and go with the next flush.
    if (this.pending.size === 0 || this.redis.status !== 'ready') return;
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
  private readonly keyCache = new Map<string, CounterKeys>();
  /** Lanes with requests queued or a call in flight; an idle lane is dropped. */
  private readonly lanes = new Map<string, Lane>();
  private readyLanes: Lane[] = [];
  /** Script calls and the requests they counted: their ratio is the batching factor (see /metrics). */
  readonly batching = { calls: 0, requests: 0 };

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

  /**
   * Checks and counts one request of this principal against its workspace's windows.
   *
   * Group commit: requests that count against the same windows share a lane, and a lane has at most
   * one script call in flight. Requests arriving meanwhile queue and go together in the next call,
   * so under load one Redis round trip serves many requests, and an idle lane still sends at the end
   * of the current event-loop turn (setImmediate runs after the poll phase has handed us every
   * readable socket's requests). The script replays each call's requests in arrival order.
   */
  check(
    p: Pick<PrincipalRecord, 'workspace_id' | 'key_id' | 'router_account_id' | 'rpm' | 'rpd'>,
    nowMs: number,
    exemptFromDay: boolean,
    // A callback, not a promise: this runs once per request, and the API's hook is callback-style too.
    cb: (err: unknown, outcome?: GateOutcome) => void,
  ): void {
    const w = windowsAt(nowMs);
    this.usageCounter.count(usageId(p), 'h', nowMs);
    const keys = this.counterKeys(p.workspace_id, w);
    let lane = this.lanes.get(keys.pair);
    if (!lane) {
      lane = { pair: keys.pair, minute: keys.minute, day: keys.day, queued: null, inFlight: false, ready: false };
      this.lanes.set(keys.pair, lane);
    }
    const batch = (lane.queued ??= { minuteTtlMs: w.minuteTtlMs, dayTtlMs: w.dayTtlMs, waiters: [] });
    batch.waiters.push({ rpm: p.rpm, rpd: p.rpd, dayExempt: exemptFromDay, cb, windows: w });
    if (!lane.inFlight) this.markReady(lane);
  }

  private markReady(lane: Lane): void {
    if (lane.ready) return;
    lane.ready = true;
    this.readyLanes.push(lane);
    if (this.readyLanes.length === 1) setImmediate(this.sendReady);
  }

  private readonly sendReady = (): void => {
    const lanes = this.readyLanes;
    this.readyLanes = [];
    for (const lane of lanes) {
      lane.ready = false;
      this.send(lane);
    }
  };

  private send(lane: Lane): void {
    const b = lane.queued!;
    lane.queued = null;
    // Redis unreachable: refuse now rather than queue the call in the client until Redis is back
    // (callers would hang, then be counted late). Nothing was sent, so nothing is counted.
    if (this.redis.status !== 'ready') {
      this.lanes.delete(lane.pair);
      const err = new GateUnavailable(this.redis.status);
      for (const waiter of b.waiters) callEach(waiter.cb, err);
      return;
    }
    lane.inFlight = true;
    this.batching.calls++;
    this.batching.requests += b.waiters.length;
    // The call settles exactly once: with Redis' answer, with the client's rejection (the
    // connection dropped: src/store/redis/client.ts rejects in-flight commands at once and never
    // resends them), or at the deadline (a connection that hangs without closing). A late answer
    // after the deadline is dropped: those requests were refused, so counting them only errs on
    // the side of the budget, and the lane is already serving newer requests.
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(deadline);
      lane.inFlight = false;
      if (lane.queued) this.markReady(lane);
      else if (this.lanes.get(lane.pair) === lane) this.lanes.delete(lane.pair);
      return true;
    };
    const fail = (reason: unknown) => {
      if (!settle()) return;
      for (const waiter of b.waiters) callEach(waiter.cb, reason);
    };
    const deadline = setTimeout(() => {
      // Requests queued behind the stuck call would wait as long again: refuse them too, and let
      // the next request open a fresh lane.
      const queued = lane.queued;
      lane.queued = null;
      if (this.lanes.get(lane.pair) === lane) this.lanes.delete(lane.pair);
      const err = new GateUnavailable(`${this.redis.status}, no answer within ${GATE_CALL_TIMEOUT_MS} ms`);
      fail(err);
      for (const waiter of queued?.waiters ?? []) callEach(waiter.cb, err);
    }, GATE_CALL_TIMEOUT_MS);
    this.redis.flowCount(lane.minute, lane.day, ...scriptArgs(b)).then(
      (res) => {
        if (!settle()) return;
        const verdicts = countInOrder(Number(res[0]), Number(res[1]), b.waiters);
        for (let i = 0; i < b.waiters.length; i++) {
          const v = verdicts[i]!;
          const waiter = b.waiters[i]!;
          callEach(waiter.cb, null, { kind: v.kind, minuteCount: v.minuteCount, dayCount: v.dayCount, windows: waiter.windows });
        }
      },
      // A call failed by a connection that went away is the service's state, not a script error.
      (err: unknown) => fail(this.redis.status === 'ready' && !asStoreUnavailable(err) ? err : new GateUnavailable(this.redis.status)),
    );
  }

  /** Counter key names per workspace, rebuilt only when a window turns over (not per request). */
  private counterKeys(workspaceId: string, w: Windows): CounterKeys {
    let k = this.keyCache.get(workspaceId);
    if (!k || k.minuteIndex !== w.minuteIndex || k.dayIndex !== w.dayIndex) {
      const minute = this.ks.k('rl', workspaceId, 'm', w.minuteIndex);
      const day = this.ks.k('rl', workspaceId, 'd', w.dayIndex);
      k = { minuteIndex: w.minuteIndex, dayIndex: w.dayIndex, minute, day, pair: `${minute} ${day}` };
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
    if (this.redis.status !== 'ready') throw new GateUnavailable(this.redis.status);
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

/** The counters cannot be reached: the request can be neither admitted nor refused by its budget. */
export class GateUnavailable extends StoreUnavailable {
  constructor(readonly redisStatus: string) {
    super('redis', 'authentication and rate limiting');
    this.name = 'GateUnavailable';
  }
}

/** One throwing callback must not leave the rest of its batch waiting: it is rethrown on its own. */
function callEach(cb: (err: unknown, outcome?: GateOutcome) => void, err: unknown, outcome?: GateOutcome): void {
  try {
    cb(err, outcome);
  } catch (thrown) {
    queueMicrotask(() => {
      throw thrown;
    });
  }
}

/** Usage is counted per key, or per account for a JWT caller. */
export const usageId = (r: Pick<PrincipalRecord, 'key_id' | 'router_account_id'>): string => r.key_id ?? `acct:${r.router_account_id}`;
