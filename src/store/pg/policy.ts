/**
 * An account's trade grants (per venue connection, account_partners.scopes) and its
 * execution-limit policy (execution_limits, migration 11), and the open exposure the per-venue and
 * per-league limits count. The rules are src/domain/execution-limits.ts; this is their storage.
 */
import { microsText, parseMicros, type Micros } from '../../domain/money.js';
import type { AccountPolicy, ExecutionLimit, UserGrant } from '../../domain/execution-limits.js';
import { countsExposure } from '../../domain/execution-limits.js';
import { lockAccount } from './accounts.js';
import { inTransaction, type Pool, type PoolClient } from './pool.js';

type Queryable = Pool | PoolClient;

interface LimitRow {
  type: ExecutionLimit['type'];
  partner_id: string | null;
  league_id: string | null;
  amount: string | null;
}

const fromRow = (r: LimitRow): ExecutionLimit => {
  const amount = r.amount === null ? 0n : parseMicros(r.amount).micros;
  switch (r.type) {
    case 'max_stake_per_order':
      return { type: r.type, amount };
    case 'max_stake_per_venue':
      return { type: r.type, partner_id: r.partner_id!, amount };
    case 'max_stake_per_league':
      return { type: r.type, league_id: r.league_id!, amount };
    case 'practice_only':
      return { type: r.type };
  }
};

/** The account's limits, in the order they were set. */
export async function readLimits(db: Queryable, routerAccountId: string): Promise<ExecutionLimit[]> {
  const { rows } = await db.query<LimitRow>('SELECT type, partner_id, league_id, amount::text FROM execution_limits WHERE router_account_id = $1 ORDER BY position', [routerAccountId]);
  return rows.map(fromRow);
}

/**
 * Replaces the account's limits with `limits` (already checked), in one transaction under the
 * account's row lock, so two writers never leave a mix of both. false when there is no such account.
 */
export async function replaceLimits(pool: Pool, routerAccountId: string, limits: readonly ExecutionLimit[]): Promise<boolean> {
  return inTransaction(pool, async (c) => {
    if (!(await lockAccount(c, routerAccountId))) return false;
    await c.query('DELETE FROM execution_limits WHERE router_account_id = $1', [routerAccountId]);
    if (limits.length > 0) {
      const col = <T>(f: (l: ExecutionLimit) => T) => limits.map(f);
      await c.query(
        `INSERT INTO execution_limits (router_account_id, position, type, partner_id, league_id, amount)
         SELECT $1, t.ord - 1, t.type, t.partner_id, t.league_id, t.amount
           FROM unnest($2::text[], $3::text[], $4::text[], $5::numeric[]) WITH ORDINALITY AS t(type, partner_id, league_id, amount, ord)`,
        [
          routerAccountId,
          col((l) => l.type),
          col((l) => (l.type === 'max_stake_per_venue' ? l.partner_id : null)),
          col((l) => (l.type === 'max_stake_per_league' ? l.league_id : null)),
          col((l) => (l.type === 'practice_only' ? null : microsText(l.amount))),
        ],
      );
    }
    return true;
  });
}

/**
 * Serializes, until the transaction ends, the writers of the account's real-money intents that
 * check its limits: the check and the intent it lets through happen as one step, so two buys at
 * once cannot both fit under a per-venue or per-league limit that only one of them fits.
 */
export async function lockAccountLimits(c: PoolClient, routerAccountId: string): Promise<void> {
  await c.query("SELECT pg_advisory_xact_lock(hashtextextended('flow.limits/' || $1, 0))", [routerAccountId]);
}

/**
 * The account's policy for the order checks: its limits and, when one of them counts it, the open
 * real-money exposure on the venues and leagues they name. An order's open exposure is what it
 * booked (filled_notional) plus, while it still works at the venue (resting or pending, not
 * cancelled), its unfilled remainder; it stops counting once the order settles. Failed orders
 * booked nothing and count 0.
 */
export async function accountPolicy(db: Queryable, routerAccountId: string): Promise<AccountPolicy> {
  const limits = await readLimits(db, routerAccountId);
  const venues = new Map<string, Micros>();
  const leagues = new Map<string, Micros>();
  if (countsExposure(limits)) {
    const venueIds = limits.flatMap((l) => (l.type === 'max_stake_per_venue' ? [l.partner_id] : []));
    const leagueIds = limits.flatMap((l) => (l.type === 'max_stake_per_league' ? [l.league_id] : []));
    const { rows } = await db.query<{ partner_id: string; league_id: string; exposure: string }>(
      `SELECT o.partner_id, c.league_id,
              sum(o.filled_notional + CASE WHEN o.leg_status IN ('resting','pending') AND o.cancelled_at IS NULL THEN o.unfilled_notional ELSE 0 END)::text AS exposure
         FROM orders o JOIN contests c ON c.id = o.contest_id
        WHERE o.router_account_id = $1 AND o.mode = 'real' AND o.settled_at IS NULL
          AND (o.partner_id = ANY($2::text[]) OR c.league_id = ANY($3::text[]))
        GROUP BY o.partner_id, c.league_id`,
      [routerAccountId, venueIds, leagueIds],
    );
    for (const r of rows) {
      const m = parseMicros(r.exposure).micros;
      venues.set(r.partner_id, (venues.get(r.partner_id) ?? 0n) + m);
      leagues.set(r.league_id, (leagues.get(r.league_id) ?? 0n) + m);
    }
  }
  return { limits, exposure: { venues, leagues } };
}

/** Of `partnerIds`, the venues the account is connected to without `grant` (a venue without a connection is not listed). */
export async function venuesWithoutGrant(db: Queryable, routerAccountId: string, partnerIds: readonly string[], grant: UserGrant): Promise<Set<string>> {
  if (partnerIds.length === 0) return new Set();
  const { rows } = await db.query<{ partner_id: string }>(
    'SELECT partner_id FROM account_partners WHERE router_account_id = $1 AND partner_id = ANY($2::text[]) AND NOT ($3 = ANY(scopes))',
    [routerAccountId, partnerIds, grant],
  );
  return new Set(rows.map((r) => r.partner_id));
}
