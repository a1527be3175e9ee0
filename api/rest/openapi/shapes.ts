/**
 * The response shapes of the REST API, one TypeBox definition each (spec "Resources and their
 * fields"). Each carries an $id so the OpenAPI document lists it once under components/schemas and
 * every route refers to it. The compile-time checks at the end tie each shape to the domain type the
 * code builds the response from, so a field added to one and not the other fails `tsc`.
 * Objects are closed (additionalProperties: false) wherever the spec lists the fields, so the
 * contract test catches a field the document does not declare; `tags`, `state.situation` and the
 * operator's game state stay open because the spec says their keys vary.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { Contest as ContestT, League as LeagueT, Market as MarketT, Participant as ParticipantT, Partner as PartnerT } from '../../../src/domain/catalog.js';
import { RESOLUTIONS } from '../../../src/domain/history.js';
import { ENVIRONMENTS, KEY_TYPES, PLANS } from '../../../src/domain/plans.js';
import type { PartnerLiquidity as PartnerLiquidityT, TradePrint as TradePrintT } from '../../../src/domain/stream.js';
import type { PositionDepth, PositionLiquidity } from '../../../src/compute/types.js';
import type { HistoryPoint } from '../../../src/store/clickhouse/history.js';
import type { ContestStateObject, GameState as GameStateT } from '../../../src/venues/types.js';
import type { SimAccountConnection as SimAccountConnectionT, SimMarketState as SimMarketStateT } from '../../../src/sim/model.js';
import { SIM_SITUATIONS, type SituationPrint as SituationPrintT, type SituationQuote as SituationQuoteT, type SituationResult as SituationResultT } from '../../../src/sim/situations.js';
import { LIMIT_TYPES, USER_GRANTS, type LimitWire } from '../../../src/domain/execution-limits.js';

const closed = { additionalProperties: false };
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Timestamp = (description = 'ISO 8601 UTC') => Type.String({ format: 'date-time', description });
const Probability = (description?: string) => Type.Number({ minimum: 0, maximum: 1, ...(description ? { description } : {}) });

// ---- envelope ------------------------------------------------------------------------------------

export const Pagination = Type.Object(
  {
    next_cursor: Nullable(Type.String({ description: 'pass back verbatim as `cursor`; null on the last page' })),
    has_more: Type.Boolean(),
    limit: Type.Integer({ minimum: 1 }),
  },
  { $id: 'Pagination', ...closed },
);

export const Meta = Type.Object(
  { timestamp: Timestamp('when the response was produced'), api_version: Type.Literal('v1') },
  { $id: 'Meta', ...closed },
);

/** GET contests/:id/liquidity: Meta plus the stream position of the snapshot. */
export const LiquidityMeta = Type.Object(
  {
    ...Meta.properties,
    event_id: Nullable(
      Type.String({
        description: 'the id of the last liquidity event this snapshot reflects (null before the first); pass it as resume_from on the stream to get every change after it',
      }),
    ),
  },
  { $id: 'LiquidityMeta', ...closed },
);

// ---- catalog -------------------------------------------------------------------------------------

export const League = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    participant_type: Nullable(Type.Enum(['team', 'athlete'], { description: 'null when undeclared; never assume team' })),
    status: Type.String(),
  },
  { $id: 'League', ...closed },
);

export const Participant = Type.Object(
  {
    id: Type.String(),
    league_id: Type.String(),
    name: Type.String(),
    abbr: Nullable(Type.String()),
    image_url: Nullable(Type.String()),
    country: Nullable(Type.String()),
  },
  { $id: 'Participant', ...closed },
);

export const TeamTag = Type.Object(
  { abbr: Type.String(), name: Type.String(), full_label: Type.String(), market_name: Type.String() },
  { $id: 'TeamTag', ...closed },
);

export const ContestTags = Type.Object(
  {
    source: Type.Optional(Type.String()),
    event_title: Type.Optional(Type.String()),
    home_team: Type.Optional(TeamTag),
    away_team: Type.Optional(TeamTag),
    venue: Type.Optional(
      Type.Object({ name: Type.String(), city: Type.String(), state: Nullable(Type.String()), country: Type.String(), time_zone: Type.String() }, closed),
    ),
    broadcast: Type.Optional(Type.Object({ network: Type.String() }, closed)),
  },
  { $id: 'ContestTags', additionalProperties: true, description: 'descriptive; keys depend on league and data source; read defensively' },
);

