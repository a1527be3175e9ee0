/**
 * Pure parsers: sim wire payloads → normalized records. No I/O, no clock: `tsInit` (when we saw
 * the message) is an argument. Instrument lookups are passed in as data (`SimInstrument`), the
 * way a real adapter joins a venue market id to our position through its market list.
 *
 * A malformed payload throws VenueError non_retryable `malformed_message`.
 */
import type { OrderConfig } from '../../domain/catalog.js';
import { VenueError } from '../errors.js';
import { americanToProb, fromNative, round6 } from '../prices.js';
import type {
  FeeModel,
  GameStateRecord,
  NormalizedQuote,
  NormalizedTrade,
  PriceLevel,
  QuoteSource,
  VenueBalance,
  VenueBalanceUpdate,
  VenueOrder,
  VenueOrderStatus,
  VenueOrderWarning,
  VenueSettlement,
} from '../types.js';
import type {
  Book01BookMsg,
  Book01TradeMsg,
  ExchangeBookMsg,
  ExchangeTradeMsg,
  P2PLineMsg,
  QuotesFeedMsg,
  SimInstrument,
  SimWireBalance,
  SimWireBalanceEvent,
  SimWireOrderAck,
  SimWireQuote,
  SimWireSettlement,
  SimWireTrade,
  SportsbookScoreboardMsg,
  SportsbookOfferMsg,
} from '../../sim/messages.js';
import type { SimWire } from '../../sim/personalities.js';
import { rejectCodeOf } from './errors.js';

export interface QuoteParseContext {
  partner_id: string;
  fee: FeeModel;
  real_book: boolean;
  source: QuoteSource;
}

const malformed = (partnerId: string, what: string) =>
  new VenueError('non_retryable', 'malformed_message', `${partnerId}: malformed ${what}`, { partner_id: partnerId });

function num(partnerId: string, x: unknown, what: string): number {
  const n = typeof x === 'string' ? Number(x) : x;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw malformed(partnerId, what);
  return n;
}

function quote(inst: SimInstrument, ctx: QuoteParseContext, levels: PriceLevel[], lastPrice: number, tsEvent: number, tsInit: number): NormalizedQuote {
  const top = levels[0];
  return {
    partner_id: ctx.partner_id,
    liquidity_hash: inst.liquidity_hash,
    position_hash: inst.position_hash,
    venue_market_id: inst.instrument_id,
    venue_side_key: inst.venue_side_key,
    price: top ? top.price : lastPrice,
    available: top ? top.available : 0,
    levels,
    fee: ctx.fee,
    real_book: ctx.real_book,
    source: ctx.source,
    ts_event: tsEvent,
    ts_init: tsInit,
  };
}

/** The instrument id a quote message is about (to look the instrument up before parsing). */
export function quoteRef(wire: SimWire, msg: SimWireQuote): string {
  switch (wire) {
    case 'exchange':
      return (msg as ExchangeBookMsg).market_ticker;
    case 'book01':
      return (msg as Book01BookMsg).asset_id;
    case 'sportsbook':
      return (msg as SportsbookOfferMsg).offer_id;
    case 'p2p':
      return (msg as P2PLineMsg).line_id;
    case 'quotes':
      return (msg as QuotesFeedMsg).id;
    case 'internal':
      throw new Error('the practice book has no quotes');
  }
}

/** {"type":"orderbook_snapshot","market_ticker":"SX-000001","listed_side":"home","asks":[[55,120]],"last_price_cents":55,"ts_ms":1767225600000,"seq":1} */
export function parseExchangeBook(msg: ExchangeBookMsg, inst: SimInstrument, ctx: QuoteParseContext, tsInit: number): NormalizedQuote {
  if (msg?.type !== 'orderbook_snapshot' || !Array.isArray(msg.asks)) throw malformed(ctx.partner_id, 'orderbook');
  const levels = msg.asks.map(([cents, contracts]) => {
    const c = num(ctx.partner_id, cents, 'ask price');
    const q = num(ctx.partner_id, contracts, 'ask size');
    return { price: round6(c / 100), available: round6((q * c) / 100) };
  });
  return quote(inst, ctx, levels, round6(num(ctx.partner_id, msg.last_price_cents, 'last price') / 100), num(ctx.partner_id, msg.ts_ms, 'ts'), tsInit);
}

