import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPlayerJwt } from '../../src/jwt.js';
import { runCli } from '../support/cli.js';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let key: string;
const j = async (url: string, headers: Record<string, string> = {}) => {
  const r = await fetch(svc.base + url, { headers: { 'x-api-key': key, ...headers } });
  return { status: r.status, body: (await r.json()) as any, headers: r.headers };
};

const SECRET_FILES = ['admin-token', 'jwt-secret', 'cursor-secret', 'kit-watermark-secret', 'ai-key-secret'];
const secretFiles = () => SECRET_FILES.map((f) => readFileSync(path.join(svc.env.FLOW_DATA_DIR!, f), 'utf8'));
let playerToken: string;

beforeAll(async () => {
  // As an operator starts it: no secret in the environment (empty counts as unset).
  svc = await startService({ FLOW_ADMIN_TOKEN: '', FLOW_JWT_SECRET: '', FLOW_CURSOR_SECRET: '' });
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

  it('generates its secrets on first start, mode 0600, and prints the admin token once', () => {
    for (const f of SECRET_FILES) expect(statSync(path.join(svc.env.FLOW_DATA_DIR!, f)).mode & 0o777, f).toBe(0o600);
    const all = secretFiles().map((v) => v.trim());
    const admin = all[0];
    expect(new Set(all).size).toBe(SECRET_FILES.length);
    for (const v of all) expect(v.length).toBeGreaterThanOrEqual(43);
    const shown = svc.logs.filter((l) => 'admin_token' in l);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.admin_token).toBe(admin);
  });

  it('refuses a JWT signed with the old built-in secret and accepts one minted by flow jwt', async () => {
    const account = JSON.parse(readFileSync(path.join(svc.env.FLOW_DATA_DIR!, 'demo-key.json'), 'utf8')).router_account_id as string;
    const forged = signPlayerJwt('dev-jwt-secret-change-me', account, 600);
    const refused = await fetch(svc.base + '/flow/v1/auth/me', { headers: { authorization: `Bearer ${forged}` } });
    expect(refused.status).toBe(401);
    // The real CLI, as a separate process, against the same data dir and no FLOW_JWT_SECRET.
    const minted = await runCli(['jwt', '--account', account, '--ttl', '600'], svc.env);
    expect(minted.code, minted.stderr).toBe(0);
    playerToken = minted.stdout.trim();
    const me = await fetch(svc.base + '/flow/v1/auth/me', { headers: { authorization: `Bearer ${playerToken}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).data).toMatchObject({ auth_method: 'jwt', router_account_id: account });
  });

  it('guards /sim/v1 with the generated admin token, not the old default', async () => {
    const state = (token?: string) => fetch(svc.base + '/sim/v1/state', { headers: token === undefined ? {} : { 'x-admin-token': token } });
    expect((await state()).status).toBe(401);
    expect((await state('dev-admin')).status).toBe(401);
    expect((await state(secretFiles()[0]!.trim())).status).toBe(200);
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

  it('stops cleanly on SIGTERM and keeps the same demo key and secrets on restart', async () => {
    const before = secretFiles();
    expect(await svc.stop('SIGTERM')).toBe(0);
    expect(svc.logs.some((l) => l.msg === 'stopped')).toBe(true);
    const again = await startService({}, svc);
    try {
      expect(again.logs.filter((l) => typeof l.api_key === 'string')).toHaveLength(0);
      expect(again.logs.filter((l) => 'admin_token' in l)).toHaveLength(0);
      expect(secretFiles()).toEqual(before);
      const r = await fetch(again.base + '/flow/v1/leagues', { headers: { 'x-api-key': key } });
      expect(r.status).toBe(200);
      // A token minted against the first start still verifies: the JWT secret was reused.
      const me = await fetch(again.base + '/flow/v1/auth/me', { headers: { authorization: `Bearer ${playerToken}` } });
      expect(me.status).toBe(200);
    } finally {
      expect(await again.stop('SIGTERM')).toBe(0);
    }
  }, 90_000);
});
