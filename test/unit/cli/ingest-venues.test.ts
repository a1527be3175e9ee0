/**
 * The ingest role builds FLOW_VENUES through the venue registry: the simulator's venues connect at
 * start, venues that read their catalog from the venue (kalshi, polymarket) in the background, each
 * on the hosts the environment names; an unknown entry stops the role with the known ids.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { VenueError } from '../../../src/venues/errors.js';
import { KalshiAdapter } from '../../../src/venues/kalshi/index.js';
import { PolymarketAdapter } from '../../../src/venues/polymarket/index.js';
import { buildIngestVenues, isCatalogVenue, venueMatchOptions } from '../../../cli/roles/venues.js';
import { ConfigError } from '../../../src/config.js';
import type { Runtime } from '../../../cli/runtime.js';

const NOW = Date.UTC(2026, 10, 24, 6, 30);
const rt = (env: Record<string, string>) => ({ config: loadConfig({ FLOW_ADMIN_TOKEN: 't', FLOW_JWT_SECRET: 'j', FLOW_CURSOR_SECRET: 'c', ...env }, () => 'x'), clock: { now: () => NOW } }) as unknown as Runtime;

describe('the ingest role\'s venues', () => {
  it('FLOW_VENUES=sim,kalshi,polymarket: sim venues at start, the real ones in the background, in FLOW_VENUES order', () => {
    const v = buildIngestVenues(
      rt({ FLOW_VENUES: 'sim,kalshi,polymarket', FLOW_KALSHI_BASE_URL: 'http://127.0.0.1:9/trade-api/v2', FLOW_POLYMARKET_GAMMA_URL: 'http://127.0.0.1:9', FLOW_SIM_SEED: '4' }),
    );
    expect(v.all.map((a) => a.id)).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice', 'kalshi', 'polymarket']);
    expect(v.atStart.map((a) => a.id)).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice']);
    expect(v.background.map((a) => a.id)).toEqual(['kalshi', 'polymarket']);
    expect(v.background[0]).toBeInstanceOf(KalshiAdapter);
    expect(v.background[1]).toBeInstanceOf(PolymarketAdapter);
    // Not connected yet: no catalog.
    expect(v.background.map((a) => a.catalog())).toEqual([null, null]);
    // The sim world as the catalog seeded at start lays it out: FLOW_SIM_SEED, from the hour's epoch.
    expect(v.simMarket!.seed).toBe(4);
    expect(v.atStart.some(isCatalogVenue)).toBe(false);
  });

  it('without sim there is no simulator; an unknown entry is a fatal unknown_venue naming the known ids', () => {
    const v = buildIngestVenues(rt({ FLOW_VENUES: 'polymarket' }));
    expect(v.simMarket).toBeNull();
    expect(v.atStart).toEqual([]);
    let err: unknown;
    try {
      buildIngestVenues(rt({ FLOW_VENUES: 'sim,kalshy' }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VenueError);
    expect((err as VenueError).code).toBe('unknown_venue');
    expect((err as VenueError).message).toContain('kalshi');
  });

  it('reads the matcher\'s files from FLOW_VENUE_ALIASES and FLOW_VENUE_MAPPING; a bad one stops the start naming the variable', () => {
    const fixtures = new URL('../../venues/matching/fixtures/', import.meta.url).pathname;
    const ok = venueMatchOptions(rt({ FLOW_VENUE_ALIASES: `${fixtures}aliases-kalshi-nba-outright.json` }));
    // The operator file adds Kalshi's NBA outright series to the built-in table.
    expect(ok.aliases!.venueLeague('kalshi-KXNBA')).toMatchObject({ league: 'nba' });
    expect(ok.mapping).toBeUndefined();
    const missing = () => venueMatchOptions(rt({ FLOW_VENUE_MAPPING: '/nonexistent/mapping.json' }));
    expect(missing).toThrow(ConfigError);
    expect(missing).toThrow(/^FLOW_VENUE_MAPPING: \/nonexistent\/mapping.json: cannot read the mapping file/);
    expect(() => venueMatchOptions(rt({ FLOW_VENUE_ALIASES: `${fixtures}gamma-events-nfl-ravens-packers.json` }))).toThrow(/^FLOW_VENUE_ALIASES: /);
  });
});
