/**
 * The simulated market's public shapes: its options, the events it publishes (quotes, trades,
 * game state, settlements, orders, balances, contests opened), the operator's inputs and the
 * state it reports. Plain data.
 */
import type { Contest } from '../domain/catalog.js';
import type { GameState, PositionResult, PriceLevel, TakerAction } from '../venues/types.js';
import type { SimPosition } from './catalog.js';
import type { SimInstrument, SimWireBalanceEvent, SimWireOrderAck } from './messages.js';
import type { SimPartnerId, SimSituationRates } from './personalities.js';

export interface SimMarketOptions {
  seed: number;
  /** The world's "now" (catalog times are relative to it). Defaults to the wall clock. */
  now?: number | Date;
  /** Multiplies quote-update and trade rates (1 = realistic pace). */
  activity?: number;
}

export interface SimQuoteEvent {
  partner_id: SimPartnerId;
  instrument: SimInstrument;
  /** Best first; empty when nothing is offered. Never mutated after emission. */
  levels: readonly PriceLevel[];
  /** Best price, or the last one when the book is empty. */
  last_price: number;
  ts_event: number;
}

export interface SimTradeEvent {
  partner_id: SimPartnerId;
  trade_id: string;
  instrument: SimInstrument;
  taker_action: TakerAction;
  price: number;
  size_contracts: number;
  is_block: boolean;
  trader_id: string | null;
  trader_id_kind: string | null;
  executed_at: number;
}

export interface SimStateEvent {
  contest_id: string;
  state: GameState;
  ts_event: number;
}

export interface SimSettleEvent {
  contest_id: string;
  winner_participant_id: string | null;
  results: { position_hash: string; result: PositionResult }[];
  ts_event: number;
}

export interface SimOrderEvent {
  partner_id: SimPartnerId;
  ack: SimWireOrderAck;
}

export interface SimBalanceEvent {
  partner_id: SimPartnerId;
  event: SimWireBalanceEvent;
}

export interface SetQuoteInput {
  partner_id: string;
  position_hash: string;
  price: number;
  available: number;
  levels?: PriceLevel[];
  /** The side the venue lists the position's participant on (home/away, over/under, yes/no);
   *  naming the opposite side makes this venue list it the wrong way round. Kept until changed. */
  listed_side?: string;
}

export interface EmitTradeInput {
  partner_id: string;
  position_hash: string;
  price: number;
  size_contracts: number;
  taker_action: TakerAction;
  is_block?: boolean;
  trader_id?: string | null;
  /** Unix ms or ISO 8601. Defaults to now. */
  executed_at?: number | string;
}

export interface SimChurnOptions {
  /** A new contest opens this often. */
  every_ms: number;
  /** It starts this long after opening (quoted pre-game meanwhile). */
  lead_ms: number;
  /** And finishes (then settles) this long after its start. */
  duration_ms: number;
}

/** A contest the market opened while running: the catalog rows it adds. */
export interface SimContestOpenedEvent {
  contest: Contest;
  contest_markets: { contest_id: string; market_id: string }[];
  contest_participants: { contest_id: string; participant_id: string; role: 'home' | 'away' | 'entrant' }[];
  positions: SimPosition[];
}

export type SettleInput = { winner_participant_id: string } | { results: Record<string, PositionResult> };

export type CredentialStatus = 'pending' | 'connected' | 'failed';

export interface ConnectAccountInput {
  partner_id: string;
  balance: number;
  credential_status?: CredentialStatus;
}

export interface SimAccountConnection {
  router_account_id: string;
  partner_id: string;
  balance: number;
  held: number;
  credential_status: CredentialStatus;
}

export interface SimVenueState {
  partner_id: string;
  name: string;
  orders_allowed: boolean;
  internal_book: boolean;
  quote_source: 'streaming' | 'polling' | null;
  poll_interval_ms: number | null;
  publishes_trades: boolean;
  listings: number;
  stale: boolean;
  accounts: number;
  /** Situations (signal types) the venue produced on its own since the market was made, by kind. */
  situations: SimSituationRates;
}

export interface SimMarketState {
  seed: number;
  frozen: boolean;
  now_ms: number;
  activity: number;
  running: boolean;
  venues: SimVenueState[];
  listener_errors: number;
}

export type Listener<T> = (ev: T) => void;
