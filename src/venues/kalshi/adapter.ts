/**
 * The Kalshi VenueAdapter.
 *
 * Two modes, decided by configuration and declared in describe():
 * - with an API key (FLOW_KALSHI_API_KEY_ID + private key): books stream over the WebSocket
 *   (`orderbook_delta` requires an authenticated socket), kept exact from snapshot + deltas with seq
 *   checks (stream.ts); with FLOW_KALSHI_ACCOUNT_ID as well, orders, cancels, balance and order updates
 *   go to that account through the signed REST API.
 * - without: books are polled over public REST (quotes.streaming false, a poll interval), order
 *   capabilities are declared unsupported and placeOrder answers `orders_not_supported`.
 * Trades come from the public `trade` channel in both modes.
 *
 * Freshness: a streamed book that stops changing is re-confirmed every RECONFIRM_MS while the socket
 * is alive, so a quiet market stays fresh; a silent socket (no frame, not even a ping, for 30 s) stops
 * the re-confirmation, its books are dropped and the quotes go stale at their freshness bound. A book
 * the stream no longer trusts (seq gap, negative level) is never quoted until its new snapshot.
 */
import type { OrderType, Partner } from '../../domain/catalog.js';
import { parsePositionHash } from '../../domain/hashes.js';
import { toMicros } from '../../domain/money.js';
import { VenueError, VenueErrorCodes, isVenueError, notSupported } from '../errors.js';
import { ruleFreshnessMs } from '../freshness.js';
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
  VenueCapabilities,
  VenueDepth,
  VenueDescription,
  VenueOrder,
  VenueOrderRequest,
  VenueOrderWarning,
  VenueRejectCode,
  VenueSettlement,
} from '../types.js';
import { KalshiSigner } from './auth.js';
import { SIDES, levelsOf, offers, type KalshiBook, type KalshiSide } from './book.js';
import { buildKalshiCatalog, type KalshiCatalog, type KalshiListing } from './catalog.js';
import type { KalshiSettings } from './config.js';
import { KALSHI_REJECT_MAP } from './errors.js';
import { DEFAULT_FEE_SCHEDULE, feeModelOf } from './fees.js';
import { floorOnGrid, gridOf, kalshiOrderConfig } from './grid.js';
import type { KalshiEvent, KalshiOrder, KalshiSeries } from './messages.js';
import { buildCreateOrder, liquidityHashOf, parseBalance, parseLiquidityHash, parseOrder, parseOrderbook, parseTrade, quoteOf, type OrderContext } from './parse.js';
import { KalshiRest, type KalshiRestStats } from './rest.js';
import { emptyStreamStats, KalshiStream, type KalshiStreamOptions, type KalshiStreamStats } from './stream.js';
import { PARTNER_ID, notionalMicros, num } from './units.js';

/** How often a polled venue's quotes are fetched (ms). */
export const KALSHI_POLL_INTERVAL_MS = 5_000;
/** How often a streamed, unchanged book is re-confirmed while the socket is alive (ms). Below
 *  QUOTE_RECONFIRM_MS + this < the streaming freshness bound, so a quiet healthy book never flaps. */
export const RECONFIRM_MS = 5_000;
/** Order contexts remembered (what Kalshi does not echo: market vs limit, the stake). */
const MAX_ORDER_CONTEXTS = 10_000;

export interface KalshiAdapterOptions {
  /** ts_init source (default: wall clock). */
  clock?: () => number;
  /** The private key PEM when settings name a file (the factory reads it). */
  privateKeyPem?: string | null;
  /** Link outcomes to positions other than the native ones (the cross-venue matcher). */
  positionOf?: (ticker: string, side: KalshiSide, native: string) => string | null;
  /** Token-bucket waits (tests). */
  sleep?: (ms: number) => Promise<void>;
  /** WebSocket opener (tests). */
  openSocket?: KalshiStreamOptions['open'];
  /** Re-confirmation period; 0 disables the timer (tests call reconfirmQuotes()). */
  reconfirmMs?: number;
}

/** Counters the adapter keeps, read by metrics at scrape time. */
export interface KalshiFeedStats extends KalshiStreamStats {
  rest: KalshiRestStats;
  read_waits: number;
  write_waits: number;
  parse_errors: number;
  catalog_lookup_failures: number;
  book_fetch_failures: number;
  markets: number;
}

