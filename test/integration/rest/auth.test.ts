import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { keysRevoke } from '../../../cli/keys.js';
import { ManualClock } from '../../../src/clock.js';
import { PLANS, type Plan } from '../../../src/domain/plans.js';
import { signPlayerJwt } from '../../../src/jwt.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { get } from '../../support/http.js';
import { FIXTURE_NOW } from '../../support/fixture-catalog.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
const clock = new ManualClock(FIXTURE_NOW);
const app = () => s.built.app;

// A route per entitlement the spec gates, so each plan's grant is checked through the real gate.
const GATED = ['ai:invoke', 'depth:read', 'gamestate:read', 'pricing:history', 'stream:realtime', 'stream:ticks', 'signals:read', 'trades:read', 'arbitrage:read', 'connect:read', 'connect:write', 'connect:trade', 'trade:execute', 'account:read', 'price_history', 'account_read'];
const probe = (app: FastifyInstance) => {
  for (const e of GATED) {
    app.get(`/flow/v1/__probe/${e.replace(":", "-")}`, { config: { entitlements: [e] } }, async () => ({ ok: true }));
  }
};

beforeAll(async () => {
  s = await startStack({ clock, plugins: [probe] });
});
afterAll(async () => s?.close());

const key = (plan: Plan, keyType: 'data' | 'execution' = 'data', extra: object = {}) =>
  createKey(s.rt.pool, s.rt.gate, { plan, keyType, environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, ...extra });

describe('API key authentication', () => {
  it('401s a missing, unknown or malformed key with the error shape', async () => {
    for (const headers of [{}, { 'x-api-key': 'flow_test_nope' }, { 'x-api-key': 'x'.repeat(300) }, { authorization: 'Basic abc' }]) {
      const r = await get(app(), '/flow/v1/leagues', headers as Record<string, string>);
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
      expect(typeof r.body.error.message).toBe('string');
    }
  });
  it('stores only a hash of the key', async () => {
    const k = await key('free');
    const { rows } = await s.rt.pool.query('SELECT key_hash, key_prefix FROM api_keys WHERE key_id = $1', [k.key_id]);
    expect(rows[0].key_hash).not.toContain(k.api_key);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    const all = await s.rt.pool.query("SELECT count(*)::int AS n FROM api_keys WHERE key_hash = $1 OR key_prefix = $1", [k.api_key]);
    expect(all.rows[0].n).toBe(0);
  });
  it('a revoked key is refused at once, even after it was cached', async () => {
    const k = await key('pro');
    expect((await get(app(), '/flow/v1/leagues', { 'x-api-key': k.api_key })).status).toBe(200);
    expect(await keysRevoke(s.rt, k.key_id)).toBe(true);
    // Every API process drops its in-process entry when the revocation crosses the bus (milliseconds).
    let r = await get(app(), '/flow/v1/leagues', { 'x-api-key': k.api_key });
    for (let i = 0; i < 50 && r.status !== 401; i++) {
      await new Promise((res) => setTimeout(res, 20));
      r = await get(app(), '/flow/v1/leagues', { 'x-api-key': k.api_key });
    }
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/revoked/);
    expect(await keysRevoke(s.rt, k.key_id)).toBe(false);
  });
  it('public routes need no key', async () => {
    expect((await get(app(), '/healthz')).status).toBe(200);
    expect((await get(app(), '/readyz')).body.checks).toEqual({ postgres: 'ok', redis: 'ok' });
    const openapi = await get(app(), '/flow/v1/openapi.json');
    expect(openapi.status).toBe(200);
    expect(Object.keys(openapi.body.paths)).toContain('/flow/v1/contests');
    const docs = await app().inject({ method: 'GET', url: '/docs' });
    expect(docs.statusCode).toBeLessThan(400);
    const metrics = await app().inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('flow_http_requests_total');
    // The gate's batching shows as checks per script call; a gated request moves both.
    const figure = (body: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(body)?.[1]);
    const k = await createKey(s.rt.pool, s.rt.gate, { plan: 'free', keyType: 'data', environment: 'test' });
    expect((await get(app(), '/flow/v1/leagues', { 'x-api-key': k.api_key })).status).toBe(200);
    const after = (await app().inject({ method: 'GET', url: '/metrics' })).body;
    expect(figure(after, 'flow_ratelimit_checks_total')).toBeGreaterThan(figure(metrics.body, 'flow_ratelimit_checks_total'));
    expect(figure(after, 'flow_ratelimit_script_calls_total')).toBeGreaterThan(figure(metrics.body, 'flow_ratelimit_script_calls_total'));
  });
});

