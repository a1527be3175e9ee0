/**
 * The API process's copies of contests' serialized liquidity. A contest's liquidity is large (every
 * position × venue) and read far more often than it changes, so the last copy per contest is kept.
 * Every recomputation publishes on the bus, which drops the copy at once; should a bus message be
 * lost, a copy older than revalidateMs is checked against its version (a few bytes) before it is
 * served again.
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
  checkedAt: number;
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

  /** The contest's liquidity fragment, or null when none is stored (never computed, or expired). */
  async get(contestId: string): Promise<Buffer | null> {
    const hit = this.copies.get(contestId);
    const t = this.now();
    if (hit) {
      if (t - hit.checkedAt < this.revalidateMs) return hit.fragment;
      if ((await this.hot.liquidityVersion(contestId)) === hit.version) {
        hit.checkedAt = t;
        return hit.fragment;
      }
    }
    const fresh = await this.hot.liquidityWithVersion(contestId);
    if (!fresh) {
      this.copies.delete(contestId);
      return null;
    }
    const fragment = Buffer.from(fresh.json);
    this.copies.set(contestId, { version: fresh.version, fragment, checkedAt: t });
    return fragment;
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
