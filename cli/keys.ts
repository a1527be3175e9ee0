/** `flow keys create|revoke|list` and `flow jwt` (docs/operations.md "Keys and player tokens"). */
import { parseArgs } from 'node:util';
import { isEnvironment, isKeyType, isPlan, PLANS } from '../src/domain/plans.js';
import { signPlayerJwt } from '../src/jwt.js';
import { createKey, KeyInputError, listKeys, revokeKey, type CreatedKey } from '../src/store/pg/keys.js';
import { busTopic } from '../src/store/redis/bus.js';
import type { Runtime } from './runtime.js';

export class UsageError extends Error {}

function positiveInt(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

export async function keysCreate(rt: Runtime, argv: string[]): Promise<CreatedKey> {
  const { values } = parseArgs({
    args: argv,
    options: {
      plan: { type: 'string' },
      type: { type: 'string' },
      env: { type: 'string' },
      workspace: { type: 'string' },
      entitlements: { type: 'string' },
      'rate-limit-per-minute': { type: 'string' },
      'rate-limit-per-day': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.plan || !isPlan(values.plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
  if (!values.type || !isKeyType(values.type)) throw new UsageError('--type must be data or execution');
  if (!values.env || !isEnvironment(values.env)) throw new UsageError('--env must be test or live');
  const entitlements = values.entitlements?.split(',').map((s) => s.trim()).filter(Boolean);
  try {
    return await createKey(rt.pool, rt.gate, {
      plan: values.plan,
      keyType: values.type,
      environment: values.env,
      workspaceId: values.workspace,
      entitlements,
      rateLimitPerMinute: positiveInt('rate-limit-per-minute', values['rate-limit-per-minute']),
      rateLimitPerDay: positiveInt('rate-limit-per-day', values['rate-limit-per-day']),
    });
  } catch (err) {
    if (err instanceof KeyInputError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * Revokes in PostgreSQL, then turns the Redis copy into a tombstone (no lookup in flight can write the
 * key back) and tells every process to evict it and stream gateways to close its sockets.
 */
export async function keysRevoke(rt: Runtime, keyId: string): Promise<boolean> {
  const hash = await revokeKey(rt.pool, keyId);
  if (!hash) return false;
  await rt.gate.markRevoked(hash);
  await rt.redis.publish(busTopic(rt.ks, 'keys-revoked'), JSON.stringify({ key_id: keyId, key_hash: hash }));
  return true;
}

export async function runKeysCommand(rt: Runtime, argv: string[], out: (s: string) => void): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'create') {
    const json = rest.includes('--json');
    const k = await keysCreate(rt, rest);
    if (json) out(JSON.stringify(k));
    else {
      out(`api_key: ${k.api_key}   (shown once: store it now)`);
      out(`key_id: ${k.key_id}  workspace_id: ${k.workspace_id}  router_account_id: ${k.router_account_id}`);
      out(`plan: ${k.plan}  type: ${k.key_type}  env: ${k.environment}  limits: ${k.rate_limit_per_minute}/min ${k.rate_limit_per_day}/day`);
      out(`entitlements: ${k.entitlements.join(', ')}`);
    }
    return;
  }
  if (sub === 'revoke') {
    const id = rest.find((a) => !a.startsWith('--'));
    if (!id) throw new UsageError('usage: flow keys revoke <key_id>');
    if (!(await keysRevoke(rt, id))) throw new UsageError(`no active key ${id}; list keys with: flow keys list --workspace <id>`);
    out(rest.includes('--json') ? JSON.stringify({ key_id: id, revoked: true }) : `revoked ${id}`);
    return;
  }
  if (sub === 'list') {
    const { values } = parseArgs({ args: rest, options: { workspace: { type: 'string' }, json: { type: 'boolean', default: false } } });
    if (!values.workspace) throw new UsageError('usage: flow keys list --workspace <id> [--json]');
    const keys = await listKeys(rt.pool, values.workspace);
    if (values.json) out(JSON.stringify(keys));
    else for (const k of keys) out(`${k.key_id}  ${k.key_prefix}…  ${k.plan}/${k.key_type}/${k.environment}  ${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`);
    return;
  }
  throw new UsageError('usage: flow keys create|revoke|list ...');
}

export function jwtCommand(rt: Runtime, argv: string[], out: (s: string) => void): void {
  const { values } = parseArgs({ args: argv, options: { account: { type: 'string' }, ttl: { type: 'string', default: '3600' } } });
  if (!values.account) throw new UsageError('usage: flow jwt --account <router_account_id> [--ttl 3600]');
  const ttl = positiveInt('ttl', values.ttl)!;
  out(signPlayerJwt(rt.config.jwtSecret, values.account, ttl, rt.clock.now()));
}
