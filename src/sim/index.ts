/**
 * The simulated world: one seeded market model (contests, games, prices, accounts) behind the
 * simulated venues, and each venue's server speaking its own wire dialect. The sim adapters
 * (src/venues/sim/) talk to these servers as the real adapters talk to their venues.
 *
 *   const market = new SimMarket({ seed: 1 });
 *   const adapters = createSimAdapters(market);   // src/venues/sim: sim_exchange … practice
 *   market.start();                               // tick on a timer (or call market.tick(now))
 */
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
export { SIM_PARTNER_IDS, SIM_PERSONALITIES, isSimPartnerId, namesSimVenue, simPartners, type SimPartnerId, type SimPersonality, type SimSituationRates } from './personalities.js';
export { SimVenueServer } from './server.js';
export type * from './messages.js';
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
export { localSimCommands, runSimCommand, type SimAnswer, type SimCommand, type SimCommandResults, type SimCommandSender, type SimControl } from './control.js';
