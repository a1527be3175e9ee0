/**
 * Serialized catalog reads, kept until the catalog changes. Writers bump `catalog:version` in Redis
 * (src/store/redis/catalog-version.ts); every API process checks it at most once per second, so a
 * change is visible everywhere within a second and a hot read never touches PostgreSQL. Bounded by
 * entries, least recently used first out, so a scan of many distinct queries cannot wipe the hot ones.
 */
import { LRUCache } from 'lru-cache';
import type { Redis } from '../../src/store/redis/client.js';
import { readCatalogVersion } from '../../src/store/redis/catalog-version.js';
import type { Keyspace } from '../../src/store/redis/client.js';

export class ReadCache {
  private version = -1;
  private readonly entries: LRUCache<string, string>;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly ks: Keyspace,
    maxEntries = 5_000,
    private readonly refreshMs = 1_000,
  ) {
    this.entries = new LRUCache<string, string>({ max: maxEntries });
  }

  get size(): number {
    return this.entries.size;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    const v = await readCatalogVersion(this.redis, this.ks);
    if (v !== this.version) {
      this.version = v;
      this.entries.clear();
    }
  }

  /** The cached fragment, synchronously (the hot path), or undefined. */
  peek(key: string): string | undefined {
    return this.entries.get(key);
  }

  /** Returns the cached fragment or computes, stores and returns it. */
  async get(key: string, compute: () => Promise<string>): Promise<string> {
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const version = this.version;
    const value = await compute();
    // Do not store a value computed across a version change: it may predate the change.
    if (version === this.version) {
      this.entries.set(key, value);
    }
    return value;
  }
}
