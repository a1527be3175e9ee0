/** Workspaces, accounts and API keys. Keys are stored as SHA-256 hashes; the plain key is returned once. */
import { newApiKey, newId, sha256Hex } from '../../ids.js';
import {
  keyEntitlements,
  PLAN_RATE_LIMITS,
  type Environment,
  type KeyType,
  type Plan,
} from '../../domain/plans.js';
import type { PrincipalRecord } from '../../domain/principal.js';
import { inTransaction, type Pool } from './pool.js';

export interface CreateKeyInput {
  plan: Plan;
  keyType: KeyType;
  environment: Environment;
  workspaceId?: string;
  entitlements?: string[];
  rateLimitPerMinute?: number;
  rateLimitPerDay?: number;
  workspaceName?: string;
}

export interface CreatedKey {
  api_key: string;
  key_id: string;
  workspace_id: string;
  router_account_id: string;
  plan: Plan;
  key_type: KeyType;
  environment: Environment;
  entitlements: string[];
  rate_limit_per_minute: number;
  rate_limit_per_day: number;
}

export class KeyInputError extends Error {}

/**
 * The index of valid key hashes that answers unknown keys without PostgreSQL (the Redis key index:
 * RequestGate). It learns a hash before the key exists here, so it never lacks a valid key.
 */
export interface KeyHashIndex {
  indexKeyHash(keyHash: string): Promise<void>;
  unindexKeyHash(keyHash: string): Promise<void>;
}

/** Mints a key. Every key is created through here so the key index stays complete. */
export async function createKey(pool: Pool, index: KeyHashIndex, input: CreateKeyInput): Promise<CreatedKey> {
  const limits = PLAN_RATE_LIMITS[input.plan];
  const rpm = input.rateLimitPerMinute ?? limits.perMinute;
  const rpd = input.rateLimitPerDay ?? limits.perDay;
  if (!(Number.isInteger(rpm) && rpm > 0) || !(Number.isInteger(rpd) && rpd > 0)) {
    throw new KeyInputError('rate limits must be positive integers');
  }
  const entitlements = keyEntitlements(input.plan, input.keyType, input.entitlements);
  const apiKey = newApiKey(input.environment);
  const keyHash = sha256Hex(apiKey);
  const keyId = newId('key');
  await index.indexKeyHash(keyHash);
  try {
    return await insertKey(pool, input, { apiKey, keyHash, keyId, entitlements, rpm, rpd });
  } catch (err) {
    // The key was never created: its hash leaves the index (best effort; a stray hash only costs a lookup).
    await index.unindexKeyHash(keyHash).catch(() => undefined);
    throw err;
  }
}

