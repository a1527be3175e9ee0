/**
 * Hostile input against every route the app serves (issue 8 item 6). The routes come from the app
 * itself (BuiltApp.routes, filled by an onRoute hook), so a route added later is fuzzed without
 * touching this file. For each route fast-check sends NUL bytes, 10k-character strings, unicode
 * (lone surrogates, right-to-left marks), injection strings, huge and negative numbers, arrays for
 * scalars, unknown fields, broken JSON and wrong content types, mixed with plausible values so some
 * requests reach the stores, and asserts of every answer:
 *   - never a 5xx;
 *   - a non-2xx carries {error: {code, message}};
 *   - an answer to a valid key on a gated path carries the six X-RateLimit-* headers.
 * Over-long paths (431) and broken percent-encoding go over a real socket as well.
 * The seed is fixed (FLOW_FUZZ_SEED to change it); fast-check prints it and the shrunk request on failure.
 */
import fc from 'fast-check';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_HEADERS, startListeningFullStack, type FullStack } from '../../support/full-stack.js';
import { rawGet } from '../../support/raw-http.js';

const SEED = Number(process.env.FLOW_FUZZ_SEED ?? 20_261_120);
const RUNS = Number(process.env.FLOW_FUZZ_RUNS ?? 100);
const RATE_HEADERS = RATE_LIMIT_HEADERS;

let f: FullStack & { port: number };
let port: number;
beforeAll(async () => {
  f = await startListeningFullStack();
  port = f.port;
}, 60_000);
afterAll(async () => f?.close());

// ---- values ------------------------------------------------------------------------------------

const HOSTILE_STRINGS = [
  '\u0000', 'a\u0000b', 'ct_1\u0000', '\u0000'.repeat(3), '%00', 'x'.repeat(10_000), '\uD800', '\uDFFF', 'a\uD83D', '\u202Eevil', '\u200B', '😀', 'é', '',
  ' ', ',', ',,,', "' OR 1=1 --", "'; DROP TABLE api_keys; --", '"}', '\\', '${7*7}', '{{7*7}}', '<script>alert(1)</script>',
  '%', '%25', '%E0%A4%A', 'null', 'undefined', 'NaN', 'Infinity', '-Infinity', '1e309', '-1', '0', '1.5', '9007199254740993',
  '99999999999999999999999', '-9007199254740993', 'true', '[]', '{}', '9999-12-31T23:59:59Z', '0000-01-01T00:00:00Z',
  '2026-02-30T00:00:00Z', '\r\nX-Injected: 1', 'a\tb',
];
const HOSTILE_NUMBERS = [0, -0, -1, 1e308, -1e308, 2 ** 53 + 2, -(2 ** 53) - 2, 1.5, Number.MIN_VALUE, 9_999_999_999_999, 1e20, 0.5, 1, 2];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

/** Values a route would accept for a field of this name, so some requests get past validation. */
function plausible(name: string): fc.Arbitrary<unknown> {
  const positions = f.market.catalog.positions.slice(0, 3).map((p) => p.position_hash);
  const contests = ['ct_1', 'ct_t', f.market.catalog.positions[0]!.contest_id];
  const now = Date.now();
  if (/hash/.test(name)) return fc.constantFrom(...positions);
  if (/contest_ids/.test(name)) return fc.constant(contests);
  if (/contest|^id$/.test(name)) return fc.constantFrom(...contests);
  if (/partner/.test(name)) return fc.constantFrom('sim_exchange', 'sim_book01', 'practice');
  if (/league/.test(name)) return fc.constantFrom('lg_fb', 'lg_tn');
  if (/account/.test(name)) return fc.constant('acct_fuzz');
  if (/participant/.test(name)) return fc.constantFrom('pt_1', 'nobody');
  if (/price/.test(name)) return fc.constantFrom(0.5, 0.01, 0.99);
  if (/available|size|balance|notional/.test(name)) return fc.constantFrom(1, 100, 0);
  if (/limit/.test(name)) return fc.constantFrom(1, 50, 200);
  if (/^(from|since)$/.test(name)) return fc.constantFrom(now - 3_600_000, new Date(now - 60_000).toISOString());
  if (/^(to|until)$/.test(name)) return fc.constant(now);
  if (/executed_at|start_/.test(name)) return fc.constantFrom(now - 1_000, new Date(now).toISOString());
  if (/taker_action/.test(name)) return fc.constantFrom('buy', 'sell');
  if (/resolution/.test(name)) return fc.constantFrom('auto', '1m', 'tick');
  if (/status/.test(name)) return fc.constantFrom('open', 'closed', 'live', 'connected');
  if (/frozen|is_block/.test(name)) return fc.boolean();
  return fc.constantFrom('ab', 'x');
}

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(...HOSTILE_NUMBERS),
  fc.constantFrom(null, true, false, [], {}, [1, 2], { a: 1 }, Array.from({ length: 1_000 }, (_, i) => i)),
  fc.constant(JSON.parse('['.repeat(200) + ']'.repeat(200))),
  fc.array(hostileString, { maxLength: 3 }),
);

