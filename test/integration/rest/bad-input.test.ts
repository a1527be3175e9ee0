import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { createKey } from '../../../src/store/pg/keys.js';
import { get, send } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let H: Record<string, string>;
let writes = 0;

// A strict body like buy/preflight/model creation, to prove the shared validation plumbing.
const strictRoute = (app: FastifyInstance) => {
  const Leg = Type.Object({ amount: Type.Number({ exclusiveMinimum: 0 }), mode: Type.Optional(Type.Union([Type.Literal('real'), Type.Literal('paper')])) }, { additionalProperties: false });
  app.post(
    '/flow/v1/__strict',
    { schema: { body: Type.Object({ orders: Type.Array(Leg, { minItems: 1 }), note: Type.Optional(Type.String()) }, { additionalProperties: false }) }, config: {} },
    async () => {
      writes++;
      return { ok: true };
    },
  );
  app.get('/flow/v1/__enum', { schema: { querystring: Type.Object({ sort: Type.Optional(Type.Union([Type.Literal('roi'), Type.Literal('after_fee_roi')])) }) } }, async () => ({ ok: true }));
  app.get('/flow/v1/__boom', async () => {
    throw new Error('secret internals');
  });
};

beforeAll(async () => {
  s = await startStack({ plugins: [strictRoute] });
  const k = await createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'execution', environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 });
  H = { 'x-api-key': k.api_key };
});
afterAll(async () => s?.close());
const app = () => s.built.app;

describe('strict bodies', () => {
  it('an unknown top-level or leg field is 400 unknown_parameter and nothing runs', async () => {
    const top = await send(app(), 'POST', '/flow/v1/__strict', { orders: [{ amount: 1 }], surprise: 1 }, H);
    expect(top.status).toBe(400);
    expect(top.body.error).toMatchObject({ code: 'unknown_parameter', details: { parameter: '/surprise' } });
    const leg = await send(app(), 'POST', '/flow/v1/__strict', { orders: [{ amount: 1, colour: 'red' }] }, H);
    expect(leg.body.error).toMatchObject({ code: 'unknown_parameter', details: { parameter: '/orders/0/colour' } });
    expect(writes).toBe(0);
  });
  it('types are never coerced in a body', async () => {
    const r = await send(app(), 'POST', '/flow/v1/__strict', { orders: [{ amount: '5' }] }, H);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_parameter');
    expect(writes).toBe(0);
  });
  it('unknown enum values are 400 with the allowed values', async () => {
    const r = await send(app(), 'POST', '/flow/v1/__strict', { orders: [{ amount: 5, mode: 'fantasy' }] }, H);
    expect(r.status).toBe(400);
    const q = await get(app(), '/flow/v1/__enum?sort=best', H);
    expect(q.status).toBe(400);
    expect(q.body.error.code).toBe('invalid_parameter');
  });
  it('invalid JSON, an empty body, a wrong content type and a huge body are 4xx with codes', async () => {
    const bad = await send(app(), 'POST', '/flow/v1/__strict', '{"orders": [', H);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_body');
    const empty = await app().inject({ method: 'POST', url: '/flow/v1/__strict', headers: { ...H, 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(400);
    expect(JSON.parse(empty.body).error.code).toBe('invalid_body');
    const xml = await app().inject({ method: 'POST', url: '/flow/v1/__strict', headers: { ...H, 'content-type': 'application/xml' }, payload: '<a/>' });
    expect(xml.statusCode).toBe(415);
    expect(JSON.parse(xml.body).error.code).toBe('unsupported_media_type');
    const huge = await send(app(), 'POST', '/flow/v1/__strict', { orders: [{ amount: 1 }], note: 'x'.repeat(2_000_000) }, H);
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('payload_too_large');
    expect(writes).toBe(0);
  });
  it('a valid body passes', async () => {
    expect((await send(app(), 'POST', '/flow/v1/__strict', { orders: [{ amount: 2.5, mode: 'paper' }] }, H)).status).toBe(200);
    expect(writes).toBe(1);
  });
});

describe('never a 500 for bad input; a bug is a 500 that leaks nothing', () => {
  it('unknown routes are 404 not_found', async () => {
    const r = await get(app(), '/flow/v1/nothing-here', H);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });
  it('odd query strings never reach a 500', async () => {
    const urls = [
      '/flow/v1/contests?limit=1e309',
      '/flow/v1/contests?limit=&q=',
      '/flow/v1/contests?league_id=,,',
      '/flow/v1/contests?start_after=2026-13-45T99:99:99Z',
      '/flow/v1/contests?cursor=%00%01',
      '/flow/v1/contests?status=' + 'a,'.repeat(300),
      '/flow/v1/leagues/' + encodeURIComponent('x'.repeat(400)),
    ];
    for (const u of urls) {
      const r = await app().inject({ method: 'GET', url: u, headers: H });
      expect(r.statusCode, u).toBeGreaterThanOrEqual(400);
      expect(r.statusCode, u).toBeLessThan(500);
      expect(JSON.parse(r.body).error.code, u).toMatch(/^[a-z_]+$/);
    }
  });
  it('a broken percent-encoding is read leniently, never a 500', async () => {
    const r = await app().inject({ method: 'GET', url: '/flow/v1/contests?q=%E0%A4%A', headers: H });
    expect(r.statusCode).toBe(200);
    expect(JSON.parse(r.body).data).toEqual([]);
  });
  it('an unexpected error is internal_error without its message', async () => {
    const r = await get(app(), '/flow/v1/__boom', H);
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe('internal_error');
    expect(JSON.stringify(r.body)).not.toContain('secret internals');
  });
});
