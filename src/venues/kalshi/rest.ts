/**
 * Kalshi REST client: every request paced by the venue's token buckets (config.ts), signed when the
 * adapter has credentials, and every failure turned into a VenueError (errors.ts).
 *
 * Reads and writes have separate budgets (Kalshi counts order placement and cancellation against the
 * write limit, everything else against the read limit). The read bucket holds one second of budget;
 * the write bucket two (Kalshi lets writes burst to two seconds' worth). A 429 anyway empties the
 * bucket, so we back off for a refill instead of hammering.
 */
import { VenueError, VenueErrorCodes } from '../errors.js';
import { TokenBucket } from '../token-bucket.js';
import type { KalshiSigner } from './auth.js';
import { KALSHI_RATE_LIMITS, type KalshiTier } from './config.js';
import { kalshiHttpError } from './errors.js';
import type {
  KalshiBalanceResponse,
  KalshiCreateOrderRequest,
  KalshiEvent,
  KalshiEventResponse,
  KalshiFillsResponse,
  KalshiMarket,
  KalshiMarketsResponse,
  KalshiOrderResponse,
  KalshiOrdersResponse,
  KalshiOrderbookResponse,
  KalshiSeries,
  KalshiSeriesResponse,
  KalshiTradesResponse,
} from './messages.js';
import { PARTNER_ID, malformed } from './units.js';

export interface KalshiRestOptions {
  baseUrl: string;
  signer: KalshiSigner | null;
  tier: KalshiTier;
  timeoutMs: number;
  clock?: () => number;
  /** Pacing waits (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
}

export interface KalshiRestStats {
  requests: number;
  failures: number;
  rate_limited: number;
}

type Query = Record<string, string | number | boolean | undefined>;

/** Markets per page Kalshi serves at most (GET /markets `limit`). */
const PAGE = 1000;
/** Tickers per `tickers=` filter (keeps the URL short). */
const TICKERS_PER_CALL = 50;

export class KalshiRest {
  readonly reads: TokenBucket;
  readonly writes: TokenBucket;
  readonly stats: KalshiRestStats = { requests: 0, failures: 0, rate_limited: 0 };
  private readonly base: URL;

  constructor(private readonly opts: KalshiRestOptions) {
    this.base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
    const lim = KALSHI_RATE_LIMITS[opts.tier];
    const common = { clock: opts.clock, sleep: opts.sleep, partnerId: PARTNER_ID };
    this.reads = new TokenBucket({ ...common, capacity: lim.read, refillPerSecond: lim.read, name: 'kalshi reads' });
    this.writes = new TokenBucket({ ...common, capacity: 2 * lim.write, refillPerSecond: lim.write, name: 'kalshi writes' });
  }

  get authenticated(): boolean {
    return this.opts.signer !== null;
  }

