/**
 * Gamma events → the normalized catalog (leagues, participants, contests, markets, positions) plus
 * the token index the adapter quotes and prints through.
 *
 * - One Gamma event is one contest (`pm_ev_<event id>`).
 * - A neg-risk event (`negRisk: true`: a set of binary markets of which exactly one resolves Yes)
 *   is ONE contest with many runners: each child market's Yes token is a `tournament_winner`
 *   position (side `yes`) of one participant, all in one mutually exclusive group. The runner's
 *   No token is not listed as a position (it is the complement of the Yes: its book mirrors the
 *   Yes book); its trade prints count against the Yes position as `complement`.
 * - Any other market is a `yes_no` market of its own: outcome 0 is side `yes`, outcome 1 side
 *   `no` (labels such as Up/Down or team names are kept in the titles), the two sides one group,
 *   the participant the proposition (the market's groupItemTitle or question).
 * - Markets that are closed, inactive, without an order book or without two tokens are left out
 *   (listed in `skipped` with the reason); an event left with no market is left out.
 *
 * Pure and deterministic: the same events give the same catalog.
 */
import type { Contest, League, Market, Participant, Partner, PositionDefinition } from '../../domain/catalog.js';
import { liquidityHash, positionHash } from '../../domain/hashes.js';
import type { FeeModel } from '../types.js';
import { feeModelOf } from './fees.js';
import type { PmEvent, PmMarket } from './parse.js';
import { POLYMARKET_PARTNER, PARTNER_ID } from './venue.js';

export const POLYMARKET_TIMEFRAME = 'ft';

/** The outright runner market (the catalog's shared outright shape: one side, many participants). */
export const OUTRIGHT_MARKET: Readonly<Market> = {
  id: 'tournament_winner',
  key: 'tournament_winner',
  name: 'Tournament Winner',
  variable_required: false,
  allow_multiple_participants: true,
  side_keys: ['yes'],
};

/** A binary proposition: Yes or No (outcome 0 or outcome 1). */
export const YES_NO_MARKET: Readonly<Market> = {
  id: 'yes_no',
  key: 'yes_no',
  name: 'Yes / No',
  variable_required: false,
  allow_multiple_participants: false,
  side_keys: ['yes', 'no'],
};

/** One outcome token of a listed market. */
export interface PolymarketToken {
  token_id: string;
  condition_id: string;
  gamma_market_id: string;
  contest_id: string;
  outcome: string;
  outcome_index: number;
  complement_token_id: string;
  /** The position this token's asks quote; null for a neg-risk runner's No token. */
  position_hash: string | null;
  /** The position a trade print on this token is reported against, and how it relates. */
  trade_position_hash: string;
  trade_relation: 'same' | 'complement';
  side_key: string;
  liquidity_hash: string;
  /** As listed; tick_size_change moves it (the adapter keeps the live value). */
  tick_size: number;
  min_order_size: number;
  neg_risk: boolean;
  accepting_orders: boolean;
  fee: FeeModel;
}

export interface PolymarketCatalog {
  leagues: League[];
  participants: Participant[];
  contests: Contest[];
  markets: Market[];
  contest_markets: { contest_id: string; market_id: string }[];
  contest_participants: { contest_id: string; participant_id: string; role: 'entrant' }[];
  positions: PositionDefinition[];
  partners: Partner[];
  tokens: PolymarketToken[];
  /** Markets left out, and why. */
  skipped: { gamma_market_id: string; reason: string }[];
}

/** Gamma tag slugs that name a league, with the kind of participant it has. */
const LEAGUE_TAGS: Readonly<Record<string, 'team' | 'athlete'>> = {
  nba: 'team',
  wnba: 'team',
  nfl: 'team',
  nhl: 'team',
  mlb: 'team',
  mls: 'team',
  epl: 'team',
  'premier-league': 'team',
  'champions-league': 'team',
  'la-liga': 'team',
  'serie-a': 'team',
  bundesliga: 'team',
  'ligue-1': 'team',
  ncaab: 'team',
  cbb: 'team',
  cfb: 'team',
  'fifa-world-cup': 'team',
  tennis: 'athlete',
  atp: 'athlete',
  wta: 'athlete',
  ufc: 'athlete',
  boxing: 'athlete',
  golf: 'athlete',
  pga: 'athlete',
  f1: 'athlete',
  'formula-1': 'athlete',
};