/** Percent-encodes UTF-8 bytes (a lone surrogate becomes U+FFFD, as any client would send it). */
const enc = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
const asText = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v));

// ---- requests ----------------------------------------------------------------------------------

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** Sent with the valid key. */
  keyed: boolean;
}

function fieldsOf(schema: unknown): string[] {
  const s = schema as { properties?: Record<string, unknown>; anyOf?: unknown[]; oneOf?: unknown[] } | undefined;
  if (!s) return [];
  return [...new Set([...Object.keys(s.properties ?? {}), ...(s.anyOf ?? s.oneOf ?? []).flatMap(fieldsOf)])];
}

/**
 * One request: every path parameter, query field and body field starts from a plausible value, then
 * one to three of these slots (or unknown ones) take a hostile value, so the hostile value meets the
 * code behind validation as often as validation itself. Sometimes the whole body is broken instead.
 */
function requests(route: RouteOptions, method: string): fc.Arbitrary<FuzzRequest> {
  const schema = (route.schema ?? {}) as { querystring?: unknown; body?: unknown };
  const params = [...route.url.matchAll(/:([A-Za-z_]+)|\*/g)].map((m) => m[1] ?? '*');
  const queryFields = fieldsOf(schema.querystring);
  const bodyFields = fieldsOf(schema.body);
  const hasBody = method !== 'GET' && method !== 'HEAD';
  type Slot = { kind: 'param' | 'query' | 'body'; name: string };
  const slots: Slot[] = [
    ...params.map((name): Slot => ({ kind: 'param', name })),
    ...queryFields.map((name): Slot => ({ kind: 'query', name })),
    ...(hasBody ? bodyFields.map((name): Slot => ({ kind: 'body', name })) : []),
    { kind: 'query', name: 'unknown_field' },
    ...(hasBody ? [{ kind: 'body' as const, name: 'unknown_field' }] : []),
  ];
  const base = fc.record({
    params: fc.tuple(...params.map((p) => plausible(p).map((v) => enc(asText(v))))),
    query: fc.tuple(...queryFields.map((q) => fc.option(plausible(q), { nil: undefined }))),
    body: fc.tuple(...bodyFields.map((b) => fc.option(plausible(b), { nil: undefined }))),
  });
  const mutation = fc.record({
    slot: fc.constantFrom(...slots),
    value: hostileJson,
    /** Path segments and query values: also raw broken encodings and over-long segments. */
    rawSegment: fc.option(fc.constantFrom('%E0%A4%A', '%zz', '%C0%80', '%ED%A0%80', 'x'.repeat(600), '%2F', 'a%2Cb', '%00'), { nil: undefined, freq: 4 }),
    asArray: fc.boolean(),
  });
  const oddBody = fc.option(
    fc.oneof(
      fc.constantFrom('{', '{"a":', 'nul', '[]', '"str"', '1e400', '\u0000', '', '{"a":1}{"b":2}', '\uFEFF{}').map((payload) => ({ type: 'application/json', payload })),
      fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/jsonx').map((type) => ({ type, payload: '{"a":1}' })),
      hostileJson.map((v) => ({ type: 'application/json', payload: JSON.stringify(v) ?? 'null' })),
    ),
    { nil: undefined, freq: 3 },
  );
  const auth = fc.constantFrom('key', 'key', 'key', 'key', 'none', 'bad');
  /** A near miss of the route (an extra segment, another method): no route matches it. */
  const miss = fc.option(fc.constantFrom('/nope', '/x/../y', '%2F..%2F', '.json', '/'), { nil: undefined, freq: 8 });
  const otherMethod = fc.option(fc.constantFrom('DELETE', 'PUT', 'PATCH', 'OPTIONS'), { nil: undefined, freq: 10 });
  return fc.record({ base, mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }), oddBody, auth, miss, otherMethod }).map(({ base: b, mutations, oddBody: odd, auth: a, miss: suffix, otherMethod: m2 }) => {
    const segs = [...b.params];
    const query: [string, string, boolean][] = queryFields.flatMap((name, i) => (b.query[i] === undefined ? [] : [[name, asText(b.query[i]), false] as [string, string, boolean]]));
    const body: Record<string, unknown> = Object.fromEntries(bodyFields.flatMap((name, i) => (b.body[i] === undefined ? [] : [[name, b.body[i]]])));
    for (const m of mutations) {
      const text = asText(m.value);
      if (m.slot.kind === 'param') segs[params.indexOf(m.slot.name)] = m.rawSegment ?? enc(text);
      else if (m.slot.kind === 'query') {
        const kept = query.filter(([k]) => k !== m.slot.name);
        const values = m.asArray ? [text, 'x'] : [text];
        query.length = 0;
        query.push(...kept, ...values.map((v): [string, string, boolean] => [m.slot.name, m.rawSegment ?? v, m.rawSegment !== undefined]));
      } else body[m.slot.name] = m.asArray ? [m.value] : m.value;
    }
    let i = 0;
    const path = route.url.replace(/:([A-Za-z_]+)|\*/g, () => segs[i++]!) + (suffix ?? '');
    const qs = query.map(([k, v, raw]) => `${enc(k)}=${raw ? v : enc(v)}`).join('&');
    const headers: Record<string, string> = route.url.startsWith('/sim/v1') ? { ...f.admin } : {};
    if (a === 'key') Object.assign(headers, f.auth);
    if (a === 'bad') headers['x-api-key'] = 'flow_test_' + 'A'.repeat(32);
    let payload: string | undefined;
    if (hasBody) {
      const sent = odd ?? { type: 'application/json', payload: JSON.stringify(body) };
      headers['content-type'] = sent.type;
      payload = sent.payload;
    }
    return { method: m2 ?? method, url: qs ? `${path}?${qs}` : path, headers, payload, keyed: a === 'key' };
  });
}

