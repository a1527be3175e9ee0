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
import { luaCommands } from './script.js';

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
  private readonly cmd: Pick<GateRedis, 'flowCount'> & RecordScripts;
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
    // Called by SHA (src/store/redis/script.ts): a gate may be built while the connection is busy.
    this.cmd = luaCommands(redis, {
      flowCount: { numberOfKeys: 2, lua: COUNT_LUA },
      flowRemember: { numberOfKeys: 1, lua: REMEMBER_LUA },
      flowKeyLookup: { numberOfKeys: 2, lua: KEY_LOOKUP_LUA },
      flowIndexPublish: { numberOfKeys: 2, lua: INDEX_PUBLISH_LUA },
    }) as unknown as Pick<GateRedis, 'flowCount'> & RecordScripts;
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
    this.cmd.flowCount(lane.minute, lane.day, ...scriptArgs(b)).then(
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
  async peek(recordKey: string): Promise<StoredRecord | null> {
    if (this.redis.status !== 'ready') throw new GateUnavailable(this.redis.status);
    const raw = await this.redis.get(recordKey);
    return raw ? (JSON.parse(raw) as StoredRecord) : null;
  }

  /**
   * An API key's Redis copy, or else what the key index says of its hash, in one round trip: a key
   * the complete index does not hold is unknown without asking PostgreSQL.
   */
  async lookupKey(keyHash: string): Promise<{ copy: StoredRecord } | { index: 'member' | 'absent' | 'incomplete' }> {
    if (this.redis.status !== 'ready') throw new GateUnavailable(this.redis.status);
    const r = await this.scripts.flowKeyLookup(this.recordKey('key', keyHash), this.keyIndex(), keyHash, INDEX_COMPLETE);
    if (typeof r === 'string') return { copy: JSON.parse(r) as StoredRecord };
    return { index: r === 1 ? 'member' : r === 0 ? 'absent' : 'incomplete' };
  }

  /**
   * Writes the Redis copy of a record read from PostgreSQL, unless the key was revoked meanwhile:
   * a revocation leaves a tombstone the write checks atomically, so a lookup that read before the
   * revoke and writes after it cannot revive the key. Returns what the copy says now.
   */
  async remember(recordKey: string, record: StoredRecord): Promise<StoredRecord> {
    const ttl = 'invalid' in record && record.invalid ? NEGATIVE_TTL_MS : POSITIVE_TTL_MS;
    const current = await this.scripts.flowRemember(recordKey, JSON.stringify(record), ttl, TOMBSTONE);
    return current === null ? record : (JSON.parse(current) as StoredRecord);
  }

  /**
   * After PostgreSQL marked the key revoked: its copy becomes a tombstone no lookup can overwrite
   * (it outlives every copy written before it, and loadPrincipalRecord never writes what it read
   * longer ago than that), and the key index drops it.
   */
  async markRevoked(keyHash: string): Promise<void> {
    await this.redis.multi().set(this.recordKey('key', keyHash), TOMBSTONE, 'PX', TOMBSTONE_TTL_MS).srem(this.keyIndex(), keyHash).exec();
  }

  /** Adds a key's hash to the index, before the key exists in PostgreSQL (so the index never lacks a valid key). */
  async indexKeyHash(keyHash: string): Promise<void> {
    await this.redis.sadd(this.keyIndex(), keyHash);
  }

  /** Drops a hash whose key was never created (its PostgreSQL insert failed). */
  async unindexKeyHash(keyHash: string): Promise<void> {
    await this.redis.srem(this.keyIndex(), keyHash);
  }

  async keyIndexComplete(): Promise<boolean> {
    return (await this.redis.sismember(this.keyIndex(), INDEX_COMPLETE)) === 1;
  }

  /**
   * Rebuilds the key index from PostgreSQL's live hashes (when Redis lost it, or on first start),
   * under a lock so one process does it. The hashes are merged into whatever the index holds (keys
   * created meanwhile were added before their insert), then marked complete in one atomic step that
   * first checks the staged set survived intact. Returns false when another process holds the lock.
   */
  async rebuildKeyIndex(liveHashes: () => Promise<string[]>): Promise<boolean> {
    const lock = this.ks.k('principal', 'index-rebuild');
    const token = `${process.pid}:${Math.random()}`;
    if ((await this.redis.set(lock, token, 'PX', INDEX_REBUILD_LOCK_MS, 'NX')) !== 'OK') return false;
    const staged = this.ks.k('principal', 'index-staged', token);
    try {
      const hashes = [...new Set(await liveHashes())];
      for (let i = 0; i < hashes.length; i += 1000) {
        await this.redis.multi().sadd(staged, ...hashes.slice(i, i + 1000)).pexpire(staged, INDEX_REBUILD_LOCK_MS).exec();
      }
      const ok = await this.scripts.flowIndexPublish(this.keyIndex(), staged, hashes.length, INDEX_COMPLETE);
      if (ok !== 1) throw new Error('the staged key index lost entries while it was built (Redis restarted?); it is rebuilt at the next lookup');
      return true;
    } finally {
      await this.redis.multi().del(staged).eval(RELEASE_LUA, 1, lock, token).exec();
    }
  }

  private keyIndex(): string {
    return this.ks.k('principal', 'index');
  }

  /** The record scripts, defined on the connection in the constructor. */
  private get scripts(): RecordScripts {
    return this.cmd;
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

/** A Redis copy: a principal record, or why the credential is refused. */
export type StoredRecord = PrincipalRecord | { invalid: 'unknown' | 'revoked' };

const NEGATIVE_TTL_MS = 30_000;
const POSITIVE_TTL_MS = 3_600_000;
/**
 * A revoked key's copy. A positive copy written before it is overwritten by it; one written after it
 * is refused by the remember script while it lives, and it outlives any lookup that could still write
 * (loadPrincipalRecord drops reads older than a minute).
 */
const TOMBSTONE = JSON.stringify({ invalid: 'revoked' });
export const TOMBSTONE_TTL_MS = POSITIVE_TTL_MS;
/** The index's completeness mark, a member no hex hash can equal: lost with the set if Redis loses it. */
const INDEX_COMPLETE = '*complete*';
const INDEX_REBUILD_LOCK_MS = 120_000;

// KEYS: copy. ARGV: record JSON, ttl ms, tombstone JSON. Writes unless the copy is a tombstone;
// returns nil when written, else the tombstone.
const REMEMBER_LUA = `
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[3] then return cur end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

// KEYS: copy, index. ARGV: key hash, completeness mark. Returns the copy, or 1 (indexed),
// 0 (not indexed by a complete index: unknown), -1 (the index is incomplete).
const KEY_LOOKUP_LUA = `
local rec = redis.call('GET', KEYS[1])
if rec then return rec end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 1 end
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1 then return 0 end
return -1
`;

// KEYS: index, staged. ARGV: staged count, completeness mark. Merges and marks complete only if the
// staged set holds every hash read from PostgreSQL.
const INDEX_PUBLISH_LUA = `
if redis.call('SCARD', KEYS[2]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('SUNIONSTORE', KEYS[1], KEYS[1], KEYS[2])
redis.call('SADD', KEYS[1], ARGV[2])
return 1
`;

const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

type RecordScripts = {
  flowRemember(copy: string, json: string, ttlMs: number, tombstone: string): Promise<string | null>;
  flowKeyLookup(copy: string, index: string, keyHash: string, mark: string): Promise<string | number>;
  flowIndexPublish(index: string, staged: string, count: number, mark: string): Promise<number>;
};

