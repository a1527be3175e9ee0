/** Helpers for end-to-end tests against a running service (test/support/service.ts). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Service } from './service.js';

export const ADMIN_TOKEN = 'test-admin';

export function demoKey(svc: Service): string {
  return JSON.parse(readFileSync(path.join(svc.env.FLOW_DATA_DIR!, 'demo-key.json'), 'utf8')).api_key;
}

export function client(svc: Service, key: string) {
  return {
    async api(url: string, init: RequestInit = {}) {
      const r = await fetch(svc.base + url, { ...init, headers: { 'x-api-key': key, ...(init.headers ?? {}) } });
      return { status: r.status, body: (await r.json()) as any };
    },
    async sim(pathname: string, body: unknown) {
      const r = await fetch(svc.base + pathname, { method: 'POST', headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await r.json()) as any;
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
