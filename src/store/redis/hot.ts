/**
 * The hot market snapshot in Redis, shared by every process:
 *   vq:<contest>     hash  liquidity_hash → latest venue quote (written by ingest)
 *   vqv:<contest>    int   bumped on every ingest write (the venue-state version)
 *   liq:<contest>    str   the computed Position[] of the contest, serialized once
 *   liqv:<contest>   int   the venue-state version liq was computed from
 *   depth:<contest>  hash  position_hash → depth JSON
 *   snap:<contest>   str   the compute snapshot the next job diffs against
 *   state:<contest>  str   contest state object
 *   marker:<token>   str   one per ingest process, with a lifetime: its absence means Redis lost its data
 *   closed:<contest> str   the instant (Redis ms) the closed contest's hot state expires
 *   outl:<contest>   hash  liquidity hashes the last computation flagged as outliers (marks ingest's ticks)
 *   lqp              hash  liquidity_hash → position_hash of every open contest's quotes (written by
 *                          ingest with the quotes; a contest's fields go when it closes): how an
 *                          order naming a liquidity_hash finds its position (the hash is opaque)
 *   ev:<contest>, liqe:<contest>, evfeed, hist: the event log (src/store/redis/eventlog.ts)
 *   fastp            zset contest → the instant (Redis ms) an in-process computation took its change without
 *                          a queued job (the co-located fast path); gone once a computation stored
 *                          that venue state; one older than a grace is queued then (see takenBefore)
 * Writes of computed state are compare-and-set on the venue-state version they were computed from,
 * so a slow job can never overwrite a newer result. Every write script also appends the events and
 * history rows it implies to the event log, in the same atomic step.
 *
 * Retention: an open contest's keys have no TTL (a quiet market must not lose its quotes). When the
 * contest closes, closeContest stamps every key with one expiry instant and leaves the `closed`
 * marker; every later write checks the marker and gives what it wrote the same instant, so a late
 * quote or job can neither revive the state nor drop its TTL (SET and DEL+HSET would). The marker
 * itself lives twice the retention, to catch writes that straggle in after the state has gone.
 */
import { snapshotText, type SnapshotParts, type TextsSince } from '../../domain/quotes.js';
import type { Keyspace, Redis } from './client.js';
import { arbitrageIndexKey, arbitrageKey, contestMember } from './contest-index.js';
import { luaScript, type ScriptCall } from './script.js';
import { EVENT_ARGS, eventArgs, histArgs, LOG_LIMITS, logKeys, logLua, NOW_MS_LUA, type HistAppend, type LogAppend, type LogLimits } from './eventlog.js';

/** Every per-contest key kind of the hot state and its event log (the `closed` marker apart). */
export const HOT_KINDS = ['vq', 'vqv', 'liq', 'liqv', 'depth', 'snap', 'snapq', 'state', 'ev', 'liqe', 'outl'] as const;

/** Default hot-state retention of a closed contest (FLOW_HOT_RETENTION_SECONDS). */
export const DEFAULT_HOT_RETENTION_MS = 3_600_000;

// Shared tail of every write script: KEYS[1] is the closed marker; the per-contest keys written
// follow the shared ones (feed, history), and only they take the contest's expiry. The marker is
// read once a script (a script runs alone, so it cannot change meanwhile): closed_at() is its
// expiry instant, or false while the contest is open.
const FOLLOW_CLOSED_LUA = `
local closed_read, closed_instant = false, false
local function closed_at()
  if not closed_read then
    closed_instant = redis.call('GET', KEYS[1])
    closed_read = true
  end
  return closed_instant
end
local function follow_closed(from, to)
  local at = closed_at()
  if not at then return end
  for i = from, to or #KEYS do redis.call('PEXPIREAT', KEYS[i], at) end
end
`;

