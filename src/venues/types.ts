/**
 * The VenueAdapter interface: the one surface through which the service talks to a venue.
 *
 * Design (see ARCHITECTURE.md "How a venue plugs in"):
 * - The adapter owns its connection (`connect()` / `close()`); callers never see sockets, REST
 *   clients or wire payloads, only the normalized records below.
 * - What a venue can do is data (`describe()`, CCXT-style): which quote channels it has and how
 *   often to poll it, whether it takes orders and which types, whether it publishes trades, game
 *   state, balances. A method for a capability the venue does not declare rejects with a
 *   non-retryable `VenueError` coded `capability_not_supported` (order placement excepted: a
 *   quotes-only venue answers `placeOrder` with a `rejected` order coded `orders_not_supported`,
 *   the spec's per-leg code, so the router can report it like any other leg failure).
 * - Every normalized record carries `ts_event` (when the venue says it happened, unix ms) and
 *   `ts_init` (when we saw it, unix ms, taken from the adapter's clock and handed to the pure
 *   parsers as an argument).
 * - Prices are probabilities in (0, 1) that a buyer of the position pays; `available` is USD
 *   notional. Venue-native units (cents, american odds, ...) never leave the adapter.
 *
 * Everything here is plain data (no classes, no Maps) so records cross worker threads, Redis and
 * processes unchanged.
 */
import type { Partner, OrderType } from '../domain/catalog.js';
import type { FeeModel, PriceLevel, QuoteSource } from '../domain/quotes.js';
import type { LegRejectCode } from '../domain/orders.js';

// ---------------------------------------------------------------------------------------------
// Quotes, trades, depth
// ---------------------------------------------------------------------------------------------

export type { FeeModel, PriceLevel, QuoteSource };

/** One venue's quote for buying one position. */
export interface NormalizedQuote {
  partner_id: string;
  /** Venue-scoped price key (`partner_id:<venue key>`); accepted by order placement. */
  liquidity_hash: string;
  position_hash: string;
  /** The venue's own market/instrument reference. */
  venue_market_id: string;
  /** Side the venue lists the participant on; differs from the position's side_key when the
   *  venue lists the participant on the opposite side. */
  venue_side_key: string;
  /** Best price a buyer pays, 0-1. Kept (last known) when the book is empty. */
  price: number;
  /** USD notional at the best level; 0 when the book is empty. */
  available: number;
  /** Best (lowest price) first; empty when nothing is offered. levels[0] = {price, available}. */
  levels: PriceLevel[];
  fee: FeeModel;
  /** false for a quote with no book behind it (an indicative price feed). */
  real_book: boolean;
  source: QuoteSource;
  ts_event: number;
  ts_init: number;
}

/** A quote as ingest stores it in the venue state: plus when it stops counting as confirmed. */
export interface StoredQuote extends NormalizedQuote {
  /** ts_init + the venue's freshness bound (absent for a venue that declares none). */
  stale_after_ms?: number;
}

export type TakerAction = 'buy' | 'sell';

/** A trade print as a venue published it, joined to our position. */
export interface NormalizedTrade {
  partner_id: string;
  venue_trade_id: string;
  venue_market_id: string;
  liquidity_hash: string;
  position_hash: string;
  /** What the aggressive side did to position_hash. */
  taker_action: TakerAction;
  /** 0-1 price of position_hash. */
  price: number;
  /** Venue units, possibly fractional. */
  size_contracts: number;
  is_block: boolean;
  trader_id: string | null;
  trader_id_kind: string | null;
  /** Unix ms (the venue's execution time; equal to ts_event). */
  executed_at: number;
  /** How the venue's traded outcome relates to position_hash: `same` (default), or `complement`
   *  when only the complement of the venue's market is linked (the trade is then reported as the
   *  opposite action on position_hash at 1 − price). */
  relation?: 'same' | 'complement';
  ts_event: number;
  ts_init: number;
}

/** One venue's book for one position (a depth fetch). */
export interface VenueDepth {
  partner_id: string;
  position_hash: string;
  /** null when the venue does not list the position. */
  liquidity_hash: string | null;
  /** Best (lowest price) first. */
  levels: PriceLevel[];
  total_available: number;
  best_price: number | null;
  ts_event: number;
  ts_init: number;
}

// ---------------------------------------------------------------------------------------------
// Game state (the spec's Contest state object)
// ---------------------------------------------------------------------------------------------

export interface GameClock {
  display: string;
  remaining_seconds: number;
  is_running: boolean;
}