export const Contest = Type.Object(
  {
    id: Type.String(),
    league_id: Type.String(),
    title: Type.String(),
    type: Type.String({ description: 'e.g. match, tournament, award' }),
    parent_contest_id: Nullable(Type.String({ description: 'the tournament a child contest belongs to' })),
    starts_at: Timestamp(),
    status: Type.String({ description: 'e.g. open, closed' }),
    has_markets: Type.Boolean(),
    tags: ContestTags,
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Contest', ...closed },
);

export const Market = Type.Object(
  {
    id: Type.String(),
    key: Type.String({ description: 'e.g. moneyline, total, tournament_winner' }),
    name: Type.String(),
    variable_required: Type.Boolean(),
    allow_multiple_participants: Type.Boolean(),
    side_keys: Type.Array(Type.String(), { description: 'the side keys this market prices (home/away, over/under, yes/no)' }),
  },
  { $id: 'Market', ...closed },
);

export const OrderConfig = Type.Object(
  {
    orders_allowed: Type.Boolean(),
    credentials_allowed: Type.Boolean(),
    min_order_amount: Type.Number({ description: 'USD' }),
    max_order_amount: Nullable(Type.Number({ description: 'USD; null: only the position’s available caps the order' })),
    amount_increment: Nullable(Type.Number({ description: 'USD step when not whole-contract' })),
    whole_contracts: Type.Boolean(),
    full_fill_always_allowed: Type.Boolean(),
    price_submitted: Type.Boolean(),
    price_format: Type.Enum(['cents', 'probability', 'american']),
    price_tick: Type.Number({ description: 'in price_format units' }),
    min_price: Nullable(Type.Number({ description: 'in price_format units' })),
    max_price: Nullable(Type.Number({ description: 'in price_format units' })),
    cancel_supported: Type.Boolean(),
    supported_order_types: Type.Array(Type.Enum(['market', 'limit'])),
  },
  { $id: 'OrderConfig', ...closed },
);

export const CredentialField = Type.Object(
  { key: Type.String(), label: Type.String(), type: Type.Enum(['text', 'password', 'email']), required: Type.Boolean() },
  { $id: 'CredentialField', ...closed },
);

export const Partner = Type.Object(
  {
    partner_id: Type.String(),
    name: Type.String(),
    status: Type.String({ description: 'e.g. active' }),
    orders_allowed: Type.Boolean(),
    connectable: Type.Boolean(),
    internal_book: Type.Boolean(),
    order_config: OrderConfig,
    credential_fields: Type.Array(CredentialField),
    logo_url: Type.String(),
  },
  { $id: 'Partner', ...closed },
);

// ---- liquidity -----------------------------------------------------------------------------------

export const FeePacket = Type.Object(
  {
    taker_price: Type.Number({ description: 'usable at any size' }),
    maker_price: Type.Number({ description: 'usable at any size' }),
    taker_fee: Type.Number({ description: 'USD, on a canonical USD 100 stake' }),
    maker_fee: Type.Number({ description: 'USD, on a canonical USD 100 stake' }),
  },
  { $id: 'FeePacket', ...closed },
);

export const PartnerLiquidity = Type.Object(
  {
    partner_id: Type.String({ description: 'venue id; first segment of liquidity_hash' }),
    partner_name: Type.String(),
    price: Probability(),
    american_odds: Type.String(),
    available: Type.Number({ minimum: 0, description: 'USD at the best level' }),
    liquidity_hash: Type.String(),
    fee_packet: Type.Union([FeePacket, Type.Null()], { description: 'null when the venue publishes no fee schedule (fees unknown, not fee-free)' }),
    as_of: Timestamp('when the service last confirmed this venue’s quote'),
    is_stale: Type.Boolean({
      description: 'true when the venue’s quote was not confirmed within the venue’s freshness bound (docs/pricing.md, "Freshness"); as of the last computation of the contest',
    }),
  },
  { $id: 'PartnerLiquidity', ...closed },
);

export const Position = Type.Object(
  {
    position_hash: Type.String({ description: 'opaque' }),
    contest_id: Type.String(),
    title: Type.String(),
    market_key: Type.String(),
    side_key: Type.String(),
    variable: Type.Number({ description: 'line value; 0 when the market has no line' }),
    participant_id: Type.String(),
    participant_name: Type.String(),
    participant_image_url: Nullable(Type.String()),
    consensus_price: Nullable(Probability('fair value across venues; null when nothing usable quotes the position')),
    consensus_line: Nullable(Type.Number({ description: 'line where the ladder’s fair probability crosses 0.5; null without a ladder' })),
    distribution_prices: Nullable(Type.Array(Type.Object({ variable: Type.Number(), price: Probability() }, closed))),
    edges: Type.Array(Type.Object({ partner_id: Type.String(), edge: Type.Number({ description: 'consensus_price − venue price' }) }, closed)),
    paper_bettable: Type.Boolean(),
    partner_liquidities: Type.Array(PartnerLiquidity),
  },
  { $id: 'Position', ...closed },
);

export const PriceLevel = Type.Object({ price: Probability(), available: Type.Number({ minimum: 0, description: 'USD' }) }, { $id: 'PriceLevel', ...closed });

export const Depth = Type.Object(
  {
    position_hash: Type.String(),
    partners: Type.Array(
      Type.Object(
        {
          partner_id: Type.String(),
          partner_name: Type.String(),
          levels: Type.Array(PriceLevel, { description: 'best first' }),
          total_available: Type.Number(),
          best_price: Nullable(Probability()),
          fetched_at: Timestamp(),
        },
        closed,
      ),
    ),
    fetched_at: Timestamp(),
  },
  { $id: 'Depth', ...closed },
);

// ---- game state ----------------------------------------------------------------------------------

const PeriodScore = Type.Object({ home_score: Type.Number(), away_score: Type.Number() }, closed);
export const GameState = Type.Object(
  {
    game_status: Type.String({ description: 'e.g. scheduled, live, final; read unknown values as not final' }),
    clock: Nullable(Type.Object({ display: Type.String(), remaining_seconds: Type.Number(), is_running: Type.Boolean() }, closed)),
    period: Nullable(Type.Object({ number: Type.Number(), label: Type.String(), type: Type.String() }, closed)),
    contest_result: Nullable(Type.String()),
    winner_participant_id: Nullable(Type.String()),
    scores: Nullable(Type.Object({ home_score: Type.Number(), away_score: Type.Number(), period_scores: Type.Array(PeriodScore) }, closed)),
    situation: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'sport-specific block' })),
    leaderboard: Nullable(
      Type.Array(
        Type.Object(
          { participant_id: Type.String(), participant_name: Type.String(), rank: Type.Number(), score: Nullable(Type.Number()), status: Type.String() },
          closed,
        ),
      ),
    ),
  },
  { $id: 'GameState', ...closed },
);

