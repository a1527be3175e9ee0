/**
 * The simulated venues' adapters: one VenueAdapter per simulated venue, each talking to its venue
 * server in the simulated world (src/sim/) the way a real adapter talks to its venue.
 *
 *   const market = new SimMarket({ seed: 1 });    // src/sim
 *   const adapters = createSimAdapters(market);   // sim_exchange … practice
 */
import type { SimMarket, SimPartnerId } from '../../sim/index.js';
import { SIM_PARTNER_IDS } from '../../sim/index.js';
import type { VenueAdapter } from '../types.js';
import { SimVenueAdapter, type SimAdapterOptions } from './adapter.js';

export { SimVenueAdapter, type SimAdapterOptions } from './adapter.js';
/** The adapter of one simulated venue. */
export function createSimAdapter(market: SimMarket, partnerId: SimPartnerId, opts: SimAdapterOptions = {}): SimVenueAdapter {
  return new SimVenueAdapter(market, partnerId, opts);
}

/** One adapter per simulated venue, in catalog order: sim_exchange, sim_book01, sim_sportsbook, sim_p2p, sim_quotes, practice. */
export function createSimAdapters(market: SimMarket, opts: SimAdapterOptions = {}): VenueAdapter[] {
  return SIM_PARTNER_IDS.map((id) => createSimAdapter(market, id, opts));
}
