/**
 * Kalshi: the adapter factory and the pieces other layers use (catalog mapping, fees, grid, parsers).
 *
 *   const adapter = createKalshiAdapter(kalshiSettingsFromEnv(process.env));
 *   await adapter.connect();          // loads the catalog, opens the socket
 *   seedCatalog(pool, adapter.catalog()!);
 */
import { readFileSync } from 'node:fs';
import { VenueError } from '../errors.js';
import { KalshiAdapter, type KalshiAdapterOptions } from './adapter.js';
import { KALSHI_DEFAULTS, type KalshiSettings } from './config.js';
import { PARTNER_ID } from './units.js';

export { KalshiAdapter, KALSHI_POLL_INTERVAL_MS, RECONFIRM_MS, type KalshiAdapterOptions, type KalshiFeedStats } from './adapter.js';
export { KalshiSigner, signingPayload, verifyKalshiSignature, HEADER_KEY, HEADER_SIGNATURE, HEADER_TIMESTAMP, type KalshiCredentials } from './auth.js';
export { buildKalshiCatalog, nativePosition, KALSHI_MARKET, type KalshiCatalog, type KalshiListing } from './catalog.js';
export { KALSHI_DEFAULTS, KALSHI_RATE_LIMITS, KALSHI_REST_URL, KALSHI_WS_URL, KalshiConfigError, kalshiSettingsFromEnv, type KalshiSettings, type KalshiTier } from './config.js';
export { DEFAULT_FEE_SCHEDULE, feeModelOf, feeScheduleOf, orderFeeMicros, tradeFeeMicros, type KalshiFeeSchedule } from './fees.js';
export { kalshiOrderConfig, marketOrderConfig } from './grid.js';
export { PARTNER_ID as KALSHI_PARTNER_ID };

/**
 * The Kalshi adapter for `settings` (default: market data from the public hosts, no orders). A
 * private key named by path is read here, once; an unreadable or non-RSA key is a fatal
 * `invalid_config` (the operator must fix it), not a silent fallback to no credentials.
 */
export function createKalshiAdapter(settings: Partial<KalshiSettings> = {}, opts: KalshiAdapterOptions = {}): KalshiAdapter {
  const s: KalshiSettings = { ...KALSHI_DEFAULTS, ...settings };
  let pem = opts.privateKeyPem ?? s.privateKeyPem;
  try {
    if (!pem && s.privateKeyPath) pem = readFileSync(s.privateKeyPath, 'utf8');
    return new KalshiAdapter(s, { ...opts, privateKeyPem: pem });
  } catch (e) {
    throw new VenueError('fatal', 'invalid_config', `kalshi credentials: ${(e as Error).message}`, { partner_id: PARTNER_ID, cause: e });
  }
}
export { KALSHI_FEED_METRICS, type FeedMetric } from './metrics.js';
