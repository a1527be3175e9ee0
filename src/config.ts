/**
 * One typed configuration, read once from the environment (names fixed by
 * docs/configuration.md). Everything else receives a Config; nothing reads process.env.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { AI_PROVIDERS, type AiProvider } from './domain/ai.js';
import { KalshiConfigError, kalshiSettingsFromEnv, type KalshiSettings } from './venues/kalshi/config.js';
import { DEFAULT_MAX_EVENTS, POLYMARKET_DEFAULT_URLS } from './venues/polymarket/venue.js';

export const ROLES = ['api', 'gateway', 'ingest', 'compute', 'execute', 'scheduler'] as const;
export type Role = (typeof ROLES)[number];

export interface Config {
  host: string;
  port: number;
  streamPort: number;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  clickhouseUrl: string | null;
  dataDir: string;
  roles: Role[];
  venues: string[];
  simSeed: number;
  /** Guards /sim/v1 (X-Admin-Token). */
  adminToken: string;
  /** Signs and verifies player JWTs. */
  jwtSecret: string;
  streamMaxConnectionsPerKey: number;
  /** Signs pagination cursors so tampered or foreign cursors are refused; its own secret, so a
   * cursor never tells anything about the JWT key. */
  cursorSecret: string;
  logLevel: string;
  /** Retention of tick/price history in ClickHouse, days (0 = keep forever). */
  historyRetentionDays: number;
  /** The history reads also serve rows `flow history synthesize` wrote (default false: real rows only). */
  historyIncludeSynthetic: boolean;
  /** How long the hot state of a closed (final or cancelled) contest stays in Redis, seconds. */
  hotRetentionSeconds: number;
  /** FLOW_COMPUTE_CACHE_MB: the bound of each cache of contest runs the compute role keeps (per compute thread, and the mirrors and inline runs of its main thread). */
  computeCacheMb: number;
  /**
   * FLOW_GATEWAY_THREAD: run the stream gateway on a thread of its own when this process runs other
   * roles too (default true), so their work never delays a frame.
   */
  gatewayThread: boolean;
  /**
   * Event-log retention per contest (docs/stream.md, "Retention"): at least minEvents events or
   * minAgeSeconds, whichever holds more, never more than maxEvents.
   */
  eventLog: { minEvents: number; minAgeSeconds: number; maxEvents: number };
  /**
   * Real-money legs (docs/orders.md "Real-money legs"): how long a buy waits for a leg's decision
   * before answering it pending, and how long after the buy an intent no execute worker has sent
   * may still be sent (after that it fails, never placed).
   */
  execute: { waitMs: number; intentTtlMs: number };
  /** Keys the per-key watermark of kit copies (docs/kits.md): a copy names its key only to whoever holds this. */
  kitWatermarkSecret: string;
  /** Encrypts the AI provider keys accounts link, at rest in PostgreSQL (docs/ai.md). */
  aiKeySecret: string;
  /** The AI pass-through's providers (docs/ai.md): where each is, and the service's own key for managed credits (null: none). */
  ai: Record<AiProvider, { baseUrl: string; apiKey: string | null }>;
  /**
   * The MCP `ask` tool's planner (docs/mcp.md "ask"): the provider whose model plans, through the AI
   * pass-through's credentials, and its model; provider null: the rule-based planner.
   */
  ask: { provider: AiProvider | null; model: string };
  /** The Kalshi adapter's settings (FLOW_KALSHI_*; docs/configuration.md, docs/venues.md). */
  kalshi: KalshiSettings;
  /** The Polymarket adapter (FLOW_VENUES=polymarket): hosts and catalog scope (docs/configuration.md). */
  polymarket: PolymarketConfig;
  /**
   * The cross-venue matcher's operator files (docs/venues.md "Matching venues to one catalog"):
   * alias files added to the built-in table (FLOW_VENUE_ALIASES, comma list) and the mapping file
   * (FLOW_VENUE_MAPPING). Read when the ingest role starts.
   */
  venueMatch: { aliasFiles: string[]; mappingFile: string | null };
}

export interface PolymarketConfig {
  /** Bases without a trailing slash; the WebSocket base gets `/ws/market` appended. */
  urls: { gamma: string; clob: string; ws: string };
  /** Only events with this Gamma tag id; null: every active event. */
  tagId: string | null;
  /** At most this many events in the catalog. */
  maxEvents: number;
}

export class ConfigError extends Error {}