export const ContestState = Type.Object(
  { contest_id: Type.String(), state: GameState, refreshed_at: Timestamp(), cached_at: Timestamp() },
  { $id: 'ContestState', ...closed },
);

/** A batch entry: the contest state without cached_at (spec "POST /flow/v1/contest-state/batch"). */
export const ContestStateEntry = Type.Object(
  { contest_id: Type.String(), state: GameState, refreshed_at: Timestamp() },
  { $id: 'ContestStateEntry', ...closed },
);

// ---- history -------------------------------------------------------------------------------------

export const PricePoint = Type.Object(
  { t: Type.Integer({ description: 'unix ms' }), position_hash: Type.String(), price: Probability() },
  { $id: 'PricePoint', ...closed },
);

export const PriceHistory = Type.Object(
  {
    contest_id: Type.String(),
    resolution: Type.Enum(RESOLUTIONS, { description: 'the resolution served; always read it from here' }),
    from: Type.Integer({ description: 'unix ms, inclusive' }),
    to: Type.Integer({ description: 'unix ms, inclusive' }),
    points: Type.Array(PricePoint),
    series_truncated: Type.Optional(Type.Literal(true, { description: 'present when the window held more series than limit could cover' })),
  },
  { $id: 'PriceHistory', ...closed },
);

export const TradePrint = Type.Object(
  {
    partner_id: Type.String(),
    partner_name: Type.String(),
    venue_trade_id: Type.String(),
    venue_market_id: Type.String(),
    liquidity_hash: Type.String(),
    position_hash: Type.String(),
    router_contest_id: Type.String(),
    router_market_id: Type.String(),
    taker_action: Type.Enum(['buy', 'sell'], { description: 'what the aggressive side did to position_hash' }),
    price: Probability(),
    size_contracts: Type.Number(),
    notional_usd: Type.Number({ description: 'size × price of the named position' }),
    is_block: Type.Boolean(),
    trader_id: Nullable(Type.String()),
    trader_id_kind: Nullable(Type.String()),
    executed_at: Timestamp(),
  },
  { $id: 'TradePrint', ...closed },
);

// ---- caller --------------------------------------------------------------------------------------

