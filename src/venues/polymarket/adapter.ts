/**
 * The Polymarket VenueAdapter: market data without credentials.
 *
 * connect() reads the catalog from Gamma (active, open events), then opens the market channel for
 * every listed token (both outcomes of every market, WS_MAX_ASSETS per connection). Books are kept
 * per quoted token: replaced by `book` snapshots, changed by `price_change` pairs, checked against
 * the touch each change reports (a disagreement drops the book until a REST snapshot replaces it);
 * `tick_size_change` moves the market's grid (orderConfigFor); `last_trade_price` is a trade print.
 *
 * Freshness: a book counts as live only while its connection is subscribed and has heard from the
 * venue (any message, the PONG to our PING included) within WS_SILENCE_MS. fetchQuotes answers
 * live books from memory and reads the others from REST `/books`; when the venue answers neither,
 * it answers nothing, so nothing re-confirms a quote of a silent venue and ingest's freshness
 * bound marks it stale. Orders are refused as `orders_not_supported` (capability, not a crash)
 * until signing is built.
 */
import type { OrderConfig } from '../../domain/catalog.js';
import { partnerOfLiquidityHash } from '../../domain/hashes.js';
import { round6 } from '../../domain/prices.js';
import { VenueError, VenueErrorCodes, notSupported } from '../errors.js';
import { localRejection, validateOrderRequest } from '../order-request.js';
import type {
  GameStateRecord,
  NormalizedQuote,
  NormalizedTrade,
  QuoteFilter,
  Unsubscribe,
  VenueAdapter,
  VenueBalance,
  VenueBalanceUpdate,
  VenueCancelRequest,
  VenueDepth,
  VenueDescription,
  VenueOrder,
  VenueOrderRequest,
  VenueSettlement,
} from '../types.js';
import { buyerLevels, quoteOf, TokenBook } from './book.js';
import { buildPolymarketCatalog, type PolymarketCatalog, type PolymarketToken } from './catalog.js';
import { POLYMARKET_FALLBACK_FEE } from './fees.js';
import type { PmBook, PmMarketFrame, PmTrade } from './parse.js';
import { PolymarketRest } from './rest.js';
import { MarketStream } from './stream.js';
import {
  DEFAULT_MAX_EVENTS,
  DEPTH_LEVELS,
  PARTNER_ID,
  POLYMARKET_CAPABILITIES,
  POLYMARKET_DEFAULT_URLS,
  POLYMARKET_ORDER_CONFIG,
  POLYMARKET_PARTNER,
  QUOTE_LEVELS,
  WS_MAX_ASSETS,
  WS_PATH,
  type PolymarketUrls,
} from './venue.js';

export interface PolymarketAdapterOptions {
  urls?: Partial<PolymarketUrls>;
  /** Only events with this Gamma tag id. */
  tagId?: string | null;
  /** At most this many events in the catalog (default DEFAULT_MAX_EVENTS). */
  maxEvents?: number;
  /** ts_init source, and the clock feed silence is judged by (default: wall clock). */
  clock?: () => number;
  /** How long connect() waits for the market channel before answering from REST meanwhile (default 5 s). */
  connectWaitMs?: number;
}

/** A market's own trading rules (its grid moves with tick_size_change). */
export interface PolymarketMarketRules {
  token_id: string;
  condition_id: string;
  tick_size: number;
  /** Shares: the venue's smallest order on this market. */
  min_order_size: number;
  neg_risk: boolean;
  accepting_orders: boolean;
  /** The venue's order_config on this market's grid. */
  order_config: OrderConfig;
}

/** Counters for metrics and tests. */
export interface PolymarketFeedStats {
  live_connections: number;
  connections: number;
  connects: number;
  drops: number;
  parse_errors: number;
  /** price_change touches that disagreed with our book (each drops the book until resynced). */
  book_mismatches: number;
  /** Books re-read from REST after a mismatch. */
  resyncs: number;
  /** Snapshot reads answered from REST because the feed was not live. */
  rest_snapshots: number;
  frames: number;
  /** REST requests sent, those that failed, and those that waited for the rate-limit buckets. */
  rest_requests: number;
  rest_failures: number;
  rate_limit_waits: number;
}

