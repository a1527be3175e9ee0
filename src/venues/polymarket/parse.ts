/**
 * Pure parsers: Polymarket wire payloads → plain records. No I/O and no clock (records carry the
 * venue's own timestamps; callers add ts_init). Prices become numbers in (0, 1), sizes numbers of
 * shares, timestamps unix ms. A payload that does not fit throws VenueError non_retryable
 * `malformed_message`; the feed counts it and goes on.
 *
 * Books: REST `/book` and WS `book` list bids ascending and asks descending, so the best level of
 * each is the LAST element. Parsed books hold both sides best first (bids descending, asks
 * ascending), sorted explicitly rather than reversed, so a payload in any order reads the same.
 */
import { fnv64Hex } from '../../domain/hashes.js';
import { round6 } from '../../domain/prices.js';
import { VenueError } from '../errors.js';
import type {
  ClobBook,
  ClobCancelResponse,
  ClobLevel,
  ClobMarket,
  ClobMarketsPage,
  ClobOrderPostResponse,
  ClobUserOrder,
  ClobUserTrade,
  DataApiTrade,
  GammaEvent,
  GammaFeeSchedule,
  GammaMarket,
} from './messages.js';

export const PARTNER_ID = 'polymarket';

export const malformed = (what: string, detail?: string) =>
  new VenueError('non_retryable', 'malformed_message', `polymarket: malformed ${what}${detail ? `: ${detail}` : ''}`, { partner_id: PARTNER_ID });

const DECIMAL = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/** A decimal string or a finite number. */
export function num(x: unknown, what: string): number {
  if (typeof x === 'number') {
    if (Number.isFinite(x)) return x;
  } else if (typeof x === 'string' && DECIMAL.test(x.trim())) {
    return Number(x);
  }
  throw malformed(what, JSON.stringify(x));
}

const optNum = (x: unknown, what: string): number | null => (x === undefined || x === null || x === '' ? null : num(x, what));

function str(x: unknown, what: string): string {
  if (typeof x !== 'string' || x.length === 0) throw malformed(what, JSON.stringify(x));
  return x;
}

/** A 0-1 price (exclusive at neither end: resolved markets print 0 and 1). */
function price(x: unknown, what: string): number {
  const p = num(x, what);
  if (p < 0 || p > 1) throw malformed(what, `price ${p} outside 0-1`);
  return p;
}

/** Epoch ms from a string or number; Polymarket stamps books and frames in ms. */
export function epochMs(x: unknown, what: string): number {
  const t = num(x, what);
  if (!Number.isInteger(t) || t < 0) throw malformed(what, String(x));
  return t;
}

/** Epoch seconds (Data API, CLOB trades' match_time, prices-history) → ms. */
export function epochSecondsToMs(x: unknown, what: string): number {
  return epochMs(x, what) * 1000;
}

/** ISO-8601 → ms, or null when absent/unparseable. */
export function isoMs(x: unknown): number | null {
  if (typeof x !== 'string' || x.length === 0) return null;
  const t = Date.parse(x);
  return Number.isFinite(t) ? t : null;
}

/** Gamma's JSON-in-a-string arrays (`"[\"Yes\", \"No\"]"`), parsed the second time. */
export function parseJsonStringArray(x: unknown, what: string): string[] {
  let v: unknown = x;
  if (typeof x === 'string') {
    try {
      v = JSON.parse(x);
    } catch {
      throw malformed(what, 'not JSON');
    }
  }
  if (!Array.isArray(v) || v.some((e) => typeof e !== 'string')) throw malformed(what, 'not an array of strings');
  return v as string[];
}

// ---- Gamma ------------------------------------------------------------------------------------

export interface PmFeeSchedule {
  rate: number;
  exponent: number;
  taker_only: boolean;
  rebate_rate: number | null;
}

