/**
 * Account events (balance, orders) are written here in the transaction of the change they report;
 * a relay appends them to the Redis event log and deletes them. A crash between the two repeats an
 * event (its balance_version lets clients drop the copy), never loses one.
 */
import type { PoolClient } from './pool.js';

export type AccountChannel = 'balance' | 'orders';

export async function enqueueAccountEvent(client: PoolClient, routerAccountId: string, channel: AccountChannel, event: object): Promise<void> {
  await client.query('INSERT INTO account_outbox (router_account_id, channel, event) VALUES ($1, $2, $3)', [routerAccountId, channel, JSON.stringify(event)]);
}
