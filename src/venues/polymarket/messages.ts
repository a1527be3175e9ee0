/**
 * Polymarket wire shapes, as recorded (test/venues/polymarket/fixtures). Only the fields the
 * adapter reads are typed; every payload carries more. Numbers arrive as decimal strings almost
 * everywhere (prices, sizes, epoch-ms timestamps); Gamma's `outcomes`, `outcomePrices` and
 * `clobTokenIds` are JSON arrays encoded as strings.
 */

// ---- Gamma (https://gamma-api.polymarket.com) -------------------------------------------------

export interface GammaTag {
  id: string;
  label: string;
  slug: string;
}

/** `{"rate": 0.03, "exponent": 1, "takerOnly": true, "rebateRate": 0.25}` */
export interface GammaFeeSchedule {
  rate: number;
  exponent: number;
  takerOnly: boolean;
  rebateRate?: number;
}

export interface GammaMarket {
  id: string;
  question: string;
  conditionId: string;
  slug: string;
  /** JSON array in a string: `"[\"Yes\", \"No\"]"`. */
  outcomes: string;
  outcomePrices?: string;
  /** JSON array in a string, token ids in `outcomes` order. */
  clobTokenIds?: string;
  groupItemTitle?: string;
  active: boolean;
  closed: boolean;
  enableOrderBook?: boolean;
  acceptingOrders?: boolean;
  orderPriceMinTickSize?: number;
  orderMinSize?: number;
  negRisk?: boolean;
  negRiskOther?: boolean;
  startDate?: string;
  endDate?: string;
  eventStartTime?: string;
  gameStartTime?: string;
  image?: string;
  icon?: string;
  feesEnabled?: boolean;
  feeType?: string | null;
  feeSchedule?: GammaFeeSchedule;
  /** Legacy fee fields (1000 on fee-charging markets); not the rate charged. */
  makerBaseFee?: number;
  takerBaseFee?: number;
  lastTradePrice?: number;
  bestBid?: number;
  bestAsk?: number;
  /** On `GET /markets`: the market's event(s), without their markets. */
  events?: GammaEvent[];
}

export interface GammaEvent {
  id: string;
  slug: string;
  ticker?: string;
  title: string;
  startDate?: string;
  endDate?: string;
  /** When the real-world event happens (present on some events). */
  startTime?: string;
  active: boolean;
  closed: boolean;
  negRisk?: boolean;
  negRiskMarketID?: string;
  negRiskAugmented?: boolean;
  image?: string;
  tags?: GammaTag[];
  seriesSlug?: string;
  createdAt?: string;
  updatedAt?: string;
  markets?: GammaMarket[];
}

// ---- CLOB REST (https://clob.polymarket.com) --------------------------------------------------

export interface ClobLevel {
  price: string;
  size: string;
}

/** `GET /book?token_id=`: bids ascending, asks descending, so the best of each is LAST. */
export interface ClobBook {
  market: string;
  asset_id: string;
  timestamp?: string;
  hash?: string;
  bids: ClobLevel[];
  asks: ClobLevel[];
  /** The same sides under their early market-channel names. */
  buys?: ClobLevel[];
  sells?: ClobLevel[];
  min_order_size?: string;
  tick_size?: string;
  neg_risk?: boolean;
  last_trade_price?: string;
}

export interface ClobToken {
  token_id: string;
  outcome: string;
  price: number;
  winner: boolean;
}

/** `GET /markets/{condition_id}` and the items of `GET /markets`. */
export interface ClobMarket {
  condition_id: string;
  question: string;
  market_slug: string;
  active: boolean;
  closed: boolean;
  accepting_orders: boolean;
  enable_order_book: boolean;
  minimum_order_size: number;
  minimum_tick_size: number;
  neg_risk: boolean;
  end_date_iso: string | null;
  game_start_time: string | null;
  maker_base_fee: number;
  taker_base_fee: number;
  tokens: ClobToken[];
  tags?: string[];
}

export interface ClobMarketsPage {
  data: ClobMarket[];
  next_cursor: string;
  limit: number;
  count: number;
}

/** `GET /prices-history`: `t` unix seconds, `p` price (ccxt stringified both). */
export interface ClobPricesHistory {
  history: { t: number | string; p: number | string }[];
}

