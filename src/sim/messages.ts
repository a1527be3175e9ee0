/**
 * Wire types of the simulated venues. Each personality speaks its own dialect, in its own units,
 * like the real venues it stands for; the adapters parse these into normalized records
 * (parse.ts). Sample payloads live in test/venues/sim/fixtures/.
 */

// ---- sim_exchange: prices in cents, sizes in contracts, ms timestamps --------------------------

/** e.g. {"type":"orderbook_snapshot","market_ticker":"SX-000012","listed_side":"home","asks":[[55,120],[56,400]],"ts_ms":1767225600000,"seq":7} */
export interface ExchangeBookMsg {
  type: 'orderbook_snapshot';
  market_ticker: string;
  listed_side: string;
  /** [price_cents, contracts], best first. */
  asks: [number, number][];
  /** Last best ask, kept when the book is empty. */
  last_price_cents: number;
  ts_ms: number;
  seq: number;
}

export interface ExchangeTradeMsg {
  type: 'trade';
  trade_id: string;
  market_ticker: string;
  taker_side: 'buy' | 'sell';
  price_cents: number;
  count: number;
  is_block: boolean;
  ts_ms: number;
}

// ---- sim_book01: decimal strings, shares, ms timestamps as strings ------------------------------

export interface Book01BookMsg {
  event_type: 'book';
  asset_id: string;
  outcome: string;
  asks: { price: string; size: string }[];
  /** Last best ask, kept when the book is empty. */
  last_price: string;
  /** Taker fee rate in basis points (fee = rate · p · (1 − p) per share). */
  fee_rate_bps: number;
  maker_fee_rate_bps: number;
  timestamp: string;
}

export interface Book01TradeMsg {
  event_type: 'last_trade_price';
  id: string;
  asset_id: string;
  side: 'BUY' | 'SELL';
  price: string;
  size: string;
  /** Taker wallet; null when the venue hides it. */
  taker: string | null;
  timestamp: string;
}

// ---- sim_sportsbook: american odds, stake limits in USD, ISO timestamps -------------------------

export interface SportsbookOfferMsg {
  offer_id: string;
  event_id: string;
  selection: string;
  odds_american: number;
  /** Largest stake the book accepts at these odds, USD. */
  max_stake: number;
  updated_at: string;
}

export interface SportsbookScoreboardMsg {
  event_id: string;
  status: 'pre' | 'in' | 'post';
  /** The book's own status word (e.g. halftime, delayed). */
  status_detail: string;
  clock: { display: string; seconds_left: number; running: boolean } | null;
  period: { number: number; label: string; type: string } | null;
  home_score: number | null;
  away_score: number | null;
  /** [home, away] per period. */
  linescore: [number, number][];
  situation: Record<string, unknown> | null;
  leaderboard: { id: string; name: string; rank: number; score: number | null; status: string }[] | null;
  result: string | null;
  winner_id: string | null;
  updated_at: string;
}

// ---- sim_p2p: decimal odds ladder with USD stake -------------------------------------------------

export interface P2PLineMsg {
  line_id: string;
  listed_side: string;
  offers: { decimal_odds: number; stake: number }[];
  /** Best decimal odds last offered, kept when nothing is offered. */
  last_decimal_odds: number;
  as_of: number;
}

// ---- sim_quotes: implied percent, indicative depth -----------------------------------------------

export interface QuotesFeedMsg {
  id: string;
  side: string;
  implied_pct: number;
  depth_usd: number;
  as_of_ms: number;
}

export type SimWireQuote = ExchangeBookMsg | Book01BookMsg | SportsbookOfferMsg | P2PLineMsg | QuotesFeedMsg;
export type SimWireTrade = ExchangeTradeMsg | Book01TradeMsg;

// ---- orders and accounts (one shape for every sim venue, prices in the venue's native unit) -----

export interface SimWireOrderRequest {
  client_order_id: string;
  account_id: string;
  /** The venue instrument; the practice book takes a position_hash instead. */
  instrument_id?: string;
  position_hash?: string;
  type: 'market' | 'limit';
  /** Exactly one: USD stake or contracts. */
  notional?: number;
  quantity?: number;
  /** Native limit (or the worst acceptable odds on accept-by-id venues). */
  limit_px: number;
  tif: 'ioc' | 'fok' | 'gtc';
}

export type SimWireOrderState = 'FILLED' | 'PARTIAL' | 'OPEN' | 'PENDING' | 'REJECTED' | 'CANCELLED';

export interface SimWireOrderAck {
  order_id: string;
  client_order_id: string;
  account_id: string;
  instrument_id: string | null;
  position_hash: string | null;
  state: SimWireOrderState;
  type: 'market' | 'limit';
  requested_notional: number | null;
  requested_qty: number | null;
  limit_px: number;
  filled_qty: number;
  filled_notional: number;
  /** Native unit; null until something fills. */
  avg_px: number | null;
  fee: number;
  open_qty: number;
  /** The venue's own reject reason (mapped by errors.ts). */
  reject_reason: string | null;
  reject_message: string | null;
  currency: 'USD' | 'ATLAS';
  ts: number;
}

export interface SimWireBalance {
  account_id: string;
  available_usd: number;
  held_usd: number;
  credential_status: 'pending' | 'connected' | 'failed';
  ts: number;
}

export interface SimWireBalanceEvent extends SimWireBalance {
  reason: 'ORDER_HOLD' | 'RELEASE' | 'FILL' | 'SETTLEMENT' | 'REFRESH';
  order_id: string | null;
}

export interface SimWireSettlement {
  event_ref: string;
  winner_id: string | null;
  /** Instrument id (or position_hash on the practice book) → WIN | LOSE | PUSH. */
  outcomes: { ref: string; outcome: 'WIN' | 'LOSE' | 'PUSH' }[];
  ts: number;
}

/** A venue instrument: what a real adapter learns from the venue's market list. */
export interface SimInstrument {
  instrument_id: string;
  position_hash: string;
  contest_id: string;
  liquidity_hash: string;
  venue_side_key: string;
}

/** The venue-side error body (sim wire). */
export interface SimWireError {
  error: string;
  message: string;
}
