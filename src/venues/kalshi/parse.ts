/**
 * Pure parsers: Kalshi payloads → normalized records. No I/O and no clock: `tsInit` (when we saw the
 * payload) is an argument, and the market a payload is about is looked up by the caller and passed in
 * as its listing. Every parser accepts both the current dollar-string shape and the legacy cent shape.
 * A malformed payload throws VenueError non_retryable `malformed_message`.
 */
import { UNIT, divRound, mulMicros, type Micros } from '../../domain/money.js';
import type { NormalizedQuote, NormalizedTrade, QuoteSource, VenueBalance, VenueOrder, VenueOrderStatus, VenueOrderWarning, VenueRejectCode } from '../types.js';
import type { OrderType } from '../../domain/catalog.js';
import { SIDES, ladder, levelsOf, offers, type KalshiBook, type KalshiSide } from './book.js';
import type { KalshiListing } from './catalog.js';
import { feeModelOf } from './fees.js';
import { dollarsText } from './grid.js';
import type {
  KalshiBalanceResponse,
  KalshiCreateOrderRequest,
  KalshiFill,
  KalshiLevel,
  KalshiMarket,
  KalshiOrder,
  KalshiOrderbookResponse,
  KalshiTrade,
  KalshiWsFrame,
  WsSnapshotMsg,
} from './messages.js';
import { PARTNER_ID, centsMicros, clampEvent, complement, countMicros, isoMs, malformed, num, pick, priceMicros } from './units.js';

/** Levels a quote carries (the nearest the touch); a depth read returns the whole book. */
export const QUOTE_LEVELS = 20;

export const liquidityHashOf = (ticker: string, side: KalshiSide) => `${PARTNER_ID}:${ticker}:${side}`;

/** `kalshi:<TICKER>:<side>` → its parts, or null. */
export function parseLiquidityHash(h: string): { ticker: string; side: KalshiSide } | null {
  const m = /^kalshi:([^:]+):(yes|no)$/.exec(h);
  return m ? { ticker: m[1]!, side: m[2] as KalshiSide } : null;
}

// ---- books -------------------------------------------------------------------------------------

/**
 * GET /markets/{ticker}/orderbook →  the book.
 *   current: {"orderbook_fp":{"yes_dollars":[["0.0800","444.32"]],"no_dollars":[["0.8800","1967.33"]]}}
 *   legacy:  {"orderbook":{"yes":[[8,444]],"no":null}}   (cents; a side may be null)
 */
export function parseOrderbook(body: KalshiOrderbookResponse): KalshiBook {
  if (typeof body !== 'object' || body === null) throw malformed('orderbook');
  const fp = body.orderbook_fp;
  if (fp && typeof fp === 'object') return { yes: ladder(fp.yes_dollars, 'orderbook yes'), no: ladder(fp.no_dollars, 'orderbook no') };
  const old = body.orderbook;
  if (old && typeof old === 'object') {
    return { yes: ladder(old.yes_dollars ?? old.yes, 'orderbook yes'), no: ladder(old.no_dollars ?? old.no, 'orderbook no') };
  }
  throw malformed('orderbook (neither orderbook_fp nor orderbook)');
}

/**
 * A WS `orderbook_snapshot` message → the book. A side with no orders is absent (not an empty list).
 *   {"market_ticker":"KXGOLDH-…","yes_dollars_fp":[["0.0100","1410.00"]],"no_dollars_fp":[["0.0100","100.00"],["0.0200","2500.00"]]}
 */
export function parseSnapshot(msg: WsSnapshotMsg): KalshiBook {
  if (typeof msg !== 'object' || msg === null || typeof msg.market_ticker !== 'string') throw malformed('orderbook_snapshot');
  return {
    yes: ladder((msg.yes_dollars_fp ?? msg.yes) as KalshiLevel[] | undefined, 'snapshot yes'),
    no: ladder((msg.no_dollars_fp ?? msg.no) as KalshiLevel[] | undefined, 'snapshot no'),
  };
}