interface QuoteSub {
  listener: (q: NormalizedQuote) => void;
  filter?: QuoteFilter;
}

interface TradeSub {
  listener: (t: NormalizedTrade) => void;
  contests: Set<string> | null;
}

const unknownPosition = (what: string) => new VenueError('non_retryable', VenueErrorCodes.unknownPosition, `polymarket does not list ${what}`, { partner_id: PARTNER_ID });

/** Keeps a price on a tick grid exact (0.1 + 0.2 noise never reaches a config). */
const onTick = (x: number) => Math.round(x * 1e6) / 1e6;

export class PolymarketAdapter implements VenueAdapter {
  readonly id = PARTNER_ID;
  private readonly urls: PolymarketUrls;
  private readonly clock: () => number;
  readonly rest: PolymarketRest;
  private connected = false;
  private connecting: Promise<void> | null = null;
  private cat: PolymarketCatalog | null = null;
  private readonly tokens = new Map<string, PolymarketToken>();
  private readonly byPosition = new Map<string, PolymarketToken>();
  private readonly books = new Map<string, TokenBook>();
  /** Live tick sizes per token (both tokens of a market move together). */
  private readonly ticks = new Map<string, number>();
  private readonly minSizes = new Map<string, number>();
  private streams: MarketStream[] = [];
  private readonly streamOf = new Map<string, MarketStream>();
  private readonly quoteSubs = new Set<QuoteSub>();
  private readonly tradeSubs = new Set<TradeSub>();
  /** Tokens whose REST resync is in flight (at most one each). */
  private readonly resyncing = new Set<string>();
  private stats = { book_mismatches: 0, resyncs: 0, rest_snapshots: 0, frames: 0, parse_errors: 0 };

  constructor(private readonly opts: PolymarketAdapterOptions = {}) {
    this.urls = { ...POLYMARKET_DEFAULT_URLS, ...stripUndefined(opts.urls ?? {}) };
    this.clock = opts.clock ?? Date.now;
    this.rest = new PolymarketRest(this.urls);
  }

  describe(): VenueDescription {
    return structuredClone({ partner: POLYMARKET_PARTNER, fee: POLYMARKET_FALLBACK_FEE, capabilities: POLYMARKET_CAPABILITIES }) as VenueDescription;
  }

  /** The catalog read at connect (null before): what the service seeds for this venue. */
  catalog(): PolymarketCatalog | null {
    return this.cat;
  }

  feedStats(): PolymarketFeedStats {
    return {
      live_connections: this.streams.filter((s) => s.live()).length,
      connections: this.streams.length,
      connects: this.streams.reduce((n, s) => n + s.connects, 0),
      drops: this.streams.reduce((n, s) => n + s.drops, 0),
      parse_errors: this.stats.parse_errors + this.streams.reduce((n, s) => n + s.parseErrors, 0),
      book_mismatches: this.stats.book_mismatches,
      resyncs: this.stats.resyncs,
      rest_snapshots: this.stats.rest_snapshots,
      frames: this.stats.frames,
      rest_requests: this.rest.requests,
      rest_failures: this.rest.failures,
      rate_limit_waits: this.rest.limiter.waits,
    };
  }

  // ---- connection ----------------------------------------------------------------------------