describe('plan entitlements', () => {
  // Every plan reads the orders kit; pro and up every kit (docs/kits.md).
  const PRO_KITS = ['kit:orders-reconcile', 'kit:price-history', 'kit:signals-arbitrage', 'kit:streaming-resume'];
  const expected: Record<Plan, string[]> = {
    free: ['account:read', 'kit:orders-reconcile', 'markets:read', 'reference:read'],
    pro: ['account:read', 'ai:invoke', 'arbitrage:read', 'depth:read', 'gamestate:read', ...PRO_KITS, 'markets:read', 'pricing:history', 'reference:read', 'signals:read', 'stream:realtime', 'trades:read'],
    scale: ['account:read', 'ai:invoke', 'arbitrage:read', 'depth:read', 'gamestate:read', ...PRO_KITS, 'markets:read', 'pricing:history', 'reference:read', 'signals:read', 'stream:realtime', 'stream:ticks', 'trades:read'],
    organization: ['account:read', 'ai:invoke', 'arbitrage:read', 'connect:read', 'connect:trade', 'connect:write', 'depth:read', 'gamestate:read', ...PRO_KITS, 'markets:read', 'pricing:history', 'reference:read', 'signals:read', 'stream:realtime', 'stream:ticks', 'trades:read'],
    enterprise: ['account:read', 'ai:invoke', 'arbitrage:read', 'connect:read', 'connect:trade', 'connect:write', 'depth:read', 'gamestate:read', ...PRO_KITS, 'markets:read', 'pricing:history', 'reference:read', 'signals:read', 'stream:realtime', 'stream:ticks', 'trades:read'],
  };
  for (const plan of PLANS) {
    it(`${plan}: /auth/me lists the plan's entitlements and the gate enforces each`, async () => {
      const k = await key(plan);
      const me = await get(app(), '/flow/v1/auth/me', { 'x-api-key': k.api_key });
      expect(me.body.data.entitlements).toEqual(expected[plan]);
      expect(me.body.data.can_execute).toBe(false);
      for (const e of GATED) {
        const canonical = e === 'price_history' ? 'pricing:history' : e === 'account_read' ? 'account:read' : e;
        const r = await get(app(), `/flow/v1/__probe/${e.replace(":", "-")}`, { 'x-api-key': k.api_key });
        if (expected[plan].includes(canonical)) expect(r.status, `${plan} ${e}`).toBe(200);
        else {
          expect(r.status, `${plan} ${e}`).toBe(403);
          expect(r.body.error).toMatchObject({ code: 'entitlement_required', details: { missing: [canonical] } });
        }
      }
    });
  }
  it('an execution key adds trade:execute and can_execute; a data key never does', async () => {
    const ex = await key('free', 'execution');
    const me = await get(app(), '/flow/v1/auth/me', { 'x-api-key': ex.api_key });
    expect(me.body.data.can_execute).toBe(true);
    expect(me.body.data.current_key.key_type).toBe('execution');
    const data = await key('scale', 'data', { entitlements: ['trade:execute', 'depth:read'] });
    const me2 = await get(app(), '/flow/v1/auth/me', { 'x-api-key': data.api_key });
    expect(me2.body.data.can_execute).toBe(false);
    expect(me2.body.data.entitlements).toEqual(['account:read', 'depth:read', 'markets:read', 'reference:read']);
  });
});

describe('GET /auth/me', () => {
  it('reports the full caller context with real usage counters', async () => {
    const k = await key('pro', 'execution', { rateLimitPerMinute: 77, rateLimitPerDay: 7_777 });
    const H = { 'x-api-key': k.api_key };
    await get(app(), '/flow/v1/leagues', H);
    await get(app(), '/flow/v1/leagues/unknown', H); // an error
    const me = await get(app(), '/flow/v1/auth/me', H);
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      auth_method: 'api_key',
      router_account_id: k.router_account_id,
      can_execute: true,
      current_key: { key_type: 'execution', rate_limit_per_minute: 77, rate_limit_per_day: 7_777 },
      usage: { requests_last_24h: 3, requests_last_7d: 3, errors_last_24h: 1 },
      credits: { allowance: 100, purchased: 0, total: 100, included_per_month: 100, used_this_period: 0 },
    });
  });
});

describe('player JWT', () => {
  it('acts on its own account', async () => {
    const k = await key('pro', 'data');
    const token = signPlayerJwt('test-jwt-secret', k.router_account_id, 600, clock.now());
    const me = await get(app(), '/flow/v1/auth/me', { authorization: `Bearer ${token}` });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ auth_method: 'jwt', router_account_id: k.router_account_id, can_execute: true });
  });
  it('refuses expired, wrongly signed, alg=none and unknown-account tokens', async () => {
    const k = await key('pro');
    const expired = signPlayerJwt('test-jwt-secret', k.router_account_id, 60, clock.now() - 120_000);
    const wrong = signPlayerJwt('other-secret', k.router_account_id, 600, clock.now());
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: k.router_account_id, exp: clock.now() / 1000 + 600 })).toString('base64url');
    const none = `${header}.${payload}.`;
    const ghost = signPlayerJwt('test-jwt-secret', 'acct_ghost', 600, clock.now());
    for (const t of [expired, wrong, none, ghost, 'not.a.jwt', 'x']) {
      const r = await get(app(), '/flow/v1/auth/me', { authorization: `Bearer ${t}` });
      expect(r.status, t).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    }
  });
});