/** A WS `orderbook_delta` message → (side, price, signed change), all exact. */
export function parseDelta(msg: { side?: unknown; price_dollars?: unknown; price?: unknown; delta_fp?: unknown; delta?: unknown }): {
  side: KalshiSide;
  price: Micros;
  delta: Micros;
} {
  if (typeof msg !== 'object' || msg === null || (msg.side !== 'yes' && msg.side !== 'no')) throw malformed('orderbook_delta side');
  const price = priceMicros(pick(msg.price_dollars as string, msg.price as number), 'orderbook_delta price');
  const delta = countMicros(pick(msg.delta_fp as string, msg.delta as number), 'orderbook_delta delta');
  return { side: msg.side, price, delta };
}

/** When a delta happened: `ts_ms`, else `ts` (ISO string on deltas, seconds elsewhere); null when absent. */
export function frameTime(msg: { ts?: unknown; ts_ms?: unknown }): number | null {
  if (typeof msg.ts_ms === 'number' && Number.isFinite(msg.ts_ms)) return msg.ts_ms;
  if (typeof msg.ts === 'number' && Number.isFinite(msg.ts)) return msg.ts * 1000;
  if (typeof msg.ts === 'string') return isoMs(msg.ts, 'ts');
  return null;
}

export interface QuoteContext {
  source: QuoteSource;
}

/**
 * The quote for buying `side` of a listed market from its book; null when the outcome is not linked
 * to a position, or the book offers nothing and no price was ever known (a quote needs a price in
 * (0, 1)). An empty side keeps the last known price with nothing available.
 */
export function quoteOf(
  listing: KalshiListing,
  side: KalshiSide,
  book: KalshiBook,
  ctx: QuoteContext,
  tsEvent: number,
  tsInit: number,
  lastPrice: number | null = listing.last_ask[side],
): NormalizedQuote | null {
  const position = listing.positions[side];
  if (position === null) return null;
  const levels = levelsOf(offers(book, side), QUOTE_LEVELS);
  const top = levels[0];
  const price = top ? top.price : lastPrice;
  if (price === null || !(price > 0 && price < 1)) return null;
  return {
    partner_id: PARTNER_ID,
    liquidity_hash: liquidityHashOf(listing.ticker, side),
    position_hash: position,
    venue_market_id: listing.ticker,
    venue_side_key: side,
    price,
    available: top ? top.available : 0,
    levels,
    fee: feeModelOf(listing.fee),
    real_book: true,
    source: ctx.source,
    ts_event: clampEvent(tsEvent, tsInit),
    ts_init: tsInit,
  };
}

/** Both outcomes' quotes of a book (those that exist). */
export function quotesOf(listing: KalshiListing, book: KalshiBook, ctx: QuoteContext, tsEvent: number, tsInit: number): NormalizedQuote[] {
  const out: NormalizedQuote[] = [];
  for (const s of SIDES) {
    const q = quoteOf(listing, s, book, ctx, tsEvent, tsInit);
    if (q) out.push(q);
  }
  return out;
}

/**
 * The market record's own top of book, for checking the book identity: YES ask = 1 − best NO bid,
 * sized by that bid (`yes_ask_size_fp`); NO ask = 1 − best YES bid, sized by `yes_bid_size_fp`.
 * Both shapes: `yes_ask_dollars` or legacy `yes_ask` cents.
 */
export function marketTop(m: KalshiMarket): Record<KalshiSide, { price: Micros; size: Micros | null } | null> {
  const price = (d: unknown, c: unknown) => {
    const x = pick(d as string, c as number);
    return x === undefined ? null : priceMicros(x, 'market price');
  };
  const size = (x: unknown) => (x === undefined || x === null ? null : countMicros(x as string, 'market size'));
  const yesAsk = price(m.yes_ask_dollars, m.yes_ask);
  const noAsk = price(m.no_ask_dollars, m.no_ask);
  return {
    yes: yesAsk === null ? null : { price: yesAsk, size: size(m.yes_ask_size_fp) },
    no: noAsk === null ? null : { price: noAsk, size: size(m.yes_bid_size_fp) },
  };
}