  private url(path: string, query?: Query): URL {
    const u = new URL(path.replace(/^\//, ''), this.base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
    return u;
  }

  /** One request. `auth` requests fail fatal auth_failed without credentials (never sent unsigned). */
  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, opts: { query?: Query; body?: unknown; auth?: boolean; what: string }): Promise<{ status: number; body: T }> {
    const u = this.url(path, opts.query);
    const write = method !== 'GET';
    const bucket = write ? this.writes : this.reads;
    await bucket.take(1);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.opts.signer) Object.assign(headers, this.opts.signer.headers(method, u.pathname, (this.opts.clock ?? Date.now)()));
    else if (opts.auth) {
      throw new VenueError('fatal', VenueErrorCodes.authFailed, `kalshi ${opts.what}: no credentials configured`, { partner_id: PARTNER_ID });
    }
    this.stats.requests++;
    let res: Response;
    try {
      res = await fetch(u, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (e) {
      this.stats.failures++;
      const timeout = (e as Error)?.name === 'TimeoutError';
      throw new VenueError('retryable', timeout ? VenueErrorCodes.timeout : VenueErrorCodes.unavailable, `kalshi ${opts.what}: ${timeout ? 'timed out' : (e as Error).message}`, {
        partner_id: PARTNER_ID,
        cause: e,
      });
    }
    const text = await res.text().catch(() => '');
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
    }
    if (!res.ok) {
      this.stats.failures++;
      if (res.status === 429) {
        this.stats.rate_limited++;
        bucket.drain();
      }
      // No Retry-After from Kalshi: a 429 waits one bucket refill (a second).
      throw kalshiHttpError(res.status, body, opts.what, res.status === 429 ? 1000 : null);
    }
    if (body === null || typeof body !== 'object') throw malformed(`${opts.what} response (not a JSON object)`);
    return { status: res.status, body: body as T };
  }

  private async get<T>(path: string, what: string, query?: Query, auth = false): Promise<T> {
    return (await this.request<T>('GET', path, { query, what, auth })).body;
  }

  // ---- market data (public) ---------------------------------------------------------------------

  /** One page of GET /markets. */
  marketsPage(query: Query): Promise<KalshiMarketsResponse> {
    return this.get<KalshiMarketsResponse>('/markets', 'markets', query);
  }

  /**
   * Markets matching the filter, following cursors, at most `max`. Tickers go in batches; series and
   * events one query each; with no filter, every open market.
   */
  async listMarkets(filter: { series: string[]; events: string[]; tickers: string[]; includeMultivariate: boolean }, max: number): Promise<KalshiMarket[]> {
    const queries: Query[] = [];
    for (let i = 0; i < filter.tickers.length; i += TICKERS_PER_CALL) queries.push({ tickers: filter.tickers.slice(i, i + TICKERS_PER_CALL).join(',') });
    for (const s of filter.series) queries.push({ series_ticker: s, status: 'open' });
    for (const e of filter.events) queries.push({ event_ticker: e });
    if (queries.length === 0) queries.push({ status: 'open' });
    const out: KalshiMarket[] = [];
    for (const q of queries) {
      let cursor: string | undefined;
      do {
        const page = await this.marketsPage({ ...q, limit: Math.min(PAGE, Math.max(1, max - out.length)), cursor, mve_filter: filter.includeMultivariate ? undefined : 'exclude' });
        if (!Array.isArray(page.markets)) throw malformed('markets response (no markets array)');
        for (const m of page.markets) {
          if (!filter.includeMultivariate && m?.mve_collection_ticker) continue;
          out.push(m);
          if (out.length >= max) return out;
        }
        cursor = typeof page.cursor === 'string' && page.cursor !== '' && page.markets.length > 0 ? page.cursor : undefined;
      } while (cursor);
    }
    return out;
  }

  /** GET /series/{ticker}; null when the venue has no such series (404). */
  async series(ticker: string): Promise<KalshiSeries | null> {
    try {
      const r = await this.get<KalshiSeriesResponse>(`/series/${encodeURIComponent(ticker)}`, 'series');
      return r.series && typeof r.series === 'object' ? r.series : null;
    } catch (e) {
      if (e instanceof VenueError && e.code === 'not_found') return null;
      throw e;
    }
  }

  /** GET /events/{ticker}; null on 404. */
  async event(ticker: string): Promise<KalshiEvent | null> {
    try {
      const r = await this.get<KalshiEventResponse>(`/events/${encodeURIComponent(ticker)}`, 'event');
      return r.event && typeof r.event === 'object' ? r.event : null;
    } catch (e) {
      if (e instanceof VenueError && e.code === 'not_found') return null;
      throw e;
    }
  }

  orderbook(ticker: string): Promise<KalshiOrderbookResponse> {
    return this.get<KalshiOrderbookResponse>(`/markets/${encodeURIComponent(ticker)}/orderbook`, 'orderbook');
  }

  trades(ticker: string, limit = 100): Promise<KalshiTradesResponse> {
    return this.get<KalshiTradesResponse>('/markets/trades', 'trades', { ticker, limit });
  }

  // ---- portfolio (signed) -----------------------------------------------------------------------

  balance(): Promise<KalshiBalanceResponse> {
    return this.get<KalshiBalanceResponse>('/portfolio/balance', 'balance', undefined, true);
  }

  async createOrder(req: KalshiCreateOrderRequest): Promise<KalshiOrderResponse> {
    return (await this.request<KalshiOrderResponse>('POST', '/portfolio/orders', { body: req, auth: true, what: 'create order' })).body;
  }

  order(orderId: string): Promise<KalshiOrderResponse> {
    return this.get<KalshiOrderResponse>(`/portfolio/orders/${encodeURIComponent(orderId)}`, 'order', undefined, true);
  }

  /** GET /portfolio/orders (newest first), one page. */
  orders(query: { ticker?: string; status?: string; limit?: number; cursor?: string } = {}): Promise<KalshiOrdersResponse> {
    return this.get<KalshiOrdersResponse>('/portfolio/orders', 'orders', query, true);
  }

  async cancelOrder(orderId: string): Promise<KalshiOrderResponse> {
    return (await this.request<KalshiOrderResponse>('DELETE', `/portfolio/orders/${encodeURIComponent(orderId)}`, { auth: true, what: 'cancel order' })).body;
  }

  fills(query: { order_id?: string; ticker?: string; limit?: number; cursor?: string } = {}): Promise<KalshiFillsResponse> {
    return this.get<KalshiFillsResponse>('/portfolio/fills', 'fills', query, true);
  }
}
