/** Keys and accounts for the account-route tests: execution and data keys, organizations and their users. */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Plan } from '../../src/domain/plans.js';
import { createKey, type CreatedKey } from '../../src/store/pg/keys.js';
import type { TestStack } from './stack.js';

/** A key of its own new workspace, with a rate limit no test reaches. */
export const accountKey = (s: TestStack, keyType: 'data' | 'execution' = 'execution', extra: { plan?: Plan; entitlements?: string[] } = {}): Promise<CreatedKey> =>
  createKey(s.rt.pool, s.rt.gate, { plan: 'scale', keyType, environment: 'test', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000, ...extra });

/** The headers that authenticate as `k`, plus any others. */
export const keyHeaders = (k: CreatedKey, extra: Record<string, string> = {}): Record<string, string> => ({ 'x-api-key': k.api_key, ...extra });

/** A user (sub-account) of `org`'s workspace, as the hosted connect flow would leave it; returns its router_account_id. */
export async function organizationUser(s: TestStack, org: CreatedKey, externalUserId: string): Promise<string> {
  const id = `acct_${randomUUID()}`;
  await s.rt.pool.query("INSERT INTO accounts (router_account_id, workspace_id, environment, external_user_id) VALUES ($1, $2, 'test', $3)", [id, org.workspace_id, externalUserId]);
  return id;
}

/**
 * Answers to concurrent requests sharing one Idempotency-Key: at least one `success` (201 unless
 * told), every one of them the same bytes, every other answer 409 idempotency_key_in_use. Returns
 * the successful answer.
 */
export function expectOneEffect(answers: { status: number; body: string }[], success = 201): { status: number; body: string } {
  const ok = answers.filter((a) => a.status === success);
  expect(ok.length).toBeGreaterThanOrEqual(1);
  expect(new Set(ok.map((a) => a.body)).size).toBe(1);
  for (const a of answers.filter((x) => x.status !== success)) {
    expect(a.status).toBe(409);
    expect((JSON.parse(a.body) as { error: { code: string } }).error.code).toBe('idempotency_key_in_use');
  }
  return ok[0]!;
}