/** One Gamma market with its strings parsed. */
export interface PmMarket {
  gamma_id: string;
  condition_id: string;
  question: string;
  slug: string;
  /** groupItemTitle: the runner's name in a neg-risk event ("Carolina Hurricanes"). */
  group_item_title: string | null;
  outcomes: string[];
  outcome_prices: number[] | null;
  token_ids: string[];
  active: boolean;
  closed: boolean;
  enable_order_book: boolean;
  accepting_orders: boolean;
  tick_size: number | null;
  min_order_size: number | null;
  neg_risk: boolean;
  neg_risk_other: boolean;
  start_ms: number | null;
  end_ms: number | null;
  /** When the real-world event starts (eventStartTime / gameStartTime), when given. */
  event_start_ms: number | null;
  image_url: string | null;
  fees_enabled: boolean | null;
  fee_type: string | null;
  fee_schedule: PmFeeSchedule | null;
  /** The event this market belongs to, when the payload nests it (GET /markets). */
  event: GammaEvent | null;
}

function feeSchedule(x: GammaFeeSchedule | undefined): PmFeeSchedule | null {
  if (x === undefined || x === null) return null;
  if (typeof x !== 'object') throw malformed('feeSchedule');
  return {
    rate: num(x.rate, 'feeSchedule.rate'),
    exponent: num(x.exponent, 'feeSchedule.exponent'),
    taker_only: x.takerOnly !== false,
    rebate_rate: optNum(x.rebateRate, 'feeSchedule.rebateRate'),
  };
}

/**
 * {"id":"553824","question":"Will the Carolina Hurricanes win the 2026 NHL Stanley Cup?","conditionId":"0x…",
 *  "outcomes":"[\"Yes\", \"No\"]","clobTokenIds":"[\"…\", \"…\"]","orderPriceMinTickSize":0.01,"orderMinSize":5,
 *  "negRisk":true,"feesEnabled":true,"feeSchedule":{"rate":0.03,"exponent":1,"takerOnly":true,"rebateRate":0.25}, …}
 */
export function parseGammaMarket(m: GammaMarket): PmMarket {
  if (typeof m !== 'object' || m === null) throw malformed('Gamma market');
  const outcomes = parseJsonStringArray(m.outcomes, `market ${m.id} outcomes`);
  const tokenIds = m.clobTokenIds === undefined || m.clobTokenIds === null ? [] : parseJsonStringArray(m.clobTokenIds, `market ${m.id} clobTokenIds`);
  const prices = m.outcomePrices === undefined || m.outcomePrices === null ? null : parseJsonStringArray(m.outcomePrices, `market ${m.id} outcomePrices`).map((p) => num(p, 'outcome price'));
  return {
    gamma_id: str(String(m.id ?? ''), 'market id'),
    condition_id: str(m.conditionId, `market ${m.id} conditionId`),
    question: typeof m.question === 'string' ? m.question.trim() : '',
    slug: typeof m.slug === 'string' ? m.slug : '',
    group_item_title: typeof m.groupItemTitle === 'string' && m.groupItemTitle.trim() !== '' ? m.groupItemTitle.trim() : null,
    outcomes,
    outcome_prices: prices,
    token_ids: tokenIds,
    active: m.active === true,
    closed: m.closed === true,
    enable_order_book: m.enableOrderBook !== false,
    accepting_orders: m.acceptingOrders !== false,
    tick_size: optNum(m.orderPriceMinTickSize, 'orderPriceMinTickSize'),
    min_order_size: optNum(m.orderMinSize, 'orderMinSize'),
    neg_risk: m.negRisk === true,
    neg_risk_other: m.negRiskOther === true,
    start_ms: isoMs(m.startDate),
    end_ms: isoMs(m.endDate),
    event_start_ms: isoMs(m.eventStartTime) ?? isoMs(m.gameStartTime),
    image_url: typeof m.icon === 'string' && m.icon ? m.icon : typeof m.image === 'string' && m.image ? m.image : null,
    fees_enabled: typeof m.feesEnabled === 'boolean' ? m.feesEnabled : null,
    fee_type: typeof m.feeType === 'string' ? m.feeType : null,
    fee_schedule: feeSchedule(m.feeSchedule),
    event: Array.isArray(m.events) && m.events.length > 0 ? m.events[0]! : null,
  };
}

/** One Gamma event with its nested markets parsed (GET /events). */
export interface PmEvent {
  id: string;
  slug: string;
  title: string;
  active: boolean;
  closed: boolean;
  neg_risk: boolean;
  neg_risk_augmented: boolean;
  start_ms: number | null;
  end_ms: number | null;
  /** startTime: when the real-world event happens, when given. */
  start_time_ms: number | null;
  created_ms: number | null;
  updated_ms: number | null;
  image_url: string | null;
  tags: { id: string; slug: string; label: string }[];
  series_slug: string | null;
  markets: PmMarket[];
}

