/**
 * Idempotency-Key records (operator interface): kept in PostgreSQL, written in the same transaction
 * as the effect they guard, so a replay can never disagree with what happened. Per acting account
 * and key: the first response replayed byte for byte; the key again with another body → 422
 * `idempotency_key_reused`; again while the first is still running → 409 `idempotency_key_in_use`;
 * remembered 24 hours.
 *
 * Only effects that happened are remembered: a request refused (validation, a business rule such
 * as balance_cap) rolls back with its effect and writes nothing, so the caller may correct it and
 * send the same key again.
 */
import { ApiError } from '../../errors.js';
import { sha256Hex } from '../../ids.js';
import type { Pool, PoolClient } from './pool.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotentResponse {
  status: number;
  /** The serialized body, exactly as sent. */
  body: string;
}

export interface IdempotencyScope {
  routerAccountId: string;
  /** The validated Idempotency-Key (a UUID). */
  key: string;
  /** What the key was used for (e.g. `paper.deposit`): the same key on another operation is a reuse. */
  operation: string;
  /** canonicalFingerprint of the request body. */
  fingerprint: string;
}

/** sha256 of the body as canonical JSON (keys sorted): whitespace and key order never make a "different" body. */
export function canonicalFingerprint(body: unknown): string {
  return sha256Hex(canonicalJson(body ?? null));
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export const keyInUse = () =>
  new ApiError(409, 'idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed; retry once it has finished');
export const keyReused = () =>
  new ApiError(422, 'idempotency_key_reused', 'this Idempotency-Key was already used with a different request; use a new key for a new request');

/** What flow_idem_claim (migration 5) found for a key: the rules live there, once. */
export interface KeyClaim {
  outcome: 'fresh' | 'replay' | 'reused' | 'in_use';
  status_code: number | null;
  response: string | null;
}

async function claimKey(client: PoolClient, scope: IdempotencyScope): Promise<KeyClaim> {
  const { rows } = await client.query<KeyClaim>('SELECT * FROM flow_idem_claim($1, $2, $3, $4)', [scope.routerAccountId, scope.key, scope.operation, scope.fingerprint]);
  return rows[0]!;
}

/** A claim that is not `fresh` as what to answer: the recorded response, or the error to throw. */
export function settledClaim(claim: { outcome: string; status_code: number | null; response: string | null }): IdempotentResponse {
  if (claim.outcome === 'reused') throw keyReused();
  if (claim.outcome === 'in_use') throw keyInUse();
  return { status: claim.status_code!, body: claim.response! };
}

/**
 * Runs `effect` in one transaction with the idempotency record of `scope`, or replays the recorded
 * response. The record is locked for the transaction (an advisory lock on account and key), so a
 * concurrent request with the same key answers 409 instead of doing the effect twice.
 */
export async function runIdempotent(
  pool: Pool,
  scope: IdempotencyScope,
  effect: (client: PoolClient) => Promise<IdempotentResponse>,
  ttlMs = IDEMPOTENCY_TTL_MS,
): Promise<{ replayed: boolean; response: IdempotentResponse }> {
  const client = await pool.connect();
  let open = false;
  try {
    await client.query('BEGIN');
    open = true;
    const claim = await claimKey(client, scope);
    if (claim.outcome !== 'fresh') {
      await client.query('ROLLBACK');
      open = false;
      return { replayed: true, response: settledClaim(claim) };
    }
    const response = await effect(client);
    await client.query('SELECT flow_idem_record($1, $2, $3, $4, $5, $6, $7)', [scope.routerAccountId, scope.key, scope.operation, scope.fingerprint, response.status, response.body, ttlMs]);
    await client.query('COMMIT');
    open = false;
    return { replayed: false, response };
  } catch (err) {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Deletes records past their lifetime (the scheduler runs this); returns how many. */
export async function purgeExpiredIdempotencyKeys(pool: Pool, batch = 10_000): Promise<number> {
  const r = await pool.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1)`,
    [batch],
  );
  return r.rowCount ?? 0;
}

// ---- leased records: writes that outlive one transaction ------------------------------------------

/**
 * A key's claim for a write that waits on something outside PostgreSQL (a real-money buy waits on
 * venues), so its record cannot stay locked in one open transaction: the record is committed
 * `running` under a lease its runner renews, and finished with the response.
 *
 * - fresh: nothing recorded; take the lease (leaseKey) in the claim's transaction and run.
 * - resume: the record is running but its lease lapsed (the runner died mid-way): take the lease
 *   over and run again from what the first runner left (the write must be resumable).
 * - replay / reused / in_use: as runIdempotent (in_use while a live runner holds the lease).
 */
export interface LeasedClaim extends Omit<KeyClaim, 'outcome'> {
  outcome: KeyClaim['outcome'] | 'resume';
}

/** Claims `scope` in the caller's transaction (flow_idem_claim_leased, migration 10). */
export async function claimLeasedKey(client: PoolClient, scope: IdempotencyScope): Promise<LeasedClaim> {
  const { rows } = await client.query<LeasedClaim>('SELECT * FROM flow_idem_claim_leased($1, $2, $3, $4)', [scope.routerAccountId, scope.key, scope.operation, scope.fingerprint]);
  return rows[0]!;
}

/** Takes the lease of the key's running record for `owner` (inserting it, or taking a lapsed one over), in the claim's transaction. */
export async function leaseKey(client: PoolClient, scope: IdempotencyScope, owner: string, leaseMs: number, ttlMs = IDEMPOTENCY_TTL_MS): Promise<void> {
  await client.query('SELECT flow_idem_lease($1, $2, $3, $4, $5, $6, $7)', [scope.routerAccountId, scope.key, scope.operation, scope.fingerprint, owner, leaseMs, ttlMs]);
}

/** Extends `owner`'s lease; false when the record is no longer running under it (taken over, or finished). */
export async function renewKeyLease(db: Pool | PoolClient, scope: IdempotencyScope, owner: string, leaseMs: number): Promise<boolean> {
  const r = await db.query(
    `UPDATE idempotency_keys SET lease_until = clock_timestamp() + $4 * interval '1 millisecond'
      WHERE router_account_id = $1 AND idempotency_key = $2 AND state = 'running' AND lease_owner = $3`,
    [scope.routerAccountId, scope.key, owner, leaseMs],
  );
  return r.rowCount === 1;
}

/** Records the response of `owner`'s run; false when another runner took the record over meanwhile. */
export async function finishLeasedKey(db: Pool | PoolClient, scope: IdempotencyScope, owner: string, response: IdempotentResponse): Promise<boolean> {
  const r = await db.query(
    `UPDATE idempotency_keys SET state = 'done', status_code = $4, response = $5, lease_owner = NULL, lease_until = NULL
      WHERE router_account_id = $1 AND idempotency_key = $2 AND state = 'running' AND lease_owner = $3`,
    [scope.routerAccountId, scope.key, owner, response.status, response.body],
  );
  return r.rowCount === 1;
}
