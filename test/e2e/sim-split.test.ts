/**
 * /sim/v1 when the API and the simulator run in separate processes (docs/simulator.md "Where the
 * simulator runs"): two processes of the real CLI share only PostgreSQL and Redis. A runs ingest
 * (the simulator) and compute; B runs api and gateway, no simulator. Every /sim/v1 call made to B
 * goes over Redis to A and comes back with A's answer; the change flows through A's pipeline to the
 * REST reads and the stream B serves. With A stopped, B says so (503) instead of hanging.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWs, type WsClient } from '../../bench/support/ws-client.js';
import { ADMIN_TOKEN, checkedFetch, client, eventually, findTotalLine } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';
import { removeDataDir } from '../support/stack.js';
import { tempDir } from '../support/scratch.js';

let a: Service;
let b: Service;
let bDir: string;
let c: ReturnType<typeof client>;
let demo: { api_key: string; router_account_id: string };
let ws: WsClient | null = null;

/** A /sim/v1 call to B, its answer held to the OpenAPI document; any status. */
async function sim(method: 'GET' | 'POST', pathname: string, body?: unknown) {
  const r = await checkedFetch(b, pathname, {
    method,
    headers: { 'x-admin-token': ADMIN_TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, headers: r.headers, body: JSON.parse(r.text) as any };
}

beforeAll(async () => {
  a = await startService({ FLOW_ROLES: 'ingest,compute' });
  bDir = tempDir('test-api');
  b = await startService({ ...a.env, FLOW_ROLES: 'api,gateway', FLOW_DATA_DIR: bDir });
  demo = JSON.parse(readFileSync(path.join(a.env.FLOW_DATA_DIR!, 'demo-key.json'), 'utf8'));
  c = client(b, demo.api_key);
}, 120_000);

afterAll(async () => {
  await ws?.close().catch(() => undefined);
  await b?.stop();
  removeDataDir(bDir);
  await a?.cleanup();
}, 60_000);

describe('the API in one process, the simulator in another', () => {
  it('runs no simulator in the API process, and answers GET /sim/v1/state from the other', async () => {
    expect(a.logs.find((l) => l.msg === 'flow started')).toMatchObject({ roles: ['ingest', 'compute'] });
    expect(b.logs.find((l) => l.msg === 'flow started')).toMatchObject({ roles: ['api', 'gateway'] });
    const r = await sim('GET', '/sim/v1/state');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ seed: 1, frozen: false });
    expect(r.body.data.venues.map((v: any) => v.partner_id)).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice']);
  });

  it('freezes the market there', async () => {
    expect((await sim('POST', '/sim/v1/freeze', { frozen: true })).body.data).toEqual({ frozen: true });
    expect((await sim('GET', '/sim/v1/state')).body.data.frozen).toBe(true);
  });

  it("sets a venue's quote there, and it flows through that process's pipeline to B's REST reads", async () => {
    const line = await findTotalLine(c);
    const set = await sim('POST', '/sim/v1/quotes', { partner_id: 'sim_exchange', position_hash: line.over.position_hash, price: 0.37, available: 1234 });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ partner_id: 'sim_exchange', position_hash: line.over.position_hash, levels: [{ price: 0.37, available: 1234 }] });
    const quoteOf = (r: any) => r.body.data.find((p: any) => p.position_hash === line.over.position_hash)?.partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange');
    const r = await eventually(() => c.api(`/flow/v1/contests/${line.contestId}/liquidity`), (x) => quoteOf(x)?.price === 0.37, 15_000);
    expect(quoteOf(r)).toMatchObject({ price: 0.37, available: 1234 });
  });

  it("emits a trade print there that reaches B's stream", async () => {
    const line = await findTotalLine(c);
    ws = await connectWs(`ws://127.0.0.1:${b.streamPort}/flow/v1/stream?api_key=${demo.api_key}`);
    await ws.next((m) => m.type === 'connected');
    expect((await ws.request({ action: 'subscribe', channel: 'trades', contest_ids: [line.contestId] })).type).toBe('subscribed');
    const t = await sim('POST', '/sim/v1/trades', { partner_id: 'sim_exchange', position_hash: line.over.position_hash, price: 0.41, size_contracts: 30, taker_action: 'buy' });
    expect(t.status).toBe(200);
    const m = await ws.next((x) => x.type === 'trades' && x.trades.some((p: any) => p.venue_trade_id === t.body.data.venue_trade_id), 15_000);
    expect(m.trades.find((p: any) => p.venue_trade_id === t.body.data.venue_trade_id)).toMatchObject({ partner_id: 'sim_exchange', price: 0.41 });
  });

  it("connects a venue to an account there and records it in B's store, with the balance it read", async () => {
    const r = await sim('POST', `/sim/v1/accounts/${demo.router_account_id}/connect`, { partner_id: 'sim_book01', balance: 750 });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ router_account_id: demo.router_account_id, partner_id: 'sim_book01', balance: 750, credential_status: 'connected', scopes: ['balance:read', 'history:read', 'trade:execute'] });
    const partners = await c.api('/flow/v1/auth/account/partners');
    // The venue's balance as the simulator reported it at connect: the snapshot B recorded.
    expect(partners.body.data.account_partners.find((p: any) => p.partner_id === 'sim_book01')).toMatchObject({ balance: 750, balance_source: 'venue_api' });
  });

  it("carries the simulator's refusals back with their codes; a malformed body is refused by B itself", async () => {
    const line = await findTotalLine(c);
    const unknown = await sim('POST', '/sim/v1/quotes', { partner_id: 'sim_nowhere', position_hash: line.over.position_hash, price: 0.4, available: 10 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('partner_not_found');
    const settled = await sim('POST', '/sim/v1/contests/ct_nowhere/settle', { winner_participant_id: 'x' });
    expect(settled.status).toBe(404);
    expect(settled.body.error.code).toBe('contest_not_found');
    const bad = await sim('POST', '/sim/v1/freeze', { frozen: 'yes' });
    expect(bad.status).toBe(400);
  });

  it('says the simulator is not running (503, what to start) once its process stops', async () => {
    await a.stop();
    const r = await sim('GET', '/sim/v1/state');
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('service_unavailable');
    expect(r.body.error.message).toContain('FLOW_ROLES=ingest');
    expect(r.headers['retry-after']).toBe('1');
    const q = await sim('POST', '/sim/v1/freeze', { frozen: false });
    expect(q.status).toBe(503);
  });
});
