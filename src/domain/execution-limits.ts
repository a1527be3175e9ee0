/**
 * A user's trade grants and execution-limit policy (spec "Orders: place" rule 9, "Organization
 * (Connect) endpoints", data model "policy"; docs/orders.md "Execution limits and trade grants"),
 * as data and pure rules. The hosted page that sets them is not built; the simulator's control
 * API sets them (docs/simulator.md).
 *
 * Grants are per venue connection: a real-money buy on a venue needs trade:execute there (else the
 * whole request is 403 scope_not_granted). Limits are per account and apply to real-money legs
 * only (practice legs trade ATLAS, which the practice wallet's own caps bound):
 *
 *   practice_only {}                            no real-money leg at all
 *   max_stake_per_order {amount}                one leg's stake ≤ amount
 *   max_stake_per_venue {partner_id, amount}    the leg's stake + the account's open exposure on
 *                                               that venue (+ earlier legs of the same request) ≤ amount
 *   max_stake_per_league {league_id, amount}    the same, over the venues, for the position's league
 *
 * A leg's stake is its USD amount after the venue's increment (a shares leg: its contracts at the
 * limit): the most it can spend before fees, known before any book is read. A breach is the leg's
 * failure (HTTP 200, execution_limit_exceeded), never an HTTP error.
 */
import { isMicroExact, toMicros, fromMicros, type Micros } from './money.js';

/** The per-user grants of a venue connection (spec "Authentication"). */
export const USER_GRANTS = ['balance:read', 'history:read', 'trade:execute'] as const;
export type UserGrant = (typeof USER_GRANTS)[number];
/** The grant a real-money buy on a venue needs. */
export const TRADE_GRANT: UserGrant = 'trade:execute';

export const LIMIT_TYPES = ['max_stake_per_order', 'max_stake_per_venue', 'max_stake_per_league', 'practice_only'] as const;
export type LimitType = (typeof LIMIT_TYPES)[number];

/** At most this many limits per account: the policy is read with every real-money order check. */
export const MAX_LIMITS = 50;
/** The largest limit amount (USD): what numeric(24,6) and every other money field here hold. */
export const MAX_LIMIT_AMOUNT = 1e12;

/** One limit, amounts in micros. */
export type ExecutionLimit =
  | { type: 'max_stake_per_order'; amount: Micros }
  | { type: 'max_stake_per_venue'; partner_id: string; amount: Micros }
  | { type: 'max_stake_per_league'; league_id: string; amount: Micros }
  | { type: 'practice_only' };

/** A limit as the policy shows it: {type, params}. */
export interface LimitWire {
  type: LimitType;
  params: { amount?: number; partner_id?: string; league_id?: string };
}

/** A limit as a caller sends it (shape already checked: strings are bounded ids, amounts positive numbers). */
export interface LimitInput {
  type: string;
  params?: { amount?: number; partner_id?: string; league_id?: string };
}

/** What the limits of a request's account count against: the open exposure per venue and per league (USD micros). */
export interface AccountPolicy {
  limits: readonly ExecutionLimit[];
  exposure: {
    venues: ReadonlyMap<string, Micros>;
    leagues: ReadonlyMap<string, Micros>;
  };
}

export const NO_POLICY: AccountPolicy = { limits: [], exposure: { venues: new Map(), leagues: new Map() } };

/** Whether the policy has a limit that counts open exposure (then the exposure must be read). */
export const countsExposure = (limits: readonly ExecutionLimit[]): boolean => limits.some((l) => l.type === 'max_stake_per_venue' || l.type === 'max_stake_per_league');

/** The params each type takes: all of them, and no other. */
const PARAMS: Record<LimitType, readonly ('amount' | 'partner_id' | 'league_id')[]> = {
  max_stake_per_order: ['amount'],
  max_stake_per_venue: ['partner_id', 'amount'],
  max_stake_per_league: ['league_id', 'amount'],
  practice_only: [],
};

export interface LimitsRefusal {
  code: 'unknown_limit_type' | 'invalid_limit_params' | 'duplicate_limit' | 'too_many_limits';
  message: string;
  details: Record<string, unknown>;
}

/** What the catalog knows of the ids a policy names. */
export interface LimitCatalog {
  /** 'real' for a venue that takes real-money orders, 'internal' for the practice book, null when unknown. */
  venue(partnerId: string): 'real' | 'internal' | null;
  league(leagueId: string): boolean;
}

/**
 * A policy's limits checked strictly: a known type, exactly its params, an amount of at most six
 * decimals up to MAX_LIMIT_AMOUNT, a venue or league the catalog has (not the practice book: limits
 * bind real money only), no two limits on the same thing, at most MAX_LIMITS.
 */
