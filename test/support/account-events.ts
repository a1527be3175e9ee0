/** Reading what the account-event relay did: rows left in the outbox, account events in the feed. */
import { EventLogReader, type AccountLogEvent } from '../../src/store/redis/eventlog.js';
import type { TestStack } from './stack.js';

export const outboxRows = async (s: TestStack): Promise<number> => Number((await s.rt.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM account_outbox')).rows[0]!.n);

/** Every account event in the feed, in feed order. */
export async function feedAccountEvents(s: TestStack): Promise<AccountLogEvent[]> {
  const reader = new EventLogReader(s.rt.redis, s.rt.ks);
  const out: AccountLogEvent[] = [];
  for (let after = '0-0'; ; ) {
    const b = await reader.readFeed(after, 1, 1_000);
    if (b.feedId === after) return out;
    out.push(...b.accountEvents);
    after = b.feedId;
  }
}
