/**
 * The Kalshi adapter's settings, and their environment variables (docs/configuration.md). The
 * function is handed the environment (src/config.ts passes process.env); it reads no file: the
 * private key file named by FLOW_KALSHI_PRIVATE_KEY_PATH is read when the adapter is built.
 *
 * Rate limits (docs.kalshi.com/getting_started/rate_limits): per-second read/write budgets by access
 * tier. The current docs state them as token buckets where most requests cost 10 tokens (Basic
 * 200/100 tokens per second, writes allowed to burst to two seconds of budget); in requests that is
 * the older table's Basic 20/10, Advanced 30/30, Premier 100/100, Paragon 200/200, Prime 400/400.
 */

export type KalshiTier = 'basic' | 'advanced' | 'premier' | 'paragon' | 'prime';

/** Requests per second (read, write) per tier; each request is one token here (10 of Kalshi's). */
export const KALSHI_RATE_LIMITS: Readonly<Record<KalshiTier, { read: number; write: number }>> = {
  basic: { read: 20, write: 10 },
  advanced: { read: 30, write: 30 },
  premier: { read: 100, write: 100 },
  paragon: { read: 200, write: 200 },
  prime: { read: 400, write: 400 },
};

export const KALSHI_TIERS = Object.keys(KALSHI_RATE_LIMITS) as KalshiTier[];

/** Kalshi's public hosts (the docs also name external-api.kalshi.com; both answer). */
export const KALSHI_REST_URL = 'https://api.elections.kalshi.com/trade-api/v2';
export const KALSHI_WS_URL = 'wss://api.elections.kalshi.com/trade-api/ws/v2';

export interface KalshiSettings {
  restBaseUrl: string;
  wsUrl: string;
  /** API key id; null = market data only, orders unsupported. */
  keyId: string | null;
  /** The RSA private key, as PEM text or a file path (one of them with keyId). */
  privateKeyPem: string | null;
  privateKeyPath: string | null;
  /** The router account these credentials trade for; null = no orders even with credentials. */
  accountId: string | null;
  tier: KalshiTier;
  /** Which markets to carry: series tickers, event tickers, market tickers (empty = all open ones). */
  series: string[];
  events: string[];
  tickers: string[];
  /** At most this many markets (each costs a book subscription or a poll request). */
  maxMarkets: number;
  /** Carry multivariate (combo) markets too; Kalshi lists very many of them. */
  includeMultivariate: boolean;
  /** Per-request deadline. */
  requestTimeoutMs: number;
}

export const KALSHI_DEFAULTS: KalshiSettings = {
  restBaseUrl: KALSHI_REST_URL,
  wsUrl: KALSHI_WS_URL,
  keyId: null,
  privateKeyPem: null,
  privateKeyPath: null,
  accountId: null,
  tier: 'basic',
  series: [],
  events: [],
  tickers: [],
  maxMarkets: 100,
  includeMultivariate: false,
  requestTimeoutMs: 10_000,
};

export class KalshiConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new KalshiConfigError(`${name} must be a URL, got ${JSON.stringify(raw)}`);
  }
  if (!protocols.includes(u.protocol)) throw new KalshiConfigError(`${name} must use ${protocols.join(' or ')}, got ${JSON.stringify(raw)}`);
  return raw.replace(/\/+$/, '');
}

/** FLOW_KALSHI_* → settings. Throws KalshiConfigError naming the variable on a bad value. */
export function kalshiSettingsFromEnv(env: Env): KalshiSettings {
  const keyId = env.FLOW_KALSHI_API_KEY_ID?.trim() || null;
  const pem = env.FLOW_KALSHI_PRIVATE_KEY?.trim() || null;
  const path = env.FLOW_KALSHI_PRIVATE_KEY_PATH?.trim() || null;
  if (pem && path) throw new KalshiConfigError('set FLOW_KALSHI_PRIVATE_KEY or FLOW_KALSHI_PRIVATE_KEY_PATH, not both');
  if (keyId && !pem && !path) throw new KalshiConfigError('FLOW_KALSHI_API_KEY_ID needs FLOW_KALSHI_PRIVATE_KEY_PATH (or FLOW_KALSHI_PRIVATE_KEY)');
  if (!keyId && (pem || path)) throw new KalshiConfigError('a Kalshi private key needs FLOW_KALSHI_API_KEY_ID');
  const tierRaw = (env.FLOW_KALSHI_TIER?.trim() || 'basic').toLowerCase();
  if (!(KALSHI_TIERS as string[]).includes(tierRaw)) {
    throw new KalshiConfigError(`FLOW_KALSHI_TIER must be one of ${KALSHI_TIERS.join(', ')}, got ${JSON.stringify(env.FLOW_KALSHI_TIER)}`);
  }
  const maxRaw = env.FLOW_KALSHI_MAX_MARKETS?.trim();
  const maxMarkets = maxRaw ? Number(maxRaw) : KALSHI_DEFAULTS.maxMarkets;
  if (!Number.isInteger(maxMarkets) || maxMarkets < 1 || maxMarkets > 5000) {
    throw new KalshiConfigError(`FLOW_KALSHI_MAX_MARKETS must be an integer between 1 and 5000, got ${JSON.stringify(maxRaw)}`);
  }
  const mve = env.FLOW_KALSHI_INCLUDE_MULTIVARIATE?.trim();
  if (mve && !/^(1|true|yes|on|0|false|no|off)$/i.test(mve)) throw new KalshiConfigError(`FLOW_KALSHI_INCLUDE_MULTIVARIATE must be true or false, got ${JSON.stringify(mve)}`);
  return {
    restBaseUrl: url(env, 'FLOW_KALSHI_BASE_URL', KALSHI_REST_URL, ['http:', 'https:']),
    wsUrl: url(env, 'FLOW_KALSHI_WS_URL', KALSHI_WS_URL, ['ws:', 'wss:']),
    keyId,
    privateKeyPem: pem,
    privateKeyPath: path,
    accountId: env.FLOW_KALSHI_ACCOUNT_ID?.trim() || null,
    tier: tierRaw as KalshiTier,
    series: list(env.FLOW_KALSHI_SERIES),
    events: list(env.FLOW_KALSHI_EVENTS),
    tickers: list(env.FLOW_KALSHI_TICKERS),
    maxMarkets,
    includeMultivariate: mve ? /^(1|true|yes|on)$/i.test(mve) : false,
    requestTimeoutMs: KALSHI_DEFAULTS.requestTimeoutMs,
  };
}