export function parseGammaEvent(e: GammaEvent): PmEvent {
  if (typeof e !== 'object' || e === null) throw malformed('Gamma event');
  const tags = Array.isArray(e.tags)
    ? e.tags.filter((t) => t && typeof t.slug === 'string').map((t) => ({ id: String(t.id), slug: t.slug, label: typeof t.label === 'string' ? t.label : t.slug }))
    : [];
  return {
    id: str(String(e.id ?? ''), 'event id'),
    slug: typeof e.slug === 'string' ? e.slug : '',
    title: typeof e.title === 'string' ? e.title.trim() : '',
    active: e.active === true,
    closed: e.closed === true,
    neg_risk: e.negRisk === true,
    neg_risk_augmented: e.negRiskAugmented === true,
    start_ms: isoMs(e.startDate),
    end_ms: isoMs(e.endDate),
    start_time_ms: isoMs(e.startTime),
    created_ms: isoMs(e.createdAt),
    updated_ms: isoMs(e.updatedAt),
    image_url: typeof e.image === 'string' && e.image ? e.image : null,
    tags,
    series_slug: typeof e.seriesSlug === 'string' && e.seriesSlug ? e.seriesSlug : null,
    markets: Array.isArray(e.markets) ? e.markets.map(parseGammaMarket) : [],
  };
}

/**
 * GET /markets answers markets with their event nested (without its markets): group them back
 * into events, in first-seen order, so both endpoints build the catalog the same way. A market
 * with no event becomes an event of its own.
 */
export function eventsFromGammaMarkets(markets: GammaMarket[]): PmEvent[] {
  const out = new Map<string, PmEvent>();
  for (const raw of markets) {
    const m = parseGammaMarket(raw);
    const ev = m.event ?? ({ id: `m${m.gamma_id}`, slug: m.slug, title: m.question, active: m.active, closed: m.closed, negRisk: m.neg_risk } as GammaEvent);
    let e = out.get(String(ev.id));
    if (!e) out.set(String(ev.id), (e = parseGammaEvent({ ...ev, markets: [] })));
    e.markets.push(m);
  }
  return [...out.values()];
}

// ---- CLOB books and markets -------------------------------------------------------------------

export interface PmLevel {
  price: number;
  size: number;
}

export interface PmBook {
  token_id: string;
  condition_id: string;
  /** Best (highest) first. */
  bids: PmLevel[];
  /** Best (lowest) first. */
  asks: PmLevel[];
  ts: number | null;
  hash: string | null;
  tick_size: number | null;
  min_order_size: number | null;
  neg_risk: boolean | null;
  last_trade_price: number | null;
}

function levels(xs: ClobLevel[] | undefined, what: string): PmLevel[] {
  if (xs === undefined || xs === null) return [];
  if (!Array.isArray(xs)) throw malformed(what);
  const out: PmLevel[] = [];
  for (const l of xs) {
    const size = num(l?.size, `${what} size`);
    if (size < 0) throw malformed(`${what} size`, String(l.size));
    if (size === 0) continue;
    out.push({ price: price(l.price, `${what} price`), size });
  }
  return out;
}

/**
 * {"market":"0x…","asset_id":"…","timestamp":"1728799418260","hash":"…",
 *  "bids":[{"price":"0.01","size":"1000"},…,{"price":"0.1","size":"125"}],
 *  "asks":[{"price":"0.98","size":"5000"},…,{"price":"0.14","size":"705"}],"tick_size":"0.01","min_order_size":"5","neg_risk":false}
 * The best bid (0.1) and best ask (0.14) are the last elements.
 */
export function parseBook(b: ClobBook): PmBook {
  if (typeof b !== 'object' || b === null) throw malformed('book');
  return {
    token_id: str(b.asset_id, 'book asset_id'),
    condition_id: typeof b.market === 'string' ? b.market : '',
    // Early market-channel books named the sides `buys` / `sells`.
    bids: levels(b.bids ?? b.buys, 'bid').sort((x, y) => y.price - x.price),
    asks: levels(b.asks ?? b.sells, 'ask').sort((x, y) => x.price - y.price),
    ts: b.timestamp === undefined ? null : epochMs(b.timestamp, 'book timestamp'),
    hash: typeof b.hash === 'string' ? b.hash : null,
    tick_size: optNum(b.tick_size, 'book tick_size'),
    min_order_size: optNum(b.min_order_size, 'book min_order_size'),
    neg_risk: typeof b.neg_risk === 'boolean' ? b.neg_risk : null,
    last_trade_price: b.last_trade_price === undefined || b.last_trade_price === '' ? null : price(b.last_trade_price, 'last_trade_price'),
  };
}

