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
 * Writes of computed state are compare-and-set on the venue-state version they were computed from,
 * so a slow job can never overwrite a newer result.
 */
import type { Keyspace, Redis } from './client.js';

// KEYS: liq, depth, snap, liqv; ARGV: version, liqJson, snapJson, then depth field/value pairs.
const WRITE_COMPUTED_LUA = `
local cur = tonumber(redis.call('GET', KEYS[4]) or '-1')
local v = tonumber(ARGV[1])
if v <= cur then return 0 end
redis.call('SET', KEYS[4], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[3], ARGV[3])
if #ARGV > 3 then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], unpack(ARGV, 4))
end
return 1
`;

type HotRedis = Redis & {
  flowWriteComputed(liq: string, depthKey: string, snap: string, liqv: string, version: number, liqJson: string, snapJson: string, ...depthPairs: string[]): Promise<number>;
};

export interface VenueStateRead<Q> {
  version: number;
  quotes: Q[];
  snapshot: string | null;
}

export class HotState {
  private readonly redis: HotRedis;

  constructor(
    redis: Redis,
    private readonly ks: Keyspace,
  ) {
    this.redis = redis as HotRedis;
    if (!(this.redis as unknown as Record<string, unknown>).flowWriteComputed) {
      this.redis.defineCommand('flowWriteComputed', { numberOfKeys: 4, lua: WRITE_COMPUTED_LUA });
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
    const res = await this.redis.multi().hset(this.k('vq', contestId), ...args).incr(this.k('vqv', contestId)).exec();
    return Number(res?.[1]?.[1] ?? 0);
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
    await this.redis.set(this.k('state', contestId), stateJson);
  }

  contestState(contestId: string): Promise<string | null> {
    return this.redis.get(this.k('state', contestId));
  }

  async contestStates(contestIds: string[]): Promise<(string | null)[]> {
    if (contestIds.length === 0) return [];
    return this.redis.mget(contestIds.map((c) => this.k('state', c)));
  }
}