// The stored snapshot text (SnapshotParts, src/domain/quotes.ts): snap holds it with its quotes
// member empty, snapq each position's members of it (field: the position's index) and under '#'
// the run prefix of the snapshot they belong to; parts of another run than snap's (a snapshot
// stored whole, by an older build among others) are not joined. Then the snapshot a computation starts from, given ARGV[from ..] =
// the run prefixes of the snapshot texts the caller holds: '=k' when the stored one begins with the
// k-th (a run id names one text: it is the one the caller holds, so it is not sent back), else the
// snapshot, or '' when none.
const HELD_SNAPSHOT_LUA = `
local function stored_snapshot(snapKey, quotesKey)
  local s = redis.call('GET', snapKey)
  if not s then return '' end
  local f = redis.call('HGETALL', quotesKey)
  local at = string.find(s, '"quotes":{', 1, true)
  if #f == 0 or not at then return s end
  local idx, val, parts, run = {}, {}, {}, nil
  for k = 1, #f, 2 do
    local n = tonumber(f[k])
    if n then
      idx[#idx + 1] = n
      val[n] = f[k + 1]
    elseif f[k] == '#' then
      run = f[k + 1]
    end
  end
  if not run or string.sub(s, 1, #run) ~= run or string.sub(s, #run + 1, #run + 1) ~= ',' then return s end
  table.sort(idx)
  for k = 1, #idx do parts[k] = val[idx[k]] end
  return string.sub(s, 1, at + 9) .. table.concat(parts, ',') .. string.sub(s, at + 10)
end
local function held_or_snapshot(snapKey, quotesKey, from)
  -- One read of the stored text's head, as long as the longest prefix offered.
  local longest = 0
  for k = from, #ARGV do longest = math.max(longest, #ARGV[k]) end
  if longest > 0 then
    local head = redis.call('GETRANGE', snapKey, 0, longest - 1)
    for k = from, #ARGV do
      if #ARGV[k] > 0 and string.sub(head, 1, #ARGV[k]) == ARGV[k] then return '=' .. (k - from + 1) end
    end
  end
  return stored_snapshot(snapKey, quotesKey)
end
`;

// KEYS: closed, hist, lqp, vq, vqv, outl, fastp, snap, snapq; ARGV: n, then n field/value args, then m,
// then m/3 history triples, then p, then p liquidity_hash/position_hash args (indexed only while the
// contest is open: a late quote of a closed one must not bring its fields back), then the contest
// and the mode: 1 when a fast-path computation takes the change now, 2 when it takes it for later
// (both marked at Redis' clock), 0 when the queue computes it; then (mode 1) the run prefixes of the
// snapshot texts the caller holds. Returns the new venue-state version; in mode 1
// {version, quotes, snapshot} as READ_TO_COMPUTE_LUA does (the computation needs no read of its own).
const WRITE_QUOTES_LUA = (log: string) => `${FOLLOW_CLOSED_LUA}${HELD_SNAPSHOT_LUA}${log}
local n = tonumber(ARGV[1])
-- In slices: unpack is bounded by Lua's C stack (about 8000 values).
for i = 2, n + 1, 2000 do redis.call('HSET', KEYS[4], unpack(ARGV, i, math.min(i + 1999, n + 1))) end
local v = redis.call('INCR', KEYS[5])
local m = tonumber(ARGV[n + 2])
append_hist(KEYS[2], KEYS[6], n + 3, m / 3)
local p = tonumber(ARGV[n + 3 + m])
if p > 0 and not closed_at() then
  local from = n + 4 + m
  for i = from, from + p - 1, 2000 do redis.call('HSET', KEYS[3], unpack(ARGV, i, math.min(i + 1999, from + p - 1))) end
end
-- Mode '1': taken now (marked, and the state to compute from answered); '2': taken for later
-- (marked only: the computation reads when it runs); '0': left to the queue.
local mode = ARGV[n + 5 + m + p]
if mode ~= '0' then redis.call('ZADD', KEYS[7], now_ms(), ARGV[n + 4 + m + p]) end
follow_closed(4, 6)
if mode ~= '1' then return v end
return {v, redis.call('HVALS', KEYS[4]), held_or_snapshot(KEYS[8], KEYS[9], n + 6 + m + p)}
`;

