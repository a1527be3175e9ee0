/** Who is calling: resolved once per request from an API key or a player JWT. */
import type { Environment, KeyType, Plan } from './plans.js';

export interface Principal {
  auth_method: 'api_key' | 'jwt';
  /** null for a JWT caller (no key). */
  key_id: string | null;
  workspace_id: string;
  router_account_id: string;
  plan: Plan;
  key_type: KeyType;
  environment: Environment;
  entitlements: ReadonlySet<string>;
  rate_limit_per_minute: number;
  rate_limit_per_day: number;
}

/** The record cached in Redis (and evaluated by the rate-limit script): plain JSON. */
export interface PrincipalRecord {
  auth_method: 'api_key' | 'jwt';
  key_id: string | null;
  workspace_id: string;
  router_account_id: string;
  plan: Plan;
  key_type: KeyType;
  environment: Environment;
  entitlements: string[];
  rpm: number;
  rpd: number;
  /** Present on a negative cache entry: the key is unknown or revoked. */
  invalid?: 'unknown' | 'revoked';
}

export function principalFromRecord(r: PrincipalRecord): Principal {
  return {
    auth_method: r.auth_method,
    key_id: r.key_id,
    workspace_id: r.workspace_id,
    router_account_id: r.router_account_id,
    plan: r.plan,
    key_type: r.key_type,
    environment: r.environment,
    entitlements: new Set(r.entitlements),
    rate_limit_per_minute: r.rpm,
    rate_limit_per_day: r.rpd,
  };
}