export interface GamePeriod {
  number: number;
  label: string;
  /** e.g. quarter, period, set, round. */
  type: string;
}

export interface PeriodScore {
  home_score: number;
  away_score: number;
}

export interface TeamScores {
  home_score: number;
  away_score: number;
  period_scores: PeriodScore[];
}

/** Individual-sport and outright contests carry a leaderboard instead of team scores. */
export interface LeaderboardEntry {
  participant_id: string;
  participant_name: string;
  rank: number;
  score: number | null;
  /** `active`, `eliminated`, `winner`. */
  status: string;
}

/**
 * Known values of game_status: `scheduled`, `live`, `final` (the spec leaves the set open; read
 * unknown values as "not final").
 * contest_result: `home_win`, `away_win`, `draw`, `decided` (an outright with a winner) or null.
 */
export interface GameState {
  game_status: string;
  clock: GameClock | null;
  period: GamePeriod | null;
  contest_result: string | null;
  winner_participant_id: string | null;
  scores: TeamScores | null;
  situation: Record<string, unknown> | null;
  leaderboard: LeaderboardEntry[] | null;
}

/** A venue's game-state update for one contest. */
export interface GameStateRecord {
  partner_id: string;
  contest_id: string;
  state: GameState;
  ts_event: number;
  ts_init: number;
}

/** The spec's Contest state object, as the service serves it. */
export interface ContestStateObject {
  contest_id: string;
  state: GameState;
  refreshed_at: string;
  cached_at: string;
}

/** The spec shape of a game-state record, cached at `cachedAtMs`. */
export function toContestState(rec: GameStateRecord, cachedAtMs: number): ContestStateObject {
  return {
    contest_id: rec.contest_id,
    state: rec.state,
    refreshed_at: new Date(rec.ts_event).toISOString(),
    cached_at: new Date(cachedAtMs).toISOString(),
  };
}

export type PositionResult = 'win' | 'lose' | 'push';

/** A venue's settlement of a contest's positions. */
export interface VenueSettlement {
  partner_id: string;
  contest_id: string;
  winner_participant_id: string | null;
  results: { position_hash: string; result: PositionResult }[];
  ts_event: number;
  ts_init: number;
}

// ---------------------------------------------------------------------------------------------
// Orders and balances
// ---------------------------------------------------------------------------------------------

/**
 * Terminal: filled, partially_filled (a market order whose remainder was killed), rejected,
 * cancelled. Non-terminal: resting (a limit order on the book, possibly with some fills),
 * pending (accepted by an async-fill venue; the fill arrives on `subscribeOrderUpdates`).
 */
export type VenueOrderStatus = 'filled' | 'partially_filled' | 'resting' | 'pending' | 'rejected' | 'cancelled';

/** The spec's per-leg rejected_code values a venue itself can produce, plus `unsupported_order_type`. */
export type VenueRejectCode = Exclude<LegRejectCode, 'execution_limit_exceeded' | 'halted_upstream'> | 'unsupported_order_type';

/** Non-blocking adjustments the adapter made to fit the venue grid (the preflight warning codes). */
export type VenueOrderWarning = 'amount_off_increment' | 'price_off_tick';

export interface VenueOrderRequest {
  /** Idempotency reference carried to the venue (one per logical order). */
  client_order_id: string;
  /** The router account the order books against (its connection on this venue). */
  account_id: string;
  /** Exactly one of position_hash or liquidity_hash. */
  position_hash?: string;
  liquidity_hash?: string;
  order_type: OrderType;
  /** USD stake; exactly one of amount or shares. */
  amount?: number;
  /** Contract count. */
  shares?: number;
  /** 0-1, strictly between; the order never fills above it (and a limit rests at it). */
  max_price: number;
  /** Market orders only: `ioc` (default) fills what it can and kills the rest; `fok` fills
   *  everything or nothing (rejected insufficient_size). */
  time_in_force?: 'ioc' | 'fok';
}

export interface VenueOrder {
  partner_id: string;
  /** Empty string on a rejection the venue never assigned an id to. */
  venue_order_id: string;
  client_order_id: string;
  account_id: string;
  position_hash: string;
  liquidity_hash: string | null;
  order_type: OrderType;
  status: VenueOrderStatus;
  /** USD stake as submitted after grid normalization (null when sized in shares). */
  requested_amount: number | null;
  requested_contracts: number | null;
  /** Effective 0-1 limit after rounding to the venue grid (never above max_price). */
  limit_price: number;
  filled_contracts: number;
  /** USD booked (contracts × fill prices, fees excluded). */
  filled_notional: number;
  /** null until something fills. */
  avg_price: number | null;
  /** Venue fees charged on the fills, USD. */
  fees: number;
  /** Contracts still working on the book (resting orders); 0 otherwise. */
  remaining_contracts: number;
  reject_code: VenueRejectCode | null;
  reject_reason: string | null;
  warnings: VenueOrderWarning[];
  /** USD or ATLAS (the practice book). */
  currency: 'USD' | 'ATLAS';
  ts_event: number;
  ts_init: number;
}

