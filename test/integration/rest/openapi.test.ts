/**
 * The OpenAPI document covers every route the service registers, composed as `flow all` composes it
 * (cli/flow.ts): each has an operationId, a success shape and its error answers; `limit` is optional;
 * `servers` is set; the document lints with no errors; and a response schema never changes a
 * response. That real responses match the document is checked on every request of every test stack
 * (test/support/openapi-contract.ts) and by test/e2e/openapi.test.ts against the running service.
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyRoutes } from '../../../api/rest/history/routes.js';
import { liquidityRoutes } from '../../../api/rest/liquidity/routes.js';
import { preflightRoutes } from '../../../api/rest/orders/index.js';
import { simRoutes } from '../../../api/rest/sim/routes.js';
// JSON-RPC, not REST: the MCP endpoint is described in docs/mcp.md, its tools by their REST twins here.
import { MCP_PATH } from '../../../api/mcp/server.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { SimMarket } from '../../../src/sim/index.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let doc: any;

// A route whose handler returns a field its response schema does not list.
const extraField = (app: FastifyInstance) => {
  app.get(
    '/flow/v1/__extra',
    { schema: { hide: true, response: { 200: Type.Object({ kept: Type.Number() }, { additionalProperties: false }) } } },
    async () => ({ kept: 1, unlisted: 'still here', n: '2' }),
  );
};

beforeAll(async () => {
  s = await startStack({
    plugins: [
      (app, ctx) => liquidityRoutes(new HotState(ctx.redis, ctx.ks))(app, ctx),
      historyRoutes,
      simRoutes({ market: new SimMarket({ seed: 1, now: Date.now() }), refresh: async () => undefined }),
      preflightRoutes({ adapters: null }),
      extraField,
    ],
  });
  doc = (await get(s.built.app, '/flow/v1/openapi.json')).body;
});
afterAll(async () => s?.close());

/** A response, or the shared one it references under components/responses. */
const resolve = (response: any) => (response.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response);

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

describe('the OpenAPI document', () => {
  it('documents every route the service registers, each with an operationId, a success shape and its errors', () => {
    const served = s.built.routes.flatMap((r) => [r.method].flat().map((method) => ({ method, url: r.url }))).filter((r) => r.method !== "HEAD" && !r.url.startsWith('/docs') && !r.url.includes('__') && r.url !== MCP_PATH);
    expect(served.length).toBeGreaterThan(25);
    const documented = new Set(operations().map((o) => `${o.method.toUpperCase()} ${o.path}`));
    const missing = served.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{path}')}`).filter((k) => !documented.has(k));
    expect(missing).toEqual([]);
    for (const { path, method, op } of operations()) {
      const where = `${method} ${path}`;
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      const ok = Object.keys(op.responses).filter((c) => c.startsWith('2'));
      expect(ok, where).toHaveLength(1);
      expect(Object.keys(op.responses[ok[0]!].content ?? {}), where).not.toHaveLength(0);
      expect(op.responses['500'], where).toBeDefined();
      if (op.security === undefined) {
        // Behind the gate: 401, 429 with Retry-After, 503, and the six rate-limit headers.
        expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['401', '429', '503']));
        expect(Object.keys(resolve(op.responses['429']).headers), where).toContain('Retry-After');
        expect(Object.keys(op.responses[ok[0]!].headers), where).toEqual([
          'X-RateLimit-Limit-Minute',
          'X-RateLimit-Remaining-Minute',
          'X-RateLimit-Reset-Minute',
          'X-RateLimit-Limit-Day',
          'X-RateLimit-Remaining-Day',
          'X-RateLimit-Reset-Day',
        ]);
      }
      if (op.parameters?.some((p: any) => p.in === 'path')) expect(op.responses['404'] ?? op.responses['400'], where).toBeDefined();
    }
    const ids = operations().map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('the simulator routes need the admin token; health and the document need nothing', () => {
    for (const { path, op } of operations()) {
      if (path.startsWith('/sim/v1/')) {
        expect(op.security, path).toEqual([{ adminToken: [] }]);
        expect(op.responses['401'], path).toBeDefined();
      }
      if (!path.startsWith('/flow/v1/') || path === '/flow/v1/openapi.json') {
        if (!path.startsWith('/sim/')) expect(op.security, path).toEqual([]);
      }
    }
    expect(doc.components.securitySchemes.adminToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Admin-Token' });
  });

  it('limit has a default and is never required; servers is set', () => {
    const limits = operations().flatMap(({ op }) => (op.parameters ?? []).filter((p: any) => p.name === 'limit'));
    expect(limits.length).toBeGreaterThanOrEqual(5);
    for (const p of limits) {
      expect(p.required).toBe(false);
      expect(p.schema.default).toEqual(expect.any(Number));
    }
    expect(doc.servers).toEqual([expect.objectContaining({ url: expect.any(String) })]);
  });

  it('lints clean (no errors) under Redocly’s recommended rules', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it('a response schema documents a response and never changes it (no field dropped, no type coerced)', async () => {
    const k = await createKey(s.rt.pool, s.rt.gate, { plan: 'free', keyType: 'data', environment: 'test' });
    const r = await get(s.built.app, '/flow/v1/__extra', { 'x-api-key': k.api_key });
    expect(r.body).toEqual({ kept: 1, unlisted: 'still here', n: '2' });
  });
});