export const CallerContext = Type.Object(
  {
    auth_method: Type.Enum(['api_key', 'jwt']),
    router_account_id: Type.String(),
    workspace_id: Type.String(),
    plan: Type.Enum(PLANS),
    environment: Type.Enum(ENVIRONMENTS),
    can_execute: Type.Boolean({ description: 'always false for a data key' }),
    entitlements: Type.Array(Type.String()),
    current_key: Type.Object(
      {
        key_id: Nullable(Type.String({ description: 'null for a player JWT' })),
        key_type: Type.Enum(KEY_TYPES),
        rate_limit_per_minute: Type.Integer(),
        rate_limit_per_day: Type.Integer(),
      },
      closed,
    ),
    usage: Type.Object({ requests_last_24h: Type.Integer(), requests_last_7d: Type.Integer(), errors_last_24h: Type.Integer() }, closed),
    credits: Type.Object(
      { allowance: Type.Number(), purchased: Type.Number(), total: Type.Number(), included_per_month: Type.Number(), used_this_period: Type.Number() },
      closed,
    ),
  },
  { $id: 'CallerContext', ...closed },
);
export type CallerContext = Static<typeof CallerContext>;

// ---- the shapes and the domain types agree -------------------------------------------------------

/** Mutual assignability: a field missing, added or retyped on either side is a compile error. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Agrees<T extends true> = T;
export type ShapesAgreeWithTheDomain = [
  Agrees<Same<Static<typeof League>, LeagueT>>,
  Agrees<Same<Static<typeof Participant>, ParticipantT>>,
  Agrees<Same<Static<typeof Contest>, ContestT>>,
  Agrees<Same<Static<typeof Market>, MarketT>>,
  Agrees<Same<Static<typeof Partner>, PartnerT>>,
  Agrees<Same<Static<typeof PartnerLiquidity>, PartnerLiquidityT>>,
  Agrees<Same<Static<typeof Position>, PositionLiquidity>>,
  Agrees<Same<Static<typeof Depth>, PositionDepth>>,
  Agrees<Same<Static<typeof GameState>, GameStateT>>,
  Agrees<Same<Static<typeof ContestState>, ContestStateObject>>,
  Agrees<Same<Static<typeof PricePoint>, HistoryPoint>>,
  Agrees<Same<Static<typeof TradePrint>, TradePrintT>>,
];

// ---- the simulator control API (operators; docs/simulator.md) -------------------------------

export const SimMarketState = Type.Object(
  {
    seed: Type.Number(),
    frozen: Type.Boolean(),
    now_ms: Type.Number(),
    activity: Type.Number(),
    running: Type.Boolean(),
    listener_errors: Type.Number(),
    venues: Type.Array(
      Type.Object(
        {
          partner_id: Type.String(),
          name: Type.String(),
          orders_allowed: Type.Boolean(),
          internal_book: Type.Boolean(),
          quote_source: Nullable(Type.Enum(['streaming', 'polling'])),
          poll_interval_ms: Nullable(Type.Number()),
          publishes_trades: Type.Boolean(),
          listings: Type.Number(),
          stale: Type.Boolean(),
          accounts: Type.Number(),
          situations: Type.Object(
            {
              price_move: Type.Number(),
              whale_trade: Type.Number(),
              block_trade: Type.Number(),
              flow_imbalance: Type.Number(),
              trade_through: Type.Number(),
              volume_spike: Type.Number(),
              trade_burst: Type.Number(),
            },
            { ...closed, description: 'situations (signal types) the venue produced on its own since the simulator started, by kind (docs/simulator.md)' },
          ),
        },
        closed,
      ),
    ),
  },
  { $id: 'SimMarketState', ...closed },
);

export const SimAccountConnection = Type.Object(
  {
    router_account_id: Type.String(),
    partner_id: Type.String(),
    balance: Type.Number(),
    held: Type.Number(),
    credential_status: Type.Enum(['pending', 'connected', 'failed']),
  },
  { $id: 'SimAccountConnection', ...closed },
);

/** The connect answer: the simulator's connection, and the user's grants the service recorded on it. */
export const SimConnectResult = Type.Object(
  { ...SimAccountConnection.properties, scopes: Type.Array(Type.Enum([...USER_GRANTS]), { description: 'the grants the connection holds after the call' }) },
  { $id: 'SimConnectResult', ...closed },
);

/** One limit of a user's execution-limit policy (spec data model "policy"; docs/orders.md). */
export const ExecutionLimit = Type.Object(
  {
    type: Type.Enum([...LIMIT_TYPES]),
    params: Type.Object(
      {
        amount: Type.Optional(Type.Number({ description: 'USD' })),
        partner_id: Type.Optional(Type.String()),
        league_id: Type.Optional(Type.String()),
      },
      closed,
    ),
  },
  { $id: 'ExecutionLimit', ...closed },
);