/** The resume guarantee clients are promised is the floor: an operator may raise it, not lower it. */
function eventLogConfig(env: NodeJS.ProcessEnv): Config['eventLog'] {
  const minEvents = int(env, 'FLOW_EVENT_LOG_MIN_EVENTS', 10_000, 10_000, 1_000_000);
  const minAgeSeconds = int(env, 'FLOW_EVENT_LOG_MIN_AGE_SECONDS', 300, 300, 86_400);
  const maxEvents = int(env, 'FLOW_EVENT_LOG_MAX_EVENTS', Math.max(100_000, minEvents), minEvents, 10_000_000);
  return { minEvents, minAgeSeconds, maxEvents };
}

/**
 * A base URL (a venue's, an AI provider's) of one of the allowed schemes, without query, fragment or
 * credentials, kept without a trailing slash so a path is appended to it as is.
 */
function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string, schemes: readonly string[] = ['http:', 'https:']): string {
  const raw = env[name] || fallback;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got ${JSON.stringify(raw)}`);
  }
  if (!schemes.includes(u.protocol) || u.search || u.hash || u.username || u.password) {
    throw new ConfigError(`${name} must be a ${schemes.map((x) => x.replace(':', '')).join(' or ')} URL without query, fragment or credentials, got ${JSON.stringify(raw)}`);
  }
  return u.toString().replace(/\/+$/, '');
}

function polymarketConfig(env: NodeJS.ProcessEnv): PolymarketConfig {
  const tag = env.FLOW_POLYMARKET_TAG_ID;
  if (tag !== undefined && tag !== '' && !/^[0-9]+$/.test(tag)) throw new ConfigError(`FLOW_POLYMARKET_TAG_ID must be a Gamma tag id (digits), got ${JSON.stringify(tag)}`);
  return {
    urls: {
      gamma: baseUrl(env, 'FLOW_POLYMARKET_GAMMA_URL', POLYMARKET_DEFAULT_URLS.gamma, ['http:', 'https:']),
      clob: baseUrl(env, 'FLOW_POLYMARKET_CLOB_URL', POLYMARKET_DEFAULT_URLS.clob, ['http:', 'https:']),
      ws: baseUrl(env, 'FLOW_POLYMARKET_WS_URL', POLYMARKET_DEFAULT_URLS.ws, ['ws:', 'wss:']),
    },
    tagId: tag ? tag : null,
    maxEvents: int(env, 'FLOW_POLYMARKET_MAX_EVENTS', DEFAULT_MAX_EVENTS, 1, 5_000),
  };
}

/** The intent TTL is at least the wait: a leg the buy still waits for is never expired under it. */
function executeConfig(env: NodeJS.ProcessEnv): Config['execute'] {
  const waitMs = int(env, 'FLOW_EXECUTE_WAIT_MS', 15_000, 100, 120_000);
  const intentTtlMs = int(env, 'FLOW_EXECUTE_INTENT_TTL_MS', Math.max(60_000, waitMs), waitMs, 3_600_000);
  return { waitMs, intentTtlMs };
}

/**
 * The service's secrets. None has a built-in value: each comes from its variable or, when that is
 * unset, from its file in FLOW_DATA_DIR (generated on first start, see src/secrets.ts).
 */
export const SECRETS = {
  adminToken: { variable: 'FLOW_ADMIN_TOKEN', file: 'admin-token', purpose: 'the operator token (X-Admin-Token for /sim/v1)' },
  jwtSecret: { variable: 'FLOW_JWT_SECRET', file: 'jwt-secret', purpose: 'the player JWT signing secret' },
  cursorSecret: { variable: 'FLOW_CURSOR_SECRET', file: 'cursor-secret', purpose: 'the pagination cursor key' },
  kitWatermarkSecret: { variable: 'FLOW_KIT_WATERMARK_SECRET', file: 'kit-watermark-secret', purpose: 'the kit watermark key' },
  aiKeySecret: { variable: 'FLOW_AI_KEY_SECRET', file: 'ai-key-secret', purpose: 'the key that encrypts linked AI provider keys' },
} as const;
export type SecretName = keyof typeof SECRETS;

/** Supplies a secret its variable leaves unset; `file` is where FLOW_DATA_DIR keeps it. */
export type SecretSource = (name: SecretName, file: string) => string;

/**
 * A fresh random secret for this process only: the default for callers that hold their Config in
 * process (tests, benches). The CLI passes the data-dir source instead, so every process and
 * command of one installation shares the same secrets.
 */
export const processSecrets: SecretSource = () => randomBytes(32).toString('base64url');

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** The providers' places and the service's own keys (managed credits). A key is never logged. */
function aiConfig(env: NodeJS.ProcessEnv): Config['ai'] {
  return {
    anthropic: { baseUrl: baseUrl(env, 'FLOW_ANTHROPIC_BASE_URL', 'https://api.anthropic.com'), apiKey: env.FLOW_ANTHROPIC_API_KEY || null },
    openai: { baseUrl: baseUrl(env, 'FLOW_OPENAI_BASE_URL', 'https://api.openai.com'), apiKey: env.FLOW_OPENAI_API_KEY || null },
  };
}

/** The model each provider's planner asks when FLOW_ASK_MODEL is unset. */
export const DEFAULT_ASK_MODEL: Record<AiProvider, string> = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4.1-mini' };

/**
 * Which planner answers `ask`: FLOW_ASK_PROVIDER (anthropic, openai, or rule); unset, the provider
 * the service holds a managed key for (Anthropic first), else the rule-based planner.
 */
function askConfig(env: NodeJS.ProcessEnv, ai: Config['ai']): Config['ask'] {
  const raw = env.FLOW_ASK_PROVIDER;
  let provider: AiProvider | null;
  if (raw === undefined || raw === '') provider = ai.anthropic.apiKey ? 'anthropic' : ai.openai.apiKey ? 'openai' : null;
  else if (raw === 'rule') provider = null;
  else if ((AI_PROVIDERS as readonly string[]).includes(raw)) provider = raw as AiProvider;
  else throw new ConfigError(`FLOW_ASK_PROVIDER must be ${AI_PROVIDERS.join(', ')} or rule, got ${JSON.stringify(raw)}`);
  const model = env.FLOW_ASK_MODEL || DEFAULT_ASK_MODEL[provider ?? 'anthropic'];
  // The pass-through's own rule for a model id (InferenceBody.model).
  if (!/^[\x21-\x7e]{1,200}$/.test(model)) throw new ConfigError(`FLOW_ASK_MODEL must be a model id of 1-200 printable characters without spaces, got ${JSON.stringify(model)}`);
  return { provider, model };
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(raw)}`);
}

