/**
 * Resolving a credential to its principal record, in three tiers: an in-process cache (hot path, no
 * I/O), the Redis copy (shared by processes), PostgreSQL (the source of truth). An API key the
 * complete Redis index of key hashes does not hold is unknown without asking PostgreSQL, so a flood
 * of made-up keys never reaches it (and garbage never passes the gate's checksum at all).
 *
 * Revocation: PostgreSQL is updated, the Redis copy becomes a tombstone no lookup can overwrite
 * (a lookup that read PostgreSQL before the revoke cannot revive the key), and a 'keys-revoked' bus
 * message makes every process drop its in-process entry; a lookup under way during the eviction does
 * not put its answer back. Should a bus message be lost, the entry still expires after LOCAL_TTL_MS.
 */
import { LRUCache } from 'lru-cache';
import type { PrincipalRecord } from '../domain/principal.js';
import { liveKeyHashes, principalRecordForAccount, principalRecordForKeyHash } from './pg/keys.js';
import type { Pool } from './pg/pool.js';
import type { RequestGate } from './redis/gate.js';

export type Credential = { kind: 'key'; id: string } | { kind: 'acct'; id: string };
export type Invalid = { invalid: 'unknown' | 'revoked' };
export type Resolved = PrincipalRecord | Invalid;

export const LOCAL_TTL_MS = 5_000;
/** Valid principals kept in process: far more than the keys one process serves at once. */
const MAX_LOCAL = 100_000;
/** Refusals kept in process, apart, so no flood of bad credentials evicts a valid one. */
const MAX_LOCAL_NEGATIVE = 10_000;
/** A lookup that took longer than this does not write what it read (see RequestGate.markRevoked). */
const MAX_LOOKUP_AGE_MS = 60_000;
/** How often a process may try to rebuild an incomplete key index. */
const INDEX_REBUILD_EVERY_MS = 10_000;

const UNKNOWN: Invalid = Object.freeze({ invalid: 'unknown' as const });

export const isInvalid = (r: Resolved): r is Invalid => 'invalid' in r && r.invalid !== undefined;

export interface LookupHooks {
  /** Test seam: runs between a lookup's PostgreSQL read and its Redis write. */
  afterStoreRead?: (cred: Credential) => Promise<void>;
}

export interface PrincipalCacheOptions extends LookupHooks {
  /** Test seam: runs after a lookup answered and before its answer enters the in-process cache. */
  beforeFill?: (cred: Credential) => Promise<void>;
  now?: () => number;
  maxEntries?: number;
  maxNegative?: number;
}

interface Entry {
  rec: Resolved;
  until: number;
}

export class PrincipalCache {
  private readonly valid: LRUCache<string, Entry>;
  private readonly refused: LRUCache<string, Entry>;
  /** Bumped by every eviction: a lookup that started before one does not fill the cache. */
  private evictions = 0;
  private readonly now: () => number;

  constructor(
    private readonly gate: RequestGate,
    private readonly pool: Pool,
    private readonly opts: PrincipalCacheOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.valid = new LRUCache({ max: opts.maxEntries ?? MAX_LOCAL });
    this.refused = new LRUCache({ max: opts.maxNegative ?? MAX_LOCAL_NEGATIVE });
  }

  private static localKey(c: Credential): string {
    return c.kind === 'key' ? c.id : `acct:${c.id}`;
  }

  /** The in-process entry, synchronously (no promise on the hot path), or undefined when absent or expired. */
  peek(cred: Credential): Resolved | undefined {
    const lk = PrincipalCache.localKey(cred);
    const t = this.now();
    const hit = this.valid.get(lk) ?? this.refused.get(lk);
    return hit && hit.until > t ? hit.rec : undefined;
  }

  async resolve(cred: Credential): Promise<Resolved> {
    const cached = this.peek(cred);
    if (cached !== undefined) return cached;
    const epoch = this.evictions;
    const rec = await resolveShared(this.gate, this.pool, cred, this.opts);
    await this.opts.beforeFill?.(cred);
    if (epoch === this.evictions) {
      (isInvalid(rec) ? this.refused : this.valid).set(PrincipalCache.localKey(cred), { rec, until: this.now() + LOCAL_TTL_MS });
    }
    return rec;
  }

  /** Drops a key's in-process entry (on a keys-revoked bus message). */
  evictKeyHash(keyHash: string): void {
    this.evictions++;
    this.valid.delete(keyHash);
    this.refused.delete(keyHash);
  }

  clear(): void {
    this.evictions++;
    this.valid.clear();
    this.refused.clear();
  }

  /** Entries held: valid principals and refusals (for tests and metrics). */
  get size(): { valid: number; refused: number } {
    return { valid: this.valid.size, refused: this.refused.size };
  }
}

/** The Redis copy or index verdict, then PostgreSQL only for a key the index may hold. */
async function resolveShared(gate: RequestGate, pool: Pool, cred: Credential, hooks: LookupHooks): Promise<Resolved> {
  if (cred.kind === 'key') {
    const found = await gate.lookupKey(cred.id);
    if ('copy' in found) return found.copy;
    if (found.index === 'absent') return UNKNOWN;
    if (found.index === 'incomplete') kickIndexRebuild(gate, pool);
  } else {
    const copy = await gate.peek(gate.recordKey(cred.kind, cred.id));
    if (copy) return copy;
  }
  return loadPrincipalRecord(gate, pool, cred, hooks);
}

/**
 * Loads the record from PostgreSQL and refreshes the Redis copy (negative results briefly). Returns
 * what the copy says after the write: a revocation that landed meanwhile wins over what was read.
 */
export async function loadPrincipalRecord(gate: RequestGate, pool: Pool, cred: Credential, hooks: LookupHooks = {}): Promise<Resolved> {
  const started = performance.now();
  const rec = cred.kind === 'key' ? await principalRecordForKeyHash(pool, cred.id) : await principalRecordForAccount(pool, cred.id);
  await hooks.afterStoreRead?.(cred);
  // A read this old may predate a revocation whose tombstone has expired since: read again.
  if (performance.now() - started > MAX_LOOKUP_AGE_MS) return loadPrincipalRecord(gate, pool, cred);
  return gate.remember(gate.recordKey(cred.kind, cred.id), rec);
}

/** One uncached resolution (Redis copy or key index, then PostgreSQL): for callers that hold no PrincipalCache. */
export function lookupPrincipalRecord(gate: RequestGate, pool: Pool, cred: Credential): Promise<Resolved> {
  return resolveShared(gate, pool, cred, {});
}

/**
 * Makes the key index complete when it is not (first start, or Redis lost it): one process rebuilds
 * it from PostgreSQL under a lock. Until then, lookups of keys not in it go to PostgreSQL.
 */
export async function ensureKeyIndex(gate: RequestGate, pool: Pool): Promise<boolean> {
  if (await gate.keyIndexComplete()) return true;
  return gate.rebuildKeyIndex(() => liveKeyHashes(pool));
}

const lastRebuild = new WeakMap<RequestGate, number>();

/** Starts a rebuild in the background, at most once per INDEX_REBUILD_EVERY_MS per process. */
function kickIndexRebuild(gate: RequestGate, pool: Pool): void {
  const t = Date.now();
  if (t - (lastRebuild.get(gate) ?? 0) < INDEX_REBUILD_EVERY_MS) return;
  lastRebuild.set(gate, t);
  // A failed rebuild is retried by the next lookup that finds the index incomplete.
  void ensureKeyIndex(gate, pool).catch(() => undefined);
}