// KEYS: closed, feed, hist, liq, depth, snap, liqv, ev, liqe, outl, arb, arbidx, vqv, fastp (these
// four keep their own lifetime), snapq.
// ARGV: version, liqJson, the snapshot (whole, or its rest: SnapshotParts), contest, invalidation
// topic, then counted groups: depth field/value args (followed by their base: '' when they and the
// quote fields are every field, else the run prefix of the snapshot they were changed since),
// snapshot quote field/value args ('' deletes), event triples, history triples, outlier hashes.
// Returns 0 when a newer version is stored (nothing written), 2 when the base is not the stored
// snapshot (nothing written), else {1, last liquidity event id or ''}.
const WRITE_COMPUTED_LUA = (log: string) => `${FOLLOW_CLOSED_LUA}${log}
local cur = tonumber(redis.call('GET', KEYS[7]) or '-1')
local v = tonumber(ARGV[1])
-- Whichever computation is stored, a fast-path mark it covers is done with.
if math.max(cur, v) >= tonumber(redis.call('GET', KEYS[13]) or '0') then redis.call('ZREM', KEYS[14], ARGV[4]) end
if v <= cur then return 0 end
local i = 6
local nd = tonumber(ARGV[i])
-- The depth and quote fields come whole (base ''), or only those changed since the run whose
-- snapshot text begins with ARGV[i + nd + 1]: written over the stored ones only while that snapshot
-- is the stored one (depth, snapshot and parts are always written together), else nothing is
-- written and the caller sends them whole.
local base = ARGV[i + nd + 1]
if base ~= '' and redis.call('GETRANGE', KEYS[6], 0, #base - 1) ~= base then return 2 end
redis.call('SET', KEYS[7], ARGV[1])
redis.call('SET', KEYS[4], ARGV[2])
redis.call('SET', KEYS[6], ARGV[3])
if base == '' then
  redis.call('DEL', KEYS[5])
  redis.call('DEL', KEYS[15])
end
for s = i + 1, i + nd, 2000 do redis.call('HSET', KEYS[5], unpack(ARGV, s, math.min(s + 1999, i + nd))) end
i = i + nd + 2
local nq = tonumber(ARGV[i])
for k = i + 1, i + nq, 2 do
  if ARGV[k + 1] == '' then redis.call('HDEL', KEYS[15], ARGV[k]) else redis.call('HSET', KEYS[15], ARGV[k], ARGV[k + 1]) end
end
-- The parts belong to this snapshot (named by its run prefix); a snapshot written whole has none.
if nq > 0 or base ~= '' then
  local head = string.match(ARGV[3], '^{"run":"[^"]*"')
  if head then redis.call('HSET', KEYS[15], '#', head) end
end
i = i + nq + 1
local ne = tonumber(ARGV[i])
local _, _, liq = append_events(KEYS[8], KEYS[2], ARGV[4], i + 1, ne / ${EVENT_ARGS})
if liq then redis.call('SET', KEYS[9], liq) end
i = i + ne + 1
local nh = tonumber(ARGV[i])
append_hist(KEYS[3], false, i + 1, nh / 3)
i = i + nh + 1
local no = tonumber(ARGV[i])
redis.call('DEL', KEYS[10])
for s = i + 1, i + no, 1000 do
  local kv = {}
  for k = s, math.min(s + 999, i + no) do kv[#kv + 1] = ARGV[k]; kv[#kv + 1] = '1' end
  redis.call('HSET', KEYS[10], unpack(kv))
end
follow_closed(4, 10)
follow_closed(15, 15)
i = i + no + 1
-- The contest's arbitrages live ARGV[i + 2] ms past this computation (spec: at most 120 s), indexed
-- by expiry instant under member ARGV[i + 1] (contest and league) so reads find the open ones and the
-- sweeper clears the expired; an empty set, or a closed contest, has none.
if ARGV[i] ~= '' then
  if ARGV[i] == '[]' or closed_at() then
    redis.call('DEL', KEYS[11])
    redis.call('ZREM', KEYS[12], ARGV[i + 1])
  else
    local ttl = tonumber(ARGV[i + 2])
    redis.call('SET', KEYS[11], ARGV[i], 'PX', ttl)
    redis.call('ZADD', KEYS[12], now_ms() + ttl, ARGV[i + 1])
  end
end
redis.call('PUBLISH', ARGV[5], ARGV[4])
return {1, liq or ''}
`;

// KEYS: closed, feed, state, ev; ARGV: state JSON, contest, n, then n/3 event triples.
const WRITE_STATE_LUA = (log: string) => `${FOLLOW_CLOSED_LUA}${log}
redis.call('SET', KEYS[3], ARGV[1])
append_events(KEYS[4], KEYS[2], ARGV[2], 4, tonumber(ARGV[3]) / ${EVENT_ARGS})
follow_closed(3)
return 1
`;

// KEYS: closed, feed, hist, ev; ARGV: contest, n, n/3 event triples, m, m/3 history triples.
const APPEND_LUA = (log: string) => `${FOLLOW_CLOSED_LUA}${log}
local n = tonumber(ARGV[2])
local first, last = append_events(KEYS[4], KEYS[2], ARGV[1], 3, n / ${EVENT_ARGS})
append_hist(KEYS[3], false, n + 4, tonumber(ARGV[n + 3]) / 3)
follow_closed(4)
return last or ''
`;