type Listener<T> = { fn: (x: T) => void; filter?: QuoteFilter };

const invalid = (code: string, message: string) => new VenueError('non_retryable', code, message, { partner_id: PARTNER_ID });

export class KalshiAdapter implements VenueAdapter {
  readonly id = PARTNER_ID;
  private readonly clock: () => number;
  private readonly signer: KalshiSigner | null;
  private readonly rest: KalshiRest;
  private stream: KalshiStream | null = null;
  private cat: KalshiCatalog | null = null;
  private readonly byTicker = new Map<string, KalshiListing>();
  private readonly byPosition = new Map<string, { listing: KalshiListing; side: KalshiSide; contest_id: string }>();
  private readonly quoteListeners = new Set<Listener<NormalizedQuote>>();
  private readonly tradeListeners = new Set<{ fn: (t: NormalizedTrade) => void; contest_ids?: string[] }>();
  private readonly orderListeners = new Set<(o: VenueOrder) => void>();
  private readonly balanceListeners = new Set<(b: VenueBalanceUpdate) => void>();
  private readonly lastPrice = new Map<string, number>();
  private readonly orderCtx = new Map<string, Omit<OrderContext, 'account_id' | 'position_hash'>>();
  private connected = false;
  private connecting: Promise<void> | null = null;
  private reconfirmTimer: NodeJS.Timeout | null = null;
  private counters = { parse_errors: 0, catalog_lookup_failures: 0, book_fetch_failures: 0 };

  constructor(
    private readonly settings: KalshiSettings,
    private readonly opts: KalshiAdapterOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    const pem = opts.privateKeyPem ?? settings.privateKeyPem;
    this.signer = settings.keyId && pem ? new KalshiSigner({ keyId: settings.keyId, privateKeyPem: pem }) : null;
    this.rest = new KalshiRest({ baseUrl: settings.restBaseUrl, signer: this.signer, tier: settings.tier, timeoutMs: settings.requestTimeoutMs, clock: this.clock, sleep: opts.sleep });
  }

  /** Books stream only on an authenticated socket. */
  private get streaming(): boolean {
    return this.signer !== null;
  }

  private get ordersEnabled(): boolean {
    return this.signer !== null && this.settings.accountId !== null;
  }

  private partner(): Partner {
    const orders = this.ordersEnabled;
    return {
      partner_id: PARTNER_ID,
      name: 'Kalshi',
      status: 'active',
      orders_allowed: orders,
      // Credentials come from the operator's environment; there is no per-user connect flow yet.
      connectable: false,
      internal_book: false,
      order_config: kalshiOrderConfig(orders),
      credential_fields: [
        { key: 'api_key_id', label: 'API key ID', type: 'text', required: true },
        { key: 'private_key', label: 'RSA private key (PEM)', type: 'password', required: true },
      ],
      logo_url: `https://static.flow.local/partners/${PARTNER_ID}.svg`,
    };
  }

  private capabilities(): VenueCapabilities {
    const orders = this.ordersEnabled;
    const poll = this.streaming ? null : KALSHI_POLL_INTERVAL_MS;
    return {
      quotes: { snapshot: true, streaming: this.streaming, poll_interval_ms: poll, freshness_ms: ruleFreshnessMs(poll) },
      depth: true,
      orders: { place: orders, cancel: orders, types: orders ? ['market', 'limit'] : [], async_fills: false },
      balance: orders,
      trades: true,
      game_state: false,
      settlements: false,
    };
  }

  describe(): VenueDescription {
    return { partner: this.partner(), fee: feeModelOf(DEFAULT_FEE_SCHEDULE), capabilities: this.capabilities() };
  }

  /** The catalog built on connect (null before): what the composition root seeds into PostgreSQL. */
  catalog(): KalshiCatalog | null {
    return this.cat ? structuredClone(this.cat) : null;
  }

  /** Counters for metrics (plain data, read at scrape time). */
  feedStats(): KalshiFeedStats {
    const s: KalshiStreamStats = this.stream?.stats ?? emptyStreamStats();
    return {
      ...s,
      rest: { ...this.rest.stats },
      read_waits: this.rest.reads.waits,
      write_waits: this.rest.writes.waits,
      parse_errors: s.parse_errors + this.counters.parse_errors,
      catalog_lookup_failures: this.counters.catalog_lookup_failures,
      book_fetch_failures: this.counters.book_fetch_failures,
      markets: this.byTicker.size,
    };
  }