async function insertKey(
  pool: Pool,
  input: CreateKeyInput,
  k: { apiKey: string; keyHash: string; keyId: string; entitlements: string[]; rpm: number; rpd: number },
): Promise<CreatedKey> {
  const { apiKey, keyHash, keyId, entitlements, rpm, rpd } = k;
  return inTransaction(pool, async (c) => {
    let workspaceId = input.workspaceId;
    if (workspaceId) {
      const ws = await c.query('SELECT id FROM workspaces WHERE id = $1', [workspaceId]);
      if (!ws.rowCount) throw new KeyInputError(`workspace ${workspaceId} does not exist; omit --workspace to create one`);
    } else {
      workspaceId = newId('ws');
      await c.query('INSERT INTO workspaces (id, name, plan) VALUES ($1, $2, $3)', [
        workspaceId,
        input.workspaceName ?? `workspace ${workspaceId}`,
        input.plan,
      ]);
    }
    // One owner account per workspace and environment: test and live money never mix.
    const acct = await c.query<{ router_account_id: string }>(
      `INSERT INTO accounts (router_account_id, workspace_id, environment, is_owner)
       VALUES ($1, $2, $3, true)
       ON CONFLICT (workspace_id, environment) WHERE is_owner DO UPDATE SET is_owner = true
       RETURNING router_account_id`,
      [newId('acct'), workspaceId, input.environment],
    );
    const routerAccountId = acct.rows[0]!.router_account_id;
    await c.query(
      `INSERT INTO api_keys (key_id, workspace_id, router_account_id, key_hash, key_prefix, plan, key_type, environment,
                             entitlements, rate_limit_per_minute, rate_limit_per_day)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
      [keyId, workspaceId, routerAccountId, keyHash, apiKey.slice(0, 12), input.plan, input.keyType, input.environment, entitlements, rpm, rpd],
    );
    return {
      api_key: apiKey,
      key_id: keyId,
      workspace_id: workspaceId,
      router_account_id: routerAccountId,
      plan: input.plan,
      key_type: input.keyType,
      environment: input.environment,
      entitlements,
      rate_limit_per_minute: rpm,
      rate_limit_per_day: rpd,
    };
  });
}

interface KeyRow {
  key_id: string;
  workspace_id: string;
  router_account_id: string;
  plan: Plan;
  key_type: KeyType;
  environment: Environment;
  entitlements: string[];
  rate_limit_per_minute: number;
  rate_limit_per_day: number;
  revoked_at: Date | null;
}

/** The principal record for a key hash, or a negative record for an unknown/revoked key. */
export async function principalRecordForKeyHash(pool: Pool, keyHash: string): Promise<PrincipalRecord | { invalid: 'unknown' | 'revoked' }> {
  const { rows } = await pool.query<KeyRow>(
    `SELECT key_id, workspace_id, router_account_id, plan, key_type, environment, entitlements,
            rate_limit_per_minute, rate_limit_per_day, revoked_at
       FROM api_keys WHERE key_hash = $1`,
    [keyHash],
  );
  const k = rows[0];
  if (!k) return { invalid: 'unknown' };
  if (k.revoked_at) return { invalid: 'revoked' };
  return {
    auth_method: 'api_key',
    key_id: k.key_id,
    workspace_id: k.workspace_id,
    router_account_id: k.router_account_id,
    plan: k.plan,
    key_type: k.key_type,
    environment: k.environment,
    entitlements: k.entitlements,
    rpm: k.rate_limit_per_minute,
    rpd: k.rate_limit_per_day,
  };
}

/**
 * A player JWT acts on its own account with the workspace plan's data entitlements plus
 * trade:execute (the player trades for themselves) and the workspace's default limits.
 */
export async function principalRecordForAccount(pool: Pool, routerAccountId: string): Promise<PrincipalRecord | { invalid: 'unknown' }> {
  const { rows } = await pool.query<{ workspace_id: string; plan: Plan; environment: Environment }>(
    `SELECT a.workspace_id, w.plan, a.environment FROM accounts a JOIN workspaces w ON w.id = a.workspace_id
      WHERE a.router_account_id = $1`,
    [routerAccountId],
  );
  const a = rows[0];
  if (!a) return { invalid: 'unknown' };
  const limits = PLAN_RATE_LIMITS[a.plan];
  return {
    auth_method: 'jwt',
    key_id: null,
    workspace_id: a.workspace_id,
    router_account_id: routerAccountId,
    plan: a.plan,
    key_type: 'execution',
    environment: a.environment,
    entitlements: keyEntitlements(a.plan, 'execution'),
    rpm: limits.perMinute,
    rpd: limits.perDay,
  };
}

/** Marks a key revoked. Returns its hash (to evict caches) or null when no live key had that id. */
export async function revokeKey(pool: Pool, keyId: string): Promise<string | null> {
  const { rows } = await pool.query<{ key_hash: string }>(
    'UPDATE api_keys SET revoked_at = now() WHERE key_id = $1 AND revoked_at IS NULL RETURNING key_hash',
    [keyId],
  );
  return rows[0]?.key_hash ?? null;
}

/** Hashes of every key not revoked: what the key index is rebuilt from. */
export async function liveKeyHashes(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE revoked_at IS NULL');
  return rows.map((r) => r.key_hash);
}

export interface KeyListing {
  key_id: string;
  key_prefix: string;
  plan: Plan;
  key_type: KeyType;
  environment: Environment;
  entitlements: string[];
  rate_limit_per_minute: number;
  rate_limit_per_day: number;
  created_at: string;
  revoked_at: string | null;
}

export async function listKeys(pool: Pool, workspaceId: string): Promise<KeyListing[]> {
  const { rows } = await pool.query(
    `SELECT key_id, key_prefix, plan, key_type, environment, entitlements, rate_limit_per_minute, rate_limit_per_day,
            created_at, revoked_at
       FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, key_id`,
    [workspaceId],
  );
  return rows.map((r) => ({
    ...r,
    created_at: (r.created_at as Date).toISOString(),
    revoked_at: r.revoked_at ? (r.revoked_at as Date).toISOString() : null,
  }));
}