// KEYS: closed, lqp, then every hot key (vq first); ARGV: retention ms. Idempotent: a second close
// (another ingest process, a repeated final state) keeps the first expiry instead of pushing it out.
// The first close also drops the contest's quotes from the liquidity_hash index.
const CLOSE_LUA = `
local at = tonumber(redis.call('GET', KEYS[1]) or '0')
if at == 0 then
  local t = redis.call('TIME')
  local retention = tonumber(ARGV[1])
  at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + retention
  redis.call('SET', KEYS[1], tostring(at), 'PX', 2 * retention)
  local hashes = redis.call('HKEYS', KEYS[3])
  for i = 1, #hashes, 2000 do redis.call('HDEL', KEYS[2], unpack(hashes, i, math.min(i + 1999, #hashes))) end
end
for i = 3, #KEYS do redis.call('PEXPIREAT', KEYS[i], at) end
return at
`;

// KEYS: vqv, liqv, vq, snap, fastp, snapq; ARGV: contest, then the run prefixes (`{"run":"<id>"`) of the
// snapshot texts the caller holds. {version} alone when the stored computation covers that venue
// state already (its result would lose the compare-and-set anyway; a fast-path mark is done with),
// else {version, quotes, held_or_snapshot}.
const READ_TO_COMPUTE_LUA = `${HELD_SNAPSHOT_LUA}
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(redis.call('GET', KEYS[2]) or '-1') >= v then
  redis.call('ZREM', KEYS[5], ARGV[1])
  return {v}
end
return {v, redis.call('HVALS', KEYS[3]), held_or_snapshot(KEYS[4], KEYS[6], 2)}
`;

/**
 * True when the writer knows the `lqp` index already holds this liquidity_hash → position_hash pair
 * (written by an earlier write of its own that succeeded, since Redis last lost its data).
 */
export type IndexedPredicate = (liquidityHash: string, positionHash: string) => boolean;

/** The held snapshot texts a read can name (those with a run id), and their run prefixes. */
function offerHeld(held: readonly string[]): { texts: string[]; prefixes: string[] } {
  const texts: string[] = [];
  const prefixes: string[] = [];
  for (const text of held) {
    const p = snapshotRunPrefix(text);
    if (p === null) continue;
    texts.push(text);
    prefixes.push(p);
  }
  return { texts, prefixes };
}

/**
 * A snapshot text from its stored parts (as stored_snapshot in HELD_SNAPSHOT_LUA): `rest` with the
 * quote fields joined in, when they are rest's (their '#' is its run prefix); else `rest` alone (it
 * was stored whole, by an older build among others).
 */
export function joinSnapshot(rest: string, fields: Record<string, string>): string {
  const run = fields['#'];
  if (run === undefined || !rest.startsWith(run + ',')) return rest;
  const members = Object.keys(fields)
    .filter((f) => f !== '#')
    .map(Number)
    .sort((a, b) => a - b)
    .map((i) => fields[String(i)]!);
  return snapshotText(rest, members);
}

/** The first characters of every snapshot text run `run` writes (src/compute/contest-text.ts: the snapshot opens with its run). */
const runPrefix = (run: string): string => `{"run":${JSON.stringify(run)}`;

/** The run prefix of a stored snapshot text (`{"run":"<id>"`), or null for a text without one. */
export function snapshotRunPrefix(text: string): string | null {
  if (!text.startsWith('{"run":"')) return null;
  const end = text.indexOf('"', 8);
  return end > 8 ? text.slice(0, end + 1) : null;
}

/** The write scripts, built with one set of log limits; each takes its keys and its arguments. */
interface HotCommands {
  writeQuotes: ScriptCall<number | [number, string[], string]>;
  writeComputed: ScriptCall<0 | 2 | [1, string]>;
  writeState: ScriptCall<number>;
  append: ScriptCall<string>;
  closeContest: ScriptCall<number>;
  readToCompute: ScriptCall<[number] | [number, string[], string]>;
  dropTaken: ScriptCall<number>;
  takenBefore: ScriptCall<string[]>;
}

