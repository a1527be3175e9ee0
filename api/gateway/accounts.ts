/**
 * Account ownership for the private channels (orders, balance): which accounts an organization key
 * may watch. Reads PostgreSQL (the accounts table is the source of truth); an account's workspace and
 * environment never change, so positive answers are cached for the life of the process (bounded).
 */
import type { Environment } from '../../src/domain/plans.js';
import type { Pool } from '../../src/store/pg/pool.js';

export interface AccountOwner {
  workspace_id: string;
  environment: Environment;
}

const MAX_CACHED = 50_000;
const NEGATIVE_TTL_MS = 30_000;

export class AccountDirectory {
  private readonly owners = new Map<string, AccountOwner>();
  private readonly unknown = new Map<string, number>();

  constructor(private readonly pool: Pool) {}

  /** The workspace and environment of an account, or null when no such account exists. */
  async ownerOf(routerAccountId: string, nowMs: number): Promise<AccountOwner | null> {
    const hit = this.owners.get(routerAccountId);
    if (hit) return hit;
    const miss = this.unknown.get(routerAccountId);
    if (miss !== undefined && miss > nowMs) return null;
    const { rows } = await this.pool.query<AccountOwner>('SELECT workspace_id, environment FROM accounts WHERE router_account_id = $1', [routerAccountId]);
    const owner = rows[0] ?? null;
    if (owner) {
      if (this.owners.size >= MAX_CACHED) this.owners.clear();
      this.owners.set(routerAccountId, owner);
    } else {
      if (this.unknown.size >= MAX_CACHED) this.unknown.clear();
      this.unknown.set(routerAccountId, nowMs + NEGATIVE_TTL_MS);
    }
    return owner;
  }

  /**
   * Maps ids a caller named (router_account_id, svc_account_id or external_user_id) to the accounts
   * of the workspace and environment. `foreign` lists ids that name no account the workspace owns,
   * without saying whether they exist elsewhere (spec: account_forbidden either way).
   */
  async resolve(workspaceId: string, environment: Environment, ids: string[]): Promise<{ accounts: string[]; foreign: string[] }> {
    const { rows } = await this.pool.query<{ router_account_id: string; external_user_id: string | null }>(
      `SELECT router_account_id, external_user_id FROM accounts
        WHERE workspace_id = $1 AND environment = $2 AND (router_account_id = ANY($3) OR external_user_id = ANY($3))`,
      [workspaceId, environment, ids],
    );
    const byId = new Map<string, string>();
    for (const r of rows) {
      byId.set(r.router_account_id, r.router_account_id);
      if (r.external_user_id) byId.set(r.external_user_id, r.router_account_id);
      this.owners.set(r.router_account_id, { workspace_id: workspaceId, environment });
    }
    const accounts = new Set<string>();
    const foreign: string[] = [];
    for (const id of ids) {
      const a = byId.get(id);
      if (a) accounts.add(a);
      else foreign.push(id);
    }
    return { accounts: [...accounts], foreign };
  }
}