export function parseLimits(raw: readonly LimitInput[], catalog: LimitCatalog): { limits: ExecutionLimit[] } | { refusal: LimitsRefusal } {
  if (raw.length > MAX_LIMITS) return { refusal: { code: 'too_many_limits', message: `a policy holds at most ${MAX_LIMITS} limits`, details: { max_limits: MAX_LIMITS, limits: raw.length } } };
  const limits: ExecutionLimit[] = [];
  const seen = new Map<string, number>();
  for (const [index, l] of raw.entries()) {
    const type = l.type as LimitType;
    if (!(LIMIT_TYPES as readonly string[]).includes(l.type)) {
      return { refusal: { code: 'unknown_limit_type', message: `limits[${index}].type ${JSON.stringify(l.type)} is not a limit type (${LIMIT_TYPES.join(', ')})`, details: { index, type: l.type, known_types: [...LIMIT_TYPES] } } };
    }
    const params = l.params ?? {};
    const bad = (parameter: string, why: string): { refusal: LimitsRefusal } => ({
      refusal: { code: 'invalid_limit_params', message: `limits[${index}] (${type}): params.${parameter} ${why}`, details: { index, type, parameter: `params.${parameter}`, takes: [...PARAMS[type]] } },
    });
    for (const key of Object.keys(params)) if (!PARAMS[type].includes(key as never)) return bad(key, `is not a parameter of ${type} (it takes ${PARAMS[type].join(', ') || 'none'})`);
    for (const key of PARAMS[type]) if (params[key] === undefined) return bad(key, 'is required');
    let amount: Micros = 0n;
    if (params.amount !== undefined) {
      const a = params.amount;
      if (!(typeof a === 'number' && Number.isFinite(a) && a > 0 && a <= MAX_LIMIT_AMOUNT)) return bad('amount', `must be a USD amount above 0 and at most ${MAX_LIMIT_AMOUNT}`);
      if (!isMicroExact(a)) return bad('amount', 'has more than 6 decimals');
      amount = toMicros(a);
    }
    let limit: ExecutionLimit;
    switch (type) {
      case 'max_stake_per_order':
        limit = { type, amount };
        break;
      case 'max_stake_per_venue': {
        const venue = catalog.venue(params.partner_id!);
        if (venue === null) return bad('partner_id', `${JSON.stringify(params.partner_id)} is not a venue of the partner catalog`);
        if (venue === 'internal') return bad('partner_id', `${JSON.stringify(params.partner_id)} is the practice book; limits bind real-money orders only`);
        limit = { type, partner_id: params.partner_id!, amount };
        break;
      }
      case 'max_stake_per_league':
        if (!catalog.league(params.league_id!)) return bad('league_id', `${JSON.stringify(params.league_id)} is not a league of the catalog`);
        limit = { type, league_id: params.league_id!, amount };
        break;
      case 'practice_only':
        limit = { type };
        break;
    }
    // Two limits on the same thing would leave which one binds to the reader: refused.
    const key = limitKey(limit);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      return { refusal: { code: 'duplicate_limit', message: `limits[${index}] limits the same thing as limits[${earlier}]; send one`, details: { index, duplicate_of: earlier, type } } };
    }
    seen.set(key, index);
    limits.push(limit);
  }
  return { limits };
}

const limitKey = (l: ExecutionLimit): string => (l.type === 'max_stake_per_venue' ? `${l.type}/${l.partner_id}` : l.type === 'max_stake_per_league' ? `${l.type}/${l.league_id}` : l.type);

/** The policy's {type, params} form of a limit. */
export function limitToWire(l: ExecutionLimit): LimitWire {
  switch (l.type) {
    case 'max_stake_per_order':
      return { type: l.type, params: { amount: fromMicros(l.amount) } };
    case 'max_stake_per_venue':
      return { type: l.type, params: { partner_id: l.partner_id, amount: fromMicros(l.amount) } };
    case 'max_stake_per_league':
      return { type: l.type, params: { league_id: l.league_id, amount: fromMicros(l.amount) } };
    case 'practice_only':
      return { type: l.type, params: {} };
  }
}

/** The leg a policy is asked about. */
export interface LimitSubject {
  mode: 'real' | 'paper';
  partner_id: string;
  /** The league of the position's contest; null when unknown (no per-league limit applies). */
  league_id: string | null;
  /** USD micros; null before the stake is known (only practice_only is asked then). */
  stake: Micros | null;
}

/** What already counts against the subject's per-venue and per-league limits (USD micros). */
export interface CountedExposure {
  venue: Micros;
  league: Micros;
}

/** A limit the leg would break, with the numbers behind it. */
export interface LimitBreach {
  limit: ExecutionLimit;
  /** The leg's stake (null for practice_only). */
  stake: Micros | null;
  /** What counted against the limit before this leg (0 for a per-order limit). */
  counted: Micros;
}

/** The exposure a policy holds for a venue and a league. */
export const exposureOf = (policy: AccountPolicy, partnerId: string, leagueId: string | null): CountedExposure => ({
  venue: policy.exposure.venues.get(partnerId) ?? 0n,
  league: leagueId === null ? 0n : (policy.exposure.leagues.get(leagueId) ?? 0n),
});

/**
 * The first limit the leg breaks, or null: practice_only first (it needs no stake), then the stake
 * limits in the policy's order. A stake exactly at a limit passes. Practice legs break none.
 */
export function limitBreach(limits: readonly ExecutionLimit[], s: LimitSubject, counted: CountedExposure): LimitBreach | null {
  if (s.mode !== 'real') return null;
  const practiceOnly = limits.find((l) => l.type === 'practice_only');
  if (practiceOnly) return { limit: practiceOnly, stake: s.stake, counted: 0n };
  if (s.stake === null) return null;
  for (const l of limits) {
    switch (l.type) {
      case 'max_stake_per_order':
        if (s.stake > l.amount) return { limit: l, stake: s.stake, counted: 0n };
        break;
      case 'max_stake_per_venue':
        if (l.partner_id === s.partner_id && s.stake + counted.venue > l.amount) return { limit: l, stake: s.stake, counted: counted.venue };
        break;
      case 'max_stake_per_league':
        if (l.league_id === s.league_id && s.stake + counted.league > l.amount) return { limit: l, stake: s.stake, counted: counted.league };
        break;
      case 'practice_only':
        break;
    }
  }
  return null;
}
