/**
 * The simulator: a seeded market model and one VenueAdapter per simulated venue.
 *
 *   const market = new SimMarket({ seed: 1 });
 *   const adapters = createSimAdapters(market);   // sim_exchange … practice
 *   market.start();                               // tick on a timer (or call market.tick(now))
 */
import type { VenueAdapter } from '../types.js';
import { SimVenueAdapter, type SimAdapterOptions } from './adapter.js';
import type { SimMarket } from './model.js';
import { SIM_PARTNER_IDS, type SimPartnerId } from './personalities.js';

export { SimVenueAdapter, type SimAdapterOptions } from './adapter.js';
export { buildSimCatalog, buildSimWorld, SIM_MARKETS, SIM_TIMEFRAME, type SimCatalog, type SimPosition, type SimWorld } from './catalog.js';
export {
  SimMarket,
  type ConnectAccountInput,
  type CredentialStatus,
  type EmitTradeInput,
  type SetQuoteInput,
  type SettleInput,
  type SimChurnOptions,
  type SimContestOpenedEvent,
  type SimAccountConnection,
  type SimBalanceEvent,
  type SimMarketOptions,
  type SimMarketState,
  type SimOrderEvent,
  type SimQuoteEvent,
  type SimSettleEvent,
  type SimStateEvent,
  type SimTradeEvent,
  type SimVenueState,
} from './model.js';
export { SIM_PARTNER_IDS, SIM_PERSONALITIES, isSimPartnerId, simPartners, type SimPartnerId, type SimPersonality, type SimSituationRates } from './personalities.js';
export { SimVenueServer } from './server.js';
export {
  BASELINES,
  PUBLISHED_THRESHOLDS,
  SIM_SITUATIONS,
  SITUATION_CONFLICTS,
  SITUATION_DEFAULTS,
  SITUATION_KNOBS,
  type SimSituation,
  type SituationDetails,
  type SituationPrint,
  type SituationQuote,
  type SituationRequest,
  type SituationResult,
} from './situations.js';

/** The adapter of one simulated venue. */
export function createSimAdapter(market: SimMarket, partnerId: SimPartnerId, opts: SimAdapterOptions = {}): SimVenueAdapter {
  return new SimVenueAdapter(market, partnerId, opts);
}

/** One adapter per simulated venue, in catalog order: sim_exchange, sim_book01, sim_sportsbook, sim_p2p, sim_quotes, practice. */
export function createSimAdapters(market: SimMarket, opts: SimAdapterOptions = {}): VenueAdapter[] {
  return SIM_PARTNER_IDS.map((id) => createSimAdapter(market, id, opts));
}
