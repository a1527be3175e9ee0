/**
 * The ingest role's venues (docs/venues.md, "Running the venues"): every FLOW_VENUES entry built
 * through the venue registry, and what the service does around an adapter that the adapter itself
 * cannot (it may not import the stores or the metrics library).
 *
 * - The simulator's venues connect at start, as they always have: the simulator is in-process and
 *   its catalog was seeded before the roles start (cli/bootstrap.ts).
 * - A venue whose catalog comes from the venue (`catalog()`: Kalshi, Polymarket) connects in the
 *   background (pipelines/ingest/venue-connector.ts): an unreachable host never stops ingest from
 *   starting. Once connected, its catalog is merged with the other connected venues' (the same
 *   event on two venues is one contest: pipelines/ingest/catalog-merge.ts), upserted into
 *   PostgreSQL and the routing maps before its first quote is read, so the contest exists when its
 *   liquidity is computed.
 * - Each adapter's feed counters are registered as metrics read at scrape time, with the
 *   connection state of the background venues.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { scrapedCounter, scrapedGauge } from '../../src/metrics.js';
import { ConfigError } from '../../src/config.js';
import { closeContest, seedCatalog, type CatalogSeed } from '../../src/store/pg/catalog.js';
import { bumpCatalogVersion } from '../../src/store/redis/catalog-version.js';
import type { FeedMetric } from '../../src/venues/feed-metrics.js';
import { KalshiAdapter, KALSHI_FEED_METRICS } from '../../src/venues/kalshi/index.js';
import { PolymarketAdapter, POLYMARKET_FEED_METRICS } from '../../src/venues/polymarket/index.js';
import { loadAliasTable, loadMappingFile, MATCH_METRICS, MatchConfigError, type MergeOptions } from '../../src/venues/matching/index.js';
import { createVenues } from '../../src/venues/registry.js';
import type { SimMarket } from '../../src/sim/index.js';
import type { VenueAdapter } from '../../src/venues/types.js';
import { VenueCatalogMerge, type MergeChange } from '../../pipelines/ingest/catalog-merge.js';
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
 * The matcher's operator files (FLOW_VENUE_ALIASES, FLOW_VENUE_MAPPING), read at start: a missing
 * or malformed file stops the start naming the variable, the file and the fix.
 */
export function venueMatchOptions(rt: Runtime): MergeOptions {
  const named = <T>(variable: string, read: () => T): T => {
    try {
      return read();
    } catch (e) {
      if (e instanceof MatchConfigError) throw new ConfigError(`${variable}: ${e.message} (the format is in docs/venues.md "Matching venues to one catalog")`);
      throw e;
    }
  };
  const { aliasFiles, mappingFile } = rt.config.venueMatch;
  return {
    aliases: named('FLOW_VENUE_ALIASES', () => loadAliasTable(aliasFiles)),
    ...(mappingFile ? { mapping: named('FLOW_VENUE_MAPPING', () => loadMappingFile(mappingFile)) } : {}),
  };
}

/**
 * The merge of the background venues' catalogs: the merged catalog is upserted into PostgreSQL in
 * one transaction, the contests it absorbed are closed, and the API processes are told their
 * cached catalog answers are old.
 */
export function venueCatalogMerge(rt: Runtime): VenueCatalogMerge {
  return new VenueCatalogMerge({
    match: venueMatchOptions(rt),
    log: rt.log.child({ role: 'ingest', component: 'venues' }),
    async store(catalog, retired) {
      await seedCatalog(rt.pool, catalog);
      for (const id of retired) await closeContest(rt.pool, id);
      await bumpCatalogVersion(rt.redis, rt.ks);
    },
  });
}

/**
 * Merges a connected venue's catalog with the other connected venues' and stores the result
 * (venueCatalogMerge), then adds its contests, positions and partner names to the ingester's maps.
 * Throws when PostgreSQL refuses: the connector tries again later. The caller retires the contests
 * the merge absorbed and re-reads the venues it re-keyed (MergeChange).
 */
export async function seedVenueCatalog(rt: Runtime, merge: VenueCatalogMerge, a: CatalogVenue, routes: RoutingMaps, names: Map<string, string>): Promise<MergeChange> {
  const cat = a.catalog();
  if (!cat) throw new Error(`${a.id} connected without a catalog`);
  const change = await merge.add(a.id, cat);
  const merged = change.result.catalog;
  for (const c of merged.contests) routes.leagueOf.set(c.id, c.league_id);
  for (const p of merged.positions) routes.marketOf.set(p.position_hash, p.market_id);
  for (const p of merged.partners) names.set(p.partner_id, p.name);
  const r = change.result.report;
  rt.log.info(
    { role: 'ingest', partner_id: a.id, leagues: cat.leagues.length, contests: cat.contests.length, positions: cat.positions.length, matched: r.matched, merged_contests: r.merged_contests },
    'seeded the venue catalog',
  );
  return change;
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
 * Registers the adapters' feed counters (read at scrape time from feedStats()), the cross-venue
 * matcher's counts (`flow_venue_match_*`, MATCH_METRICS) and, per venue connected in the
 * background, `flow_venue_connected{partner_id}` (1 once connected) and
 * `flow_venue_connect_failures_total{partner_id}`.
 */
export function registerVenueMetrics(registry: Registry, adapters: readonly VenueAdapter[], connector: VenueConnector, merge: VenueCatalogMerge | null = null): void {
  // The matcher's counts of the last merge (0 before any background venue connected).
  if (merge) for (const m of MATCH_METRICS) scrapedGauge(registry, m.name, m.help, () => {
    const r = merge.report();
    return r ? m.read(r) : 0;
  });
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
