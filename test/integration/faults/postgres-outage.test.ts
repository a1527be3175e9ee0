/**
 * Issue 8 item 13, PostgreSQL: the whole service (the real CLI) on a private PostgreSQL that is
 * SIGKILLed while requests run, then started again:
 * - a key not yet cached (its record must come from PostgreSQL) answers 503 service_unavailable
 *   with Retry-After, quickly, not 500; so does a catalog read that is not cached;
 * - a cached key keeps working (its record is in Redis);
 * - once PostgreSQL is back, the uncached key is served without restarting the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, demoKey } from '../../support/e2e.js';
import { runCli } from '../../support/cli.js';
import { startPrivatePostgres, until, type PrivatePostgres } from '../../support/private-servers.js';
import { startService, type Service } from '../../support/service.js';

let pg: PrivatePostgres;
let svc: Service;
let cachedKey: string;
let freshKey: string;
let contestId: string;

async function get(url: string, key: string): Promise<{ status: number; ms: number; code: string | null; retryAfter: string | null }> {
  const start = Date.now();
  const r = await fetch(svc.base + url, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(15_000) });
  const body = (await r.json()) as { error?: { code?: string } };
  return { status: r.status, ms: Date.now() - start, code: body.error?.code ?? null, retryAfter: r.headers.get('retry-after') };
}

beforeAll(async () => {
  pg = await startPrivatePostgres();
  svc = await startService({ DATABASE_URL: pg.url('flow_fault'), FLOW_ADMIN_TOKEN: ADMIN_TOKEN, FLOW_JWT_SECRET: 'test-jwt-secret' });
  cachedKey = demoKey(svc);
  const created = await runCli(['keys', 'create', '--plan', 'scale', '--type', 'data', '--env', 'test', '--json'], svc.env);
  expect(created.code, created.stderr).toBe(0);
  freshKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  const list = await get('/flow/v1/contests?limit=1', cachedKey);
  expect(list.status).toBe(200);
  contestId = ((await (await fetch(`${svc.base}/flow/v1/contests?limit=1`, { headers: { 'x-api-key': cachedKey } })).json()) as { data: { id: string }[] }).data[0]!.id;
}, 180_000);

afterAll(async () => {
  await pg?.start().catch(() => undefined);
  await svc?.cleanup().catch(() => undefined);
  await pg?.stop();
}, 60_000);

describe('PostgreSQL killed and restarted', () => {
  it('answers 503 service_unavailable, not 500, for a key not yet cached and for an uncached catalog read', async () => {
    // Load with the cached key while PostgreSQL goes away.
    let running = true;
    const statuses: number[] = [];
    const loop = (async () => {
      while (running) statuses.push((await get('/flow/v1/contests?limit=1', cachedKey)).status);
    })();
    try {
      await until(() => statuses.length >= 5, 10_000, 'traffic before the kill');
      await pg.kill();

      const fresh = await get('/flow/v1/contests?limit=1', freshKey);
      expect(fresh.status).toBe(503);
      expect(fresh.code).toBe('service_unavailable');
      expect(Number(fresh.retryAfter)).toBeGreaterThan(0);
      expect(fresh.ms, 'ms to answer the uncached key').toBeLessThanOrEqual(3_000);

      const contest = await get(`/flow/v1/contests/${encodeURIComponent(contestId)}`, cachedKey);
      expect(contest.status).toBe(503);
      expect(contest.code).toBe('service_unavailable');
      expect(contest.ms).toBeLessThanOrEqual(3_000);
    } finally {
      running = false;
      await loop.catch(() => undefined);
    }
    // The cached key never depended on PostgreSQL: nothing it asked for failed.
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 60_000);

  it('serves the uncached key again once PostgreSQL is back', async () => {
    await pg.start();
    let last = await get('/flow/v1/contests?limit=1', freshKey);
    await until(
      async () => {
        last = await get('/flow/v1/contests?limit=1', freshKey);
        return last.status === 200;
      },
      15_000,
      `the uncached key served after the restart (last ${last.status})`,
      200,
    );
    expect(last.status).toBe(200);
    expect((await get(`/flow/v1/contests/${encodeURIComponent(contestId)}`, cachedKey)).status).toBe(200);
  }, 60_000);
});