/** {"event_type":"book","asset_id":"…","outcome":"home","asks":[{"price":"0.55","size":"200"}],"last_price":"0.55","fee_rate_bps":200,"maker_fee_rate_bps":0,"timestamp":"1767225600000"} */
export function parseBook01Book(msg: Book01BookMsg, inst: SimInstrument, ctx: QuoteParseContext, tsInit: number): NormalizedQuote {
  if (msg?.event_type !== 'book' || !Array.isArray(msg.asks)) throw malformed(ctx.partner_id, 'book');
  const levels = msg.asks.map((a) => {
    const p = num(ctx.partner_id, a.price, 'ask price');
    const s = num(ctx.partner_id, a.size, 'ask size');
    return { price: round6(p), available: round6(p * s) };
  });
  // The message carries its own fee schedule: prefer it to the static one.
  const fee: FeeModel = { kind: 'pq', taker_rate: num(ctx.partner_id, msg.fee_rate_bps, 'fee') / 10_000, maker_rate: num(ctx.partner_id, msg.maker_fee_rate_bps, 'maker fee') / 10_000 };
  return quote(inst, { ...ctx, fee }, levels, round6(num(ctx.partner_id, msg.last_price, 'last price')), num(ctx.partner_id, msg.timestamp, 'timestamp'), tsInit);
}

/** {"offer_id":"SB100001","event_id":"ct_sfl_002","selection":"home","odds_american":-120,"max_stake":500,"updated_at":"2026-01-01T00:00:00.000Z"} */
export function parseSportsbookOffer(msg: SportsbookOfferMsg, inst: SimInstrument, ctx: QuoteParseContext, tsInit: number): NormalizedQuote {
  const odds = num(ctx.partner_id, msg?.odds_american, 'odds');
  if (Math.abs(odds) < 100) throw malformed(ctx.partner_id, 'american odds');
  const ts = Date.parse(msg.updated_at);
  if (!Number.isFinite(ts)) throw malformed(ctx.partner_id, 'updated_at');
  const price = round6(americanToProb(odds));
  const stake = num(ctx.partner_id, msg.max_stake, 'max_stake');
  const levels = stake > 0 ? [{ price, available: round6(stake) }] : [];
  return quote(inst, ctx, levels, price, ts, tsInit);
}

/** {"line_id":"line-1","listed_side":"away","offers":[{"decimal_odds":1.9,"stake":250}],"last_decimal_odds":1.9,"as_of":1767225600000} */
export function parseP2PLine(msg: P2PLineMsg, inst: SimInstrument, ctx: QuoteParseContext, tsInit: number): NormalizedQuote {
  if (!Array.isArray(msg?.offers)) throw malformed(ctx.partner_id, 'line');
  const levels = msg.offers.map((o) => {
    const d = num(ctx.partner_id, o.decimal_odds, 'odds');
    if (d <= 1) throw malformed(ctx.partner_id, 'decimal odds');
    return { price: round6(1 / d), available: round6(num(ctx.partner_id, o.stake, 'stake')) };
  });
  const last = num(ctx.partner_id, msg.last_decimal_odds, 'last odds');
  return quote(inst, ctx, levels, round6(1 / last), num(ctx.partner_id, msg.as_of, 'as_of'), tsInit);
}

/** {"id":"q1","side":"home","implied_pct":55.2,"depth_usd":1200,"as_of_ms":1767225600000} */
export function parseQuotesFeed(msg: QuotesFeedMsg, inst: SimInstrument, ctx: QuoteParseContext, tsInit: number): NormalizedQuote {
  const pct = num(ctx.partner_id, msg?.implied_pct, 'implied_pct');
  if (!(pct > 0 && pct < 100)) throw malformed(ctx.partner_id, 'implied_pct');
  const price = round6(pct / 100);
  const depth = num(ctx.partner_id, msg.depth_usd, 'depth');
  return quote(inst, ctx, depth > 0 ? [{ price, available: round6(depth) }] : [], price, num(ctx.partner_id, msg.as_of_ms, 'as_of'), tsInit);
}

export function parseQuote(wire: SimWire, msg: SimWireQuote, inst: SimInstrument, ctx: QuoteParseContext, tsInit: number): NormalizedQuote {
  switch (wire) {
    case 'exchange':
      return parseExchangeBook(msg as ExchangeBookMsg, inst, ctx, tsInit);
    case 'book01':
      return parseBook01Book(msg as Book01BookMsg, inst, ctx, tsInit);
    case 'sportsbook':
      return parseSportsbookOffer(msg as SportsbookOfferMsg, inst, ctx, tsInit);
    case 'p2p':
      return parseP2PLine(msg as P2PLineMsg, inst, ctx, tsInit);
    case 'quotes':
      return parseQuotesFeed(msg as QuotesFeedMsg, inst, ctx, tsInit);
    case 'internal':
      throw new Error('the practice book has no quotes');
  }
}

