/**
 * One token's order book as the adapter keeps it: replaced by each `book` snapshot (REST or WS),
 * changed level by level by `price_change` (the size given is the new total at that price; 0
 * removes the level), and turned into the buyer's quote: the asks, best (lowest) first, each level
 * as {price, USD notional}.
 *
 * A price_change item also states the token's touch after the change (best_bid / best_ask). When
 * our book disagrees, it missed something (the market channel has no sequence numbers): the book
 * stops counting as confirmed until a fresh snapshot replaces it, so it is never quoted wrong.
 */
import { round6 } from '../../domain/prices.js';
import type { FeeModel, NormalizedQuote, PriceLevel, QuoteSource } from '../types.js';
import type { PolymarketToken } from './catalog.js';
import { notional, type PmBook, type PmLevel, type PmLevelChange } from './parse.js';

/** Prices as integer micro-units, so "0.39" and "0.390" are one level. */
const key = (p: number) => Math.round(p * 1e6);

export class TokenBook {
  private readonly bids = new Map<number, PmLevel>();
  private readonly asks = new Map<number, PmLevel>();
  /** The venue's time of the last snapshot or change (unix ms). */
  ts: number | null = null;
  /** Holds a snapshot no change has contradicted since (and, for a streamed book, since the feed last (re)connected). */
  confirmed = false;
  /** The last best ask seen: the quote's price while the ask side is empty. */
  lastAsk: number | null = null;
  lastTrade: number | null = null;
  /** Changes whose reported touch disagreed with this book. */
  mismatches = 0;

  constructor(readonly token_id: string) {}

  applySnapshot(b: PmBook): void {
    this.bids.clear();
    this.asks.clear();
    for (const l of b.bids) this.bids.set(key(l.price), { ...l });
    for (const l of b.asks) this.asks.set(key(l.price), { ...l });
    if (b.ts !== null) this.ts = b.ts;
    if (b.last_trade_price !== null) this.lastTrade = b.last_trade_price;
    this.confirmed = true;
    this.noteAsk();
  }

  /** Applies one level change; false when the venue's reported touch disagrees with the result. */
  applyChange(c: PmLevelChange, ts: number): boolean {
    const side = c.side === 'bid' ? this.bids : this.asks;
    if (c.size === 0) side.delete(key(c.price));
    else side.set(key(c.price), { price: c.price, size: c.size });
    this.ts = ts;
    this.noteAsk();
    const agrees = (reported: number | null, ours: number | null) => reported === null || (ours !== null && key(reported) === key(ours));
    // A reported touch of 0 / 1 (or missing) is an empty side on the venue's side.
    const empty = (x: number | null) => x === null || x <= 0 || x >= 1;
    const bidOk = empty(c.best_bid) ? true : agrees(c.best_bid, this.bestBid());
    const askOk = empty(c.best_ask) ? true : agrees(c.best_ask, this.bestAsk());
    if (bidOk && askOk) return true;
    this.mismatches++;
    this.confirmed = false;
    return false;
  }

  private noteAsk(): void {
    const a = this.bestAsk();
    if (a !== null) this.lastAsk = a;
  }

  bestBid(): number | null {
    let best: number | null = null;
    for (const l of this.bids.values()) if (best === null || l.price > best) best = l.price;
    return best;
  }

  bestAsk(): number | null {
    let best: number | null = null;
    for (const l of this.asks.values()) if (best === null || l.price < best) best = l.price;
    return best;
  }

  /** Asks best (lowest) first, at most `limit`. */
  askLevels(limit = Infinity): PmLevel[] {
    return [...this.asks.values()].sort((a, b) => a.price - b.price).slice(0, limit);
  }

  /** Bids best (highest) first, at most `limit`. */
  bidLevels(limit = Infinity): PmLevel[] {
    return [...this.bids.values()].sort((a, b) => b.price - a.price).slice(0, limit);
  }
}

/** Ask levels as the buyer's price levels (USD notional), skipping prices a buyer cannot pay (0 or 1). */
export function buyerLevels(asks: readonly PmLevel[]): PriceLevel[] {
  const out: PriceLevel[] = [];
  for (const l of asks) {
    if (!(l.price > 0 && l.price < 1) || !(l.size > 0)) continue;
    const available = notional(l.price, l.size);
    if (available > 0) out.push({ price: round6(l.price), available });
  }
  return out;
}

export interface QuoteContext {
  partner_id: string;
  source: QuoteSource;
  levels: number;
}

/**
 * The buyer's quote of a token, or null when there is nothing to say (no asks and no price ever
 * seen). ts_event is the venue's time of the book, never after ts_init (a venue clock running a
 * little ahead of ours does not make a quote from the future).
 */
export function quoteOf(book: TokenBook, token: PolymarketToken, fee: FeeModel, ctx: QuoteContext, tsInit: number): NormalizedQuote | null {
  if (token.position_hash === null) return null;
  const levels = buyerLevels(book.askLevels(ctx.levels));
  const last = book.lastAsk ?? book.lastTrade;
  const priceNow = levels[0]?.price ?? (last !== null && last > 0 && last < 1 ? round6(last) : null);
  if (priceNow === null) return null;
  const ts = Math.min(book.ts ?? tsInit, tsInit);
  return {
    partner_id: ctx.partner_id,
    liquidity_hash: token.liquidity_hash,
    position_hash: token.position_hash,
    venue_market_id: token.token_id,
    venue_side_key: token.side_key,
    price: priceNow,
    available: levels[0]?.available ?? 0,
    levels,
    fee,
    real_book: true,
    source: ctx.source,
    ts_event: ts,
    ts_init: tsInit,
  };
}