/** Categories (no participant type), in priority order, with the tag slugs that mean each. */
const CATEGORIES: readonly { id: string; name: string; slugs: readonly string[] }[] = [
  { id: 'pm_politics', name: 'Politics', slugs: ['politics', 'elections', 'us-presidential-election', 'global-elections', 'world-elections'] },
  { id: 'pm_geopolitics', name: 'Geopolitics', slugs: ['geopolitics'] },
  { id: 'pm_crypto', name: 'Crypto', slugs: ['crypto', 'bitcoin', 'ethereum', 'crypto-prices'] },
  { id: 'pm_economy', name: 'Economy', slugs: ['economy', 'economics', 'fed', 'finance', 'stocks'] },
  { id: 'pm_tech', name: 'Tech', slugs: ['tech', 'ai', 'science'] },
  { id: 'pm_culture', name: 'Culture', slugs: ['culture', 'pop-culture', 'movies', 'music', 'awards'] },
  { id: 'pm_weather', name: 'Weather', slugs: ['weather', 'climate'] },
  { id: 'pm_sports', name: 'Sports', slugs: ['sports'] },
];

const OTHER_LEAGUE: League = { id: 'pm_other', name: 'Polymarket: other', participant_type: null, status: 'active' };

/** A catalog id fragment: lowercase letters, digits and `_` only (never the hash separator). */
export function slugId(s: string): string {
  const out = s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return out.length > 0 ? out.slice(0, 80) : 'x';
}

