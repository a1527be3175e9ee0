/**
 * Polymarket as data (CCXT-style describe()): the partner record and its order_config, the
 * capabilities, the fee model, the hosts and the published rate limits.
 */
import type { OrderConfig, Partner } from '../../domain/catalog.js';
import { windowBudget, type TokenBucketSpec } from '../token-bucket.js';
import type { VenueCapabilities } from '../types.js';
import { PARTNER_ID } from './parse.js';

export { PARTNER_ID };

/** Where the adapter talks to Polymarket; every URL is a base without a trailing slash. */
export interface PolymarketUrls {
  /** Market metadata (events, markets). FLOW_POLYMARKET_GAMMA_URL. */
  gamma: string;
  /** Books, prices, orders. FLOW_POLYMARKET_CLOB_URL. */
  clob: string;
  /** The CLOB WebSocket host; the adapter appends `/ws/market`. FLOW_POLYMARKET_WS_URL. */
  ws: string;
}

export const POLYMARKET_DEFAULT_URLS: Readonly<PolymarketUrls> = {
  gamma: 'https://gamma-api.polymarket.com',
  clob: 'https://clob.polymarket.com',
  ws: 'wss://ws-subscriptions-clob.polymarket.com',
};

/**
 * The venue grid. Prices are probabilities on the market's tick (0.01 or 0.001 in the recordings,
 * changed live by `tick_size_change`); the venue-wide tick is the coarser 0.01, valid on every
 * market, and orderConfigFor() gives one market's own grid. Amounts are USDC with cents; a
 * marketable buy under $1 is refused by the venue. Orders are declared unsupported until request
 * signing (EIP-712 orders, L2 API-key headers) is built: orders_allowed false, no credentials.
 */
export const POLYMARKET_ORDER_CONFIG: Readonly<OrderConfig> = {
  orders_allowed: false,
  credentials_allowed: false,
  min_order_amount: 1,
  max_order_amount: null,
  amount_increment: 0.01,
  whole_contracts: false,
  full_fill_always_allowed: false,
  price_submitted: true,
  price_format: 'probability',
  price_tick: 0.01,
  min_price: 0.01,
  max_price: 0.99,
  cancel_supported: true,
  supported_order_types: ['market', 'limit'],
};

export const POLYMARKET_PARTNER: Readonly<Partner> = {
  partner_id: PARTNER_ID,
  name: 'Polymarket',
  status: 'active',
  orders_allowed: false,
  connectable: false,
  internal_book: false,
  order_config: POLYMARKET_ORDER_CONFIG,
  credential_fields: [],
  logo_url: `https://static.flow.local/partners/${PARTNER_ID}.svg`,
};

/**
 * Streams books (the market WebSocket) and answers snapshots (local books while the feed is live,
 * REST `/books` when it is not). The freshness bound is the rule's for a streaming venue
 * (ruleFreshnessMs(null) = 30 s): ingest re-reads snapshots every 5 s, so a live feed re-confirms
 * well within it and a silent one (no snapshot either) goes stale after it.
 */
export const POLYMARKET_CAPABILITIES: Readonly<VenueCapabilities> = {
  quotes: { snapshot: true, streaming: true, poll_interval_ms: null, freshness_ms: 30_000 },
  depth: true,
  orders: { place: false, cancel: false, types: [], async_fills: false },
  balance: false,
  trades: true,
  game_state: false,
  settlements: false,
};

/**
 * Published rate limits (docs.polymarket.com/api-reference/rate-limits, per 10 s; enforced by
 * Cloudflare throttling, which delays rather than rejects): general 15,000; Gamma 4,000 with
 * `/events` 500 and `/markets` 300; CLOB 9,000 with `/book` 1,500 and `/books` 500; Data API
 * 1,000 with `/trades` 200. Each becomes a bucket that never exceeds it in any 10 s window
 * (windowBudget); a request takes from the general, its service's and its endpoint's bucket.
 * `POST /order` (3,500 per 10 s, 36,000 per 10 min) is listed for when orders are built.
 */
export const POLYMARKET_RATE_LIMITS: Readonly<Record<string, TokenBucketSpec>> = {
  general: windowBudget(15_000, 10_000),
  gamma: windowBudget(4_000, 10_000),
  'gamma:/events': windowBudget(500, 10_000),
  'gamma:/markets': windowBudget(300, 10_000),
  clob: windowBudget(9_000, 10_000),
  'clob:/book': windowBudget(1_500, 10_000),
  'clob:/books': windowBudget(500, 10_000),
  'clob:/markets': windowBudget(1_500, 10_000),
  'clob:POST /order': windowBudget(3_500, 10_000),
  'clob:POST /order sustained': windowBudget(36_000, 600_000),
};

/** The buckets one request takes from. */
export const rateKeys = (service: 'gamma' | 'clob', endpoint: string): string[] => ['general', service, `${service}:${endpoint}`];

/** The market channel: one subscription per connection, PING every 10 s (docs). */
export const WS_PATH = '/ws/market';
export const WS_PING_MS = 10_000;
/**
 * A feed that has sent nothing, not even the PONG to our PING, for this long is silent: its
 * books stop counting as live (snapshots go to REST) and the connection is replaced.
 */
export const WS_SILENCE_MS = 25_000;
/** Token ids per WebSocket connection (a third-party-documented cap of 500 per connection). */
export const WS_MAX_ASSETS = 500;
/** Token ids per `POST /books` request (no published cap; kept small). */
export const BOOKS_BATCH = 100;
/** Reconnect backoff: 1 s doubling to 30 s. */
export const RECONNECT_MIN_MS = 1_000;
export const RECONNECT_MAX_MS = 30_000;
/** Ask levels a quote carries, and the most a depth read returns. */
export const QUOTE_LEVELS = 20;
export const DEPTH_LEVELS = 100;
/** Gamma events per page, and the default cap on events in the catalog. */
export const GAMMA_PAGE = 100;
export const DEFAULT_MAX_EVENTS = 100;
/** Per-request timeout. */
export const REQUEST_TIMEOUT_MS = 10_000;