// ---- trades ------------------------------------------------------------------------------------

/**
 * A trade print (REST /markets/trades or WS `trade`) → the trade on the position the taker bought.
 *   {"count_fp":"9.40","created_time":"2026-06-12T17:11:11.927591Z","yes_price_dollars":"0.1000",
 *    "no_price_dollars":"0.9000","taker_side":"yes","ticker":"KXELONMARS-99","trade_id":"6e92…"}
 * `taker_side` is the outcome the taker bought (selling YES is buying NO on Kalshi's book). When only
 * the other outcome is linked, the print is reported on it as a sell at the complement price
 * (`relation: complement`). Null when neither outcome is linked.
 */
export function parseTrade(t: KalshiTrade, listing: KalshiListing, tsInit: number): NormalizedTrade | null {
  if (typeof t !== 'object' || t === null || typeof t.trade_id !== 'string' || t.trade_id === '') throw malformed('trade');
  if (t.taker_side !== 'yes' && t.taker_side !== 'no') throw malformed('trade taker_side', { value: t.taker_side });
  const taker: KalshiSide = t.taker_side;
  const yes = priceMicros(pick(t.yes_price_dollars, t.yes_price), 'trade yes price');
  const noRaw = pick(t.no_price_dollars, t.no_price);
  const no = noRaw === undefined ? complement(yes) : priceMicros(noRaw, 'trade no price');
  const count = countMicros(pick(t.count_fp, t.count), 'trade count');
  if (count <= 0n) throw malformed('trade count (not positive)');
  const when = t.created_time !== undefined ? isoMs(t.created_time, 'trade created_time') : frameTime(t);
  if (when === null) throw malformed('trade time');
  const tsEvent = clampEvent(when, tsInit);
  const paid = taker === 'yes' ? yes : no;
  let position = listing.positions[taker];
  let side = taker;
  let relation: 'same' | 'complement' = 'same';
  if (position === null) {
    side = taker === 'yes' ? 'no' : 'yes';
    position = listing.positions[side];
    relation = 'complement';
    if (position === null) return null;
  }
  return {
    partner_id: PARTNER_ID,
    venue_trade_id: t.trade_id,
    venue_market_id: listing.ticker,
    liquidity_hash: liquidityHashOf(listing.ticker, side),
    position_hash: position,
    taker_action: relation === 'same' ? 'buy' : 'sell',
    price: num(relation === 'same' ? paid : complement(paid)),
    size_contracts: num(count),
    is_block: t.is_block_trade === true,
    trader_id: null,
    trader_id_kind: null,
    executed_at: tsEvent,
    ...(relation === 'complement' ? { relation } : {}),
    ts_event: tsEvent,
    ts_init: tsInit,
  };
}

// ---- orders, fills, balance ---------------------------------------------------------------------

/**
 * The POST /portfolio/orders body for buying `count` whole contracts of `side` at most at `limit`
 * (micro-dollars). Every order is a priced limit: `time_in_force` immediate_or_cancel / fill_or_kill
 * makes it a market order, none rests it good-till-cancelled. `type: limit` is what the live venue was
 * sent in the recording (the 3.10.0 spec no longer lists the field; the price makes it a limit anyway).
 *   {"ticker":"KXNFLGAME-25DEC27BALGB-GB","side":"yes","action":"buy","count":1,"type":"limit","yes_price_dollars":"0.0200","client_order_id":"vcr-test-1766557486"}
 */
