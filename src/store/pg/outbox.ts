/**
 * Account events (balance, orders) are written here in the transaction of the change they report;
 * the account-event relay (pipelines/account-events/relay.ts) appends them to the Redis event log
 * and deletes them. A crash between the two repeats an event (its balance_version lets clients drop
 * the copy), never loses one.
 *
 * Every insert NOTIFYs ACCOUNT_OUTBOX_NOTIFY (a trigger, migration 7, so SQL functions that write
 * events notify too): PostgreSQL delivers it at commit (never for a rolled-back write), so an idle
 * relay wakes at once instead of on its poll. A write may send it after its commit instead
 * (OutboxWaker): the one-statement practice buy does.
 */
import type { AccountChannel } from '../../domain/stream.js';
import type { Pool, PoolClient } from './pool.js';

export type { AccountChannel };

/** The LISTEN/NOTIFY channel of the outbox (per database, so each deployment and test has its own). */
export const ACCOUNT_OUTBOX_NOTIFY = 'account_outbox';

/**
 * Wakes the relay for events whose write left the NOTIFY to its caller (flow_paper_buy sets
 * flow.outbox_wake, migration 13): a NOTIFY of its own (flow_account_outbox_wake) once the write
 * committed, so that commit does not hold PostgreSQL's cluster-wide NOTIFY lock through its WAL
 * flush. An idle waker sends at once; wakes asked for while one is in flight, or within gapMs of
 * the last, become one more sent after it, so every commit is followed by a NOTIFY sent after it,
 * at most one per gapMs under load (when the relay is busy draining anyway). A wake that fails (or
 * a process that dies first) is covered by the relay's poll.
 */
export class OutboxWaker {
  /** idle; a send scheduled (it comes after every commit that asks now); a send in flight (it may not). */
  private state: 'idle' | 'scheduled' | 'sending' = 'idle';
  private again = false;
  private lastSentAt = -Infinity;

  constructor(
    private readonly pool: Pool,
    private readonly gapMs = 5,
    private readonly now: () => number = () => performance.now(),
  ) {}

  wake(): void {
    if (this.state === 'scheduled') return;
    if (this.state === 'sending') {
      this.again = true;
      return;
    }
    const wait = this.lastSentAt + this.gapMs - this.now();
    if (wait <= 0) return this.send();
    this.state = 'scheduled';
    setTimeout(() => this.send(), wait).unref();
  }

  private send(): void {
    this.state = 'sending';
    this.lastSentAt = this.now();
    this.pool
      .query('SELECT flow_account_outbox_wake()')
      .catch(() => undefined)
      .finally(() => {
        this.state = 'idle';
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }
}

export async function enqueueAccountEvent(client: PoolClient, routerAccountId: string, channel: AccountChannel, event: object): Promise<void> {
  await client.query('INSERT INTO account_outbox (router_account_id, channel, event) VALUES ($1, $2, $3)', [routerAccountId, channel, JSON.stringify(event)]);
}

/** An outbox row a relay holds until its transaction ends. */
export interface ClaimedAccountEvent {
  seq: number;
  router_account_id: string;
  channel: AccountChannel;
  /** The event JSON as a client receives it. */
  event: string;
  /** How long the row has waited (ms), as PostgreSQL's clock has it. */
  age_ms: number;
}

/** Namespace of the per-account advisory locks relays take (two-key form, so it cannot meet the migration lock). */
const RELAY_LOCK_NAMESPACE = 727002;

/**
 * Locks and returns up to `limit` rows, oldest first, for the rest of the transaction `client` is
 * in. Several relays can run, and an account's events still reach the log in order:
 *
 *  1. take the advisory lock of each account among the oldest `limit` rows that no other relay
 *     holds (held until the transaction ends);
 *  2. in a second statement, so with a snapshot taken after those locks (it sees every delete the
 *     accounts' previous holders committed), the oldest rows of those accounts, FOR UPDATE SKIP
 *     LOCKED.
 *
 * One statement would not do: a lock another relay releases mid-scan would let this one take an
 * account's later rows while it had already passed over earlier ones. A relay that finds every
 * account of the oldest rows held gets nothing and looks again later; the holder is draining them.
 */
export async function claimAccountEvents(client: PoolClient, limit: number): Promise<ClaimedAccountEvent[]> {
  const locked = await client.query<{ account: string }>(
    `SELECT account FROM (SELECT DISTINCT router_account_id AS account FROM (SELECT router_account_id FROM account_outbox ORDER BY seq LIMIT $1) oldest) candidates
      WHERE pg_try_advisory_xact_lock(${RELAY_LOCK_NAMESPACE}, hashtext(account))`,
    [limit],
  );
  if (locked.rows.length === 0) return [];
  const { rows } = await client.query<ClaimedAccountEvent>(
    `SELECT seq, router_account_id, channel, event, (extract(epoch FROM clock_timestamp() - created_at) * 1000)::float8 AS age_ms
       FROM account_outbox
      WHERE router_account_id = ANY($2::text[])
      ORDER BY seq
      LIMIT $1
        FOR UPDATE SKIP LOCKED`,
    [limit, locked.rows.map((r) => r.account)],
  );
  // jsonb comes back parsed: serialized once here, compact (jsonb keeps keys shortest first, so `type` leads).
  return rows.map((r) => ({ ...r, event: JSON.stringify(r.event) }));
}

/** Deletes relayed rows (in the claiming transaction, once their append landed). */
export async function deleteAccountEvents(client: PoolClient, seqs: readonly number[]): Promise<void> {
  await client.query('DELETE FROM account_outbox WHERE seq = ANY($1::bigint[])', [seqs]);
}
