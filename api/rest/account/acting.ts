/**
 * Who an /auth/* call acts for, and the checks every account write shares (spec "Authentication").
 *
 * - A player JWT acts on its own account.
 * - A key acts on its own account (owner_self), or, for an organization key with the
 *   X-Service-Account header, on the named sub-account of its workspace and environment, named by
 *   external_user_id or svc_account_id (router_account_id). Any other name, and the header on a key
 *   that is not an organization's, is 403 account_forbidden, whether or not the account exists.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../../../src/errors.js';
import type { Principal } from '../../../src/domain/principal.js';
import type { Pool } from '../../../src/store/pg/pool.js';
import { isSafeId } from '../schemas.js';

export const SERVICE_ACCOUNT_HEADER = 'x-service-account';

/** Route config of a read of the own account: account:read, exempt from the daily budget (spec "Limits"). */
export const ACCOUNT_READ = { entitlements: ['account:read'], dayExempt: true };
/** Route config of an account write. Only an execution key holds trade:execute (keyEntitlements strips it from data keys, overrides too). */
export const ACCOUNT_WRITE = { entitlements: ['trade:execute'] };

const accountForbidden = (name: string) =>
  new ApiError(403, 'account_forbidden', `this key may not act for ${JSON.stringify(name)}`, { account: name });

/** Organization keys carry the connect:* entitlements (operator interface, plans). */
export const isOrganizationKey = (p: Principal) => p.auth_method === 'api_key' && (p.entitlements.has('connect:read') || p.entitlements.has('connect:write') || p.entitlements.has('connect:trade'));

/** The router_account_id the request books against. */
export function actingAccount(req: FastifyRequest, pool: Pool): Promise<string> {
  return actingAccountOf(req.principal, req.headers[SERVICE_ACCOUNT_HEADER], pool);
}

/** The account a principal acts for, given the X-Service-Account header's value (a REST request's, or an MCP request's). */
export async function actingAccountOf(p: Principal, raw: string | string[] | undefined, pool: Pool): Promise<string> {
  if (raw === undefined) return p.router_account_id;
  const name = Array.isArray(raw) ? raw[0] ?? '' : raw;
  if (!isSafeId(name)) throw badRequest('invalid_request', 'X-Service-Account must be an external_user_id or svc_account_id of 1-200 printable characters');
  if (name === p.router_account_id) return name;
  if (!isOrganizationKey(p)) throw accountForbidden(name);
  const { rows } = await pool.query<{ router_account_id: string }>(
    `SELECT router_account_id FROM accounts
      WHERE workspace_id = $1 AND environment = $2 AND (external_user_id = $3 OR router_account_id = $3)
      LIMIT 1`,
    [p.workspace_id, p.environment, name],
  );
  const acct = rows[0]?.router_account_id;
  if (!acct) throw accountForbidden(name);
  return acct;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request's Idempotency-Key, lower-cased; 400 idempotency_key_required when missing or not a UUID. */
export function idempotencyKey(req: FastifyRequest): string {
  const raw = req.headers['idempotency-key'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (typeof v !== 'string' || !UUID.test(v)) {
    throw badRequest('idempotency_key_required', 'send an Idempotency-Key header holding a UUID, one per logical request (the same key again replays the first answer)');
  }
  return v.toLowerCase();
}