  async connect(): Promise<void> {
    if (this.connected) return;
    this.connecting ??= this.doConnect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async doConnect(): Promise<void> {
    const events = await this.rest.fetchEvents({ tag_id: this.opts.tagId ?? null, max_events: this.opts.maxEvents ?? DEFAULT_MAX_EVENTS });
    const cat = buildPolymarketCatalog(events, { now: this.clock() });
    this.index(cat);
    const ids = cat.tokens.map((t) => t.token_id);
    const url = `${this.urls.ws}${WS_PATH}`;
    for (let i = 0; i < ids.length; i += WS_MAX_ASSETS) {
      const s = new MarketStream({
        url,
        assetIds: ids.slice(i, i + WS_MAX_ASSETS),
        now: this.clock,
        onFrames: (frames) => this.onFrames(frames),
        onDown: () => this.onDown(s),
      });
      for (const id of s.assetIds) this.streamOf.set(id, s);
      this.streams.push(s);
      s.start();
    }
    await Promise.all(this.streams.map((s) => s.ready(this.opts.connectWaitMs ?? 5_000)));
    this.connected = true;
  }

  private index(cat: PolymarketCatalog): void {
    this.cat = cat;
    this.tokens.clear();
    this.byPosition.clear();
    this.books.clear();
    this.ticks.clear();
    this.minSizes.clear();
    for (const t of cat.tokens) {
      this.tokens.set(t.token_id, t);
      this.ticks.set(t.token_id, t.tick_size);
      this.minSizes.set(t.token_id, t.min_order_size);
      if (t.position_hash !== null) {
        this.byPosition.set(t.position_hash, t);
        this.books.set(t.token_id, new TokenBook(t.token_id));
      }
    }
  }

  async close(): Promise<void> {
    await this.connecting?.catch(() => undefined);
    this.connected = false;
    for (const s of this.streams) s.stop();
    this.streams = [];
    this.streamOf.clear();
    this.quoteSubs.clear();
    this.tradeSubs.clear();
    for (const b of this.books.values()) b.confirmed = false;
  }

  private ensureConnected(): void {
    if (!this.connected) throw new VenueError('retryable', VenueErrorCodes.notConnected, 'polymarket is not connected', { partner_id: PARTNER_ID });
  }

  private require(ok: boolean, capability: string): void {
    if (!ok) throw notSupported(PARTNER_ID, capability);
    this.ensureConnected();
  }

  /** The token's book is current: confirmed by a snapshot and its connection live. */
  private isLive(tokenId: string): boolean {
    const b = this.books.get(tokenId);
    return b !== undefined && b.confirmed && (this.streamOf.get(tokenId)?.live() ?? false);
  }

  // ---- the market channel --------------------------------------------------------------------

  private onDown(s: MarketStream): void {
    // Missed changes cannot be detected on this feed: wait for the snapshots of the next subscription.
    for (const id of s.assetIds) {
      const b = this.books.get(id);
      if (b) b.confirmed = false;
    }
  }

  /** Frames in, in order; quotes go out once per touched token after the whole message. */
  private onFrames(frames: readonly PmMarketFrame[]): void {
    const touched = new Set<string>();
    for (const f of frames) {
      this.stats.frames++;
      switch (f.kind) {
        case 'book': {
          this.noteGrid(f.book);
          const b = this.books.get(f.book.token_id);
          if (!b) break;
          if (b.ts !== null && f.book.ts !== null && f.book.ts < b.ts && b.confirmed) break; // an older snapshot than what we hold
          b.applySnapshot(f.book);
          touched.add(b.token_id);
          break;
        }
        case 'price_change':
          for (const c of f.changes) {
            const b = this.books.get(c.token_id);
            // A book without a snapshot cannot take changes; its snapshot is on the way.
            if (!b || !b.confirmed) continue;
            if (b.applyChange(c, f.ts)) touched.add(b.token_id);
            else {
              this.stats.book_mismatches++;
              touched.delete(b.token_id);
              this.resync(b.token_id);
            }
          }
          break;
        case 'tick_size_change': {
          const t = this.tokens.get(f.token_id);
          this.ticks.set(f.token_id, f.new_tick_size);
          if (t) this.ticks.set(t.complement_token_id, f.new_tick_size);
          break;
        }
        case 'last_trade_price': {
          const b = this.books.get(f.trade.token_id);
          if (b) b.lastTrade = f.trade.price;
          this.emitTrade(f.trade);
          break;
        }
        default:
          break;
      }
    }
    for (const id of touched) this.emitQuote(id);
  }

  /** A snapshot states the market's grid too. */
  private noteGrid(b: PmBook): void {
    const t = this.tokens.get(b.token_id);
    if (!t) return;
    if (b.tick_size !== null && b.tick_size > 0 && b.tick_size < 1) {
      this.ticks.set(t.token_id, b.tick_size);
      this.ticks.set(t.complement_token_id, b.tick_size);
    }
    if (b.min_order_size !== null && b.min_order_size >= 0) {
      this.minSizes.set(t.token_id, b.min_order_size);
      this.minSizes.set(t.complement_token_id, b.min_order_size);
    }
  }

  private resync(tokenId: string): void {
    if (this.resyncing.has(tokenId) || !this.connected) return;
    this.resyncing.add(tokenId);
    this.stats.resyncs++;
    this.rest
      .fetchBook(tokenId)
      .then((book) => this.onFrames([{ kind: 'book', book }]))
      .catch(() => undefined) // stays unconfirmed; the next snapshot (REST or WS) confirms it
      .finally(() => this.resyncing.delete(tokenId));
  }

  private quote(tokenId: string, tsInit: number): NormalizedQuote | null {
    const t = this.tokens.get(tokenId);
    const b = this.books.get(tokenId);
    if (!t || !b) return null;
    return quoteOf(b, t, t.fee, { partner_id: PARTNER_ID, source: 'streaming', levels: QUOTE_LEVELS }, tsInit);
  }

  private matches(t: PolymarketToken, filter?: QuoteFilter): boolean {
    if (!filter) return true;
    if (filter.contest_ids && !filter.contest_ids.includes(t.contest_id)) return false;
    if (filter.position_hashes && (t.position_hash === null || !filter.position_hashes.includes(t.position_hash))) return false;
    return true;
  }

  private emitQuote(tokenId: string): void {
    if (this.quoteSubs.size === 0 || !this.isLive(tokenId)) return;
    const t = this.tokens.get(tokenId)!;
    const q = this.quote(tokenId, this.clock());
    if (!q) return;
    for (const s of [...this.quoteSubs]) if (this.matches(t, s.filter)) s.listener(q);
  }

  private emitTrade(trade: PmTrade): void {
    if (this.tradeSubs.size === 0) return;
    const t = this.tokens.get(trade.token_id);
    if (!t) return;
    const rec = tradeRecord(trade, t, this.clock());
    for (const s of [...this.tradeSubs]) if (s.contests === null || s.contests.has(t.contest_id)) s.listener(rec);
  }

  // ---- quotes and depth ----------------------------------------------------------------------

  async fetchQuotes(filter?: QuoteFilter): Promise<NormalizedQuote[]> {
    this.require(POLYMARKET_CAPABILITIES.quotes.snapshot, 'quote snapshots');
    const wanted = [...this.byPosition.values()].filter((t) => this.matches(t, filter));
    const stale = wanted.filter((t) => !this.isLive(t.token_id));
    let restError: unknown = null;
    if (stale.length > 0) {
      try {
        const books = await this.rest.fetchBooks(stale.map((t) => t.token_id));
        this.stats.rest_snapshots += books.length;
        this.applyRestBooks(books);
        const got = new Set(books.map((b) => b.token_id));
        const tsInit = this.clock();
        const out: NormalizedQuote[] = [];
        for (const t of wanted) {
          if (!this.isLive(t.token_id) && !got.has(t.token_id)) continue;
          const q = this.quote(t.token_id, tsInit);
          if (q) out.push(q);
        }
        return out;
      } catch (e) {
        restError = e;
      }
    }
    const tsInit = this.clock();
    const out: NormalizedQuote[] = [];
    for (const t of wanted) {
      if (!this.isLive(t.token_id)) continue;
      const q = this.quote(t.token_id, tsInit);
      if (q) out.push(q);
    }
    // The venue answered neither on the feed nor over REST: nothing to confirm.
    if (out.length === 0 && restError !== null) throw restError;
    return out;
  }

  /** REST snapshots replace books unless the feed already holds a newer one. */
  private applyRestBooks(books: readonly PmBook[]): void {
    for (const book of books) {
      this.noteGrid(book);
      const b = this.books.get(book.token_id);
      if (!b) continue;
      if (this.isLive(book.token_id) && b.ts !== null && book.ts !== null && book.ts < b.ts) continue;
      b.applySnapshot(book);
    }
  }

  subscribeQuotes(listener: (quote: NormalizedQuote) => void, filter?: QuoteFilter): Unsubscribe {
    this.require(POLYMARKET_CAPABILITIES.quotes.streaming, 'quote streaming');
    const sub: QuoteSub = { listener, filter };
    this.quoteSubs.add(sub);
    return () => {
      this.quoteSubs.delete(sub);
    };
  }

  async fetchDepth(positionHash: string): Promise<VenueDepth> {
    this.require(POLYMARKET_CAPABILITIES.depth, 'depth');
    const t = typeof positionHash === 'string' ? this.byPosition.get(positionHash) : undefined;
    if (!t) throw unknownPosition(`position ${String(positionHash)}`);
    if (!this.isLive(t.token_id)) {
      const book = await this.rest.fetchBook(t.token_id);
      this.stats.rest_snapshots++;
      this.applyRestBooks([book]);
    }
    const b = this.books.get(t.token_id)!;
    const tsInit = this.clock();
    const levels = buyerLevels(b.askLevels(DEPTH_LEVELS));
    return {
      partner_id: PARTNER_ID,
      position_hash: positionHash,
      liquidity_hash: t.liquidity_hash,
      levels,
      total_available: round6(levels.reduce((s, l) => s + l.available, 0)),
      best_price: levels[0]?.price ?? null,
      ts_event: Math.min(b.ts ?? tsInit, tsInit),
      ts_init: tsInit,
    };
  }

  /**
   * One market's rules on its live grid (tick_size_change moves them), by position hash,
   * liquidity hash or token id; null for anything this venue does not list.
   */
  marketRules(ref: string): PolymarketMarketRules | null {
    const t = this.byPosition.get(ref) ?? this.tokens.get(ref) ?? (partnerOfLiquidityHash(ref) === PARTNER_ID ? this.tokens.get(ref.slice(PARTNER_ID.length + 1)) : undefined);
    if (!t) return null;
    const tick = this.ticks.get(t.token_id) ?? t.tick_size;
    return {
      token_id: t.token_id,
      condition_id: t.condition_id,
      tick_size: tick,
      min_order_size: this.minSizes.get(t.token_id) ?? t.min_order_size,
      neg_risk: t.neg_risk,
      accepting_orders: t.accepting_orders,
      order_config: { ...POLYMARKET_ORDER_CONFIG, supported_order_types: [...POLYMARKET_ORDER_CONFIG.supported_order_types], price_tick: tick, min_price: onTick(tick), max_price: onTick(1 - tick) },
    };
  }

  /** The market's order_config (its own tick), or null for a position this venue does not list. */
  orderConfigFor(ref: string): OrderConfig | null {
    return this.marketRules(ref)?.order_config ?? null;
  }

  // ---- orders: not until signing is built ----------------------------------------------------

  async placeOrder(req: VenueOrderRequest): Promise<VenueOrder> {
    validateOrderRequest(PARTNER_ID, req);
    this.ensureConnected();
    let t: PolymarketToken | undefined;
    if (req.liquidity_hash !== undefined) {
      if (partnerOfLiquidityHash(req.liquidity_hash) !== PARTNER_ID) {
        throw new VenueError('non_retryable', 'liquidity_hash_mismatch', `liquidity_hash ${req.liquidity_hash} does not name polymarket`, { partner_id: PARTNER_ID });
      }
      t = this.tokens.get(req.liquidity_hash.slice(PARTNER_ID.length + 1));
      if (!t || t.position_hash === null) throw unknownPosition(`liquidity_hash ${req.liquidity_hash}`);
    } else {
      t = this.byPosition.get(req.position_hash!);
      if (!t) throw unknownPosition(`position ${req.position_hash}`);
    }
    return localRejection(PARTNER_ID, req, 'orders_not_supported', 'polymarket orders need request signing, which this build does not have: quotes only', {
      position_hash: t.position_hash!,
      liquidity_hash: t.liquidity_hash,
      currency: 'USD',
      ts: this.clock(),
    });
  }

  async cancelOrder(_req: VenueCancelRequest): Promise<VenueOrder> {
    throw notSupported(PARTNER_ID, 'order cancellation');
  }

  async fetchOrder(_accountId: string, _venueOrderId: string): Promise<VenueOrder> {
    throw notSupported(PARTNER_ID, 'orders');
  }

  subscribeOrderUpdates(_listener: (order: VenueOrder) => void): Unsubscribe {
    throw notSupported(PARTNER_ID, 'order updates');
  }

  async fetchBalance(_accountId: string): Promise<VenueBalance> {
    throw notSupported(PARTNER_ID, 'balances');
  }

  subscribeBalances(_listener: (update: VenueBalanceUpdate) => void): Unsubscribe {
    throw notSupported(PARTNER_ID, 'balance updates');
  }

  // ---- trades; no game state or settlements --------------------------------------------------

  subscribeTrades(listener: (trade: NormalizedTrade) => void, filter?: { contest_ids?: string[] }): Unsubscribe {
    this.require(POLYMARKET_CAPABILITIES.trades, 'trades');
    const sub: TradeSub = { listener, contests: filter?.contest_ids ? new Set(filter.contest_ids) : null };
    this.tradeSubs.add(sub);
    return () => {
      this.tradeSubs.delete(sub);
    };
  }

  async fetchGameState(_contestIds: string[]): Promise<GameStateRecord[]> {
    throw notSupported(PARTNER_ID, 'game state');
  }

  subscribeGameState(_listener: (rec: GameStateRecord) => void): Unsubscribe {
    throw notSupported(PARTNER_ID, 'game state');
  }

  subscribeSettlements(_listener: (s: VenueSettlement) => void): Unsubscribe {
    throw notSupported(PARTNER_ID, 'settlements');
  }
}

/**
 * A print on a token → the trade record: the taker's side and price on the token the venue
 * traded; on a neg-risk runner's No token (not listed) it is tied to the runner's Yes position as
 * `complement` (ingest reports it as the opposite action at 1 − price).
 */
export function tradeRecord(trade: PmTrade, t: PolymarketToken, tsInit: number): NormalizedTrade {
  return {
    partner_id: PARTNER_ID,
    venue_trade_id: trade.trade_id,
    venue_market_id: t.token_id,
    liquidity_hash: t.trade_relation === 'same' ? t.liquidity_hash : `${PARTNER_ID}:${t.complement_token_id}`,
    position_hash: t.trade_position_hash,
    taker_action: trade.side,
    price: round6(trade.price),
    size_contracts: trade.size,
    is_block: false,
    trader_id: trade.wallet,
    trader_id_kind: trade.wallet === null ? null : 'wallet',
    executed_at: Math.min(trade.ts, tsInit),
    relation: t.trade_relation,
    ts_event: Math.min(trade.ts, tsInit),
    ts_init: tsInit,
  };
}

/** The given URLs without trailing slashes; unset or empty ones fall back to the defaults. */
function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o)
      .filter(([, v]) => v !== undefined && v !== '')
      .map(([k, v]) => [k, typeof v === 'string' ? v.replace(/\/+$/, '') : v]),
  ) as Partial<T>;
}
