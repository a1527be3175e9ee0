/**
 * Resolving a credential to its principal record, in three tiers: an in-process map (hot path, no
 * I/O), the Redis copy (shared by processes), PostgreSQL (the source of truth). Revocation evicts all
 * three at once: PostgreSQL is updated, the Redis copy deleted, and a 'keys-revoked' bus message
 * makes every process drop its in-process entry. Should a bus message be lost, the in-process entry
 * still expires after LOCAL_TTL_MS.
 */
import type { PrincipalRecord } from '../domain/principal.js';
import { principalRecordForAccount, principalRecordForKeyHash } from './pg/keys.js';
import type { Pool } from './pg/pool.js';
import type { RequestGate } from './redis/gate.js';

export type Credential = { kind: 'key'; id: string } | { kind: 'acct'; id: string };
export type Invalid = { invalid: 'unknown' | 'revoked' };
export type Resolved = PrincipalRecord | Invalid;

export const LOCAL_TTL_MS = 5_000;
const MAX_LOCAL = 50_000;

export const isInvalid = (r: Resolved): r is Invalid => 'invalid' in r && r.invalid !== undefined;

export class PrincipalCache {
  private readonly local = new Map<string, { rec: Resolved; until: number }>();

  constructor(
    private readonly gate: RequestGate,
    private readonly pool: Pool,
    private readonly now: () => number = Date.now,
  ) {}

  private static localKey(c: Credential): string {
    return c.kind === 'key' ? c.id : `acct:${c.id}`;
  }

  /** The in-process entry, synchronously (no promise on the hot path), or undefined when absent or expired. */
  peek(cred: Credential): Resolved | undefined {
    const hit = this.local.get(PrincipalCache.localKey(cred));
    return hit && hit.until > this.now() ? hit.rec : undefined;
  }

  async resolve(cred: Credential): Promise<Resolved> {
    const lk = PrincipalCache.localKey(cred);
    const hit = this.local.get(lk);
    const t = this.now();
    if (hit && hit.until > t) return hit.rec;
    const recordKey = this.gate.recordKey(cred.kind, cred.id);
    const rec: Resolved = (await this.gate.peek(recordKey)) ?? (await loadPrincipalRecord(this.gate, this.pool, cred));
    if (this.local.size >= MAX_LOCAL) this.local.clear();
    this.local.set(lk, { rec, until: t + LOCAL_TTL_MS });
    return rec;
  }

  /** Drops a key's in-process entry (on a keys-revoked bus message). */
  evictKeyHash(keyHash: string): void {
    this.local.delete(keyHash);
  }

  clear(): void {
    this.local.clear();
  }
}

/** Loads the record from PostgreSQL and refreshes the Redis copy (negative results briefly). */
export async function loadPrincipalRecord(gate: RequestGate, pool: Pool, cred: Credential): Promise<Resolved> {
  const rec = cred.kind === 'key' ? await principalRecordForKeyHash(pool, cred.id) : await principalRecordForAccount(pool, cred.id);
  await gate.remember(gate.recordKey(cred.kind, cred.id), rec);
  return rec;
}

/** One uncached resolution (Redis copy, then PostgreSQL): for callers that hold no PrincipalCache. */
export async function lookupPrincipalRecord(gate: RequestGate, pool: Pool, cred: Credential): Promise<Resolved> {
  const cached = await gate.peek(gate.recordKey(cred.kind, cred.id));
  if (cached) return cached.invalid ? { invalid: cached.invalid } : cached;
  return loadPrincipalRecord(gate, pool, cred);
}
