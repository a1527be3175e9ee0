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
 * Writes of computed state are compare-and-set on the venue-state version they were computed from,
 * so a slow job can never overwrite a newer result.
 *
 * Retention: an open contest's keys have no TTL (a quiet market must not lose its quotes). When the
 * contest closes, closeContest stamps every key with one expiry instant and leaves the `closed`
 * marker; every later write checks the marker and gives what it wrote the same instant, so a late
 * quote or job can neither revive the state nor drop its TTL (SET and DEL+HSET would). The marker
 * itself lives twice the retention, to catch writes that straggle in after the state has gone.
 */
import type { Keyspace, Redis } from './client.js';

/** Every per-contest key kind of the hot state (the `closed` marker apart). */
export const HOT_KINDS = ['vq', 'vqv', 'liq', 'liqv', 'depth', 'snap', 'state'] as const;

/** Default hot-state retention of a closed contest (FLOW_HOT_RETENTION_SECONDS). */
export const DEFAULT_HOT_RETENTION_MS = 3_600_000;

// Shared tail of every write script: KEYS[1] is the closed marker, the written keys follow it.
const FOLLOW_CLOSED_LUA = `
local function follow_closed(from)
  local at = redis.call('GET', KEYS[1])
  if not at then return end
  for i = from, #KEYS do redis.call('PEXPIREAT', KEYS[i], at) end
end
`;

// KEYS: closed, vq, vqv; ARGV: field/value pairs. Returns the new venue-state version.
const WRITE_QUOTES_LUA = `${FOLLOW_CLOSED_LUA}
-- In slices: unpack is bounded by Lua's C stack (about 8000 values).
for i = 1, #ARGV, 2000 do redis.call('HSET', KEYS[2], unpack(ARGV, i, math.min(i + 1999, #ARGV))) end
local v = redis.call('INCR', KEYS[3])
follow_closed(2)
return v
`;

// KEYS: closed, liq, depth, snap, liqv; ARGV: version, liqJson, snapJson, then depth field/value pairs.
const WRITE_COMPUTED_LUA = `${FOLLOW_CLOSED_LUA}
local cur = tonumber(redis.call('GET', KEYS[5]) or '-1')
local v = tonumber(ARGV[1])
if v <= cur then return 0 end
redis.call('SET', KEYS[5], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[4], ARGV[3])
if #ARGV > 3 then
  redis.call('DEL', KEYS[3])
  for i = 4, #ARGV, 2000 do redis.call('HSET', KEYS[3], unpack(ARGV, i, math.min(i + 1999, #ARGV))) end
end
follow_closed(2)
return 1
`;

// KEYS: closed, state; ARGV: state JSON.
const WRITE_STATE_LUA = `${FOLLOW_CLOSED_LUA}
redis.call('SET', KEYS[2], ARGV[1])
follow_closed(2)
return 1
`;

// KEYS: closed, then every hot key; ARGV: retention ms. Idempotent: a second close (another ingest
// process, a repeated final state) keeps the first expiry instead of pushing it out.
const CLOSE_LUA = `
local at = tonumber(redis.call('GET', KEYS[1]) or '0')
if at == 0 then
  local t = redis.call('TIME')
  local retention = tonumber(ARGV[1])
  at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + retention
  redis.call('SET', KEYS[1], tostring(at), 'PX', 2 * retention)
end
for i = 2, #KEYS do redis.call('PEXPIREAT', KEYS[i], at) end
return at
`;

type HotRedis = Redis & {
  flowWriteQuotes(closed: string, vq: string, vqv: string, ...pairs: string[]): Promise<number>;
  flowWriteComputed(closed: string, liq: string, depthKey: string, snap: string, liqv: string, version: number, liqJson: string, snapJson: string, ...depthPairs: string[]): Promise<number>;
  flowWriteState(closed: string, state: string, json: string): Promise<number>;
  flowCloseContest(numKeys: number, ...keysThenRetention: (string | number)[]): Promise<number>;
};

export interface HotStateOptions {
  /** How long a closed contest's hot state stays readable (default DEFAULT_HOT_RETENTION_MS). */
  closedRetentionMs?: number;
}

