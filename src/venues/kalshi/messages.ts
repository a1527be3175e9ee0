/**
 * Kalshi wire types (Trade API v2, OpenAPI 3.10.0 and the AsyncAPI of the WebSocket), as the venue
 * sends them. Two generations coexist in recordings and every parser accepts both:
 * - current: prices as fixed-point dollar strings (`*_dollars`, up to 6 decimals) and contract counts
 *   as fixed-point strings (`*_fp`, 2 decimals; fractional on `fractional_trading_enabled` markets);
 * - legacy (until early 2026): integer cents (`yes_bid: 61`) and integer counts (`count: 103`).
 * Balances are integer cents in both. Fields are optional where either generation may omit them.
 */

/** A fixed-point decimal as text ("0.1200", "9.40") or, in legacy payloads, an integer. */
export type Decimal = string | number;

export interface KalshiPriceRange {
  start: string;
  end: string;
  step: string;
}

export interface KalshiMarket {
  ticker: string;
  event_ticker: string;
  market_type?: 'binary' | 'scalar' | string;
  title?: string;
  subtitle?: string;
  yes_sub_title?: string;
  no_sub_title?: string;
  status?: string;
  open_time?: string;
  close_time?: string;
  created_time?: string;
  updated_time?: string;
  occurrence_datetime?: string;
  expected_expiration_time?: string | null;
  latest_expiration_time?: string;
  result?: string;
  can_close_early?: boolean;
  fractional_trading_enabled?: boolean;
  price_level_structure?: string;
  price_ranges?: KalshiPriceRange[];
  /** Legacy: 1 (cent). */
  tick_size?: number;
  notional_value_dollars?: string;
  /** Legacy: 100 (cents). */
  notional_value?: number;
  yes_bid_dollars?: string;
  yes_ask_dollars?: string;
  no_bid_dollars?: string;
  no_ask_dollars?: string;
  yes_bid_size_fp?: string;
  yes_ask_size_fp?: string;
  last_price_dollars?: string;
  yes_bid?: number;
  yes_ask?: number;
  no_bid?: number;
  no_ask?: number;
  last_price?: number;
  strike_type?: string;
  floor_strike?: number;
  cap_strike?: number;
  mve_collection_ticker?: string;
  rules_primary?: string;
  [extra: string]: unknown;
}

export interface KalshiMarketsResponse {
  cursor?: string;
  markets: KalshiMarket[];
}

export interface KalshiMarketResponse {
  market: KalshiMarket;
}

export interface KalshiEvent {
  event_ticker: string;
  series_ticker: string;
  title?: string;
  sub_title?: string;
  mutually_exclusive?: boolean;
  category?: string;
  strike_date?: string | null;
  markets?: KalshiMarket[];
  [extra: string]: unknown;
}

export interface KalshiEventResponse {
  event: KalshiEvent;
  markets?: KalshiMarket[];
}

export type KalshiFeeType = 'quadratic' | 'quadratic_with_maker_fees' | 'flat';

export interface KalshiSeries {
  ticker: string;
  title?: string;
  category?: string;
  frequency?: string;
  tags?: string[];
  fee_type?: KalshiFeeType | string;
  fee_multiplier?: number;
  [extra: string]: unknown;
}

export interface KalshiSeriesResponse {
  series: KalshiSeries;
}

/** One book level: [price, count]. Current: ["0.8800", "1967.33"]; legacy: [88, 1967]. */
export type KalshiLevel = [Decimal, Decimal];

/** REST order book: current `orderbook_fp`, legacy `orderbook` (cents; a side may be null). */
export interface KalshiOrderbookResponse {
  orderbook_fp?: { yes_dollars?: KalshiLevel[] | null; no_dollars?: KalshiLevel[] | null };
  orderbook?: { yes?: KalshiLevel[] | null; no?: KalshiLevel[] | null; yes_dollars?: KalshiLevel[] | null; no_dollars?: KalshiLevel[] | null };
}

export interface KalshiTrade {
  trade_id: string;
  ticker?: string;
  market_ticker?: string;
  count_fp?: string;
  count?: number;
  yes_price_dollars?: string;
  no_price_dollars?: string;
  yes_price?: number;
  no_price?: number;
  taker_side: 'yes' | 'no';
  taker_outcome_side?: string;
  taker_book_side?: string;
  is_block_trade?: boolean;
  created_time?: string;
  ts?: number;
  ts_ms?: number;
}

