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
    const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 727003)) AS ok', [`${scope.routerAccountId}/${scope.key}`]);
    if (!lock.rows[0]!.ok) throw keyInUse();
    const { rows } = await client.query<{ operation: string; fingerprint: string; state: string; status_code: number | null; response: string | null; live: boolean }>(
      `SELECT operation, fingerprint, state, status_code, response, expires_at > now() AS live
         FROM idempotency_keys WHERE router_account_id = $1 AND idempotency_key = $2`,
      [scope.routerAccountId, scope.key],
    );
    const prior = rows[0];
    if (prior?.live) {
      await client.query('ROLLBACK');
      open = false;
      if (prior.operation !== scope.operation || prior.fingerprint !== scope.fingerprint) throw keyReused();
      if (prior.state !== 'done') throw keyInUse();
      return { replayed: true, response: { status: prior.status_code!, body: prior.response! } };
    }
    if (prior) await client.query('DELETE FROM idempotency_keys WHERE router_account_id = $1 AND idempotency_key = $2', [scope.routerAccountId, scope.key]);
    const response = await effect(client);
    await client.query(
      `INSERT INTO idempotency_keys (router_account_id, idempotency_key, operation, fingerprint, state, status_code, response, expires_at)
       VALUES ($1, $2, $3, $4, 'done', $5, $6, now() + $7 * interval '1 millisecond')`,
      [scope.routerAccountId, scope.key, scope.operation, scope.fingerprint, response.status, response.body, ttlMs],
    );
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