export function buildCreateOrder(o: { ticker: string; side: KalshiSide; count: number; limit: Micros; clientOrderId: string; timeInForce?: 'ioc' | 'fok' }): KalshiCreateOrderRequest {
  if (!Number.isSafeInteger(o.count) || o.count < 1) throw new RangeError(`order count must be a whole number of contracts >= 1: ${o.count}`);
  return {
    ticker: o.ticker,
    side: o.side,
    action: 'buy',
    count: o.count,
    type: 'limit',
    ...(o.side === 'yes' ? { yes_price_dollars: dollarsText(o.limit) } : { no_price_dollars: dollarsText(o.limit) }),
    client_order_id: o.clientOrderId,
    ...(o.timeInForce ? { time_in_force: o.timeInForce === 'fok' ? ('fill_or_kill' as const) : ('immediate_or_cancel' as const) } : {}),
  };
}

/** What the adapter knew when it sent (or looked up) an order: the parts Kalshi does not echo. */
export interface OrderContext {
  account_id: string;
  position_hash: string;
  order_type: OrderType;
  /** USD stake as submitted (null when sized in contracts). */
  requested_amount: number | null;
  time_in_force?: 'ioc' | 'fok';
  warnings?: VenueOrderWarning[];
}

const zeroIfBlank = (x: string | number | undefined | null) => (x === '' || x === undefined || x === null ? undefined : x);

function dollarsOrCents(d: string | undefined, c: number | undefined, what: string): Micros | null {
  const dv = zeroIfBlank(d);
  if (dv !== undefined) return priceMicros(dv as string, what);
  if (c !== undefined && c !== null) return centsMicros(c, what);
  return null;
}

/**
 * An order (POST /portfolio/orders, GET/DELETE /portfolio/orders/{id}, WS `user_order`) → VenueOrder.
 *   {"order":{"order_id":"b9ef…","ticker":"KXNFLGAME-25DEC27BALGB-GB","side":"yes","action":"buy",
 *    "status":"resting","yes_price":2,"yes_price_dollars":"0.0200","initial_count":1,"fill_count":0,
 *    "remaining_count":1,"taker_fill_cost":0,"taker_fill_cost_dollars":"",…}}
 * Kalshi statuses: resting, executed (fully filled), canceled (by us, or the unfilled rest of an
 * immediate-or-cancel order), pending.
 */