export function tradeRef(msg: SimWireTrade): string {
  return 'market_ticker' in msg ? msg.market_ticker : msg.asset_id;
}

/** {"type":"trade","trade_id":"sim_exchange-t1","market_ticker":"SX-000001","taker_side":"buy","price_cents":55,"count":10,"is_block":false,"ts_ms":1767225600000} */
export function parseExchangeTrade(msg: ExchangeTradeMsg, inst: SimInstrument, partnerId: string, tsInit: number): NormalizedTrade {
  if (msg?.type !== 'trade' || (msg.taker_side !== 'buy' && msg.taker_side !== 'sell')) throw malformed(partnerId, 'trade');
  const ts = num(partnerId, msg.ts_ms, 'ts');
  return {
    partner_id: partnerId,
    venue_trade_id: String(msg.trade_id),
    venue_market_id: inst.instrument_id,
    liquidity_hash: inst.liquidity_hash,
    position_hash: inst.position_hash,
    taker_action: msg.taker_side,
    price: round6(num(partnerId, msg.price_cents, 'price') / 100),
    size_contracts: num(partnerId, msg.count, 'count'),
    is_block: msg.is_block === true,
    trader_id: null,
    trader_id_kind: null,
    executed_at: ts,
    ts_event: ts,
    ts_init: tsInit,
  };
}

/** {"event_type":"last_trade_price","id":"sim_book01-t1","asset_id":"…","side":"BUY","price":"0.55","size":"12.5","taker":"0xabc…","timestamp":"1767225600000"} */
export function parseBook01Trade(msg: Book01TradeMsg, inst: SimInstrument, partnerId: string, tsInit: number): NormalizedTrade {
  if (msg?.event_type !== 'last_trade_price' || (msg.side !== 'BUY' && msg.side !== 'SELL')) throw malformed(partnerId, 'trade');
  const ts = num(partnerId, msg.timestamp, 'timestamp');
  return {
    partner_id: partnerId,
    venue_trade_id: String(msg.id),
    venue_market_id: inst.instrument_id,
    liquidity_hash: inst.liquidity_hash,
    position_hash: inst.position_hash,
    taker_action: msg.side === 'BUY' ? 'buy' : 'sell',
    price: round6(num(partnerId, msg.price, 'price')),
    size_contracts: num(partnerId, msg.size, 'size'),
    is_block: false,
    trader_id: msg.taker ?? null,
    trader_id_kind: msg.taker ? 'wallet' : null,
    executed_at: ts,
    ts_event: ts,
    ts_init: tsInit,
  };
}

export function parseTrade(msg: SimWireTrade, inst: SimInstrument, partnerId: string, tsInit: number): NormalizedTrade {
  return 'market_ticker' in msg ? parseExchangeTrade(msg, inst, partnerId, tsInit) : parseBook01Trade(msg, inst, partnerId, tsInit);
}

/** Sportsbook scoreboard → the spec's state object. */
export function parseScoreboard(msg: SportsbookScoreboardMsg, partnerId: string, tsInit: number): GameStateRecord {
  if (typeof msg?.event_id !== 'string' || !['pre', 'in', 'post'].includes(msg.status)) throw malformed(partnerId, 'scoreboard');
  const ts = Date.parse(msg.updated_at);
  if (!Number.isFinite(ts)) throw malformed(partnerId, 'updated_at');
  const status = msg.status_detail || (msg.status === 'pre' ? 'scheduled' : msg.status === 'post' ? 'final' : 'live');
  const hasScores = msg.home_score !== null && msg.away_score !== null;
  return {
    partner_id: partnerId,
    contest_id: msg.event_id,
    state: {
      game_status: status,
      clock: msg.clock ? { display: msg.clock.display, remaining_seconds: msg.clock.seconds_left, is_running: msg.clock.running } : null,
      period: msg.period ? { number: msg.period.number, label: msg.period.label, type: msg.period.type } : null,
      contest_result: msg.result,
      winner_participant_id: msg.winner_id,
      scores: hasScores
        ? { home_score: msg.home_score!, away_score: msg.away_score!, period_scores: msg.linescore.map(([h, a]) => ({ home_score: h, away_score: a })) }
        : null,
      situation: msg.situation,
      leaderboard: msg.leaderboard
        ? msg.leaderboard.map((e) => ({ participant_id: e.id, participant_name: e.name, rank: e.rank, score: e.score, status: e.status }))
        : null,
    },
    ts_event: ts,
    ts_init: tsInit,
  };
}

