/** Account-wide serialization shared by the account records (wallet, models). */
import type { PoolClient } from './pool.js';

/**
 * Takes the account's lock for the rest of the transaction `client` is in: FOR NO KEY UPDATE on the
 * account row. Changes bounded per account (the wallet balance, the active-model cap) queue here,
 * while inserts that only reference the account (keys, models, opportunities: FOR KEY SHARE) are not
 * held up. False when the account does not exist.
 */
export async function lockAccount(client: PoolClient, routerAccountId: string): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM accounts WHERE router_account_id = $1 FOR NO KEY UPDATE', [routerAccountId]);
  return Boolean(rowCount);
}