export function parseOrder(o: KalshiOrder, ctx: OrderContext, tsInit: number): VenueOrder {
  if (typeof o !== 'object' || o === null || typeof o.order_id !== 'string' || o.order_id === '') throw malformed('order');
  if (o.side !== 'yes' && o.side !== 'no') throw malformed('order side', { value: o.side });
  const priceRaw = o.side === 'yes' ? pick(o.yes_price_dollars, o.yes_price) : pick(o.no_price_dollars, o.no_price);
  if (priceRaw === undefined) throw malformed('order price');
  const limit = priceMicros(priceRaw, 'order price');
  const filled = countMicros(pick(o.fill_count_fp, o.fill_count) ?? 0, 'order fill count');
  const initial = countMicros(pick(o.initial_count_fp, o.initial_count) ?? '0', 'order initial count');
  const remaining = countMicros(pick(o.remaining_count_fp, o.remaining_count) ?? 0, 'order remaining count');
  const takerCost = dollarsOrCents(o.taker_fill_cost_dollars, o.taker_fill_cost, 'order taker cost');
  const makerCost = dollarsOrCents(o.maker_fill_cost_dollars, o.maker_fill_cost, 'order maker cost');
  const takerFees = dollarsOrCents(o.taker_fees_dollars, o.taker_fees, 'order taker fees') ?? 0n;
  const makerFees = dollarsOrCents(o.maker_fees_dollars, o.maker_fees, 'order maker fees') ?? 0n;
  // A fill without a reported cost is valued at the limit (the most it can have cost).
  const cost = takerCost === null && makerCost === null ? mulMicros(filled, limit, 'ceil') : (takerCost ?? 0n) + (makerCost ?? 0n);
  const when = isoOf(o.last_update_time) ?? isoOf(o.created_time) ?? tsInit;

  let status: VenueOrderStatus;
  let reject: VenueRejectCode | null = null;
  let reason: string | null = null;
  switch (o.status) {
    case 'resting':
      status = 'resting';
      break;
    case 'executed':
      status = 'filled';
      break;
    case 'pending':
      status = 'pending';
      break;
    case 'canceled':
    case 'cancelled':
      if (ctx.order_type === 'market') {
        // The unfilled rest of an immediate order is cancelled by the venue, not by anyone asking.
        if (filled > 0n) status = 'partially_filled';
        else {
          status = 'rejected';
          reject = ctx.time_in_force === 'fok' ? 'insufficient_size' : 'unfillable';
          reason = ctx.time_in_force === 'fok' ? 'the book within the limit could not fill the whole order' : 'nothing was offered within the limit';
        }
      } else status = 'cancelled';
      break;
    default:
      throw malformed('order status', { value: o.status });
  }
  return {
    partner_id: PARTNER_ID,
    venue_order_id: o.order_id,
    client_order_id: typeof o.client_order_id === 'string' ? o.client_order_id : '',
    account_id: ctx.account_id,
    position_hash: ctx.position_hash,
    liquidity_hash: liquidityHashOf(o.ticker, o.side),
    order_type: ctx.order_type,
    status,
    requested_amount: ctx.requested_amount,
    requested_contracts: num(initial),
    limit_price: num(limit),
    filled_contracts: num(filled),
    filled_notional: num(cost),
    avg_price: filled > 0n ? num(divRound(cost * UNIT, filled, 'half')) : null,
    fees: num(takerFees + makerFees),
    remaining_contracts: status === 'resting' ? num(remaining) : 0,
    reject_code: reject,
    reject_reason: reason,
    warnings: ctx.warnings ?? [],
    currency: 'USD',
    ts_event: clampEvent(when, tsInit),
    ts_init: tsInit,
  };
}

function isoOf(x: unknown): number | null {
  if (typeof x !== 'string') return null;
  const t = Date.parse(x);
  return Number.isFinite(t) ? t : null;
}

/**
 * GET /portfolio/balance → VenueBalance. `balance` is the cash available for trading, in cents (still
 * integer cents after the dollar-string migration); Kalshi reports no separate "held" figure (resting
 * orders' collateral is already out of `balance`), so held is 0.
 *   {"balance":235084,"portfolio_value":10197,"updated_ts":1763933221}
 */
export function parseBalance(b: KalshiBalanceResponse, accountId: string, tsInit: number): VenueBalance {
  if (typeof b !== 'object' || b === null) throw malformed('balance');
  const cash = centsMicros(b.balance, 'balance');
  const ts = typeof b.updated_ts === 'number' && Number.isFinite(b.updated_ts) ? b.updated_ts * 1000 : tsInit;
  return {
    partner_id: PARTNER_ID,
    account_id: accountId,
    currency: 'USD',
    balance: num(cash),
    held: 0,
    credential_status: 'connected',
    ts_event: clampEvent(ts, tsInit),
    ts_init: tsInit,
  };
}

/** One of our fills, normalized (GET /portfolio/fills; WS `fill`). Prices are what the bought side paid. */
export interface KalshiFillRecord {
  fill_id: string;
  venue_order_id: string;
  ticker: string;
  side: KalshiSide;
  action: 'buy' | 'sell';
  contracts: number;
  /** Price of `side`, 0-1. */
  price: number;
  yes_price: number;
  is_taker: boolean;
  /** USD, when the venue reported it. */
  fee: number | null;
  ts_event: number;
  ts_init: number;
}

/**
 * A fill → KalshiFillRecord. Current fills carry `yes_price_dollars`/`no_price_dollars`; legacy ones
 * `yes_price`/`no_price` cents and a float `price` that holds the YES price even on a NO fill, so
 * `price` is never read.
 *   {"action":"buy","count":103,"side":"no","no_price":96,"no_price_fixed":"0.9600","yes_price":4,…}
 */
