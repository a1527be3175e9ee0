/**
 * The AI provider keys accounts link (docs/ai.md, "Your own provider key"), encrypted at rest:
 * AES-256-GCM under a key derived from FLOW_AI_KEY_SECRET, with the row's account and provider as
 * associated data (a ciphertext moved to another row does not decrypt). PostgreSQL never sees a
 * key in the clear, and nothing here logs one.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { AiProvider } from '../../domain/ai.js';
import { isoUtc } from './sql.js';
import type { Pool } from './pool.js';

export interface LinkedAiKey {
  provider: AiProvider;
  /** The key's last four characters. */
  key_hint: string;
  linked_at: string;
}

export class AiKeyInputError extends Error {}

const IV_BYTES = 12;
const TAG_BYTES = 16;

const keyOf = (secret: string): Buffer => createHash('sha256').update(`flow-ai-provider-key:v1:${secret}`).digest();
const aad = (routerAccountId: string, provider: AiProvider): Buffer => Buffer.from(`${routerAccountId}\u0000${provider}`);

export function encryptAiKey(secret: string, routerAccountId: string, provider: AiProvider, apiKey: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  cipher.setAAD(aad(routerAccountId, provider));
  const body = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The key, or null when it does not decrypt (FLOW_AI_KEY_SECRET changed since it was linked). */
export function decryptAiKey(secret: string, routerAccountId: string, provider: AiProvider, box: Buffer): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), box.subarray(0, IV_BYTES));
    decipher.setAAD(aad(routerAccountId, provider));
    decipher.setAuthTag(box.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(box.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** A provider key is printable ASCII without spaces, as every provider issues them. */
export function checkAiKey(apiKey: string): void {
  if (!/^[\x21-\x7e]{8,500}$/.test(apiKey)) throw new AiKeyInputError('a provider key is 8 to 500 printable ASCII characters without spaces');
}

/** Links (or replaces) the account's key for a provider. */
export async function linkAiKey(pool: Pool, secret: string, input: { routerAccountId: string; provider: AiProvider; apiKey: string }): Promise<LinkedAiKey> {
  checkAiKey(input.apiKey);
  const { rows: acct } = await pool.query('SELECT 1 FROM accounts WHERE router_account_id = $1', [input.routerAccountId]);
  if (acct.length === 0) throw new AiKeyInputError(`no account ${input.routerAccountId}`);
  const box = encryptAiKey(secret, input.routerAccountId, input.provider, input.apiKey);
  const { rows } = await pool.query<LinkedAiKey>(
    `INSERT INTO ai_provider_keys (router_account_id, provider, key_ciphertext, key_hint) VALUES ($1, $2, $3, $4)
     ON CONFLICT (router_account_id, provider) DO UPDATE SET key_ciphertext = EXCLUDED.key_ciphertext, key_hint = EXCLUDED.key_hint, linked_at = now()
     RETURNING provider, key_hint, ${isoUtc('linked_at')} AS linked_at`,
    [input.routerAccountId, input.provider, box, input.apiKey.slice(-4)],
  );
  return rows[0]!;
}

export async function unlinkAiKey(pool: Pool, routerAccountId: string, provider: AiProvider): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM ai_provider_keys WHERE router_account_id = $1 AND provider = $2', [routerAccountId, provider]);
  return (rowCount ?? 0) > 0;
}

export async function listAiKeys(pool: Pool, routerAccountId: string): Promise<LinkedAiKey[]> {
  const { rows } = await pool.query<LinkedAiKey>(
    `SELECT provider, key_hint, ${isoUtc('linked_at')} AS linked_at FROM ai_provider_keys WHERE router_account_id = $1 ORDER BY provider`,
    [routerAccountId],
  );
  return rows;
}

/** The account's own key for the provider: absent, unreadable (secret changed), or the key. */
export async function ownAiKey(pool: Pool, secret: string, routerAccountId: string, provider: AiProvider): Promise<{ kind: 'none' } | { kind: 'unreadable' } | { kind: 'key'; key: string }> {
  const { rows } = await pool.query<{ key_ciphertext: Buffer }>('SELECT key_ciphertext FROM ai_provider_keys WHERE router_account_id = $1 AND provider = $2', [routerAccountId, provider]);
  if (!rows[0]) return { kind: 'none' };
  const key = decryptAiKey(secret, routerAccountId, provider, rows[0].key_ciphertext);
  return key === null ? { kind: 'unreadable' } : { kind: 'key', key };
}