/** The event's league: its first league tag, else its highest-priority category, else `pm_other`. */
export function leagueOf(e: Pick<PmEvent, 'tags'>): League {
  for (const t of e.tags) {
    const kind = LEAGUE_TAGS[t.slug];
    if (kind) return { id: `pm_${slugId(t.slug)}`, name: t.label, participant_type: kind, status: 'active' };
  }
  for (const c of CATEGORIES) {
    if (e.tags.some((t) => c.slugs.includes(t.slug))) return { id: c.id, name: c.name, participant_type: null, status: 'active' };
  }
  return { ...OTHER_LEAGUE };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Why a market cannot be listed, or null when it can. */
function unlistable(m: PmMarket): string | null {
  if (m.closed) return 'closed';
  if (!m.active) return 'inactive';
  if (!m.enable_order_book) return 'no order book';
  if (m.outcomes.length !== 2) return `${m.outcomes.length} outcomes`;
  if (m.token_ids.length !== 2) return `${m.token_ids.length} token ids`;
  if (m.token_ids[0] === m.token_ids[1]) return 'duplicate token ids';
  return null;
}

export interface BuildOptions {
  /** created_at/updated_at when the event does not say (default: epoch 0, so the build stays pure). */
  now?: number;
}

export function buildPolymarketCatalog(events: readonly PmEvent[], opts: BuildOptions = {}): PolymarketCatalog {
  const now = opts.now ?? 0;
  const leagues = new Map<string, League>();
  const participants = new Map<string, Participant>();
  const contests: Contest[] = [];
  const contestMarkets: PolymarketCatalog['contest_markets'] = [];
  const contestParticipants: PolymarketCatalog['contest_participants'] = [];
  const positions: PositionDefinition[] = [];
  const tokens: PolymarketToken[] = [];
  const skipped: PolymarketCatalog['skipped'] = [];
  const usedMarkets = new Set<string>();
  const seenEvents = new Set<string>();
  const seenTokens = new Set<string>();
  /** contest \0 participant of every runner listed so far. */
  const entrants = new Set<string>();

  for (const e of events) {
    if (seenEvents.has(e.id)) continue;
    seenEvents.add(e.id);
    if (e.closed) {
      for (const m of e.markets) skipped.push({ gamma_market_id: m.gamma_id, reason: 'event closed' });
      continue;
    }
    const listable: PmMarket[] = [];
    for (const m of e.markets) {
      const why = unlistable(m) ?? (m.token_ids.some((t) => seenTokens.has(t)) ? 'token listed twice' : null);
      if (why) skipped.push({ gamma_market_id: m.gamma_id, reason: why });
      else {
        listable.push(m);
        for (const t of m.token_ids) seenTokens.add(t);
      }
    }
    if (listable.length === 0) continue;

    const league = leagueOf(e);
    leagues.set(league.id, league);
    const contestId = `pm_ev_${slugId(e.id)}`;
    const negRisk = e.neg_risk || listable.every((m) => m.neg_risk);
    // When the real-world event happens or is decided, so start-time windows compare like with like.
    const startsMs = e.start_time_ms ?? listable.find((m) => m.event_start_ms !== null)?.event_start_ms ?? e.end_ms ?? listable[0]!.end_ms ?? e.start_ms ?? now;
    contests.push({
      id: contestId,
      league_id: league.id,
      title: e.title || listable[0]!.question,
      type: negRisk ? 'outright' : 'event',
      parent_contest_id: null,
      starts_at: iso(startsMs),
      status: 'open',
      has_markets: true,
      tags: {
        source: 'polymarket',
        event_title: e.title,
        polymarket_event_id: e.id,
        polymarket_slug: e.slug,
        polymarket_tags: e.tags.map((t) => t.slug),
        neg_risk: negRisk,
        ...(e.neg_risk_augmented ? { neg_risk_augmented: true } : {}),
      },
      created_at: iso(e.created_ms ?? e.start_ms ?? now),
      updated_at: iso(e.updated_ms ?? e.created_ms ?? now),
    });

    const market = negRisk ? OUTRIGHT_MARKET : YES_NO_MARKET;
    const link = (marketId: string) => {
      const k = `${contestId}\u0000${marketId}`;
      if (usedMarkets.has(k)) return;
      usedMarkets.add(k);
      contestMarkets.push({ contest_id: contestId, market_id: marketId });
    };
    link(market.id);

    for (const m of listable) {
      const fee = feeModelOf(m);
      const tick = m.tick_size !== null && m.tick_size > 0 && m.tick_size < 1 ? m.tick_size : 0.01;
      const minSize = m.min_order_size !== null && m.min_order_size >= 0 ? m.min_order_size : 5;
      const token = (i: number, position: string | null, tradePosition: string, relation: 'same' | 'complement', sideKey: string): PolymarketToken => ({
        token_id: m.token_ids[i]!,
        condition_id: m.condition_id,
        gamma_market_id: m.gamma_id,
        contest_id: contestId,
        outcome: m.outcomes[i]!,
        outcome_index: i,
        complement_token_id: m.token_ids[1 - i]!,
        position_hash: position,
        trade_position_hash: tradePosition,
        trade_relation: relation,
        side_key: sideKey,
        liquidity_hash: liquidityHash(PARTNER_ID, m.token_ids[i]!),
        tick_size: tick,
        min_order_size: minSize,
        neg_risk: m.neg_risk || negRisk,
        accepting_orders: m.accepting_orders,
        fee,
      });

      if (negRisk) {
        const name = m.group_item_title ?? m.question;
        // Two runners of one event with the same name stay two participants.
        const named = `${league.id}_${slugId(name)}`;
        const pid = entrants.has(`${contestId}\u0000${named}`) ? `${named}_${slugId(m.gamma_id)}` : named;
        entrants.add(`${contestId}\u0000${pid}`);
        if (!participants.has(pid)) participants.set(pid, { id: pid, league_id: league.id, name, abbr: null, image_url: m.image_url, country: null });
        contestParticipants.push({ contest_id: contestId, participant_id: pid, role: 'entrant' });
        const hash = positionHash({ contest_id: contestId, market_id: market.id, side_key: 'yes', variable: 0, participant_id: pid, timeframe: POLYMARKET_TIMEFRAME });
        positions.push({
          position_hash: hash,
          contest_id: contestId,
          title: m.question || `${name} to win ${e.title}`,
          market_id: market.id,
          market_key: market.key,
          side_key: 'yes',
          variable: 0,
          participant_id: pid,
          participant_name: name,
          participant_image_url: m.image_url,
          timeframe: POLYMARKET_TIMEFRAME,
          group_key: `${contestId}/${market.id}`,
          ladder_key: null,
        });
        tokens.push(token(0, hash, hash, 'same', 'yes'), token(1, null, hash, 'complement', 'no'));
      } else {
        const name = m.group_item_title ?? m.question;
        const pid = `pm_m${slugId(m.gamma_id)}`;
        if (!participants.has(pid)) participants.set(pid, { id: pid, league_id: league.id, name, abbr: null, image_url: m.image_url, country: null });
        const hashes = (['yes', 'no'] as const).map((side) =>
          positionHash({ contest_id: contestId, market_id: market.id, side_key: side, variable: 0, participant_id: pid, timeframe: POLYMARKET_TIMEFRAME }),
        );
        (['yes', 'no'] as const).forEach((side, i) => {
          positions.push({
            position_hash: hashes[i]!,
            contest_id: contestId,
            title: `${m.question || name}: ${m.outcomes[i]}`,
            market_id: market.id,
            market_key: market.key,
            side_key: side,
            variable: 0,
            participant_id: pid,
            participant_name: name,
            participant_image_url: m.image_url,
            timeframe: POLYMARKET_TIMEFRAME,
            group_key: `${contestId}/${market.id}/${slugId(m.gamma_id)}`,
            ladder_key: null,
          });
        });
        tokens.push(token(0, hashes[0]!, hashes[0]!, 'same', 'yes'), token(1, hashes[1]!, hashes[1]!, 'same', 'no'));
      }
    }
  }

  const marketIds = new Set(contestMarkets.map((cm) => cm.market_id));
  return {
    leagues: [...leagues.values()],
    participants: [...participants.values()],
    contests,
    markets: [OUTRIGHT_MARKET, YES_NO_MARKET].filter((m) => marketIds.has(m.id)).map((m) => ({ ...m, side_keys: [...m.side_keys] })),
    contest_markets: contestMarkets,
    contest_participants: contestParticipants,
    positions,
    partners: [structuredClone(POLYMARKET_PARTNER) as Partner],
    tokens,
    skipped,
  };
}