export interface KalshiTradesResponse {
  cursor?: string;
  trades: KalshiTrade[];
}

export type KalshiOrderStatus = 'resting' | 'canceled' | 'executed' | 'pending' | string;

export interface KalshiOrder {
  order_id: string;
  client_order_id?: string;
  ticker: string;
  side: 'yes' | 'no';
  action: 'buy' | 'sell';
  type?: string;
  status: KalshiOrderStatus;
  yes_price_dollars?: string;
  no_price_dollars?: string;
  yes_price?: number;
  no_price?: number;
  fill_count_fp?: string;
  remaining_count_fp?: string;
  initial_count_fp?: string;
  fill_count?: number;
  remaining_count?: number;
  initial_count?: number;
  taker_fill_cost_dollars?: string;
  maker_fill_cost_dollars?: string;
  taker_fees_dollars?: string;
  maker_fees_dollars?: string;
  taker_fill_cost?: number;
  maker_fill_cost?: number;
  taker_fees?: number;
  maker_fees?: number;
  created_time?: string | null;
  last_update_time?: string | null;
  expiration_time?: string | null;
  user_id?: string;
  [extra: string]: unknown;
}

export interface KalshiOrderResponse {
  order: KalshiOrder;
  reduced_by?: number;
  reduced_by_fp?: string;
}

export interface KalshiOrdersResponse {
  cursor?: string;
  orders: KalshiOrder[];
}

export interface KalshiCreateOrderRequest {
  ticker: string;
  side: 'yes' | 'no';
  action: 'buy' | 'sell';
  count: number;
  type: 'limit';
  yes_price_dollars?: string;
  no_price_dollars?: string;
  client_order_id: string;
  time_in_force?: 'fill_or_kill' | 'immediate_or_cancel' | 'good_till_canceled';
}

export interface KalshiBalanceResponse {
  /** Cents. */
  balance: number;
  /** Cents. */
  portfolio_value?: number;
  /** Unix seconds. */
  updated_ts?: number;
}

export interface KalshiFill {
  fill_id?: string;
  trade_id: string;
  order_id: string;
  ticker?: string;
  market_ticker?: string;
  side: 'yes' | 'no';
  action: 'buy' | 'sell';
  count_fp?: string;
  count?: number;
  yes_price_dollars?: string;
  no_price_dollars?: string;
  yes_price_fixed?: string;
  no_price_fixed?: string;
  yes_price?: number;
  no_price?: number;
  /** Legacy: the YES price in dollars as a float, also on NO fills. */
  price?: number;
  is_taker?: boolean;
  fee_cost?: string;
  created_time?: string;
  ts?: number;
}

export interface KalshiFillsResponse {
  cursor?: string;
  fills: KalshiFill[];
}

export interface KalshiErrorBody {
  error?: { code?: string; message?: string; details?: string; service?: string } | string;
}

// ---- WebSocket --------------------------------------------------------------------------------

export interface KalshiWsCommand {
  id: number;
  cmd: 'subscribe' | 'unsubscribe' | 'update_subscription' | 'list_subscriptions';
  params?: Record<string, unknown>;
}

export interface WsSnapshotMsg {
  market_ticker: string;
  market_id?: string;
  /** Absent when the side has no orders (not the same as an empty list). */
  yes_dollars_fp?: KalshiLevel[];
  no_dollars_fp?: KalshiLevel[];
  /** Legacy cent ladders. */
  yes?: KalshiLevel[];
  no?: KalshiLevel[];
}

export interface WsDeltaMsg {
  market_ticker: string;
  market_id?: string;
  price_dollars?: string;
  delta_fp?: string;
  /** Legacy: cents and integer delta. */
  price?: number;
  delta?: number;
  side: 'yes' | 'no';
  ts?: string | number;
  ts_ms?: number;
}

export interface WsTradeMsg extends Omit<KalshiTrade, 'created_time'> {
  market_ticker: string;
}

/**
 * One frame. `msg` by type: subscribed {channel, sid}; error {code, msg}; orderbook_snapshot
 * WsSnapshotMsg; orderbook_delta WsDeltaMsg; trade WsTradeMsg; user_order KalshiOrder; ok/unsubscribed
 * carry sid+seq when addressed to a subscription (and consume its seq).
 */
export interface KalshiWsFrame {
  type: string;
  id?: number;
  sid?: number;
  seq?: number;
  msg?: unknown;
}
