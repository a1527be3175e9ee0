/**
 * The ingest role's venues (docs/venues.md, "Running the venues"): every FLOW_VENUES entry built
 * through the venue registry, and what the service does around an adapter that the adapter itself
 * cannot (it may not import the stores or the metrics library).
 *
 * - The simulator's venues connect at start, as they always have: the simulator is in-process and
 *   its catalog was seeded before the roles start (cli/bootstrap.ts).
 * - A venue whose catalog comes from the venue (`catalog()`: Kalshi, Polymarket) connects in the
 *   background (pipelines/ingest/venue-connector.ts): an unreachable host never stops ingest from
 *   starting. Once connected, its catalog is upserted into PostgreSQL and the routing maps before
 *   its first quote is read, so the contest exists when its liquidity is computed.
 * - Each adapter's feed counters are registered as metrics read at scrape time, with the
 *   connection state of the background venues.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { scrapedCounter } from '../../src/metrics.js';
import { seedCatalog, type CatalogSeed } from '../../src/store/pg/catalog.js';
import { bumpCatalogVersion } from '../../src/store/redis/catalog-version.js';
import type { FeedMetric } from '../../src/venues/feed-metrics.js';
import { KalshiAdapter, KALSHI_FEED_METRICS } from '../../src/venues/kalshi/index.js';
import { PolymarketAdapter, POLYMARKET_FEED_METRICS } from '../../src/venues/polymarket/index.js';
import { createVenues } from '../../src/venues/registry.js';
import type { SimMarket } from '../../src/venues/sim/index.js';
import type { VenueAdapter } from '../../src/venues/types.js';
import type { VenueConnector } from '../../pipelines/ingest/venue-connector.js';
import { simEpoch } from '../bootstrap.js';
import type { Runtime } from '../runtime.js';

/** A venue that reads its catalog from the venue when it connects (null before). */
export interface CatalogVenue extends VenueAdapter {
  catalog(): CatalogSeed | null;
}

export const isCatalogVenue = (a: VenueAdapter): a is CatalogVenue => typeof (a as Partial<CatalogVenue>).catalog === 'function';

export interface IngestVenues {
  /** Every adapter of FLOW_VENUES, in its order; one not connected yet answers `not_connected`. */
  all: VenueAdapter[];
  /** Connected when ingest starts (the simulator's venues). */
  atStart: VenueAdapter[];
  /** Connected in the background, their catalogs seeded on connect. */
  background: CatalogVenue[];
  /** The simulator's market model when any sim venue runs. */
  simMarket: SimMarket | null;
}

/**
 * Builds FLOW_VENUES through the registry (an unknown entry is a fatal `unknown_venue` naming the
 * known ones). The sim world is laid out from the hour's epoch with FLOW_SIM_SEED, as the catalog
 * seeded at start was; the real venues take their hosts and scope from FLOW_KALSHI_* and
 * FLOW_POLYMARKET_*.
 */
export function buildIngestVenues(rt: Runtime): IngestVenues {
  const set = createVenues(rt.config.venues, {
    clock: () => rt.clock.now(),
    sim: { seed: rt.config.simSeed, now: simEpoch(rt.clock.now()) },
    kalshi: rt.config.kalshi,
    polymarket: rt.config.polymarket,
  });
  const background = set.adapters.filter(isCatalogVenue);
  return { all: set.adapters, atStart: set.adapters.filter((a) => !isCatalogVenue(a)), background, simMarket: set.simMarket };
}

export interface RoutingMaps {
  leagueOf: Map<string, string>;
  marketOf: Map<string, string>;
}

/**
 * Upserts a connected venue's catalog (one transaction), tells the API processes their cached
 * catalog answers are old, and adds its contests, positions and partner name to the ingester's
 * maps. Throws when PostgreSQL refuses: the connector tries again later.
 */
export async function seedVenueCatalog(rt: Runtime, a: CatalogVenue, routes: RoutingMaps, names: Map<string, string>): Promise<void> {
  const cat = a.catalog();
  if (!cat) throw new Error(`${a.id} connected without a catalog`);
  await seedCatalog(rt.pool, cat);
  await bumpCatalogVersion(rt.redis, rt.ks);
  for (const c of cat.contests) routes.leagueOf.set(c.id, c.league_id);
  for (const p of cat.positions) routes.marketOf.set(p.position_hash, p.market_id);
  for (const p of cat.partners) names.set(p.partner_id, p.name);
  rt.log.info({ role: 'ingest', partner_id: a.id, leagues: cat.leagues.length, contests: cat.contests.length, positions: cat.positions.length }, 'seeded the venue catalog');
}

/** A venue's feed metric bound to its adapter. */
interface BoundMetric {
  name: string;
  help: string;
  kind?: 'counter' | 'gauge';
  read(): number;
}

const bind = <S>(metrics: readonly FeedMetric<S>[], stats: () => S): BoundMetric[] =>
  metrics.map((m) => ({ name: m.name, help: m.help, kind: m.kind, read: () => m.read(stats()) }));

/** The feed metrics of one adapter (none for a venue that declares none). */
function feedMetricsOf(a: VenueAdapter): BoundMetric[] {
  if (a instanceof KalshiAdapter) return bind(KALSHI_FEED_METRICS, () => a.feedStats());
  if (a instanceof PolymarketAdapter) return bind(POLYMARKET_FEED_METRICS, () => a.feedStats());
  return [];
}

/**
 * Registers the adapters' feed counters (read at scrape time from feedStats()) and, per venue
 * connected in the background, `flow_venue_connected{partner_id}` (1 once connected) and
 * `flow_venue_connect_failures_total{partner_id}`.
 */
export function registerVenueMetrics(registry: Registry, adapters: readonly VenueAdapter[], connector: VenueConnector): void {
  for (const a of adapters) {
    for (const m of feedMetricsOf(a)) {
      if (m.kind === 'gauge') {
        new Gauge({
          name: m.name,
          help: m.help,
          registers: [registry],
          collect() {
            this.set(m.read());
          },
        });
      } else scrapedCounter(registry, m.name, m.help, () => m.read());
    }
  }
  new Gauge({
    name: 'flow_venue_connected',
    help: 'Whether a venue connected in the background (kalshi, polymarket) has connected: 1 yes, 0 still retrying',
    labelNames: ['partner_id'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of connector.snapshot()) this.set({ partner_id: s.partner_id }, s.connected ? 1 : 0);
    },
  });
  new Counter({
    name: 'flow_venue_connect_failures_total',
    help: 'Failed connection attempts of a venue connected in the background (each retried with backoff)',
    labelNames: ['partner_id'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of connector.snapshot()) this.inc({ partner_id: s.partner_id }, s.failures);
    },
  });
}
