/**
 * Performance attribution (spec "Performance bucket (per currency)", docs/performance.md): how an
 * account's settled orders did, one bucket per currency (USD real money and ATLAS practice money are
 * never summed or blended), each split into groups. Shapes and rules only; the sums run in
 * PostgreSQL numeric (src/store/pg/performance.ts).
 *
 * Per order (money exact, as numeric):
 *   staked  += filled_notional                     for a settled win or lose (the booked stake)
 *   net_pl  += net_winnings − filled_notional      for every settled order (a push's fee is a loss)
 *   roi      = net_pl / staked, rounded to 6 places; 0 when staked is 0
 */
import { FUNDING, type Currency, type Funding } from './account.js';

/** The group_by tokens (operator interface "Paths the spec names but does not show"). */
export const GROUP_BYS = ['none', 'league', 'model', 'day', 'partner', 'opportunity_type'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];

/** Buckets come in this order, both always present: a client finds its currency without searching for it. */
export const PERFORMANCE_CURRENCIES: readonly Currency[] = ['USD', 'ATLAS'];

/** The group of orders filed under no model (spec: "Orders with no model group under a label for no model"). */
export const NO_MODEL_GROUP = { key: 'no_model', label: 'No model' } as const;
/** An order whose contest the catalog does not hold (never one placed through the buy). */
export const UNKNOWN_LEAGUE_GROUP = { key: 'unknown_league', label: 'Unknown league' } as const;
/** Opportunities carry no type in this build, so group_by=opportunity_type gives one group. */
export const UNTYPED_OPPORTUNITY_GROUP = { key: 'untyped', label: 'No opportunity type' } as const;

/** Spec: from defaults to 90 days ago. */
export const DEFAULT_PERFORMANCE_WINDOW_MS = 90 * 24 * 60 * 60_000;

/** ROI is a ratio (0.25 = 25 %) rounded half away from zero to this many decimals. */
export const ROI_DECIMALS = 6;

export interface PerformanceFigures {
  staked: number;
  net_pl: number;
  roi: number;
  settled_count: number;
  wins: number;
  losses: number;
  pushes: number;
}

/** A group: {key, label, staked, net_pl, roi, settled_count, wins, losses, pushes}. */
export interface PerformanceGroup extends PerformanceFigures {
  key: string;
  label: string;
}

export interface PerformanceBucket extends PerformanceFigures {
  funding: Funding;
  /** Orders placed in the window and not settled yet: still filling (pending) or awaiting their result (open). */
  pending_count: number;
  /** Settled orders that booked nothing (result cancelled). */
  cancelled: number;
  /** Empty with group_by none; otherwise ordered by key. */
  groups: PerformanceGroup[];
}

/** The envelope's data: {by_currency[], from, to, group_by}. */
export interface Performance {
  by_currency: PerformanceBucket[];
  from: string;
  to: string;
  group_by: GroupBy;
}

export const ZERO_FIGURES: Readonly<PerformanceFigures> = { staked: 0, net_pl: 0, roi: 0, settled_count: 0, wins: 0, losses: 0, pushes: 0 };

/** A bucket in the spec's field order, from its figures (ZERO_FIGURES for a currency with no settled order). */
export function performanceBucket(currency: Currency, figures: PerformanceFigures, rest: { pending_count: number; cancelled: number; groups: PerformanceGroup[] }): PerformanceBucket {
  return {
    funding: FUNDING[currency],
    staked: figures.staked,
    net_pl: figures.net_pl,
    roi: figures.roi,
    settled_count: figures.settled_count,
    pending_count: rest.pending_count,
    wins: figures.wins,
    losses: figures.losses,
    pushes: figures.pushes,
    cancelled: rest.cancelled,
    groups: rest.groups,
  };
}

export type WindowResult = { ok: true; from: number; to: number } | { ok: false; parameter: 'from' | 'to'; message: string };

/**
 * The window, inclusive at both ends (unix ms): `to` defaults to now and `from` to 90 days before
 * `to`, so a window given only its end is still 90 days long. `from` after `to` is refused.
 */
export function performanceWindow(nowMs: number, from?: string, to?: string): WindowResult {
  const end = to === undefined ? nowMs : Date.parse(to);
  const start = from === undefined ? end - DEFAULT_PERFORMANCE_WINDOW_MS : Date.parse(from);
  if (start > end) return { ok: false, parameter: 'from', message: `from (${new Date(start).toISOString()}) is after to (${new Date(end).toISOString()})` };
  return { ok: true, from: start, to: end };
}