function hotCommands(redis: Redis, limits: LogLimits): HotCommands {
  const lua = logLua(limits);
  return {
    writeQuotes: luaScript(redis, WRITE_QUOTES_LUA(lua)),
    writeComputed: luaScript(redis, WRITE_COMPUTED_LUA(lua)),
    writeState: luaScript(redis, WRITE_STATE_LUA(lua)),
    append: luaScript(redis, APPEND_LUA(lua)),
    closeContest: luaScript(redis, CLOSE_LUA),
    readToCompute: luaScript(redis, READ_TO_COMPUTE_LUA),
    takenBefore: luaScript(
      redis,
      `${NOW_MS_LUA}
local before = now_ms() - tonumber(ARGV[1])
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. before, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))`,
    ),
    dropTaken: luaScript(redis, `if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '-1') == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end return 0`),
  };
}

export interface HotStateOptions {
  /** How long a closed contest's hot state stays readable (default DEFAULT_HOT_RETENTION_MS). */
  closedRetentionMs?: number;
  /** Event-log retention (default LOG_LIMITS; FLOW_EVENT_LOG_* in the configuration). */
  logLimits?: LogLimits;
}

export interface VenueStateRead<Q> {
  version: number;
  quotes: Q[];
  snapshot: string | null;
}

/**
 * The venue state as a computation reads it: the stored quotes' JSON texts as Redis holds them,
 * which the caller parses (pipelines/processors/quote-inputs.ts parses only those it has not read
 * before), with the version and the snapshot.
 */
export interface VenueStateTexts {
  version: number;
  texts: string[];
  snapshot: string | null;
}

/** What a computed write appends to the event log with the state. */
export interface ComputedAppend {
  events?: readonly LogAppend[];
  hist?: readonly HistAppend[];
  /** Liquidity hashes compute flags as outliers now (ingest marks their next ticks). */
  outliers?: readonly string[];
  /** The contest's arbitrages now (Arbitrage[] as JSON), kept ttlMs; absent leaves them as they are. */
  arbitrages?: { json: string; leagueId: string | null; ttlMs: number };
  /**
   * The snapshot in parts (SnapshotParts): stored so, a computation that continued from the stored
   * run writes the quote fields it changed instead of every quote (absent: `snapshotJson` is
   * stored whole).
   */
  snapshotParts?: SnapshotParts;
  /**
   * The depth and snapshot quote fields changed since the run the computation continued from
   * (used with snapshotParts): written alone while the stored snapshot is that run's, else every
   * field is written. A change of one position of a 200-position contest then writes a few KB of
   * fields, not 300 KB of depth and 500 KB of quotes.
   */
  since?: TextsSince;
}

/** A computed write: false when a newer version was already stored (nothing written, nothing appended). */
export type ComputedWrite = false | { lastLiquidityEventId: string | null };

export class HotState {
  private readonly redis: Redis;
  private readonly cmd: HotCommands;
  private readonly log: ReturnType<typeof logKeys>;

  readonly closedRetentionMs: number;

  constructor(
    redis: Redis,
    private readonly ks: Keyspace,
    opts: HotStateOptions = {},
  ) {
    this.redis = redis;
    this.log = logKeys(ks);
    this.closedRetentionMs = opts.closedRetentionMs ?? DEFAULT_HOT_RETENTION_MS;
    this.cmd = hotCommands(redis, opts.logLimits ?? LOG_LIMITS);
  }

  /** Whether commands would be sent now (a command client refuses them while Redis is away). */
  get available(): boolean {
    return this.redis.status === 'ready';
  }

  /**
   * Renews this process's marker key; 'lost' when it was gone, which (within its lifetime) means
   * Redis restarted empty or was flushed, so everything written before is gone too. The first call
   * creates it. One round trip while it is there.
   */
  async confirmMarker(token: string, ttlMs: number): Promise<'kept' | 'lost'> {
    const key = this.ks.k('marker', token);
    if ((await this.redis.set(key, '1', 'PX', ttlMs, 'XX')) === 'OK') return 'kept';
    await this.redis.set(key, '1', 'PX', ttlMs);
    return 'lost';
  }

  private k(kind: string, contestId: string): string {
    return this.ks.k(kind, contestId);
  }

  /**
   * Ingest: stores the latest quotes of one contest and bumps its version, in one round trip, with
   * the tick-history rows of the changes among them appended to the log in the same step. Each
   * quote's liquidity_hash → position_hash pair goes into the `lqp` index with it, unless `indexed`
   * says this writer has stored that very pair before (a listing's pair changes only when the
   * catalog moves it; re-sent with every change, it was half the write's arguments per quote).
   */
  async writeQuotes(contestId: string, quotes: { liquidity_hash: string; position_hash?: string }[], hist: readonly HistAppend[] = [], indexed?: IndexedPredicate): Promise<number> {
    return Number(await this.sendQuotes(contestId, quotes, hist, 'queue', indexed));
  }

