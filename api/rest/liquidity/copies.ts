/**
 * The API process's copies of contests' serialized liquidity. A contest's liquidity is large (every
 * position × venue) and read far more often than it changes, so the last copy per contest is kept.
 * Every recomputation publishes the contest id on the liquidity-changed topic, which drops the copy
 * at once; should that message be lost (pub/sub is fire-and-forget), a copy older than revalidateMs
 * is checked against its version (a few bytes) before it is served again. A copy carries the id of
 * the last liquidity event it reflects (REST meta.event_id), stored with it in the same write.
 *
 * Bounded two ways: at most maxContests copies (least recently read out first), and a copy whose
 * hot state is gone (a closed contest past its retention) is dropped on its next read or by the
 * sweep of copies not read for idleMs.
 */
import { LRUCache } from 'lru-cache';
import type { HotState } from '../../../src/store/redis/hot.js';

interface Copy {
  version: number;
  fragment: Buffer;
  eventId: string | null;
  checkedAt: number;
}

/** A contest's serialized liquidity and the id of the last liquidity event it reflects (null before the first). */
export interface LiquidityCopy {
  fragment: Buffer;
  eventId: string | null;
}

export interface LiquidityCopiesOptions {
  maxContests?: number;
  revalidateMs?: number;
  /** A copy not read for this long is dropped by sweep(). */
  idleMs?: number;
  now?: () => number;
}

export class LiquidityCopies {
  private readonly copies: LRUCache<string, Copy>;
  private readonly revalidateMs: number;
  private readonly now: () => number;

  constructor(
    private readonly hot: Pick<HotState, 'liquidityVersion' | 'liquidityWithVersion'>,
    opts: LiquidityCopiesOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.revalidateMs = opts.revalidateMs ?? 1_000;
    const now = this.now;
    // TTL measured from the last read (updateAgeOnGet): a copy nobody reads ages out.
    this.copies = new LRUCache<string, Copy>({ max: opts.maxContests ?? 2_000, ttl: opts.idleMs ?? 60_000, updateAgeOnGet: true, ttlResolution: 0, perf: { now } });
  }

  get size(): number {
    return this.copies.size;
  }

  /** The contest's liquidity, or null when none is stored (never computed, or expired). */
  async get(contestId: string): Promise<LiquidityCopy | null> {
    const hit = this.copies.get(contestId);
    const t = this.now();
    if (hit) {
      if (t - hit.checkedAt < this.revalidateMs) return hit;
      // The version moves with every write, and the event id only with a write: equal versions, same id.
      if ((await this.hot.liquidityVersion(contestId)) === hit.version) {
        hit.checkedAt = t;
        return hit;
      }
    }
    const fresh = await this.hot.liquidityWithVersion(contestId);
    if (!fresh) {
      this.copies.delete(contestId);
      return null;
    }
    const copy: Copy = { version: fresh.version, fragment: Buffer.from(fresh.json), eventId: fresh.eventId, checkedAt: t };
    this.copies.set(contestId, copy);
    return copy;
  }

  /** The contest was recomputed (or closed): the next read fetches it again. */
  drop(contestId: string): void {
    this.copies.delete(contestId);
  }

  /** Drops copies not read for idleMs (run on a timer: the cache alone only notices on access). */
  sweep(): void {
    this.copies.purgeStale();
  }
}