/** An account's execution limits as the simulator's policy call set them. */
export const SimPolicy = Type.Object({ router_account_id: Type.String(), limits: Type.Array(ExecutionLimit) }, { $id: 'SimPolicy', ...closed });

const SimSituationPrint = Type.Object(
  {
    venue_trade_id: Type.String(),
    taker_action: Type.Enum(['buy', 'sell']),
    price: Probability(),
    size_contracts: Type.Number(),
    notional_usd: Type.Number({ description: 'price × size_contracts' }),
    is_block: Type.Boolean(),
    trader_id: Nullable(Type.String()),
    executed_at: Timestamp(),
  },
  { $id: 'SimSituationPrint', ...closed },
);

const SimSituationQuote = Type.Object(
  {
    partner_id: Type.String(),
    position_hash: Type.String(),
    from_price: Probability('best price before'),
    to_price: Probability('best price after'),
    levels: Type.Array(PriceLevel, { description: 'the book the venue now offers, best first' }),
    ts_event: Type.Number({ description: 'unix ms' }),
  },
  { $id: 'SimSituationQuote', ...closed },
);

/** What POST /sim/v1/situations did (docs/simulator.md "Situations"). */
export const SimSituationResult = Type.Object(
  {
    type: Type.Enum([...SIM_SITUATIONS]),
    partner_id: Type.String({ description: 'the venue it happened on (price_move: the one it was asked on or chosen first; every venue listing the position moves)' }),
    position_hash: Type.String(),
    contest_id: Type.String(),
    details: Type.Object(
      {
        crosses_threshold: Type.Boolean({ description: 'whether, by what the simulator knows of the position (its prints and books), the published threshold is crossed' }),
        prints: Type.Optional(Type.Array(SimSituationPrint, { description: 'the situation’s prints, on the venue’s trade feed' })),
        baseline_prints: Type.Optional(Type.Array(SimSituationPrint, { description: 'prints laid down first (with_baseline), dated before the window' })),
        quotes: Type.Optional(Type.Array(SimSituationQuote, { description: 'books set, on the venues’ quote feeds' })),
        total_notional_usd: Type.Optional(Type.Number()),
        largest_print_usd: Type.Optional(Type.Number()),
        median_notional_usd: Type.Optional(Type.Number()),
        threshold_usd: Type.Optional(Type.Number()),
        size_multiple: Type.Optional(Type.Number()),
        trades_last_window: Type.Optional(Type.Number()),
        baseline_per_5m: Type.Optional(Type.Number()),
        window_ms: Type.Optional(Type.Number()),
        direction: Type.Optional(Type.Enum(['up', 'down', 'buy', 'sell'])),
        move: Type.Optional(Type.Number()),
        through: Type.Optional(Type.Number()),
        cached_price: Type.Optional(Type.Number()),
        edge: Type.Optional(Type.Number()),
        combined_price: Type.Optional(Type.Number()),
        counterpart: Type.Optional(Type.Object({ partner_id: Type.String(), position_hash: Type.String(), price: Probability() }, closed)),
      },
      closed,
    ),
  },
  { $id: 'SimSituationResult', ...closed },
);

/** A situation's result as the control API answers it (times as ISO 8601). */
export function simSituationToWire(r: SituationResultT): Static<typeof SimSituationResult> {
  const print = (p: SituationPrintT) => ({ ...p, executed_at: new Date(p.executed_at).toISOString() });
  const { prints, baseline_prints, quotes, ...rest } = r.details;
  return {
    ...r,
    details: {
      ...rest,
      ...(prints ? { prints: prints.map(print) } : {}),
      ...(baseline_prints ? { baseline_prints: baseline_prints.map(print) } : {}),
      ...(quotes ? { quotes: quotes.map((q) => ({ ...q, levels: [...q.levels] })) } : {}),
    },
  };
}

export type SimShapesAgreeWithTheSimulator = [
  Agrees<Same<Static<typeof SimMarketState>, SimMarketStateT>>,
  Agrees<Same<Static<typeof SimAccountConnection>, SimAccountConnectionT>>,
  Agrees<Same<Static<typeof ExecutionLimit>, LimitWire>>,
  Agrees<Same<Static<typeof SimSituationQuote>, Omit<SituationQuoteT, 'levels'> & { levels: { price: number; available: number }[] }>>,
];
