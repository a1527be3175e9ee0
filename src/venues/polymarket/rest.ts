/**
 * Polymarket REST: Gamma events and CLOB books, each request through the venue's token buckets
 * (venue.ts) and a timeout; answers go through the pure parsers. No credentials: market data is
 * public.
 */
import { RateLimiter } from '../token-bucket.js';
import { httpError, transportError } from './errors.js';
import type { GammaEvent } from './messages.js';
import { malformed, parseBook, parseBooks, parseGammaEvent, type PmBook, type PmEvent } from './parse.js';
import { BOOKS_BATCH, GAMMA_PAGE, POLYMARKET_RATE_LIMITS, PARTNER_ID, REQUEST_TIMEOUT_MS, rateKeys, type PolymarketUrls } from './venue.js';

export interface CatalogQuery {
  /** Only events with this Gamma tag id (FLOW_POLYMARKET_TAG_ID). */
  tag_id?: string | null;
  /** At most this many events (FLOW_POLYMARKET_MAX_EVENTS). */
  max_events: number;
}

export class PolymarketRest {
  readonly limiter: RateLimiter;
  /** Requests sent, and answers that were errors (for metrics). */
  requests = 0;
  failures = 0;

  constructor(
    private readonly urls: PolymarketUrls,
    limiter?: RateLimiter,
  ) {
    this.limiter = limiter ?? new RateLimiter(POLYMARKET_RATE_LIMITS, { partnerId: PARTNER_ID, name: 'polymarket' });
  }

  private async request(service: 'gamma' | 'clob', endpoint: string, pathAndQuery: string, init: { method?: string; body?: unknown } = {}): Promise<unknown> {
    await this.limiter.acquire(rateKeys(service, endpoint));
    const url = `${service === 'gamma' ? this.urls.gamma : this.urls.clob}${pathAndQuery}`;
    const what = `${init.method ?? 'GET'} ${endpoint}`;
    this.requests++;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: init.method ?? 'GET',
        headers: init.body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      text = await res.text();
    } catch (e) {
      this.failures++;
      throw transportError(e, what);
    }
    if (!res.ok) {
      this.failures++;
      throw httpError(res.status, text, what, res.headers.get('retry-after'));
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      this.failures++;
      throw malformed(`${what} answer`, 'not JSON');
    }
  }

  /** Active, open events with their markets, the most traded (24 h volume) first, up to max_events. */
  async fetchEvents(q: CatalogQuery): Promise<PmEvent[]> {
    const out: PmEvent[] = [];
    for (let offset = 0; out.length < q.max_events; offset += GAMMA_PAGE) {
      const limit = Math.min(GAMMA_PAGE, q.max_events - out.length);
      const params = new URLSearchParams({ active: 'true', closed: 'false', order: 'volume24hr', ascending: 'false', limit: String(limit), offset: String(offset) });
      if (q.tag_id) params.set('tag_id', q.tag_id);
      const page = await this.request('gamma', '/events', `/events?${params}`);
      if (!Array.isArray(page)) throw malformed('Gamma /events answer', 'not an array');
      for (const e of page) out.push(parseGammaEvent(e as GammaEvent));
      if (page.length < limit) break;
    }
    return out.slice(0, q.max_events);
  }

  async fetchBook(tokenId: string): Promise<PmBook> {
    return parseBook((await this.request('clob', '/book', `/book?token_id=${encodeURIComponent(tokenId)}`)) as never);
  }

  /** Books of many tokens, BOOKS_BATCH per request. Tokens the venue has no book for are absent. */
  async fetchBooks(tokenIds: readonly string[]): Promise<PmBook[]> {
    const out: PmBook[] = [];
    for (let i = 0; i < tokenIds.length; i += BOOKS_BATCH) {
      const batch = tokenIds.slice(i, i + BOOKS_BATCH).map((token_id) => ({ token_id }));
      out.push(...parseBooks(await this.request('clob', '/books', '/books', { method: 'POST', body: batch })));
    }
    return out;
  }
}