function list(raw: string | undefined, fallback: string[]): string[] {
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

function kalshiConfig(env: NodeJS.ProcessEnv): KalshiSettings {
  try {
    return kalshiSettingsFromEnv(env);
  } catch (e) {
    if (e instanceof KalshiConfigError) throw new ConfigError(e.message);
    throw e;
  }
}

export function parseRoles(raw: string | undefined): Role[] {
  const items = list(raw, ['all']);
  if (items.includes('all')) return [...ROLES];
  for (const r of items) {
    if (!(ROLES as readonly string[]).includes(r)) {
      throw new ConfigError(`unknown role ${JSON.stringify(r)} in FLOW_ROLES; known roles: all, ${ROLES.join(', ')}`);
    }
  }
  return items as Role[];
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, secrets: SecretSource = processSecrets): Config {
  const dataDir = path.resolve(env.FLOW_DATA_DIR || './data');
  const secret = (name: SecretName): string => env[SECRETS[name].variable] || secrets(name, path.join(dataDir, SECRETS[name].file));
  const ai = aiConfig(env);
  return {
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 8080, 0, 65535),
    streamPort: int(env, 'STREAM_PORT', 8081, 0, 65535),
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/flow',
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    redisPrefix: env.REDIS_PREFIX || 'flow',
    clickhouseUrl: env.CLICKHOUSE_URL || null,
    dataDir,
    roles: parseRoles(env.FLOW_ROLES),
    venues: list(env.FLOW_VENUES, ['sim']),
    simSeed: int(env, 'FLOW_SIM_SEED', 1),
    adminToken: secret('adminToken'),
    jwtSecret: secret('jwtSecret'),
    streamMaxConnectionsPerKey: int(env, 'FLOW_STREAM_MAX_CONNECTIONS_PER_KEY', 3, 1),
    cursorSecret: secret('cursorSecret'),
    logLevel: env.LOG_LEVEL || 'info',
    historyRetentionDays: int(env, 'FLOW_HISTORY_RETENTION_DAYS', 0),
    historyIncludeSynthetic: bool(env, 'FLOW_HISTORY_INCLUDE_SYNTHETIC', false),
    hotRetentionSeconds: int(env, 'FLOW_HOT_RETENTION_SECONDS', 3600, 1, 30 * 86_400),
    computeCacheMb: int(env, 'FLOW_COMPUTE_CACHE_MB', 64, 1, 4096),
    gatewayThread: bool(env, 'FLOW_GATEWAY_THREAD', true),
    eventLog: eventLogConfig(env),
    execute: executeConfig(env),
    kitWatermarkSecret: secret('kitWatermarkSecret'),
    aiKeySecret: secret('aiKeySecret'),
    ai,
    ask: askConfig(env, ai),
    kalshi: kalshiConfig(env),
    polymarket: polymarketConfig(env),
    venueMatch: { aliasFiles: list(env.FLOW_VENUE_ALIASES, []), mappingFile: env.FLOW_VENUE_MAPPING?.trim() || null },
  };
}
