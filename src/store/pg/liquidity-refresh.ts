/**
 * Liquidity refreshes a fill asks for (migration 12). A fill on a real venue changes the contest's
 * liquidity before any quote says so (the venue's book lost what filled), so clients are told to
 * refetch: a liquidity.update {changed_entries: [], refresh_required: true} on the contest's event
 * log. The fill's transaction writes the request here (one row per contest while one waits, so a
 * burst of fills asks once); the execute role's relay (pipelines/liquidity-refresh/relay.ts)
 * appends it to the log and deletes it in one transaction. A crash in between appends it again (a
 * second refresh is harmless), never loses it.
 */
import type { PoolClient } from './pool.js';

/** The LISTEN/NOTIFY channel a new request notifies at commit (migration 12's trigger). */
export const LIQUIDITY_REFRESH_NOTIFY = 'liquidity_refresh';

/** Asks for a refresh of the contest's liquidity, in the caller's transaction (joins one already waiting). */
export async function requestLiquidityRefresh(client: PoolClient, contestId: string): Promise<void> {
  await client.query('INSERT INTO liquidity_refresh_outbox (contest_id) VALUES ($1) ON CONFLICT (contest_id) DO NOTHING', [contestId]);
}

export interface LiquidityRefresh {
  contest_id: string;
  /** The contest's league (the event's routing field), null when the catalog does not list it. */
  league_id: string | null;
  /** When the (first waiting) fill asked, unix ms: the event's timestamp. */
  requested_at_ms: number;
}

/**
 * Takes up to `limit` waiting requests, oldest first, out of the table in the caller's transaction
 * (rows another relay holds are skipped): committed once they are appended, rolled back (kept) if
 * the append fails.
 */
export async function takeLiquidityRefreshes(client: PoolClient, limit: number): Promise<LiquidityRefresh[]> {
  const { rows } = await client.query<LiquidityRefresh>(
    `WITH taken AS (
       DELETE FROM liquidity_refresh_outbox r
        WHERE r.contest_id IN (SELECT contest_id FROM liquidity_refresh_outbox ORDER BY requested_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING r.contest_id, r.requested_at)
     SELECT t.contest_id, c.league_id, (extract(epoch FROM t.requested_at) * 1000)::float8 AS requested_at_ms
       FROM taken t LEFT JOIN contests c ON c.id = t.contest_id
      ORDER BY t.requested_at`,
    [limit],
  );
  return rows;
}
