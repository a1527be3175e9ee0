/**
 * The venue catalogs a set of recordings gives, built through each adapter's own parse and catalog
 * functions, with what each adapter asks for by default: Kalshi's open, non-multivariate markets
 * (`mve_filter=exclude`), Polymarket's active, open Gamma events. The same catalogs an adapter
 * pointed at the replay server builds on connect.
 */
import { buildKalshiCatalog } from '../kalshi/catalog.js';
import { createKalshiAdapter } from '../kalshi/index.js';
import type { KalshiMarket } from '../kalshi/messages.js';
import { buildPolymarketCatalog } from '../polymarket/catalog.js';
import type { GammaEvent } from '../polymarket/messages.js';
import { parseGammaEvent } from '../polymarket/parse.js';
import type { VenueCatalog } from '../matching/types.js';
import type { KalshiRecordings, PolymarketRecordings, Recordings } from './recordings.js';

/** Kalshi statuses `status=open` selects (the venue's filter value for tradeable markets). */
export const KALSHI_OPEN_STATUSES: ReadonlySet<string> = new Set(['open', 'active', 'initialized']);

/** What Kalshi's default listing answers: open markets, multivariate combos excluded. */
export function kalshiListed(rec: KalshiRecordings): KalshiMarket[] {
  return rec.markets.filter((m) => !m.mve_collection_ticker && (m.status === undefined || KALSHI_OPEN_STATUSES.has(m.status)));
}

/** What Gamma's `/events?active=true&closed=false` answers. */
export function polymarketListed(rec: PolymarketRecordings): GammaEvent[] {
  return rec.events.filter((e) => e.active === true && e.closed !== true);
}

export function kalshiCatalogOf(rec: KalshiRecordings): VenueCatalog {
  const partner = createKalshiAdapter({}).describe().partner;
  return buildKalshiCatalog({ series: rec.series, events: rec.events, markets: kalshiListed(rec), partner });
}

export function polymarketCatalogOf(rec: PolymarketRecordings, now = 0): VenueCatalog {
  return buildPolymarketCatalog(polymarketListed(rec).map(parseGammaEvent), { now });
}

/** Each recorded venue's catalog, keyed by partner id. */
export function catalogsFromRecordings(rec: Recordings): Record<string, VenueCatalog> {
  const out: Record<string, VenueCatalog> = {};
  if (rec.kalshi) out.kalshi = kalshiCatalogOf(rec.kalshi);
  if (rec.polymarket) out.polymarket = polymarketCatalogOf(rec.polymarket);
  return out;
}
