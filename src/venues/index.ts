/** Public surface of the venue layer. */
export * from './types.js';
export * from './errors.js';
export * from './prices.js';
export { fillFee, type FeeRole } from './fees.js';
export { VENUE_FACTORIES, createAdapters, createVenues, knownVenueIds, type VenueFactory, type VenueFactoryContext, type VenueSet, type VenuesConfig } from './registry.js';
export { MISSED_POLLS, QUOTE_RECONFIRM_MS, STREAM_SLACK_MS, freshnessByVenue, quoteStaleAfterMs, ruleFreshnessMs } from './freshness.js';