  // ---- connection --------------------------------------------------------------------------------

  async connect(): Promise<void> {
    if (this.connected) return;
    this.connecting ??= this.doConnect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async doConnect(): Promise<void> {
    const s = this.settings;
    const markets = await this.rest.listMarkets({ series: s.series, events: s.events, tickers: s.tickers, includeMultivariate: s.includeMultivariate }, s.maxMarkets);
    const eventTickers = [...new Set(markets.map((m) => m.event_ticker).filter((t) => typeof t === 'string'))];
    const events = (await Promise.all(eventTickers.map((t) => this.lookup(() => this.rest.event(t))))).filter((e): e is KalshiEvent => e !== null);
    const seriesTickers = new Set<string>();
    const eventBy = new Map(events.map((e) => [e.event_ticker, e]));
    for (const t of eventTickers) seriesTickers.add(eventBy.get(t)?.series_ticker || t.split('-')[0]!);
    const series = (await Promise.all([...seriesTickers].map((t) => this.lookup(() => this.rest.series(t))))).filter((x): x is KalshiSeries => x !== null);
    const cat = buildKalshiCatalog({ series, events, markets, partner: this.partner(), positionOf: this.opts.positionOf });
    this.cat = cat;
    this.byTicker.clear();
    this.byPosition.clear();
    for (const l of cat.listings) {
      this.byTicker.set(l.ticker, l);
      for (const side of SIDES) {
        const p = l.positions[side];
        if (p !== null) this.byPosition.set(p, { listing: l, side, contest_id: parsePositionHash(p)?.contest_id ?? l.contest_id });
      }
    }
    const tickers = cat.listings.map((l) => l.ticker);
    this.stream = new KalshiStream({
      url: s.wsUrl,
      signer: this.signer,
      tickers,
      channels: [...(this.streaming ? (['orderbook_delta'] as const) : []), 'trade', ...(this.ordersEnabled ? (['user_orders'] as const) : [])],
      clock: this.clock,
      open: this.opts.openSocket,
      onBook: (t, book, ts) => this.onBook(t, book, ts),
      onBookLost: () => undefined,
      onTrade: (m) => this.onTrade(m),
      onUserOrder: (o) => this.onUserOrder(o),
    });
    this.connected = true;
    await this.stream.start();
    const every = this.opts.reconfirmMs ?? RECONFIRM_MS;
    if (this.streaming && every > 0) {
      this.reconfirmTimer = setInterval(() => this.reconfirmQuotes(), every);
      this.reconfirmTimer.unref();
    }
  }

  /** A catalog lookup that may fail without failing the catalog (the market still lists). */
  private async lookup<T>(fn: () => Promise<T | null>): Promise<T | null> {
    try {
      return await fn();
    } catch (e) {
      if (isVenueError(e) && e.kind === 'fatal') throw e;
      this.counters.catalog_lookup_failures++;
      return null;
    }
  }

  async close(): Promise<void> {
    if (this.connecting) await this.connecting.catch(() => undefined);
    this.connected = false;
    this.stream?.stop();
    this.stream = null;
    if (this.reconfirmTimer) clearInterval(this.reconfirmTimer);
    this.reconfirmTimer = null;
    this.quoteListeners.clear();
    this.tradeListeners.clear();
    this.orderListeners.clear();
    this.balanceListeners.clear();
  }

  // ---- guards ------------------------------------------------------------------------------------

  private ensureConnected(): void {
    if (!this.connected) throw new VenueError('retryable', VenueErrorCodes.notConnected, 'kalshi is not connected', { partner_id: PARTNER_ID });
  }

  private require(ok: boolean, capability: string): void {
    if (!ok) throw notSupported(PARTNER_ID, capability);
    this.ensureConnected();
  }

  /** Anything thrown inside is a VenueError (a foreign throw is a bug: fatal internal_error). */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (isVenueError(e)) throw e;
      throw new VenueError('fatal', VenueErrorCodes.internal, `kalshi: ${(e as Error)?.message ?? String(e)}`, { partner_id: PARTNER_ID, cause: e });
    }
  }

  private position(positionHash: string): { listing: KalshiListing; side: KalshiSide; contest_id: string } {
    const hit = typeof positionHash === 'string' ? this.byPosition.get(positionHash) : undefined;
    if (!hit) throw invalid(VenueErrorCodes.unknownPosition, `kalshi does not list position ${String(positionHash)}`);
    return hit;
  }

  private checkAccount(accountId: string): void {
    if (accountId !== this.settings.accountId) throw invalid(VenueErrorCodes.unknownAccount, `account ${String(accountId)} is not connected to kalshi`);
  }

  private matches(listing: KalshiListing, side: KalshiSide, filter?: QuoteFilter): boolean {
    if (!filter) return true;
    const p = listing.positions[side];
    if (p === null) return false;
    if (filter.position_hashes && !filter.position_hashes.includes(p)) return false;
    if (filter.contest_ids && !filter.contest_ids.includes(this.byPosition.get(p)?.contest_id ?? listing.contest_id)) return false;
    return true;
  }

  // ---- quotes and depth --------------------------------------------------------------------------

  private quote(listing: KalshiListing, side: KalshiSide, book: KalshiBook, tsEvent: number, tsInit: number): NormalizedQuote | null {
    const h = liquidityHashOf(listing.ticker, side);
    const q = quoteOf(listing, side, book, { source: this.streaming ? 'streaming' : 'polling' }, tsEvent, tsInit, this.lastPrice.get(h) ?? listing.last_ask[side]);
    if (q) this.lastPrice.set(h, q.price);
    return q;
  }

  private emitBook(listing: KalshiListing, book: KalshiBook, tsEvent: number): number {
    if (this.quoteListeners.size === 0) return 0;
    const tsInit = this.clock();
    let n = 0;
    for (const side of SIDES) {
      const q = this.quote(listing, side, book, tsEvent, tsInit);
      if (!q) continue;
      for (const l of this.quoteListeners) {
        if (!this.matches(listing, side, l.filter)) continue;
        l.fn(q);
        n++;
      }
    }
    return n;
  }

  private onBook(ticker: string, book: KalshiBook, ts: number): void {
    const listing = this.byTicker.get(ticker);
    if (listing) this.emitBook(listing, book, ts);
  }

  /**
   * Re-emits every synced book's quotes with a new ts_init while the socket is alive (a quiet market
   * is still a confirmed one); emits nothing from a silent socket. Returns how many quotes went out.
   */
  reconfirmQuotes(): number {
    const st = this.stream;
    if (!st) return 0;
    st.checkSilence();
    if (!st.alive()) return 0;
    let n = 0;
    for (const t of st.syncedTickers()) {
      const listing = this.byTicker.get(t);
      const held = st.book(t);
      if (listing && held) n += this.emitBook(listing, held.book, held.ts);
    }
    return n;
  }

  /** The book of a listing: the stream's when synced, else a REST read. */
  private async bookOf(listing: KalshiListing): Promise<{ book: KalshiBook; ts: number }> {
    const held = this.stream?.book(listing.ticker);
    if (held) return held;
    const book = parseOrderbook(await this.rest.orderbook(listing.ticker));
    return { book, ts: this.clock() };
  }

  async fetchQuotes(filter?: QuoteFilter): Promise<NormalizedQuote[]> {
    this.require(true, 'quote snapshots');
    return this.guard(async () => {
      const wanted = [...this.byTicker.values()].filter((l) => SIDES.some((s) => this.matches(l, s, filter)));
      let firstError: unknown = null;
      const books = await Promise.all(
        wanted.map((l) =>
          this.bookOf(l).catch((e) => {
            this.counters.book_fetch_failures++;
            firstError ??= e;
            return null;
          }),
        ),
      );
      if (wanted.length > 0 && books.every((b) => b === null)) throw firstError;
      const tsInit = this.clock();
      const out: NormalizedQuote[] = [];
      wanted.forEach((l, i) => {
        const b = books[i];
        if (!b) return;
        for (const side of SIDES) {
          if (!this.matches(l, side, filter)) continue;
          const q = this.quote(l, side, b.book, Math.min(b.ts, tsInit), tsInit);
          if (q) out.push(q);
        }
      });
      return out;
    });
  }

  subscribeQuotes(listener: (quote: NormalizedQuote) => void, filter?: QuoteFilter): Unsubscribe {
    this.require(this.streaming, 'quote streaming');
    const entry = { fn: listener, filter };
    this.quoteListeners.add(entry);
    return () => {
      this.quoteListeners.delete(entry);
    };
  }

  async fetchDepth(positionHash: string): Promise<VenueDepth> {
    this.require(true, 'depth');
    return this.guard(async () => {
      const { listing, side } = this.position(positionHash);
      const { book, ts } = await this.bookOf(listing);
      const tsInit = this.clock();
      const list = offers(book, side);
      const levels = levelsOf(list);
      return {
        partner_id: PARTNER_ID,
        position_hash: positionHash,
        liquidity_hash: liquidityHashOf(listing.ticker, side),
        levels,
        total_available: num(list.reduce((s, o) => s + notionalMicros(o.price, o.count), 0n)),
        best_price: levels[0]?.price ?? null,
        ts_event: Math.min(ts, tsInit),
        ts_init: tsInit,
      };
    });
  }

  // ---- orders ------------------------------------------------------------------------------------

  private validate(req: VenueOrderRequest): void {
    if (typeof req !== 'object' || req === null) throw invalid(VenueErrorCodes.invalidRequest, 'order request must be an object');
    if (typeof req.client_order_id !== 'string' || req.client_order_id.length === 0) throw invalid(VenueErrorCodes.invalidRequest, 'client_order_id is required');
    if (typeof req.account_id !== 'string' || req.account_id.length === 0) throw invalid(VenueErrorCodes.invalidRequest, 'account_id is required');
    if ((req.position_hash === undefined) === (req.liquidity_hash === undefined)) throw invalid(VenueErrorCodes.invalidRequest, 'exactly one of position_hash or liquidity_hash');
    if ((req.amount === undefined) === (req.shares === undefined)) throw invalid(VenueErrorCodes.invalidAmount, 'exactly one of amount or shares');
    const size = req.amount ?? req.shares!;
    if (typeof size !== 'number' || !Number.isFinite(size) || size <= 0) throw invalid(VenueErrorCodes.invalidAmount, `amount/shares must be positive: ${String(size)}`);
    if (typeof req.max_price !== 'number' || !(req.max_price > 0 && req.max_price < 1)) {
      throw invalid(VenueErrorCodes.invalidPrice, `max_price must be strictly between 0 and 1: ${String(req.max_price)}`);
    }
    if (req.order_type !== 'market' && req.order_type !== 'limit') throw invalid(VenueErrorCodes.invalidRequest, `unknown order_type ${String(req.order_type)}`);
    if (req.time_in_force !== undefined && req.time_in_force !== 'ioc' && req.time_in_force !== 'fok') {
      throw invalid(VenueErrorCodes.invalidRequest, `unknown time_in_force ${String(req.time_in_force)}`);
    }
  }

  private resolve(req: VenueOrderRequest): { listing: KalshiListing; side: KalshiSide; position: string } {
    if (req.liquidity_hash !== undefined) {
      const ref = parseLiquidityHash(req.liquidity_hash);
      const listing = ref ? this.byTicker.get(ref.ticker) : undefined;
      const position = ref && listing ? listing.positions[ref.side] : null;
      if (!ref || !listing || position === null) throw invalid(VenueErrorCodes.unknownPosition, `unknown liquidity_hash ${req.liquidity_hash}`);
      return { listing, side: ref.side, position };
    }
    const hit = this.position(req.position_hash!);
    return { listing: hit.listing, side: hit.side, position: req.position_hash! };
  }

  private rejected(req: VenueOrderRequest, code: VenueRejectCode, reason: string, position: string, liquidity: string | null, limit = req.max_price): VenueOrder {
    const ts = this.clock();
    return {
      partner_id: PARTNER_ID,
      venue_order_id: '',
      client_order_id: req.client_order_id,
      account_id: req.account_id,
      position_hash: position,
      liquidity_hash: liquidity,
      order_type: req.order_type,
      status: 'rejected',
      requested_amount: req.amount ?? null,
      requested_contracts: req.shares ?? null,
      limit_price: limit,
      filled_contracts: 0,
      filled_notional: 0,
      avg_price: null,
      fees: 0,
      remaining_contracts: 0,
      reject_code: code,
      reject_reason: reason,
      warnings: [],
      currency: 'USD',
      ts_event: ts,
      ts_init: ts,
    };
  }

  private remember(orderId: string, ctx: Omit<OrderContext, 'account_id' | 'position_hash'>): void {
    if (this.orderCtx.size >= MAX_ORDER_CONTEXTS) this.orderCtx.delete(this.orderCtx.keys().next().value!);
    this.orderCtx.set(orderId, ctx);
  }

  /** A venue order → VenueOrder, with what we remember of how it was placed (else: a limit order). */
  private orderOf(o: KalshiOrder): VenueOrder {
    const listing = this.byTicker.get(o.ticker);
    const position = listing && (o.side === 'yes' || o.side === 'no') ? listing.positions[o.side] : null;
    if (position === null || position === undefined) throw invalid(VenueErrorCodes.unknownPosition, `kalshi order ${o.order_id} is on a market this adapter does not list (${String(o.ticker)})`);
    const ctx = this.orderCtx.get(o.order_id) ?? { order_type: 'limit' as OrderType, requested_amount: null };
    return parseOrder(o, { ...ctx, account_id: this.settings.accountId!, position_hash: position }, this.clock());
  }

  async placeOrder(req: VenueOrderRequest): Promise<VenueOrder> {
    this.validate(req);
    this.ensureConnected();
    return this.guard(async () => {
      const { listing, side, position } = this.resolve(req);
      const liquidity = liquidityHashOf(listing.ticker, side);
      if (!this.ordersEnabled) return this.rejected(req, 'orders_not_supported', 'kalshi orders need API credentials and FLOW_KALSHI_ACCOUNT_ID', position, liquidity);
      this.checkAccount(req.account_id);

      // The limit onto the market's own grid, never above max_price.
      const want = toMicros(req.max_price, 'floor');
      const limit = floorOnGrid(gridOf({ price_ranges: listing.price_ranges ?? undefined }), want);
      if (limit === null) return this.rejected(req, 'price_out_of_band', `max_price ${req.max_price} is below the market's lowest price`, position, liquidity);
      const warnings: VenueOrderWarning[] = [];
      if (limit !== want) warnings.push('price_off_tick');
      // Whole contracts: a stake buys what it can at the limit (never more than the stake).
      let count: bigint;
      if (req.amount !== undefined) count = toMicros(req.amount, 'floor') / limit;
      else {
        const shares = toMicros(req.shares!, 'floor');
        count = shares / 1_000_000n;
        if (shares % 1_000_000n !== 0n) warnings.push('amount_off_increment');
      }
      if (count < 1n) return this.rejected(req, 'below_min_order', `the order buys less than one whole contract at ${num(limit)}`, position, liquidity, num(limit));
      if (count > BigInt(Number.MAX_SAFE_INTEGER)) return this.rejected(req, 'above_max_order', 'contract count out of range', position, liquidity, num(limit));

      const tif = req.order_type === 'market' ? (req.time_in_force ?? 'ioc') : undefined;
      const body = buildCreateOrder({ ticker: listing.ticker, side, count: Number(count), limit, clientOrderId: req.client_order_id, timeInForce: tif });
      const ctx = { order_type: req.order_type, requested_amount: req.amount ?? null, ...(tif ? { time_in_force: tif } : {}), warnings };
      let order: KalshiOrder;
      try {
        order = (await this.rest.createOrder(body)).order;
      } catch (e) {
        const venueCode = isVenueError(e) ? (e.details?.venue_code as string | null | undefined) : null;
        if (venueCode && Object.prototype.hasOwnProperty.call(KALSHI_REJECT_MAP, venueCode)) {
          return this.rejected(req, KALSHI_REJECT_MAP[venueCode]!, (e as Error).message, position, liquidity, num(limit));
        }
        // Placed before (a retry after a lost answer): answer with the order the venue already has.
        const existing = venueCode === 'order_already_exists' ? await this.findByClientId(listing.ticker, req.client_order_id) : null;
        if (!existing) throw e;
        order = existing;
      }
      if (!order || typeof order !== 'object') throw invalid('malformed_message', 'kalshi create order: no order in the response');
      this.remember(order.order_id, ctx);
      return parseOrder(order, { ...ctx, account_id: req.account_id, position_hash: position }, this.clock());
    });
  }

  /** Our order with this client_order_id among the market's recent orders (Kalshi has no lookup by it). */
  private async findByClientId(ticker: string, clientOrderId: string): Promise<KalshiOrder | null> {
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const r = await this.rest.orders({ ticker, limit: 200, cursor });
      const hit = (r.orders ?? []).find((o) => o?.client_order_id === clientOrderId);
      if (hit) return hit;
      cursor = r.cursor || undefined;
      if (!cursor) break;
    }
    return null;
  }

  async cancelOrder(req: VenueCancelRequest): Promise<VenueOrder> {
    this.require(this.capabilities().orders.cancel, 'order cancellation');
    return this.guard(async () => {
      this.checkAccount(req.account_id);
      try {
        return this.orderOf((await this.rest.cancelOrder(req.venue_order_id)).order);
      } catch (e) {
        if (!isVenueError(e) || (e.code !== 'not_found' && e.code !== VenueErrorCodes.unknownOrder)) throw e;
        // Gone from the book: either it never existed or it is already done.
        const existing = await this.rest.order(req.venue_order_id).catch(() => null);
        if (existing?.order) throw invalid(VenueErrorCodes.orderNotCancellable, `kalshi order ${req.venue_order_id} is ${existing.order.status}, not resting`);
        throw invalid(VenueErrorCodes.unknownOrder, `no kalshi order ${req.venue_order_id}`);
      }
    });
  }

  async fetchOrder(accountId: string, venueOrderId: string): Promise<VenueOrder> {
    this.require(this.capabilities().orders.place, 'orders');
    return this.guard(async () => {
      this.checkAccount(accountId);
      try {
        return this.orderOf((await this.rest.order(venueOrderId)).order);
      } catch (e) {
        if (isVenueError(e) && e.code === 'not_found') throw invalid(VenueErrorCodes.unknownOrder, `no kalshi order ${venueOrderId}`);
        throw e;
      }
    });
  }

  subscribeOrderUpdates(listener: (order: VenueOrder) => void): Unsubscribe {
    this.require(this.capabilities().orders.place, 'order updates');
    this.orderListeners.add(listener);
    return () => {
      this.orderListeners.delete(listener);
    };
  }

  private onUserOrder(o: KalshiOrder): void {
    if (this.orderListeners.size === 0) return;
    let v: VenueOrder;
    try {
      v = this.orderOf(o);
    } catch {
      this.counters.parse_errors++;
      return;
    }
    for (const l of this.orderListeners) l(v);
  }

  // ---- balances ----------------------------------------------------------------------------------

  async fetchBalance(accountId: string): Promise<VenueBalance> {
    this.require(this.capabilities().balance, 'balances');
    return this.guard(async () => {
      this.checkAccount(accountId);
      const b = parseBalance(await this.rest.balance(), accountId, this.clock());
      for (const l of this.balanceListeners) l({ ...b, cause: 'refresh', venue_order_id: null });
      return b;
    });
  }

  /** Kalshi pushes no balance changes: updates are the readings fetchBalance takes (cause refresh). */
  subscribeBalances(listener: (update: VenueBalanceUpdate) => void): Unsubscribe {
    this.require(this.capabilities().balance, 'balance updates');
    this.balanceListeners.add(listener);
    return () => {
      this.balanceListeners.delete(listener);
    };
  }

  // ---- trades, game state, settlement ------------------------------------------------------------

  subscribeTrades(listener: (trade: NormalizedTrade) => void, filter?: { contest_ids?: string[] }): Unsubscribe {
    this.require(true, 'trades');
    const entry = { fn: listener, contest_ids: filter?.contest_ids };
    this.tradeListeners.add(entry);
    return () => {
      this.tradeListeners.delete(entry);
    };
  }

  private onTrade(m: { market_ticker?: string; ticker?: string } & Parameters<typeof parseTrade>[0]): void {
    if (this.tradeListeners.size === 0) return;
    const listing = this.byTicker.get(m.market_ticker ?? m.ticker ?? '');
    if (!listing) return;
    let t: NormalizedTrade | null;
    try {
      t = parseTrade(m, listing, this.clock());
    } catch {
      this.counters.parse_errors++;
      return;
    }
    if (!t) return;
    const contest = this.byPosition.get(t.position_hash)?.contest_id ?? listing.contest_id;
    for (const l of this.tradeListeners) if (!l.contest_ids || l.contest_ids.includes(contest)) l.fn(t);
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