/** `POST /books` answers an array of books. */
export function parseBooks(x: unknown): PmBook[] {
  if (!Array.isArray(x)) throw malformed('books', 'not an array');
  return x.map((b) => parseBook(b as ClobBook));
}

export interface PmClobMarket {
  condition_id: string;
  question: string;
  slug: string;
  active: boolean;
  closed: boolean;
  accepting_orders: boolean;
  enable_order_book: boolean;
  tick_size: number;
  min_order_size: number;
  neg_risk: boolean;
  end_ms: number | null;
  game_start_ms: number | null;
  tokens: { token_id: string; outcome: string; price: number; winner: boolean }[];
}

/** {"condition_id":"0x…","minimum_tick_size":0.01,"minimum_order_size":5,"neg_risk":false,"tokens":[{"token_id":"…","outcome":"Yes","price":1,"winner":true},…],…} */
export function parseClobMarket(m: ClobMarket): PmClobMarket {
  if (typeof m !== 'object' || m === null || !Array.isArray(m.tokens)) throw malformed('CLOB market');
  return {
    condition_id: str(m.condition_id, 'condition_id'),
    question: typeof m.question === 'string' ? m.question : '',
    slug: typeof m.market_slug === 'string' ? m.market_slug : '',
    active: m.active === true,
    closed: m.closed === true,
    accepting_orders: m.accepting_orders === true,
    enable_order_book: m.enable_order_book === true,
    tick_size: num(m.minimum_tick_size, 'minimum_tick_size'),
    min_order_size: num(m.minimum_order_size, 'minimum_order_size'),
    neg_risk: m.neg_risk === true,
    end_ms: isoMs(m.end_date_iso),
    game_start_ms: isoMs(m.game_start_time),
    tokens: m.tokens.map((t) => ({ token_id: str(t.token_id, 'token_id'), outcome: String(t.outcome), price: price(t.price, 'token price'), winner: t.winner === true })),
  };
}

export function parseClobMarketsPage(p: ClobMarketsPage): { markets: PmClobMarket[]; next_cursor: string | null } {
  if (typeof p !== 'object' || p === null || !Array.isArray(p.data)) throw malformed('CLOB markets page');
  // "LTE=" is the CLOB's end-of-list cursor.
  const next = typeof p.next_cursor === 'string' && p.next_cursor !== '' && p.next_cursor !== 'LTE=' ? p.next_cursor : null;
  return { markets: p.data.map(parseClobMarket), next_cursor: next };
}

/** {"history":[{"t":"1781282044","p":"0.151"},…]}: t seconds → ms. */
export function parsePricesHistory(x: { history?: unknown }): { ts: number; price: number }[] {
  if (typeof x !== 'object' || x === null || !Array.isArray(x.history)) throw malformed('prices-history');
  return (x.history as { t: unknown; p: unknown }[]).map((pt) => ({ ts: epochSecondsToMs(pt.t, 'history t'), price: price(pt.p, 'history p') }));
}

// ---- Trades -----------------------------------------------------------------------------------

/** A public trade print on one token: the taker's side on that token. */
export interface PmTrade {
  trade_id: string;
  token_id: string;
  condition_id: string;
  side: 'buy' | 'sell';
  price: number;
  size: number;
  ts: number;
  /** The taker's wallet where the source names it (Data API), else null. */
  wallet: string | null;
}

function side(x: unknown, what: string): 'buy' | 'sell' {
  if (x === 'BUY') return 'buy';
  if (x === 'SELL') return 'sell';
  throw malformed(what, JSON.stringify(x));
}

/**
 * {"event_type":"last_trade_price","asset_id":"…","market":"0x…","price":"0.491","side":"SELL","size":"85.36","timestamp":"1724564136087"}
 * The frame has no trade id: one is derived from its fields (two identical prints in the same
 * millisecond count once).
 */
