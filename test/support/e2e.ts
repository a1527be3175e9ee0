/**
 * Helpers for end-to-end tests against a running service (test/support/service.ts). Every response
 * through client() is held to the OpenAPI document the service serves.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { assertConforms, OpenApiContract } from './openapi-contract.js';
import type { Service } from './service.js';

export const ADMIN_TOKEN = 'test-admin';

export function demoKey(svc: Service): string {
  return JSON.parse(readFileSync(path.join(svc.env.FLOW_DATA_DIR!, 'demo-key.json'), 'utf8')).api_key;
}

const contracts = new WeakMap<Service, Promise<OpenApiContract>>();

/** The document the running service serves, fetched once per service. */
export function contractOf(svc: Service): Promise<OpenApiContract> {
  let c = contracts.get(svc);
  if (!c) {
    c = fetch(`${svc.base}/flow/v1/openapi.json`).then(async (r) => new OpenApiContract((await r.json()) as Record<string, unknown>));
    contracts.set(svc, c);
  }
  return c;
}

/** fetch() whose response is held to the service's OpenAPI document; the body is read as text. */
export async function checkedFetch(svc: Service, url: string, init: RequestInit = {}): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const r = await fetch(svc.base + url, init);
  const text = await r.text();
  const headers = Object.fromEntries(r.headers.entries());
  assertConforms(await contractOf(svc), { method: init.method ?? 'GET', url, status: r.status, headers, body: text });
  return { status: r.status, headers, text };
}

export function client(svc: Service, key: string) {
  return {
    async api(url: string, init: RequestInit = {}) {
      const r = await checkedFetch(svc, url, { ...init, headers: { 'x-api-key': key, ...(init.headers ?? {}) } });
      return { status: r.status, body: JSON.parse(r.text) as any };
    },
    async sim(pathname: string, body: unknown) {
      const r = await checkedFetch(svc, pathname, { method: 'POST', headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = JSON.parse(r.text) as any;
      if (r.status !== 200) throw new Error(`${pathname} → ${r.status} ${JSON.stringify(json)}`);
      return json;
    },
  };
}

/** Polls until `check` passes (the pipeline is asynchronous); returns the last value either way. */
export async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 8_000): Promise<T> {
  const until = Date.now() + ms;
  let last: T = await read();
  while (!check(last)) {
    if (Date.now() > until) return last;
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
  return last;
}

/** A contest with a total line (over and under) that every quoting venue lists. */
export async function findTotalLine(c: ReturnType<typeof client>): Promise<{ contestId: string; over: any; under: any }> {
  const contests = (await c.api('/flow/v1/contests?limit=200')).body.data.filter((x: any) => x.tags.home_team);
  for (const ct of contests) {
    const liq = await eventually(
      () => c.api(`/flow/v1/contests/${ct.id}/liquidity`),
      (r) => r.body.data.length > 0,
    );
    const totals = liq.body.data.filter((p: any) => p.market_key === 'total' && p.partner_liquidities.length === 5);
    for (const o of totals.filter((p: any) => p.side_key === 'over')) {
      const u = totals.find((p: any) => p.side_key === 'under' && p.variable === o.variable);
      if (u) return { contestId: ct.id, over: o, under: u };
    }
  }
  throw new Error('no total line quoted by all five quoting venues');
}