export interface VenueStateRead<Q> {
  version: number;
  quotes: Q[];
  snapshot: string | null;
}

export class HotState {
  private readonly redis: HotRedis;

  readonly closedRetentionMs: number;

  constructor(
    redis: Redis,
    private readonly ks: Keyspace,
    opts: HotStateOptions = {},
  ) {
    this.redis = redis as HotRedis;
    this.closedRetentionMs = opts.closedRetentionMs ?? DEFAULT_HOT_RETENTION_MS;
    if (!(this.redis as unknown as Record<string, unknown>).flowCloseContest) {
      this.redis.defineCommand('flowWriteQuotes', { numberOfKeys: 3, lua: WRITE_QUOTES_LUA });
      this.redis.defineCommand('flowWriteComputed', { numberOfKeys: 5, lua: WRITE_COMPUTED_LUA });
      this.redis.defineCommand('flowWriteState', { numberOfKeys: 2, lua: WRITE_STATE_LUA });
      this.redis.defineCommand('flowCloseContest', { lua: CLOSE_LUA });
    }
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

  /** Ingest: stores the latest quotes of one contest and bumps its version, in one round trip. */
  async writeQuotes(contestId: string, quotes: { liquidity_hash: string }[]): Promise<number> {
    const args: string[] = [];
    for (const q of quotes) args.push(q.liquidity_hash, JSON.stringify(q));
    return Number(await this.redis.flowWriteQuotes(this.k('closed', contestId), this.k('vq', contestId), this.k('vqv', contestId), ...args));
  }

  /** Compute: every venue quote of a contest, the version they make up, and the previous snapshot. */
  async readVenueState<Q>(contestId: string): Promise<VenueStateRead<Q>> {
    const res = await this.redis
      .multi()
      .get(this.k('vqv', contestId))
      .hvals(this.k('vq', contestId))
      .get(this.k('snap', contestId))
      .exec();
    const version = Number(res?.[0]?.[1] ?? 0);
    const vals = (res?.[1]?.[1] as string[] | undefined) ?? [];
    return { version, quotes: vals.map((v) => JSON.parse(v) as Q), snapshot: (res?.[2]?.[1] as string | null) ?? null };
  }

  /** Compute: stores the computed liquidity, depth and snapshot unless a newer version is there. */
  async writeComputed(contestId: string, version: number, positionsJson: string, snapshotJson: string, depth: [string, string][]): Promise<boolean> {
    const flat: string[] = [];
    for (const [h, d] of depth) flat.push(h, d);
    const ok = await this.redis.flowWriteComputed(
      this.k('closed', contestId),
      this.k('liq', contestId),
      this.k('depth', contestId),
      this.k('snap', contestId),
      this.k('liqv', contestId),
      version,
      positionsJson,
      snapshotJson,
      ...flat,
    );
    return ok === 1;
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

  /** Liquidity together with the version it is, read atomically. */
  async liquidityWithVersion(contestId: string): Promise<{ version: number; json: string } | null> {
    const res = await this.redis.multi().get(this.k('liqv', contestId)).get(this.k('liq', contestId)).exec();
    const v = res?.[0]?.[1] as string | null;
    const json = res?.[1]?.[1] as string | null;
    return v === null || json === null ? null : { version: Number(v), json };
  }

  depth(contestId: string, positionHash: string): Promise<string | null> {
    return this.redis.hget(this.k('depth', contestId), positionHash);
  }

  async setContestState(contestId: string, stateJson: string): Promise<void> {
    await this.redis.flowWriteState(this.k('closed', contestId), this.k('state', contestId), stateJson);
  }

  /**
   * The contest closed (final or cancelled): its hot state expires after the retention. Returns the
   * expiry instant (Redis time, ms); closing again keeps the first one.
   */
  async closeContest(contestId: string): Promise<number> {
    const keys = [this.k('closed', contestId), ...HOT_KINDS.map((kind) => this.k(kind, contestId))];
    return Number(await this.redis.flowCloseContest(keys.length, ...keys, this.closedRetentionMs));
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
