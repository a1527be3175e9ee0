import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let key: string;
const j = async (url: string, headers: Record<string, string> = {}) => {
  const r = await fetch(svc.base + url, { headers: { 'x-api-key': key, ...headers } });
  return { status: r.status, body: (await r.json()) as any, headers: r.headers };
};

beforeAll(async () => {
  svc = await startService();
  key = JSON.parse(readFileSync(path.join(svc.env.FLOW_DATA_DIR!, 'demo-key.json'), 'utf8')).api_key;
}, 90_000);
afterAll(async () => svc?.cleanup(), 60_000);

describe('the service as an operator starts it', () => {
  it('prints the demo key once in the log and writes demo-key.json', async () => {
    const demo = svc.logs.filter((l) => typeof l.api_key === 'string');
    expect(demo).toHaveLength(1);
    expect(demo[0]!.api_key).toBe(key);
    const me = await j('/flow/v1/auth/me');
    expect(me.body.data).toMatchObject({ plan: 'scale', environment: 'test', can_execute: true, current_key: { key_type: 'execution' } });
  });

  it('is healthy and ready, with metrics', async () => {
    expect((await fetch(svc.base + '/healthz')).status).toBe(200);
    const ready = await fetch(svc.base + '/readyz');
    expect(ready.status).toBe(200);
    expect(await (await fetch(svc.base + '/metrics')).text()).toContain('process_cpu_seconds_total');
  });

  it('serves the simulator catalog seeded at first start', async () => {
    const leagues = (await j('/flow/v1/leagues')).body.data;
    const types = new Set(leagues.map((l: any) => l.participant_type));
    expect(types).toEqual(new Set(['team', 'athlete', null]));
    const partners = (await j('/flow/v1/partners')).body.data;
    const ids = partners.map((p: any) => p.partner_id);
    expect(ids).toEqual(expect.arrayContaining(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice']));
    for (const p of partners) {
      expect(Object.keys(p.order_config).sort()).toEqual(
        ['amount_increment', 'cancel_supported', 'credentials_allowed', 'full_fill_always_allowed', 'max_order_amount', 'max_price', 'min_order_amount', 'min_price', 'orders_allowed', 'price_format', 'price_submitted', 'price_tick', 'supported_order_types', 'whole_contracts'].sort(),
      );
      expect(Array.isArray(p.credential_fields)).toBe(true);
    }
    expect(partners.find((p: any) => p.partner_id === 'practice').internal_book).toBe(true);
    expect(partners.find((p: any) => p.partner_id === 'sim_quotes').orders_allowed).toBe(false);
    const contests = (await j('/flow/v1/contests?limit=200&status=open,closed')).body.data;
    const tournament = contests.find((c: any) => c.type === 'tournament');
    expect(tournament).toBeDefined();
    const children = (await j(`/flow/v1/contests?parent_contest_id=${tournament.id}&status=open,closed`)).body.data;
    expect(children.length).toBeGreaterThan(0);
    const h2h = contests.find((c: any) => c.tags.home_team);
    expect(h2h.tags.home_team).toMatchObject({ abbr: expect.any(String), name: expect.any(String), full_label: expect.any(String), market_name: expect.any(String) });
    const markets = (await j(`/flow/v1/contests/${h2h.id}/markets`)).body.data;
    expect(markets.map((m: any) => m.key)).toEqual(expect.arrayContaining(['moneyline', 'spread', 'total']));
  });

  it('stops cleanly on SIGTERM and keeps the same demo key on restart', async () => {
    expect(await svc.stop('SIGTERM')).toBe(0);
    expect(svc.logs.some((l) => l.msg === 'stopped')).toBe(true);
    const again = await startService({}, svc);
    try {
      expect(again.logs.filter((l) => typeof l.api_key === 'string')).toHaveLength(0);
      const r = await fetch(again.base + '/flow/v1/leagues', { headers: { 'x-api-key': key } });
      expect(r.status).toBe(200);
    } finally {
      expect(await again.stop('SIGTERM')).toBe(0);
    }
  }, 90_000);
});
