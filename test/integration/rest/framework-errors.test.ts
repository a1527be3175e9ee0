/**
 * What Fastify and Node refuse before any route runs answers with the project's error body
 * {error: {code, message}}, a connection the server closes says `Connection: close`, and a keyed
 * request that matches no route is gated like any other: counted, with the six rate-limit headers
 * (issue 8 item 5). Over a real socket: these answers are written below inject()'s reach.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_HEADERS, startListeningFullStack, type FullStack } from '../../support/full-stack.js';
import { rawGet, rawRequest, type RawAnswer } from '../../support/raw-http.js';

let f: FullStack & { port: number };
let port: number;
beforeAll(async () => {
  f = await startListeningFullStack();
  port = f.port;
}, 60_000);
afterAll(async () => f?.close());

const RATE_HEADERS = RATE_LIMIT_HEADERS;

type Raw = RawAnswer;
const raw = (request: string) => rawRequest(port, request);
const get = (path: string, headers: Record<string, string> = {}) => rawGet(port, path, headers);

function expectErrorBody(r: Raw, status: number, code: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  expect(r.body.error.message.length).toBeGreaterThan(10);
}
const expectRateHeaders = (r: Raw) => {
  for (const h of RATE_HEADERS) expect(r.headers[h], h).toMatch(/^\d+$/);
};

describe('refused before a request exists (the socket level)', () => {
  it('headers over 16 KiB: 431 with the error body and Connection: close', async () => {
    const r = await get('/flow/v1/leagues', { ...f.auth, 'x-padding': 'a'.repeat(20_000) });
    expectErrorBody(r, 431, 'header_fields_too_large');
    expect(r.headers.connection).toBe('close');
    expect(r.closed).toBe(true);
  });
  it('a URL over 16 KiB: 431 the same way', async () => {
    const r = await get('/flow/v1/contests?q=' + 'x'.repeat(20_000), f.auth);
    expectErrorBody(r, 431, 'header_fields_too_large');
    expect(r.headers.connection).toBe('close');
  });
  it('bytes that are not HTTP: 400 invalid_request with Connection: close', async () => {
    const r = await raw('HELLO THERE\r\n\r\n');
    expectErrorBody(r, 400, 'invalid_request');
    expect(r.headers.connection).toBe('close');
    expect(r.closed).toBe(true);
  });
});

describe('refused by the router before any route runs', () => {
  it('a path segment over maxParamLength: 414 uri_too_long, gated and counted', async () => {
    const r = await get('/flow/v1/leagues/' + 'x'.repeat(600), f.auth);
    expectErrorBody(r, 414, 'uri_too_long');
    expectRateHeaders(r);
  });
  it('a path that is not percent-encoded UTF-8: 400 with the error body and rate-limit headers', async () => {
    for (const path of ['/flow/v1/leagues/%E0%A4%A', '/flow/v1/contests/%zz/state', '/flow/v1/leagues/%C0%80']) {
      const r = await get(path, f.auth);
      expectErrorBody(r, 400, 'invalid_parameter');
      expectRateHeaders(r);
    }
  });
  it('without a key, /flow/v1 answers 401 first, as every /flow/v1 path does', async () => {
    const r = await get('/flow/v1/leagues/%E0%A4%A');
    expectErrorBody(r, 401, 'unauthorized');
  });
});

describe('an unknown route', () => {
  it('with a valid key is a counted 404 not_found carrying the six rate-limit headers', async () => {
    const a = await get('/flow/v1/no-such-route', f.auth);
    expectErrorBody(a, 404, 'not_found');
    expectRateHeaders(a);
    const b = await get('/flow/v1/leagues/x/nope', f.auth);
    expectRateHeaders(b);
    // Counted: the workspace's minute budget went down between the two.
    expect(Number(b.headers['x-ratelimit-remaining-minute'])).toBeLessThan(Number(a.headers['x-ratelimit-remaining-minute']));
  });
  it('a wrong method on a known path is the same 404, gated', async () => {
    const r = await raw(`DELETE /flow/v1/leagues HTTP/1.1\r\nHost: x\r\nx-api-key: ${f.auth['x-api-key']}\r\n\r\n`);
    expectErrorBody(r, 404, 'not_found');
    expectRateHeaders(r);
  });
  it('with a broken JSON body is still gated (before the body is read)', async () => {
    const body = '{"a": [';
    const r = await raw(
      `POST /flow/v1/nothing HTTP/1.1\r\nHost: x\r\nx-api-key: ${f.auth['x-api-key']}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body.error.code).toMatch(/^[a-z_]+$/);
    expectRateHeaders(r);
  });
  it('without a key under /flow/v1 is 401; outside /flow/v1 a plain 404 with no headers', async () => {
    expectErrorBody(await get('/flow/v1/no-such-route'), 401, 'unauthorized');
    expectErrorBody(await get('/flow/v1/no-such-route', { 'x-api-key': 'flow_test_not_a_key' }), 401, 'unauthorized');
    const out = await get('/no-such-thing');
    expectErrorBody(out, 404, 'not_found');
    expect(out.headers['x-ratelimit-limit-minute']).toBeUndefined();
  });
});