export function parseFill(f: KalshiFill, tsInit: number): KalshiFillRecord {
  if (typeof f !== 'object' || f === null || typeof f.order_id !== 'string') throw malformed('fill');
  if (f.side !== 'yes' && f.side !== 'no') throw malformed('fill side');
  if (f.action !== 'buy' && f.action !== 'sell') throw malformed('fill action');
  const yes = priceMicros(pick(f.yes_price_dollars, f.yes_price_fixed, f.yes_price), 'fill yes price');
  const noRaw = pick(f.no_price_dollars, f.no_price_fixed, f.no_price);
  const no = noRaw === undefined ? complement(yes) : priceMicros(noRaw, 'fill no price');
  const ticker = f.ticker ?? f.market_ticker;
  if (typeof ticker !== 'string') throw malformed('fill ticker');
  const when = f.created_time !== undefined ? isoMs(f.created_time, 'fill created_time') : typeof f.ts === 'number' ? f.ts * 1000 : tsInit;
  return {
    fill_id: f.fill_id ?? f.trade_id,
    venue_order_id: f.order_id,
    ticker,
    side: f.side,
    action: f.action,
    contracts: num(countMicros(pick(f.count_fp, f.count), 'fill count')),
    price: num(f.side === 'yes' ? yes : no),
    yes_price: num(yes),
    is_taker: f.is_taker === true,
    fee: f.fee_cost !== undefined && f.fee_cost !== '' ? num(priceMicros(f.fee_cost, 'fill fee')) : null,
    ts_event: clampEvent(when, tsInit),
    ts_init: tsInit,
  };
}

// ---- WebSocket ---------------------------------------------------------------------------------

/** One WS text frame → a typed frame (type checked; the message body is checked by its parser). */
export function parseWsFrame(text: string): KalshiWsFrame {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw malformed('websocket frame (not JSON)');
  }
  if (typeof v !== 'object' || v === null || typeof (v as { type?: unknown }).type !== 'string') throw malformed('websocket frame (no type)');
  const f = v as { type: string; sid?: unknown; seq?: unknown };
  if (f.sid !== undefined && !Number.isInteger(f.sid)) throw malformed('websocket frame sid');
  if (f.seq !== undefined && !Number.isInteger(f.seq)) throw malformed('websocket frame seq');
  return v as KalshiWsFrame;
}


// ---- informational payloads ---------------------------------------------------------------------

/** Top of book as the `ticker` channel states it (bid/ask of YES, with sizes). */
export interface KalshiTop {
  ticker: string;
  yes_bid: { price: number; size: number | null } | null;
  yes_ask: { price: number; size: number | null } | null;
  last_price: number | null;
  volume: number | null;
  open_interest: number | null;
  ts_event: number;
}

/**
 * A WS `ticker` message → top of book. Ticker frames carry no seq (losses cannot be seen), so the
 * adapter never maintains books from them; they serve to cross-check a book (YES ask = 1 − best NO bid).
 *   {"market_ticker":"KXGOLDH-…","yes_bid_dollars":"0.0100","yes_ask_dollars":"0.9800","yes_bid_size_fp":"1410.00","yes_ask_size_fp":"2500.00","ts_ms":1787838990880,…}
 */
