/**
 * Performance attribution from the orders table (src/domain/performance.ts has the definitions,
 * docs/performance.md the worked example). One statement: the sums per currency and per group in
 * PostgreSQL numeric (GROUPING SETS, so a group and its currency's total come from the same rows),
 * and the unsettled orders per currency, as exact decimal text; numbers are made of the text at the
 * edge, as every money read does.
 *
 * Which orders: the account's (and the model's, for a model's performance) settled orders whose
 * settled_at lies in the window, since a P/L is realized when the order settles; for pending_count,
 * the unsettled ones (status pending or open) created in the window. Both ranges are read through
 * the account's indexes (orders_account_settled, orders_account_newest).
 */
import type { Currency } from '../../domain/account.js';
import {
  NO_MODEL_GROUP,
  PERFORMANCE_CURRENCIES,
  performanceBucket,
  ROI_DECIMALS,
  UNKNOWN_LEAGUE_GROUP,
  UNTYPED_OPPORTUNITY_GROUP,
  ZERO_FIGURES,
  type GroupBy,
  type PerformanceBucket,
  type PerformanceFigures,
  type PerformanceGroup,
} from '../../domain/performance.js';
import type { Pool, PoolClient } from './pool.js';

type Queryable = Pool | PoolClient;

export interface PerformanceQuery {
  routerAccountId: string;
  /** Only this model's orders (the caller has checked that the model is the account's). */
  modelId?: string;
  /** ISO 8601, inclusive. */
  from: string;
  to: string;
  groupBy: GroupBy;
}

/** A group's key and label as SQL over the settled orders `o`, and the joins they need. */
interface Grouping {
  key: string;
  label: string;
  joins: string;
}

/**
 * The group of each settled order. Labels are the names as the catalog and the models have them
 * now (a renamed model's orders group under its new name; the key never changes).
 */
function groupingOf(groupBy: Exclude<GroupBy, 'none'>, p: (v: unknown) => string): Grouping {
  switch (groupBy) {
    case 'league':
      return {
        key: `coalesce(c.league_id, ${p(UNKNOWN_LEAGUE_GROUP.key)})`,
        label: `coalesce(l.name, c.league_id, ${p(UNKNOWN_LEAGUE_GROUP.label)})`,
        joins: 'LEFT JOIN contests c ON c.id = o.contest_id LEFT JOIN leagues l ON l.id = c.league_id',
      };
    case 'model':
      return { key: `coalesce(o.model_id, ${p(NO_MODEL_GROUP.key)})`, label: `coalesce(m.model_name, ${p(NO_MODEL_GROUP.label)})`, joins: 'LEFT JOIN models m ON m.model_id = o.model_id' };
    case 'day': {
      // The UTC calendar day of the settlement.
      const day = `to_char(o.settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
      return { key: day, label: day, joins: '' };
    }
    case 'partner':
      // The book the order filled on: the venue, or the practice book for ATLAS orders.
      return { key: 'o.partner_id', label: 'coalesce(pt.name, o.partner_id)', joins: 'LEFT JOIN partners pt ON pt.partner_id = o.partner_id' };
    case 'opportunity_type':
      return { key: p(UNTYPED_OPPORTUNITY_GROUP.key), label: p(UNTYPED_OPPORTUNITY_GROUP.label), joins: '' };
  }
}

interface Row {
  kind: 'total' | 'group' | 'pending';
  currency: Currency;
  key: string | null;
  label: string | null;
  staked: string | null;
  net_pl: string | null;
  roi: string | null;
  settled_count: number;
  wins: number;
  losses: number;
  pushes: number;
  cancelled: number;
}

const figuresOf = (r: Row): PerformanceFigures => ({
  staked: Number(r.staked),
  net_pl: Number(r.net_pl),
  roi: Number(r.roi),
  settled_count: r.settled_count,
  wins: r.wins,
  losses: r.losses,
  pushes: r.pushes,
});

/** The account's performance buckets, USD then ATLAS (a currency with no order reads zero). */
export async function accountPerformance(db: Queryable, q: PerformanceQuery): Promise<PerformanceBucket[]> {
  const params: unknown[] = [q.routerAccountId, q.from, q.to];
  const p = (v: unknown) => `$${params.push(v)}`;
  const model = q.modelId !== undefined ? `AND o.model_id = ${p(q.modelId)}` : '';
  const g = q.groupBy === 'none' ? null : groupingOf(q.groupBy, p);
  // With no grouping, the totals alone (one grouping set).
  const sets = g ? 'GROUPING SETS ((currency), (currency, gkey, glabel))' : 'currency';
  const head = g ? `CASE WHEN grouping(gkey, glabel) = 0 THEN 'group' ELSE 'total' END AS kind, currency, gkey, glabel` : `'total' AS kind, currency, NULL::text AS gkey, NULL::text AS glabel`;
  const { rows } = await db.query<Row>(
    `WITH s AS (
       SELECT o.currency, o.result, o.filled_notional, o.net_winnings,
              ${g ? g.key : 'NULL::text'} AS gkey, ${g ? g.label : 'NULL::text'} AS glabel
         FROM orders o ${g ? g.joins : ''}
        WHERE o.router_account_id = $1 AND o.settled_at IS NOT NULL
          AND o.settled_at >= $2::timestamptz AND o.settled_at <= $3::timestamptz ${model}),
     f AS (
       SELECT ${head},
              coalesce(sum(filled_notional) FILTER (WHERE result IN ('win', 'lose')), 0) AS staked,
              coalesce(sum(net_winnings - filled_notional), 0) AS net_pl,
              count(*)::int AS settled_count,
              count(*) FILTER (WHERE result = 'win')::int AS wins,
              count(*) FILTER (WHERE result = 'lose')::int AS losses,
              count(*) FILTER (WHERE result = 'push')::int AS pushes,
              count(*) FILTER (WHERE result = 'cancelled')::int AS cancelled
         FROM s GROUP BY ${sets})
     SELECT kind, currency, gkey AS key, glabel AS label, trim_scale(staked)::text AS staked, trim_scale(net_pl)::text AS net_pl,
            trim_scale(CASE WHEN staked = 0 THEN 0 ELSE round(net_pl / staked, ${ROI_DECIMALS}) END)::text AS roi,
            settled_count, wins, losses, pushes, cancelled
       FROM f
     UNION ALL
     SELECT 'pending', o.currency, NULL, NULL, NULL, NULL, NULL, count(*)::int, 0, 0, 0, 0
       FROM orders o
      WHERE o.router_account_id = $1 AND o.settled_at IS NULL AND o.status IN ('pending', 'open')
        AND o.created_at >= $2::timestamptz AND o.created_at <= $3::timestamptz ${model}
      GROUP BY o.currency`,
    params,
  );
  return PERFORMANCE_CURRENCIES.map((currency) => {
    const mine = rows.filter((r) => r.currency === currency);
    const total = mine.find((r) => r.kind === 'total');
    const groups: PerformanceGroup[] = mine
      .filter((r) => r.kind === 'group')
      .map((r) => ({ key: r.key!, label: r.label!, ...figuresOf(r) }))
      // By key, in code-unit order (days chronologically), whatever the database's collation.
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return performanceBucket(currency, total ? figuresOf(total) : ZERO_FIGURES, {
      // The pending row carries its count in settled_count's column (one UNION shape).
      pending_count: mine.find((r) => r.kind === 'pending')?.settled_count ?? 0,
      cancelled: total?.cancelled ?? 0,
      groups,
    });
  });
}
