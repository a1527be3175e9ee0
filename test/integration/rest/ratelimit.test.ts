import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { buildApp } from '../../../api/rest/app.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { createRedis } from '../../../src/store/redis/client.js';
import { RequestGate } from '../../../src/store/redis/gate.js';
import { Registry } from 'prom-client';

let s: TestStack;
const clock = new ManualClock(Date.parse('2026-11-20T10:00:00.000Z'));
const app = () => s.built.app;

beforeAll(async () => {
  s = await startStack({ clock });
});
afterAll(async () => s?.close());

const newKey = (limits: { rpm: number; rpd: number }, workspaceId?: string, plan: 'free' | 'pro' = 'free') =>
  createKey(s.rt.pool, s.rt.gate, { plan, keyType: 'data', environment: 'test', workspaceId, rateLimitPerMinute: limits.rpm, rateLimitPerDay: limits.rpd });

const hit = (k: CreatedKey, url = '/flow/v1/leagues') => get(app(), url, { 'x-api-key': k.api_key });

const H = ['x-ratelimit-limit-minute', 'x-ratelimit-remaining-minute', 'x-ratelimit-reset-minute', 'x-ratelimit-limit-day', 'x-ratelimit-remaining-day', 'x-ratelimit-reset-day'];

/** Another API instance on the same stores, with its own Redis connection (as a second process has). */
async function secondInstance() {
  const redis2 = createRedis(s.env.REDIS_URL);
  const second = await buildApp({
    config: s.config,
    log: s.rt.log,
    clock,
    pool: s.rt.pool,
    redis: redis2,
    ks: s.rt.ks,
    gate: new RequestGate(redis2, s.rt.ks),
    cursors: s.rt.cursors,
    metrics: new Registry(),
  });
  return { redis2, second };
}

describe('minute window (fixed, UTC-aligned)', () => {
  it('allows the limit, refuses the next with 429 until the minute boundary, then resets to the full budget', async () => {
    clock.set(Date.parse('2026-11-20T10:05:58.200Z'));
    const k = await newKey({ rpm: 3, rpd: 1000 });
    for (let i = 0; i < 3; i++) {
      const r = await hit(k);
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-remaining-minute']).toBe(String(2 - i));
    }
    clock.set(Date.parse('2026-11-20T10:05:59.999Z'));
    const refused = await hit(k);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: { code: 'rate_limit_exceeded', message: expect.any(String), details: { retry_after_seconds: 1, window: 'minute' } },
    });
    expect(refused.headers['retry-after']).toBe('1');
    for (const h of H) expect(refused.headers[h], h).toBeDefined();
    expect(refused.headers['x-ratelimit-reset-minute']).toBe(String(Date.parse('2026-11-20T10:06:00.000Z') / 1000));
    // The boundary: the whole budget is back, no carry-over and no burst beyond it.
    clock.set(Date.parse('2026-11-20T10:06:00.000Z'));
    const after = await hit(k);
    expect(after.status).toBe(200);
    expect(after.headers['x-ratelimit-remaining-minute']).toBe('2');
    await hit(k);
    await hit(k);
    expect((await hit(k)).status).toBe(429);
  });

  it('retry_after counts whole seconds to the boundary', async () => {
    clock.set(Date.parse('2026-11-20T10:10:17.400Z'));
    const k = await newKey({ rpm: 1, rpd: 1000 });
    await hit(k);
    const r = await hit(k);
    expect(r.body.error.details.retry_after_seconds).toBe(43);
    expect(r.headers['retry-after']).toBe('43');
  });

  it('refused requests do not consume the day budget', async () => {
    clock.set(Date.parse('2026-11-20T10:20:00.000Z'));
    const k = await newKey({ rpm: 2, rpd: 1000 });
    await hit(k);
    await hit(k);
    for (let i = 0; i < 5; i++) expect((await hit(k)).status).toBe(429);
    clock.set(Date.parse('2026-11-20T10:21:00.000Z'));
    const r = await hit(k);
    expect(r.headers['x-ratelimit-remaining-day']).toBe(String(1000 - 3));
  });
});

describe('day window (resets at UTC midnight)', () => {
  it('refuses past the day budget with window day until midnight, then resets', async () => {
    clock.set(Date.parse('2026-11-20T23:58:00.000Z'));
    const k = await newKey({ rpm: 100, rpd: 4 });
    for (let i = 0; i < 4; i++) expect((await hit(k)).status).toBe(200);
    clock.set(Date.parse('2026-11-20T23:59:30.000Z'));
    const r = await hit(k);
    expect(r.status).toBe(429);
    expect(r.body.error.details).toEqual({ retry_after_seconds: 30, window: 'day' });
    expect(r.headers['x-ratelimit-remaining-day']).toBe('0');
    expect(r.headers['x-ratelimit-reset-day']).toBe(String(Date.parse('2026-11-21T00:00:00.000Z') / 1000));
    clock.set(Date.parse('2026-11-21T00:00:00.000Z'));
    const next = await hit(k);
    expect(next.status).toBe(200);
    expect(next.headers['x-ratelimit-remaining-day']).toBe('3');
  });

  it('own-account reads are exempt from the day budget but still throttled per minute', async () => {
    clock.set(Date.parse('2026-11-21T08:00:00.000Z'));
    const k = await newKey({ rpm: 5, rpd: 2 });
    await hit(k);
    await hit(k);
    expect((await hit(k)).body.error.details.window).toBe('day');
    const me = await hit(k, '/flow/v1/auth/me');
    expect(me.status).toBe(200);
    expect(me.headers['x-ratelimit-remaining-day']).toBe('0');
    // minute: 2 allowed + 1 /auth/me counted = 3 (the refused one was not); two more fit, then 429.
    expect((await hit(k, '/flow/v1/auth/me')).status).toBe(200);
    expect((await hit(k, '/flow/v1/auth/me')).status).toBe(200);
    const throttled = await hit(k, '/flow/v1/auth/me');
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.details.window).toBe('minute');
  });
});