export function parseTicker(msg: Record<string, unknown>, tsInit: number): KalshiTop {
  if (typeof msg !== 'object' || msg === null || typeof msg.market_ticker !== 'string') throw malformed('ticker');
  const px = (d: unknown, c: unknown) => {
    const x = pick(d as string, c as number);
    return x === undefined ? null : num(priceMicros(x, 'ticker price'));
  };
  const sz = (x: unknown) => (x === undefined || x === null ? null : num(countMicros(x as string, 'ticker size')));
  const bid = px(msg.yes_bid_dollars, msg.yes_bid);
  const ask = px(msg.yes_ask_dollars, msg.yes_ask);
  const t = frameTime(msg);
  return {
    ticker: msg.market_ticker,
    yes_bid: bid === null ? null : { price: bid, size: sz(msg.yes_bid_size_fp) },
    yes_ask: ask === null ? null : { price: ask, size: sz(msg.yes_ask_size_fp) },
    last_price: px(msg.price_dollars, msg.price),
    volume: sz(pick(msg.volume_fp as string, msg.volume as number)),
    open_interest: sz(pick(msg.open_interest_fp as string, msg.open_interest as number)),
    ts_event: clampEvent(t ?? tsInit, tsInit),
  };
}

/** One market position: Kalshi nets YES and NO into one signed count (negative = NO contracts). */
export interface KalshiPositionRecord {
  ticker: string;
  side: KalshiSide | null;
  contracts: number;
  exposure: number;
  fees_paid: number;
  realized_pnl: number;
}

/**
 * GET /portfolio/positions → positions per market. After buying 103 NO the position reads -103.
 *   {"market_positions":[{"ticker":"KXALIENS-26","position":-103,"market_exposure_dollars":"98.8800","fees_paid_dollars":"0.2800",…}]}
 */
export function parsePositions(body: { market_positions?: unknown }): KalshiPositionRecord[] {
  if (typeof body !== 'object' || body === null || !Array.isArray(body.market_positions)) throw malformed('positions');
  return body.market_positions.map((p: Record<string, unknown>) => {
    if (typeof p?.ticker !== 'string') throw malformed('position ticker');
    const raw = pick(p.position_fp as string, p.position as number);
    const pos = raw === undefined ? 0n : typeof raw === 'number' ? BigInt(raw) * UNIT : countMicros(raw, 'position');
    const usd = (d: unknown, c: unknown) => num(dollarsOrCents(d as string | undefined, c as number | undefined, 'position amount') ?? 0n);
    return {
      ticker: p.ticker,
      side: pos > 0n ? 'yes' : pos < 0n ? 'no' : null,
      contracts: num(pos < 0n ? -pos : pos),
      exposure: usd(p.market_exposure_dollars, p.market_exposure),
      fees_paid: usd(p.fees_paid_dollars, p.fees_paid),
      realized_pnl: usd(p.realized_pnl_dollars, p.realized_pnl),
    };
  });
}

/** One candle: the period's closing YES bid/ask, volume and open interest. */
export interface KalshiCandle {
  end_ms: number;
  yes_bid_close: number | null;
  yes_ask_close: number | null;
  volume: number;
  open_interest: number;
}

/**
 * GET /series/{s}/markets/{t}/candlesticks → candles (`end_period_ts` seconds; ccxt's recording
 * stringified it, so both a number and a numeric string are read).
 */
export function parseCandles(body: { candlesticks?: unknown }): KalshiCandle[] {
  if (typeof body !== 'object' || body === null || !Array.isArray(body.candlesticks)) throw malformed('candlesticks');
  return body.candlesticks.map((c: Record<string, any>) => {
    const end = Number(c?.end_period_ts);
    if (!Number.isInteger(end)) throw malformed('candle end_period_ts');
    const close = (side: Record<string, unknown> | undefined) => {
      const x = side ? pick(side.close_dollars as string, side.close as number) : undefined;
      return x === undefined ? null : num(priceMicros(x, 'candle close'));
    };
    return {
      end_ms: end * 1000,
      yes_bid_close: close(c.yes_bid),
      yes_ask_close: close(c.yes_ask),
      volume: num(countMicros(pick(c.volume_fp, c.volume) ?? '0', 'candle volume')),
      open_interest: num(countMicros(pick(c.open_interest_fp, c.open_interest) ?? '0', 'candle open interest')),
    };
  });
}
