/**
 * The catalog facts a pipeline needs per contest (its positions, league, label and scheduled start),
 * read from PostgreSQL and kept in memory with a bound and a lifetime, so a computation or a trade
 * costs no catalog query. Shared by the liquidity processor and the trade-signal consumer.
 *
 * An entry lives `ttlMs` (a catalog change reaches every process within it; `forget` drops one at
 * once); a contest the catalog does not list yet (the simulator records one a moment after it opens
 * it) is remembered only `missingTtlMs` (0: not at all), so it is asked about again soon; beyond `max` contests the
 * least recently used go first, and `prune` drops the expired (closed contests get no more work).
 */
import { LRUCache } from 'lru-cache';
import type { PositionDefinition } from '../src/domain/catalog.js';
import { contestFacts, positionsOfContest } from '../src/store/pg/catalog.js';
import type { Pool } from '../src/store/pg/pool.js';

export interface ContestCatalog {
  positions: PositionDefinition[];
  byHash: ReadonlyMap<string, PositionDefinition>;
  leagueId: string | null;
  label: string | null;
  /** Scheduled start (unix ms); null when unknown. */
  startsAtMs: number | null;
  /** false when the catalog does not list the contest (yet). */
  listed: boolean;
}

export const CONTEST_CATALOG_DEFAULTS = { max: 10_000, ttlMs: 60_000, missingTtlMs: 5_000 } as const;

export class ContestCatalogCache {
  private readonly cache: LRUCache<string, ContestCatalog>;

  constructor(
    private readonly pool: Pool,
    private readonly o: { now: () => number; max?: number; ttlMs?: number; missingTtlMs?: number },
  ) {
    this.cache = new LRUCache<string, ContestCatalog>({ max: o.max ?? CONTEST_CATALOG_DEFAULTS.max, ttl: o.ttlMs ?? CONTEST_CATALOG_DEFAULTS.ttlMs, ttlResolution: 0, perf: { now: o.now } });
  }

  async get(contestId: string): Promise<ContestCatalog> {
    const hit = this.cache.get(contestId);
    if (hit) return hit;
    const [positions, facts] = await Promise.all([positionsOfContest(this.pool, contestId), contestFacts(this.pool, contestId)]);
    const listed = facts !== null && positions.length > 0;
    const c: ContestCatalog = {
      positions,
      byHash: new Map(positions.map((p) => [p.position_hash, p])),
      leagueId: facts?.league_id ?? null,
      label: facts?.label ?? null,
      startsAtMs: facts && Number.isFinite(facts.starts_at_ms) ? facts.starts_at_ms : null,
      listed,
    };
    const missingTtl = this.o.missingTtlMs ?? CONTEST_CATALOG_DEFAULTS.missingTtlMs;
    // missingTtlMs 0: an unlisted contest is asked about again on every call.
    if (listed) this.cache.set(contestId, c);
    else if (missingTtl > 0) this.cache.set(contestId, c, { ttl: missingTtl });
    return c;
  }

  /** Drops a contest's facts (after a catalog change). */
  forget(contestId: string): void {
    this.cache.delete(contestId);
  }

  /** Drops expired entries. */
  prune(): void {
    this.cache.purgeStale();
  }

  get size(): number {
    return this.cache.size;
  }
}