  /**
   * writeQuotes for a change the co-located fast path takes to compute once its running computation
   * is done: the write marks the contest taken, as writeQuotesTaking does, but answers only the
   * version (the computation reads the state when it runs, by then perhaps changed again).
   */
  async writeQuotesTakingLater(contestId: string, quotes: { liquidity_hash: string; position_hash?: string }[], hist: readonly HistAppend[] = [], indexed?: IndexedPredicate): Promise<number> {
    return Number(await this.sendQuotes(contestId, quotes, hist, 'later', indexed));
  }

  /**
   * writeQuotes for a computation that takes the change at once (the co-located fast path): the same
   * write also marks the contest taken and answers what the computation needs, as
   * readVenueStateToCompute does (`held` likewise), in the same round trip.
   */
  async writeQuotesTaking(contestId: string, quotes: { liquidity_hash: string; position_hash?: string }[], hist: readonly HistAppend[], held: readonly string[], indexed?: IndexedPredicate): Promise<VenueStateTexts> {
    const offered = offerHeld(held);
    const res = (await this.sendQuotes(contestId, quotes, hist, offered.prefixes, indexed)) as [number, string[], string];
    return this.stateTexts(res[0], res[1], res[2], offered.texts);
  }

  /** `taking`: the held snapshots' prefixes of a computation that takes the change now, 'later' one that takes it once its slot is free, 'queue' none (the queue computes it). */
  private sendQuotes(contestId: string, quotes: { liquidity_hash: string; position_hash?: string }[], hist: readonly HistAppend[], taking: readonly string[] | 'later' | 'queue', indexed?: IndexedPredicate): Promise<number | [number, string[], string]> {
    const args: string[] = [];
    const index: string[] = [];
    for (const q of quotes) {
      args.push(q.liquidity_hash, JSON.stringify(q));
      if (q.position_hash !== undefined && !indexed?.(q.liquidity_hash, q.position_hash)) index.push(q.liquidity_hash, q.position_hash);
    }
    const h = histArgs(hist);
    return this.cmd.writeQuotes(
      [this.k('closed', contestId), this.log.hist, this.positionIndexKey, this.k('vq', contestId), this.k('vqv', contestId), this.log.outliers(contestId), this.fastPathKey, this.k('snap', contestId), this.k('snapq', contestId)],
      [args.length, ...args, h.length, ...h, index.length, ...index, contestId, taking === 'queue' ? 0 : taking === 'later' ? 2 : 1, ...(typeof taking === 'string' ? [] : taking)],
    );
  }

  private get positionIndexKey(): string {
    return this.ks.k('lqp');
  }

  private get fastPathKey(): string {
    return this.ks.k('fastp');
  }

  /**
   * Contests a fast-path computation took more than `graceMs` ago (Redis' clock) and has not stored
   * yet: its process died or the computation failed. Up to `limit`, oldest first, with the instant
   * each was taken.
   */
  async takenBefore(graceMs: number, limit: number): Promise<{ contestId: string; at: number }[]> {
    const r = await this.cmd.takenBefore([this.fastPathKey], [graceMs, limit]);
    const out: { contestId: string; at: number }[] = [];
    for (let i = 0; i < r.length; i += 2) out.push({ contestId: r[i]!, at: Number(r[i + 1]) });
    return out;
  }

  /** Drops a contest's fast-path mark if it is still the one taken at `at` (a newer mark stays). */
  async dropTaken(contestId: string, at: number): Promise<void> {
    await this.cmd.dropTaken([this.fastPathKey], [contestId, at]);
  }

  /**
   * The position a liquidity_hash quotes, as ingest last stored it; null when no open contest has a
   * quote under that hash. (liquidity_hash is opaque: this index is the only way from one to its
   * position.)
   */
  positionOfLiquidityHash(liquidityHash: string): Promise<string | null> {
    return this.redis.hget(this.positionIndexKey, liquidityHash);
  }

  /** positionOfLiquidityHash for several hashes in one round trip, in their order. */
  positionsOfLiquidityHashes(liquidityHashes: readonly string[]): Promise<(string | null)[]> {
    return liquidityHashes.length ? this.redis.hmget(this.positionIndexKey, ...liquidityHashes) : Promise.resolve([]);
  }