export function parseLastTradePrice(f: { asset_id?: unknown; market?: unknown; price?: unknown; size?: unknown; side?: unknown; timestamp?: unknown; transaction_hash?: unknown }): PmTrade {
  const token = str(f.asset_id, 'trade asset_id');
  const ts = epochMs(f.timestamp, 'trade timestamp');
  const p = price(f.price, 'trade price');
  const size = num(f.size, 'trade size');
  if (!(size > 0)) throw malformed('trade size', String(f.size));
  const s = side(f.side, 'trade side');
  const basis = [token, ts, f.price, f.size, f.side, typeof f.transaction_hash === 'string' ? f.transaction_hash : ''].join('|');
  return { trade_id: `lt-${ts}-${fnv64Hex(basis)}`, token_id: token, condition_id: typeof f.market === 'string' ? f.market : '', side: s, price: p, size, ts, wallet: null };
}

/** Data API `GET /trades` item: seconds, ccxt-stringified numbers, the taker's proxy wallet. */
export function parseDataApiTrade(t: DataApiTrade): PmTrade {
  if (typeof t !== 'object' || t === null) throw malformed('Data API trade');
  const ts = epochSecondsToMs(t.timestamp, 'trade timestamp');
  const token = str(t.asset, 'trade asset');
  const basis = [token, ts, t.price, t.size, t.side, t.proxyWallet].join('|');
  const size = num(t.size, 'trade size');
  if (!(size > 0)) throw malformed('trade size', String(t.size));
  return {
    trade_id: `${str(t.transactionHash, 'transactionHash')}-${fnv64Hex(basis)}`,
    token_id: token,
    condition_id: typeof t.conditionId === 'string' ? t.conditionId : '',
    side: side(t.side, 'trade side'),
    price: price(t.price, 'trade price'),
    size,
    ts,
    wallet: typeof t.proxyWallet === 'string' && t.proxyWallet ? t.proxyWallet : null,
  };
}

// ---- Account records (for when signing is built; parsed and tested now) ------------------------

export interface PmUserTrade {
  id: string;
  token_id: string;
  condition_id: string;
  side: 'buy' | 'sell';
  price: number;
  size: number;
  status: string;
  /** TAKER or MAKER: which of our orders this trade is about. */
  role: 'taker' | 'maker';
  match_ms: number;
  fee_rate_bps: number | null;
  maker_orders: { order_id: string; token_id: string; price: number; matched: number; outcome: string }[];
}

/** `GET /data/trades` item and user-channel `trade` frame (match_time in seconds). */
export function parseUserTrade(t: ClobUserTrade): PmUserTrade {
  if (typeof t !== 'object' || t === null || !Array.isArray(t.maker_orders)) throw malformed('user trade');
  return {
    id: str(t.id, 'trade id'),
    token_id: str(t.asset_id, 'trade asset_id'),
    condition_id: typeof t.market === 'string' ? t.market : '',
    side: side(t.side, 'trade side'),
    price: price(t.price, 'trade price'),
    size: num(t.size, 'trade size'),
    status: str(t.status, 'trade status'),
    role: t.trader_side === 'MAKER' ? 'maker' : 'taker',
    match_ms: epochSecondsToMs(t.match_time, 'match_time'),
    fee_rate_bps: optNum(t.fee_rate_bps, 'fee_rate_bps'),
    maker_orders: t.maker_orders.map((o) => ({
      order_id: str(o.order_id, 'maker order_id'),
      token_id: str(o.asset_id, 'maker asset_id'),
      price: price(o.price, 'maker price'),
      matched: num(o.matched_amount, 'maker matched_amount'),
      outcome: String(o.outcome),
    })),
  };
}

export interface PmUserOrder {
  order_id: string;
  token_id: string;
  side: 'buy' | 'sell';
  price: number;
  original_size: number;
  size_matched: number;
  status: string;
  change: 'placement' | 'update' | 'cancellation';
  ts: number;
}

