/**
 * A bounded map from contest id to what a thread keeps of the contest's last run (a ContestRun on a
 * compute thread, the texts' mirror on the thread that hands it work). Bounded three ways: by
 * count, by an estimate of the bytes held, and by idleness on the jobs' own clock (now_ms), so a
 * closed contest's run goes after `idleMs` even when nothing else pushes it out. The least recently
 * used goes first. Losing an entry costs one run from the stored snapshot, never a wrong answer.
 */
export interface RunCacheLimits {
  maxEntries: number;
  maxBytes: number;
  idleMs: number;
}

/**
 * Per thread: enough for the contests a compute role keeps busy (a 200-position contest of 1,000
 * quotes holds about 4 MB as a run, 2 MB as a mirror; a simulator contest of 50 quotes a tenth of
 * that), and a contest quiet for ten minutes is dropped.
 */
export const DEFAULT_RUN_CACHE_LIMITS: RunCacheLimits = { maxEntries: 512, maxBytes: 64 * 2 ** 20, idleMs: 600_000 };

interface Entry<V> {
  value: V;
  bytes: number;
  usedMs: number;
}

export class RunCache<V> {
  private readonly map = new Map<string, Entry<V>>();
  private held = 0;
  /** Entries dropped to keep within the limits (metrics, tests). */
  evicted = 0;

  constructor(
    private limits: RunCacheLimits,
    private readonly sizeOf: (v: V) => number,
  ) {}

  /** Changes the limits (the next store keeps within them). */
  limit(limits: RunCacheLimits): void {
    this.limits = limits;
  }

  get size(): number {
    return this.map.size;
  }

  /** Bytes held by the entries, as estimated when each was last stored. */
  get bytes(): number {
    return this.held;
  }

  /** The entry of `key`, made the most recently used; none when it was idle past the lifetime at `nowMs`. */
  get(key: string, nowMs: number): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    this.map.delete(key);
    if (nowMs - e.usedMs > this.limits.idleMs) {
      this.held -= e.bytes;
      this.evicted++;
      return undefined;
    }
    if (nowMs > e.usedMs) e.usedMs = nowMs;
    this.map.set(key, e);
    return e.value;
  }

  /** The entry of `key` as it is, neither made recent nor checked for idleness (a hint; get() decides). */
  peek(key: string): V | undefined {
    return this.map.get(key)?.value;
  }

  /** Stores (or re-stores, with its size now) `value` as used at `nowMs`, then keeps within the limits. */
  set(key: string, value: V, nowMs: number): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.held -= old.bytes;
      this.map.delete(key);
    }
    const bytes = this.sizeOf(value);
    this.map.set(key, { value, bytes, usedMs: nowMs });
    this.held += bytes;
    for (const [k, e] of this.map) {
      const over = this.map.size > this.limits.maxEntries || this.held > this.limits.maxBytes;
      if (!over && nowMs - e.usedMs <= this.limits.idleMs) break;
      this.map.delete(k);
      this.held -= e.bytes;
      this.evicted++;
    }
  }

  delete(key: string): void {
    const e = this.map.get(key);
    if (e === undefined) return;
    this.map.delete(key);
    this.held -= e.bytes;
  }

  clear(): void {
    this.map.clear();
    this.held = 0;
  }
}