// ---- checks ------------------------------------------------------------------------------------

const GATED = /^\/flow\/v1(?:[/?]|$)/;
const isPublic = (url: string) => f.stack.built.routes.some((r) => r.config?.public && r.url === url.split('?')[0]);

function check(req: { method: string; url: string; keyed: boolean }, status: number, headers: Record<string, unknown>, body: string): void {
  const what = `${req.method} ${req.url.slice(0, 300)} → ${status} ${body.slice(0, 300)}`;
  expect(status, what).toBeLessThan(500);
  if (status >= 400 && req.method !== 'HEAD') {
    let parsed: any;
    expect(() => (parsed = JSON.parse(body)), what).not.toThrow();
    expect(parsed, what).toEqual({ error: expect.objectContaining({ code: expect.stringMatching(/^[a-z][a-z_]*$/), message: expect.any(String) }) });
  }
  if (req.keyed && GATED.test(req.url) && !isPublic(req.url)) {
    for (const h of RATE_HEADERS) expect(headers[h], `${h} on ${what}`).toBeDefined();
  }
}

/** (method, url) pairs to fuzz; HEAD twins of GET routes answer the same way and are left out. */
function targets(): { route: RouteOptions; method: string }[] {
  const out: { route: RouteOptions; method: string }[] = [];
  for (const route of f.stack.built.routes) {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    for (const method of methods) out.push({ route, method });
  }
  return out;
}

describe('every route under hostile input', () => {
  it('the app lists its routes, the liquidity, history and sim routes among them', () => {
    const urls = targets().map((t) => `${t.method} ${t.route.url}`);
    for (const u of ['GET /flow/v1/contests/:id/liquidity', 'GET /flow/v1/trades', 'GET /flow/v1/contests/:id/price-history', 'POST /sim/v1/trades', 'GET /flow/v1/leagues/:id', 'GET /flow/v1/auth/me']) {
      expect(urls).toContain(u);
    }
    expect(urls.length).toBeGreaterThan(25);
  });

  it('never answers 5xx, always the error body, rate-limit headers for a valid key (inject)', async () => {
    for (const [n, { route, method }] of targets().entries()) {
      // A seed per route (printed by fast-check on failure with the shrunk request): reproducible,
      // and each route sees its own sequence.
      await fc.assert(
        fc.asyncProperty(requests(route, method), async (req) => {
          const r = await f.stack.built.app.inject({ method: req.method as 'GET', url: req.url, headers: req.headers, ...(req.payload !== undefined ? { payload: req.payload } : {}) });
          check(req, r.statusCode, r.headers, r.body);
        }),
        { seed: SEED + n, numRuns: RUNS, endOnFailure: true },
      );
    }
  }, 300_000);

  it('over-long paths and broken percent-encodings over a real socket', async () => {
    for (const { route, method } of targets()) {
      if (method !== 'GET') continue;
      const filled = (seg: string) => route.url.replace(/:([A-Za-z_]+)|\*/g, seg);
      const hasParam = /:|\*/.test(route.url);
      const cases = [
        hasParam ? filled('x'.repeat(20_000)) : `${route.url}?q=${'x'.repeat(20_000)}`,
        hasParam ? filled('x'.repeat(600)) : `${route.url}/${'x'.repeat(600)}`,
        hasParam ? filled('%E0%A4%A') : `${route.url}/%E0%A4%A`,
        `${filled('ab')}?q=%E0%A4%A&limit=%zz`,
      ];
      for (const path of cases) {
        const keyed = !route.url.startsWith('/sim/v1');
        const r = await rawGet(port, path, keyed ? f.auth : f.admin);
        const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
        check({ method: 'GET', url: path, keyed: keyed && r.status !== 431 }, r.status, r.headers, text);
        if (r.status === 431) expect(r.headers.connection).toBe('close');
      }
    }
  }, 120_000);
});