  /** Compute: every venue quote of a contest, the version they make up, and the previous snapshot. */
  async readVenueState<Q>(contestId: string): Promise<VenueStateRead<Q>> {
    const res = await this.redis
      .multi()
      .get(this.k('vqv', contestId))
      .hvals(this.k('vq', contestId))
      .get(this.k('snap', contestId))
      .hgetall(this.k('snapq', contestId))
      .exec();
    const version = Number(res?.[0]?.[1] ?? 0);
    const vals = (res?.[1]?.[1] as string[] | undefined) ?? [];
    const rest = (res?.[2]?.[1] as string | null) ?? null;
    return { version, quotes: vals.map((v) => JSON.parse(v) as Q), snapshot: rest === null ? null : joinSnapshot(rest, (res?.[3]?.[1] as Record<string, string> | undefined) ?? {}) };
  }

  /**
   * Compute: readVenueState, or null when the stored computation already covers the venue state as
   * it is (a queued job after the co-located fast path computed the change, a retried job): one
   * round trip of a few bytes instead of every quote and the snapshot, and no computation whose
   * write would only lose the compare-and-set. `held`: snapshot texts the caller has in hand (the
   * last its runs handed out); when the stored snapshot is one of them (by its run id) it is not
   * sent back, and the read returns that text (on a warm contest, the largest part of the read).
   */
  async readVenueStateToCompute(contestId: string, held: readonly string[] = []): Promise<VenueStateTexts | null> {
    const offered = offerHeld(held);
    const res = await this.cmd.readToCompute([this.k('vqv', contestId), this.k('liqv', contestId), this.k('vq', contestId), this.k('snap', contestId), this.fastPathKey, this.k('snapq', contestId)], [contestId, ...offered.prefixes]);
    if (res.length === 1) return null;
    return this.stateTexts(res[0], res[1], res[2], offered.texts);
  }

  /** A venue-state read as the scripts answer it: `=k` names the k-th text offered. */
  private stateTexts(version: number, texts: string[], snapshot: string, offered: readonly string[]): VenueStateTexts {
    if (snapshot.startsWith('=')) {
      const text = offered[Number(snapshot.slice(1)) - 1];
      if (text === undefined) throw new Error(`the venue-state read named held snapshot ${snapshot} of ${offered.length}`);
      this.heldSnapshotReads++;
      return { version: Number(version), texts, snapshot: text };
    }
    return { version: Number(version), texts, snapshot: snapshot === '' ? null : snapshot };
  }

  /** Venue-state reads whose snapshot was one the caller held (not sent back; metrics, tests). */
  heldSnapshotReads = 0;

  /**
   * Compute: stores the computed liquidity, depth and snapshot unless a newer version is there, and
   * in the same atomic step appends the events and history rows it implies to the event log.
   */
  async writeComputed(contestId: string, version: number, positionsJson: string, snapshotJson: string, depth: [string, string][], log: ComputedAppend = {}): Promise<ComputedWrite> {
    const ev = eventArgs(log.events ?? []);
    const hist = histArgs(log.hist ?? []);
    const outliers = log.outliers ?? [];
    const keys = [
      this.k('closed', contestId),
      this.log.feed,
      this.log.hist,
      this.k('liq', contestId),
      this.k('depth', contestId),
      this.k('snap', contestId),
      this.k('liqv', contestId),
      this.log.events(contestId),
      this.log.lastLiquidityEvent(contestId),
      this.log.outliers(contestId),
      arbitrageKey(this.ks, contestId),
      arbitrageIndexKey(this.ks),
      this.k('vqv', contestId),
      this.fastPathKey,
      this.k('snapq', contestId),
    ];
    const write = (snapshot: string, depthFields: readonly [string, string][], quoteFields: readonly [string, string][], base: string) => {
      const flat: string[] = [];
      for (const [h, d] of depthFields) flat.push(h, d);
      const quotes: string[] = [];
      for (const [i, q] of quoteFields) quotes.push(i, q);
      return this.cmd.writeComputed(keys, [
        version, positionsJson, snapshot, contestId, this.log.liquidityChanged, flat.length, ...flat, base, quotes.length, ...quotes, ev.length, ...ev, hist.length, ...hist, outliers.length, ...outliers,
        log.arbitrages?.json ?? '', contestMember(contestId, log.arbitrages?.leagueId ?? null), log.arbitrages?.ttlMs ?? 0,
      ]);
    };
    const parts = log.snapshotParts;
    let res = parts && log.since ? await write(parts.rest, log.since.depth, log.since.quotes, runPrefix(log.since.base)) : 2;
    // Another run's snapshot is stored (or none), or the computation did not continue from one: every field goes.
    if (res === 2) res = parts ? await write(parts.rest, depth, parts.quotes, '') : await write(snapshotJson, depth, [], '');
    if (res === 0 || res === 2) return false;
    return { lastLiquidityEventId: res[1] || null };
  }