const STATUS: Record<SimWireOrderAck['state'], VenueOrderStatus> = {
  FILLED: 'filled',
  PARTIAL: 'partially_filled',
  OPEN: 'resting',
  PENDING: 'pending',
  REJECTED: 'rejected',
  CANCELLED: 'cancelled',
};

export interface OrderParseContext {
  partner_id: string;
  price_format: OrderConfig['price_format'];
  /** The order's instrument (null on the practice book, which names positions). */
  instrument: SimInstrument | null;
  warnings?: VenueOrderWarning[];
}

/** A venue order ack (native prices) → VenueOrder (0-1 prices, spec reject codes). */
export function parseOrderAck(ack: SimWireOrderAck, ctx: OrderParseContext, tsInit: number): VenueOrder {
  const status = STATUS[ack?.state];
  if (status === undefined) throw malformed(ctx.partner_id, 'order ack');
  const fmt = ctx.instrument === null ? 'probability' : ctx.price_format;
  const px = (x: number) => {
    try {
      return fromNative(fmt, x);
    } catch {
      throw malformed(ctx.partner_id, 'order price');
    }
  };
  return {
    partner_id: ctx.partner_id,
    venue_order_id: ack.order_id,
    client_order_id: ack.client_order_id,
    account_id: ack.account_id,
    position_hash: ctx.instrument?.position_hash ?? ack.position_hash ?? '',
    liquidity_hash: ctx.instrument?.liquidity_hash ?? null,
    order_type: ack.type,
    status,
    requested_amount: ack.requested_notional,
    requested_contracts: ack.requested_qty,
    limit_price: px(ack.limit_px),
    filled_contracts: round6(ack.filled_qty),
    filled_notional: round6(ack.filled_notional),
    avg_price: ack.avg_px === null ? null : px(ack.avg_px),
    fees: round6(ack.fee),
    remaining_contracts: round6(ack.open_qty),
    reject_code: status === 'rejected' ? rejectCodeOf(ack.reject_reason) : null,
    reject_reason: status === 'rejected' ? (ack.reject_message ?? ack.reject_reason ?? 'rejected') : null,
    warnings: ctx.warnings ? [...ctx.warnings] : [],
    currency: ack.currency,
    ts_event: ack.ts,
    ts_init: tsInit,
  };
}

export function parseBalance(w: SimWireBalance, partnerId: string, tsInit: number): VenueBalance {
  return {
    partner_id: partnerId,
    account_id: w.account_id,
    currency: 'USD',
    balance: round6(num(partnerId, w.available_usd, 'balance')),
    held: round6(num(partnerId, w.held_usd, 'held')),
    credential_status: w.credential_status,
    ts_event: w.ts,
    ts_init: tsInit,
  };
}

const CAUSE: Record<SimWireBalanceEvent['reason'], VenueBalanceUpdate['cause']> = {
  ORDER_HOLD: 'order_hold',
  RELEASE: 'release',
  FILL: 'fill',
  SETTLEMENT: 'settlement',
  REFRESH: 'refresh',
};

export function parseBalanceEvent(w: SimWireBalanceEvent, partnerId: string, tsInit: number): VenueBalanceUpdate {
  return { ...parseBalance(w, partnerId, tsInit), cause: CAUSE[w.reason], venue_order_id: w.order_id };
}

/** Settlement outcomes; `resolve` maps the venue's reference to a position_hash (unknown refs are skipped). */
export function parseSettlement(w: SimWireSettlement, resolve: (ref: string) => string | undefined, partnerId: string, tsInit: number): VenueSettlement {
  const results: VenueSettlement['results'] = [];
  for (const o of w.outcomes) {
    const hash = resolve(o.ref);
    if (hash === undefined) continue;
    results.push({ position_hash: hash, result: o.outcome === 'WIN' ? 'win' : o.outcome === 'LOSE' ? 'lose' : 'push' });
  }
  return { partner_id: partnerId, contest_id: w.event_ref, winner_participant_id: w.winner_id, results, ts_event: w.ts, ts_init: tsInit };
}