export function parseUserOrder(o: ClobUserOrder): PmUserOrder {
  if (typeof o !== 'object' || o === null) throw malformed('user order');
  const change = o.type === 'PLACEMENT' ? 'placement' : o.type === 'UPDATE' ? 'update' : o.type === 'CANCELLATION' ? 'cancellation' : null;
  if (change === null) throw malformed('user order type', String(o.type));
  return {
    order_id: str(o.id, 'order id'),
    token_id: str(o.asset_id, 'order asset_id'),
    side: side(o.side, 'order side'),
    price: price(o.price, 'order price'),
    original_size: num(o.original_size, 'original_size'),
    size_matched: num(o.size_matched, 'size_matched'),
    status: str(o.status, 'order status'),
    change,
    ts: epochMs(o.timestamp, 'order timestamp'),
  };
}

export function parseOrderPostResponse(r: ClobOrderPostResponse): { accepted: boolean; order_id: string | null; error: string | null } {
  if (typeof r !== 'object' || r === null || typeof r.success !== 'boolean') throw malformed('order response');
  return { accepted: r.success, order_id: typeof r.orderID === 'string' && r.orderID ? r.orderID : null, error: typeof r.errorMsg === 'string' && r.errorMsg ? r.errorMsg : null };
}

export function parseCancelResponse(r: ClobCancelResponse): { canceled: string[]; not_canceled: { order_id: string; reason: string }[] } {
  if (typeof r !== 'object' || r === null || !Array.isArray(r.canceled)) throw malformed('cancel response');
  const nc = r.not_canceled && typeof r.not_canceled === 'object' ? r.not_canceled : {};
  return { canceled: r.canceled.map(String), not_canceled: Object.entries(nc).map(([order_id, reason]) => ({ order_id, reason: String(reason) })) };
}

/** `GET /fee-rate`: base_fee in bps. Legacy: not the rate Polymarket charges (see fees.ts). */
export function parseFeeRate(r: { base_fee?: unknown }): { base_fee_bps: number } {
  if (typeof r !== 'object' || r === null) throw malformed('fee-rate');
  return { base_fee_bps: num(r.base_fee, 'base_fee') };
}

/** `{"error": "Invalid token id"}` → the message (or the raw text when it is not that shape). */
export function parseErrorBody(text: string): string {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && typeof (v as { error?: unknown }).error === 'string') return (v as { error: string }).error;
  } catch {
    // not JSON: the text itself is the message
  }
  return text.slice(0, 500);
}

// ---- Market channel frames --------------------------------------------------------------------

export interface PmLevelChange {
  token_id: string;
  side: 'bid' | 'ask';
  price: number;
  /** The new total at the level; 0 removes it. */
  size: number;
  /** The token's touch after the change, as the venue reports it (current schema only). */
  best_bid: number | null;
  best_ask: number | null;
}

export type PmMarketFrame =
  | { kind: 'book'; book: PmBook }
  | { kind: 'price_change'; condition_id: string; ts: number; changes: PmLevelChange[] }
  | { kind: 'tick_size_change'; token_id: string; condition_id: string; old_tick_size: number; new_tick_size: number; ts: number }
  | { kind: 'last_trade_price'; trade: PmTrade }
  | { kind: 'best_bid_ask'; token_id: string; best_bid: number | null; best_ask: number | null; ts: number }
  | { kind: 'new_market'; condition_id: string; gamma_id: string; question: string; token_ids: string[]; outcomes: string[]; tick_size: number | null; ts: number }
  | { kind: 'market_resolved'; condition_id: string; token_ids: string[]; winning_token_id: string; winning_outcome: string; ts: number }
  | { kind: 'pong' }
  | { kind: 'ignored'; event_type: string };

function levelSide(x: unknown): 'bid' | 'ask' {
  // A BUY change is a bid level, a SELL change an ask level.
  return side(x, 'price_change side') === 'buy' ? 'bid' : 'ask';
}

function change(it: Record<string, unknown>, fallbackToken: string | null): PmLevelChange {
  const size = num(it.size, 'price_change size');
  if (size < 0) throw malformed('price_change size', String(it.size));
  return {
    token_id: str(it.asset_id ?? fallbackToken, 'price_change asset_id'),
    side: levelSide(it.side),
    price: price(it.price, 'price_change price'),
    size,
    best_bid: it.best_bid === undefined || it.best_bid === '' ? null : price(it.best_bid, 'best_bid'),
    best_ask: it.best_ask === undefined || it.best_ask === '' ? null : price(it.best_ask, 'best_ask'),
  };
}