  /** Appends events (and their history rows) that change no stored state: trade prints. Returns the last event id. */
  async append(contestId: string, events: readonly LogAppend[], hist: readonly HistAppend[] = []): Promise<string | null> {
    const ev = eventArgs(events);
    const h = histArgs(hist);
    const id = await this.cmd.append([this.k('closed', contestId), this.log.feed, this.log.hist, this.log.events(contestId)], [contestId, ev.length, ...ev, h.length, ...h]);
    return id || null;
  }

  /** The serialized Position[] of a contest, or null when nothing was computed yet. */
  liquidity(contestId: string): Promise<string | null> {
    return this.redis.get(this.k('liq', contestId));
  }

  /** The version of the stored liquidity (a few bytes), to revalidate a cached copy cheaply. */
  async liquidityVersion(contestId: string): Promise<number | null> {
    const v = await this.redis.get(this.k('liqv', contestId));
    return v === null ? null : Number(v);
  }

  /**
   * Liquidity together with the version it is and the id of the last liquidity event it reflects
   * (null before the first), read atomically.
   */
  async liquidityWithVersion(contestId: string): Promise<{ version: number; json: string; eventId: string | null } | null> {
    const res = await this.redis.multi().get(this.k('liqv', contestId)).get(this.k('liq', contestId)).get(this.log.lastLiquidityEvent(contestId)).exec();
    const v = res?.[0]?.[1] as string | null;
    const json = res?.[1]?.[1] as string | null;
    return v === null || json === null ? null : { version: Number(v), json, eventId: (res?.[2]?.[1] as string | null) ?? null };
  }

  depth(contestId: string, positionHash: string): Promise<string | null> {
    return this.redis.hget(this.k('depth', contestId), positionHash);
  }

  /**
   * What an order on a contest is checked against, in one round trip: the contest's liquidity and
   * the depth of `positionHashes` (null where missing).
   */
  async orderView(contestId: string, positionHashes: readonly string[]): Promise<{ liquidity: string | null; depth: (string | null)[] }> {
    const m = this.redis.multi().get(this.k('liq', contestId));
    if (positionHashes.length > 0) m.hmget(this.k('depth', contestId), ...positionHashes);
    const res = (await m.exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    return { liquidity: (res[0]?.[1] as string | null) ?? null, depth: positionHashes.length > 0 ? (res[1]?.[1] as (string | null)[]) : [] };
  }

  /** The stored venue quotes (ingest's, with their fee model and freshness bound) of `liquidityHashes` in a contest; null where missing. */
  async venueQuotes(contestId: string, liquidityHashes: readonly string[]): Promise<(string | null)[]> {
    if (liquidityHashes.length === 0) return [];
    return this.redis.hmget(this.k('vq', contestId), ...liquidityHashes);
  }

  /** Stores a contest's game state and appends its events (contest_state.update) in one atomic step. */
  async setContestState(contestId: string, stateJson: string, events: readonly LogAppend[] = []): Promise<void> {
    const ev = eventArgs(events);
    await this.cmd.writeState([this.k('closed', contestId), this.log.feed, this.k('state', contestId), this.log.events(contestId)], [stateJson, contestId, ev.length, ...ev]);
  }

  /**
   * The contest closed (final or cancelled): its hot state expires after the retention. Returns the
   * expiry instant (Redis time, ms); closing again keeps the first one.
   */
  async closeContest(contestId: string): Promise<number> {
    const keys = [this.k('closed', contestId), this.positionIndexKey, ...HOT_KINDS.map((kind) => this.k(kind, contestId))];
    return Number(await this.cmd.closeContest(keys, [this.closedRetentionMs]));
  }

  /** When the closed contest's hot state expires (Redis ms), or null while it is open. */
  async closedUntil(contestId: string): Promise<number | null> {
    const v = await this.redis.get(this.k('closed', contestId));
    return v === null ? null : Number(v);
  }

  contestState(contestId: string): Promise<string | null> {
    return this.redis.get(this.k('state', contestId));
  }

  async contestStates(contestIds: string[]): Promise<(string | null)[]> {
    if (contestIds.length === 0) return [];
    return this.redis.mget(contestIds.map((c) => this.k('state', c)));
  }
}