describe('the workspace pool', () => {
  it('every key of a workspace shares one budget', async () => {
    clock.set(Date.parse('2026-11-21T09:00:00.000Z'));
    const a = await newKey({ rpm: 4, rpd: 1000 });
    const b = await newKey({ rpm: 4, rpd: 1000 }, a.workspace_id);
    await hit(a);
    await hit(b);
    await hit(a);
    const r = await hit(b);
    expect(r.headers['x-ratelimit-remaining-minute']).toBe('0');
    expect((await hit(a)).status).toBe(429);
    // Another workspace is untouched.
    const other = await newKey({ rpm: 4, rpd: 1000 });
    expect((await hit(other)).headers['x-ratelimit-remaining-minute']).toBe('3');
  });

  it('a narrowed key stops at its own limit of the shared pool; the plan default applies otherwise', async () => {
    clock.set(Date.parse('2026-11-21T09:10:00.000Z'));
    const wide = await createKey(s.rt.pool, s.rt.gate, { plan: 'free', keyType: 'data', environment: 'test' });
    const narrow = await newKey({ rpm: 2, rpd: 10_000 }, wide.workspace_id);
    const r = await hit(wide);
    expect(r.headers['x-ratelimit-limit-minute']).toBe('60');
    expect(r.headers['x-ratelimit-limit-day']).toBe('10000');
    expect((await hit(narrow)).headers['x-ratelimit-limit-minute']).toBe('2');
    expect((await hit(narrow)).status).toBe(429);
    expect((await hit(wide)).status).toBe(200);
  });

  it('headers ride on every REST response of an authenticated caller, errors included', async () => {
    clock.set(Date.parse('2026-11-21T09:20:00.000Z'));
    const k = await newKey({ rpm: 50, rpd: 1000 });
    for (const url of ['/flow/v1/leagues', '/flow/v1/leagues/missing', '/flow/v1/contests?limit=999']) {
      const r = await hit(k, url);
      for (const h of H) expect(r.headers[h], `${url} ${h}`).toMatch(/^\d+$/);
    }
  });
});

describe('atomic across processes', () => {
  it('two API instances with their own Redis connections never over-admit', async () => {
    clock.set(Date.parse('2026-11-21T09:30:00.000Z'));
    const k = await newKey({ rpm: 25, rpd: 1000 });
    const { redis2, second } = await secondInstance();
    try {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => get(i % 2 ? second.app : app(), '/flow/v1/leagues', { 'x-api-key': k.api_key })),
      );
      const admitted = results.filter((r) => r.status === 200);
      expect(admitted).toHaveLength(25);
      expect(results.filter((r) => r.status === 429)).toHaveLength(35);
      // Exact headers across instances and batches: each admitted request saw its own remaining count.
      const remaining = admitted.map((r) => Number(r.headers['x-ratelimit-remaining-minute'])).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 25 }, (_, i) => i));
    } finally {
      await second.close();
      redis2.disconnect();
    }
  });
});

describe('when Redis fails the count', () => {
  it('answers 500 internal_error (never admits uncounted), then recovers', async () => {
    clock.set(Date.parse('2026-11-21T09:40:00.000Z'));
    const k = await newKey({ rpm: 10, rpd: 1000 });
    const minuteKey = s.rt.ks.k('rl', k.workspace_id, 'm', Math.floor(clock.now() / 60_000));
    await s.rt.redis.set(minuteKey, 'corrupt', 'PX', 60_000);
    const failed = await Promise.all([hit(k), hit(k)]);
    for (const r of failed) {
      expect(r.status).toBe(500);
      expect(r.body.error.code).toBe('internal_error');
    }
    await s.rt.redis.del(minuteKey);
    const ok = await hit(k);
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-remaining-minute']).toBe('9');
  });
});

describe('when Redis is unreachable', () => {
  it('answers 503 service_unavailable with Retry-After at once, for cached and uncached callers, and counts nothing', async () => {
    clock.set(Date.parse('2026-11-21T09:50:00.000Z'));
    const k = await newKey({ rpm: 10, rpd: 1000 });
    const stranger = await newKey({ rpm: 10, rpd: 1000 });
    const { redis2, second } = await secondInstance();
    try {
      // The first request caches the principal in process, then Redis goes away under this instance.
      expect((await get(second.app, '/flow/v1/leagues', { 'x-api-key': k.api_key })).status).toBe(200);
      redis2.disconnect();
      const started = Date.now();
      const expectUnavailable = async () => {
        for (const key of [k, stranger]) {
          const r = await get(second.app, '/flow/v1/leagues', { 'x-api-key': key.api_key });
          expect(r.status, JSON.stringify(r.body)).toBe(503);
          expect(r.body.error.code).toBe('service_unavailable');
          expect(r.headers['retry-after']).toBe('1');
        }
      };
      // Right after the drop (the client may not know yet), and once it knows.
      await expectUnavailable();
      while (redis2.status !== 'end') await new Promise((r) => setTimeout(r, 5));
      await expectUnavailable();
      expect(Date.now() - started).toBeLessThan(1_000);
      // Nothing was counted for the refused requests: the other instance sees one request spent.
      expect((await hit(k)).headers['x-ratelimit-remaining-minute']).toBe('8');
    } finally {
      await second.close().catch(() => undefined);
    }
  });
});
