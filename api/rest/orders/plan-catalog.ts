/**
 * Where a practice leg's planning finds the catalog facts it prices on: a position's contest and
 * title, and which partners are internal books (never a source of a live price).
 *
 * - READ_CATALOG reads PostgreSQL on the connection given: in a buy's transaction, what its
 *   statements see.
 * - CatalogCopies keeps this process's copies for the one-statement buy (practice-buy.ts), which
 *   checks every fact it planned on again in the statement that writes (flow_paper_buy answers
 *   'catalog' when one no longer holds: a position's title re-seeded, a partner's internal_book
 *   flipped). Then the buy drops the copies it used and runs its transaction, which reads
 *   PostgreSQL. So a stale copy costs one fallback, never a different answer; the lifetimes only
 *   bound how long a fact nobody buys on stays here.
 *
 * Bounded: at most maxPositions positions (least recently used out first), each kept positionTtlMs;
 * the internal-book set re-read after booksTtlMs.
 */
import { LRUCache } from 'lru-cache';
import type { Partner } from '../../../src/domain/catalog.js';
import { internalBookPartners, listPartners, positionsByHash } from '../../../src/store/pg/catalog.js';
import type { Pool, PoolClient } from '../../../src/store/pg/pool.js';

type Queryable = Pool | PoolClient;

export interface PlannedPosition {
  contest_id: string;
  title: string;
}

export interface PlanCatalog {
  /** The catalog's position, or null when there is none of that hash. */
  position(db: Queryable, positionHash: string): Promise<PlannedPosition | null>;
  internalBooks(db: Queryable): Promise<ReadonlySet<string>>;
  /** The internal (practice) book's catalog record, whose order_config a practice leg is sized by; null without one. */
  practiceBook(db: Queryable): Promise<Partner | null>;
}

export const READ_CATALOG: PlanCatalog = {
  async position(db, positionHash) {
    const p = (await positionsByHash(db, [positionHash])).get(positionHash);
    return p ? { contest_id: p.contest_id, title: p.title } : null;
  },
  internalBooks: (db) => internalBookPartners(db),
  practiceBook: async (db) => (await listPartners(db as Pool)).find((p) => p.internal_book) ?? null,
};

export interface CatalogCopiesOptions {
  maxPositions?: number;
  positionTtlMs?: number;
  booksTtlMs?: number;
  now?: () => number;
}

export class CatalogCopies implements PlanCatalog {
  private readonly positions: LRUCache<string, PlannedPosition>;
  private books: { set: ReadonlySet<string>; at: number } | null = null;
  private practice: { partner: Partner | null; at: number } | null = null;
  private readonly booksTtlMs: number;
  private readonly now: () => number;

  constructor(opts: CatalogCopiesOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.booksTtlMs = opts.booksTtlMs ?? 60_000;
    const now = this.now;
    this.positions = new LRUCache({ max: opts.maxPositions ?? 100_000, ttl: opts.positionTtlMs ?? 600_000, ttlResolution: 0, perf: { now } });
  }

  async position(db: Queryable, positionHash: string): Promise<PlannedPosition | null> {
    const hit = this.positions.get(positionHash);
    if (hit) return hit;
    // An unknown hash is not remembered: its buy runs the transaction, which reads it again anyway.
    const p = await READ_CATALOG.position(db, positionHash);
    if (p) this.positions.set(positionHash, p);
    return p;
  }

  async internalBooks(db: Queryable): Promise<ReadonlySet<string>> {
    if (this.books && this.now() - this.books.at < this.booksTtlMs) return this.books.set;
    const at = this.now();
    const set = await READ_CATALOG.internalBooks(db);
    this.books = { set, at };
    return set;
  }

  /** The practice book's record, kept as long as the internal books (its order_config changes as rarely). */
  async practiceBook(db: Queryable): Promise<Partner | null> {
    if (this.practice && this.now() - this.practice.at < this.booksTtlMs) return this.practice.partner;
    const at = this.now();
    const partner = await READ_CATALOG.practiceBook(db);
    this.practice = { partner, at };
    return partner;
  }

  /** A buy found these facts stale: the next plan reads them again. */
  drop(positionHashes: readonly string[]): void {
    for (const h of positionHashes) this.positions.delete(h);
    this.books = null;
    this.practice = null;
  }

  get size(): number {
    return this.positions.size;
  }
}