/** One JSON object of the market channel → a frame. Unknown event types are `ignored`, not errors. */
export function parseMarketFrame(f: Record<string, unknown>): PmMarketFrame {
  if (typeof f !== 'object' || f === null) throw malformed('market frame');
  const type = f.event_type;
  switch (type) {
    case 'book':
      return { kind: 'book', book: parseBook(f as unknown as ClobBook) };
    case 'price_change': {
      const ts = epochMs(f.timestamp, 'price_change timestamp');
      const market = typeof f.market === 'string' ? f.market : '';
      let changes: PmLevelChange[];
      if (Array.isArray(f.price_changes)) {
        // Current schema: each item names its token (usually the token and its complement).
        changes = (f.price_changes as Record<string, unknown>[]).map((it) => change(it, null));
      } else if (Array.isArray(f.changes)) {
        // Older array schema: one token at the top level.
        const token = str(f.asset_id, 'price_change asset_id');
        changes = (f.changes as Record<string, unknown>[]).map((it) => change(it, token));
      } else if (f.price !== undefined) {
        // Pre-2025 flat schema: one change, fields at the top level.
        changes = [change(f, null)];
      } else {
        throw malformed('price_change', 'no changes');
      }
      return { kind: 'price_change', condition_id: market, ts, changes };
    }
    case 'tick_size_change': {
      const next = num(f.new_tick_size, 'new_tick_size');
      if (!(next > 0 && next < 1)) throw malformed('new_tick_size', String(f.new_tick_size));
      return {
        kind: 'tick_size_change',
        token_id: str(f.asset_id, 'tick_size_change asset_id'),
        condition_id: typeof f.market === 'string' ? f.market : '',
        old_tick_size: num(f.old_tick_size, 'old_tick_size'),
        new_tick_size: next,
        ts: epochMs(f.timestamp, 'tick_size_change timestamp'),
      };
    }
    case 'last_trade_price':
      return { kind: 'last_trade_price', trade: parseLastTradePrice(f) };
    case 'best_bid_ask':
      return {
        kind: 'best_bid_ask',
        token_id: str(f.asset_id, 'best_bid_ask asset_id'),
        best_bid: f.best_bid === undefined || f.best_bid === '' ? null : price(f.best_bid, 'best_bid'),
        best_ask: f.best_ask === undefined || f.best_ask === '' ? null : price(f.best_ask, 'best_ask'),
        ts: epochMs(f.timestamp, 'best_bid_ask timestamp'),
      };
    case 'new_market': {
      const ids = Array.isArray(f.assets_ids) ? (f.assets_ids as unknown[]).map((x) => str(x, 'assets_ids')) : [];
      return {
        kind: 'new_market',
        condition_id: str(f.market, 'new_market market'),
        gamma_id: String(f.id ?? ''),
        question: typeof f.question === 'string' ? f.question : '',
        token_ids: ids,
        outcomes: Array.isArray(f.outcomes) ? (f.outcomes as unknown[]).map(String) : [],
        tick_size: optNum(f.order_price_min_tick_size, 'order_price_min_tick_size'),
        ts: epochMs(f.timestamp, 'new_market timestamp'),
      };
    }
    case 'market_resolved':
      return {
        kind: 'market_resolved',
        condition_id: str(f.market, 'market_resolved market'),
        token_ids: Array.isArray(f.assets_ids) ? (f.assets_ids as unknown[]).map((x) => str(x, 'assets_ids')) : [],
        winning_token_id: str(f.winning_asset_id, 'winning_asset_id'),
        winning_outcome: String(f.winning_outcome ?? ''),
        ts: epochMs(f.timestamp, 'market_resolved timestamp'),
      };
    default:
      return { kind: 'ignored', event_type: typeof type === 'string' ? type : 'none' };
  }
}

/**
 * One text message of the market channel → its frames. The subscription answer is a JSON array of
 * `book` objects; later messages are single objects; `PONG` answers our `PING`.
 */
export function parseMarketMessage(text: string): PmMarketFrame[] {
  const t = text.trim();
  if (t === 'PONG') return [{ kind: 'pong' }];
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch {
    throw malformed('market message', 'not JSON');
  }
  const items = Array.isArray(v) ? v : [v];
  return items.map((x) => parseMarketFrame(x as Record<string, unknown>));
}

/** round6 of price × size: the USD notional of a level. */
export const notional = (p: number, size: number): number => round6(p * size);
