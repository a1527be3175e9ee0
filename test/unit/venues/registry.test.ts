import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../src/venues/errors.js';
import { VENUE_FACTORIES, createAdapters, createVenues, knownVenueIds } from '../../../src/venues/registry.js';
import { SimMarket } from '../../../src/sim/index.js';
import { NOW } from './sim/support.js';

describe('venue registry', () => {
  it("'sim' expands to every simulated venue, in catalog order", () => {
    const ids = createAdapters(['sim'], { sim: { seed: 3, now: NOW } }).map((a) => a.id);
    expect(ids).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice']);
  });

  it('builds one shared sim model for several sim ids and dedupes adapters', async () => {
    const { adapters, simMarket } = createVenues(['sim_exchange', ' sim_book01 ', 'sim', 'sim_exchange', ''], { sim: { seed: 3, now: NOW } });
    expect(adapters.map((a) => a.id)).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice']);
    expect(simMarket).toBeInstanceOf(SimMarket);
    expect(simMarket!.seed).toBe(3);
    // both adapters see the same model: an account connected on it is visible through each
    simMarket!.connectAccount('a1', { partner_id: 'sim_book01', balance: 10 });
    const book01 = adapters.find((a) => a.id === 'sim_book01')!;
    await book01.connect();
    expect((await book01.fetchBalance('a1')).balance).toBe(10);
  });

  it('uses a caller-provided market so the caller can drive it', () => {
    const market = new SimMarket({ seed: 9, now: NOW });
    const set = createVenues(['sim_quotes'], { sim: { market } });
    expect(set.simMarket).toBe(market);
  });

  it('builds no sim model when no sim venue is asked for', () => {
    expect(createVenues([], {}).simMarket).toBeNull();
  });

  it('refuses unknown ids with a fatal unknown_venue naming the known ones', () => {
    let err: unknown;
    try {
      createAdapters(['sim', 'nope']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VenueError);
    expect((err as VenueError).kind).toBe('fatal');
    expect((err as VenueError).code).toBe('unknown_venue');
    expect((err as VenueError).message).toContain('sim_exchange');
    expect(() => createAdapters(['__proto__'])).toThrow(VenueError);
  });

  it('has one factory per venue id', () => {
    expect(knownVenueIds().sort()).toEqual(Object.keys(VENUE_FACTORIES).sort());
    expect(knownVenueIds()).toContain('practice');
  });
});