/** Data API `GET /trades?market=<condition_id>` items (timestamps in seconds). */
export interface DataApiTrade {
  proxyWallet: string;
  side: 'BUY' | 'SELL';
  asset: string;
  conditionId: string;
  size: number | string;
  price: number | string;
  timestamp: number | string;
  outcome: string;
  outcomeIndex: number | string;
  transactionHash: string;
}

export interface ClobMakerOrder {
  order_id: string;
  asset_id: string;
  matched_amount: string;
  price: string;
  outcome: string;
  maker_address: string;
  owner?: string;
  fee_rate_bps?: string;
}

/** An account's trade (`GET /data/trades`, user channel `trade`); match_time in seconds. */
export interface ClobUserTrade {
  id: string;
  taker_order_id: string;
  market: string;
  asset_id: string;
  side: 'BUY' | 'SELL';
  size: string;
  price: string;
  fee_rate_bps?: string;
  status: string;
  match_time: string;
  last_update?: string;
  outcome: string;
  trader_side: 'TAKER' | 'MAKER';
  maker_orders: ClobMakerOrder[];
  transaction_hash?: string;
  event_type?: 'trade';
  timestamp?: string;
}

/** User channel `order`: PLACEMENT, UPDATE, CANCELLATION. */
export interface ClobUserOrder {
  event_type: 'order';
  id: string;
  asset_id: string;
  market: string;
  side: 'BUY' | 'SELL';
  price: string;
  original_size: string;
  size_matched: string;
  outcome: string;
  order_type: string;
  status: string;
  type: 'PLACEMENT' | 'UPDATE' | 'CANCELLATION';
  timestamp: string;
}

/** `POST /order` response. */
export interface ClobOrderPostResponse {
  success: boolean;
  orderID: string | null;
  errorMsg: string | null;
  status?: string;
}

/** `DELETE /order` response. */
export interface ClobCancelResponse {
  canceled: string[];
  not_canceled: Record<string, string>;
}

/** `GET /fee-rate?token_id=` (legacy; not the rate charged). */
export interface ClobFeeRate {
  base_fee: string | number;
}

/** Error bodies: `{"error": "Invalid token id"}`. */
export interface ClobErrorBody {
  error?: string;
}

// ---- Market channel (wss://ws-subscriptions-clob.polymarket.com/ws/market) ---------------------

export interface WsBook extends ClobBook {
  event_type: 'book';
}

/** One level change: `size` is the new total at `price` ("0" removes it). */
export interface WsPriceChangeItem {
  asset_id: string;
  price: string;
  size: string;
  side: 'BUY' | 'SELL';
  hash?: string;
  best_bid?: string;
  best_ask?: string;
}

/** Current schema (since 2025-09-15): a list of changes, usually the token and its complement. */
export interface WsPriceChange {
  event_type: 'price_change';
  market: string;
  timestamp: string;
  price_changes?: WsPriceChangeItem[];
  /** Pre-2025 flat schema: one change, fields at the top level. */
  asset_id?: string;
  price?: string;
  size?: string;
  side?: 'BUY' | 'SELL';
  /** Older array name. */
  changes?: { price: string; size: string; side: 'BUY' | 'SELL' }[];
}

export interface WsTickSizeChange {
  event_type: 'tick_size_change';
  asset_id: string;
  market: string;
  old_tick_size: string;
  new_tick_size: string;
  timestamp: string;
}

/** A trade print; `side` is the taker's side on `asset_id`. No trade id. */
export interface WsLastTradePrice {
  event_type: 'last_trade_price';
  asset_id: string;
  market: string;
  price: string;
  size: string;
  side: 'BUY' | 'SELL';
  fee_rate_bps?: string;
  timestamp: string;
  transaction_hash?: string;
}

export interface WsBestBidAsk {
  event_type: 'best_bid_ask';
  market: string;
  asset_id: string;
  best_bid: string;
  best_ask: string;
  spread: string;
  timestamp: string;
}

export interface WsNewMarket {
  event_type: 'new_market';
  id: string;
  question: string;
  market: string;
  slug: string;
  assets_ids: string[];
  outcomes: string[];
  timestamp: string;
  order_price_min_tick_size?: string;
  group_item_title?: string;
  event_message?: { id: string; slug: string; title: string };
}

export interface WsMarketResolved {
  event_type: 'market_resolved';
  id: string;
  market: string;
  assets_ids: string[];
  winning_asset_id: string;
  winning_outcome: string;
  timestamp: string;
}
