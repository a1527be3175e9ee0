/**
 * Polymarket: market data (catalog from Gamma, books and prints from the CLOB and its market
 * WebSocket) without credentials; orders declared unsupported until signing is built.
 *
 *   const a = createPolymarketAdapter({ urls: { gamma, clob, ws } });   // defaults: the public hosts
 *   await a.connect();                                                  // reads the catalog, opens the feed
 *   a.catalog();                                                        // what to seed for this venue
 */
import { PolymarketAdapter, type PolymarketAdapterOptions } from './adapter.js';

export { PolymarketAdapter, tradeRecord, type PolymarketAdapterOptions, type PolymarketFeedStats, type PolymarketMarketRules } from './adapter.js';
export { buildPolymarketCatalog, leagueOf, OUTRIGHT_MARKET, YES_NO_MARKET, POLYMARKET_TIMEFRAME, type PolymarketCatalog, type PolymarketToken } from './catalog.js';
export { feeModelOf, POLYMARKET_FALLBACK_FEE, POLYMARKET_MAX_TAKER_RATE, POLYMARKET_NO_FEE } from './fees.js';
export {
  POLYMARKET_CAPABILITIES,
  POLYMARKET_DEFAULT_URLS,
  POLYMARKET_ORDER_CONFIG,
  POLYMARKET_PARTNER,
  POLYMARKET_RATE_LIMITS,
  PARTNER_ID as POLYMARKET_PARTNER_ID,
  type PolymarketUrls,
} from './venue.js';

export function createPolymarketAdapter(opts: PolymarketAdapterOptions = {}): PolymarketAdapter {
  return new PolymarketAdapter(opts);
}
export { POLYMARKET_FEED_METRICS } from './metrics.js';