export interface VenueCancelRequest {
  account_id: string;
  venue_order_id: string;
}

export interface VenueBalance {
  partner_id: string;
  account_id: string;
  currency: 'USD';
  /** Spendable cash per the venue. */
  balance: number;
  /** Funds the venue holds against working orders (not in balance). */
  held: number;
  credential_status: 'pending' | 'connected' | 'failed';
  ts_event: number;
  ts_init: number;
}

export type BalanceCause = 'order_hold' | 'release' | 'fill' | 'settlement' | 'refresh';

export interface VenueBalanceUpdate extends VenueBalance {
  cause: BalanceCause;
  venue_order_id: string | null;
}

// ---------------------------------------------------------------------------------------------
// Capabilities and the adapter
// ---------------------------------------------------------------------------------------------

export interface VenueCapabilities {
  quotes: {
    /** fetchQuotes works (a REST snapshot). */
    snapshot: boolean;
    /** subscribeQuotes pushes changes. */
    streaming: boolean;
    /** How often to poll fetchQuotes; null for venues that stream. */
    poll_interval_ms: number | null;
    /**
     * Freshness bound: a quote not re-confirmed within this many ms of its ts_init counts as stale
     * (`is_stale` in REST and stream data). It must exceed the longest gap between two
     * confirmations of an unchanged quote, which ingest stretches to QUOTE_RECONFIRM_MS (plus one
     * poll interval for a polling venue); see freshness.ts. null for a venue without quotes.
     */
    freshness_ms: number | null;
  };
  depth: boolean;
  orders: {
    place: boolean;
    cancel: boolean;
    types: OrderType[];
    /** Market orders come back `pending`; the fill arrives on subscribeOrderUpdates. */
    async_fills: boolean;
  };
  balance: boolean;
  trades: boolean;
  game_state: boolean;
  settlements: boolean;
}

/** Everything a caller needs to know about a venue, as data. */
export interface VenueDescription {
  partner: Partner;
  fee: FeeModel;
  capabilities: VenueCapabilities;
}

export type Unsubscribe = () => void;

export interface QuoteFilter {
  contest_ids?: string[];
  position_hashes?: string[];
}

export interface VenueAdapter {
  /** The partner_id. */
  readonly id: string;
  describe(): VenueDescription;
  /** Opens the venue connection; idempotent. Methods reject with `not_connected` before it. */
  connect(): Promise<void>;
  /** Closes the connection and drops every subscription; idempotent. */
  close(): Promise<void>;

  fetchQuotes(filter?: QuoteFilter): Promise<NormalizedQuote[]>;
  subscribeQuotes(listener: (quote: NormalizedQuote) => void, filter?: QuoteFilter): Unsubscribe;
  fetchDepth(positionHash: string): Promise<VenueDepth>;

  placeOrder(req: VenueOrderRequest): Promise<VenueOrder>;
  cancelOrder(req: VenueCancelRequest): Promise<VenueOrder>;
  fetchOrder(accountId: string, venueOrderId: string): Promise<VenueOrder>;
  /** Fills of resting and pending orders, cancellations. */
  subscribeOrderUpdates(listener: (order: VenueOrder) => void): Unsubscribe;

  fetchBalance(accountId: string): Promise<VenueBalance>;
  subscribeBalances(listener: (update: VenueBalanceUpdate) => void): Unsubscribe;

  subscribeTrades(listener: (trade: NormalizedTrade) => void, filter?: { contest_ids?: string[] }): Unsubscribe;

  fetchGameState(contestIds: string[]): Promise<GameStateRecord[]>;
  subscribeGameState(listener: (rec: GameStateRecord) => void, filter?: { contest_ids?: string[] }): Unsubscribe;

  subscribeSettlements(listener: (s: VenueSettlement) => void): Unsubscribe;
}

/** Terminal order statuses (nothing more happens to the order). */
export const TERMINAL_ORDER_STATUSES: readonly VenueOrderStatus[] = ['filled', 'partially_filled', 'rejected', 'cancelled'];
