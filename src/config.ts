/**
 * One typed configuration, read once from the environment (names fixed by
 * shared/OPERATOR-INTERFACE.md). Everything else receives a Config; nothing reads process.env.
 */
import path from 'node:path';

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
  adminToken: string;
  adminTokenIsDefault: boolean;
  jwtSecret: string;
  streamMaxConnectionsPerKey: number;
  /** Secret that signs pagination cursors so tampered or foreign cursors are refused. */
  cursorSecret: string;
  logLevel: string;
  /** Retention of tick/price history in ClickHouse, days (0 = keep forever). */
  historyRetentionDays: number;
  /** How long the hot state of a closed (final or cancelled) contest stays in Redis, seconds. */
  hotRetentionSeconds: number;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function list(raw: string | undefined, fallback: string[]): string[] {
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
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

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(env.FLOW_DATA_DIR || './data');
  const adminToken = env.FLOW_ADMIN_TOKEN || 'dev-admin';
  const jwtSecret = env.FLOW_JWT_SECRET || 'dev-jwt-secret-change-me';
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
    adminToken,
    adminTokenIsDefault: !env.FLOW_ADMIN_TOKEN,
    jwtSecret,
    streamMaxConnectionsPerKey: int(env, 'FLOW_STREAM_MAX_CONNECTIONS_PER_KEY', 3, 1),
    cursorSecret: env.FLOW_CURSOR_SECRET || `cursor:${jwtSecret}`,
    logLevel: env.LOG_LEVEL || 'info',
    historyRetentionDays: int(env, 'FLOW_HISTORY_RETENTION_DAYS', 0),
    hotRetentionSeconds: int(env, 'FLOW_HOT_RETENTION_SECONDS', 3600, 1, 30 * 86_400),
  };
}
