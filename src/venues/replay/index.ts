/**
 * The replay: recorded venue payloads served on the venues' paths (docs/venues.md "Replay on recorded data").
 *
 *   const server = await startReplayServer({ dir: 'test/venues' });
 *   Object.assign(process.env, server.env());   // then FLOW_VENUES=kalshi,polymarket runs on recorded data
 */
export { catalogsFromRecordings, kalshiCatalogOf, kalshiListed, polymarketCatalogOf, polymarketListed, KALSHI_OPEN_STATUSES } from './catalogs.js';
export { KalshiReplay, type BookAssignment } from './kalshi.js';
export { PolymarketReplay, type PmBookAssignment } from './polymarket.js';
export { bookOwner, loadRecordings, RecordingsError, type KalshiRecordings, type PolymarketRecordings, type Recordings } from './recordings.js';
export { startReplayServer, KALSHI_PREFIX, KALSHI_REST_PATH, KALSHI_WS_PATH, POLYMARKET_PREFIX, type ReplayOptions, type ReplayServer } from './server.js';
