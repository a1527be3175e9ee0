/**
 * The real venue adapters in the running service (`flow all`, FLOW_VENUES=sim,kalshi,polymarket),
 * against the local fake venues serving the recorded payloads (test/venues/kalshi/fake-kalshi.ts,
 * test/venues/polymarket/support.ts), their hosts given through FLOW_KALSHI_* / FLOW_POLYMARKET_*.
 *
 * Kalshi's host is down when the service starts (a reserved port nobody listens on): the service
 * starts anyway, is ready, the simulator's and Polymarket's prices flow, and the connector says so
 * in a structured warning. Then the fake Kalshi starts on that port and the venue connects in the
 * background: its catalog appears in GET /flow/v1/contests, its prices in /contests/:id/liquidity,
 * and a change on either real venue reaches the liquidity stream.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPolymarketCatalog, type PolymarketCatalog } from '../../src/venues/polymarket/index.js';
import { parseGammaEvent } from '../../src/venues/polymarket/parse.js';
import { nativePosition } from '../../src/venues/kalshi/catalog.js';
import { connectWs, type WsClient } from '../../bench/support/ws-client.js';
import { client, demoKey, eventually } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';
import { FakeKalshi } from '../venues/kalshi/fake-kalshi.js';
import { rsaPair } from '../venues/kalshi/support.js';
import { FakePolymarket } from '../venues/polymarket/support.js';

const KALSHI_CONTEST = 'kalshi-KXELONMARS-99';
const KALSHI_YES = nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'yes');

let svc: Service;
let c: ReturnType<typeof client>;
let key: string;
let kalshi: FakeKalshi;
let kalshiPort: number;
let poly: FakePolymarket;
let polyCatalog: PolymarketCatalog;
let ws: WsClient | null = null;

/** A free port: bound, read, released (the fake Kalshi takes it later). */
async function reservePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const liquidity = (contestId: string) => c.api(`/flow/v1/contests/${contestId}/liquidity`);
const quoteOf = (r: any, positionHash: string, partnerId: string) =>
  r.body.data?.find((p: any) => p.position_hash === positionHash)?.partner_liquidities.find((q: any) => q.partner_id === partnerId);
const logged = (msg: string, partnerId: string) => svc.logs.filter((l) => l.msg === msg && l.partner_id === partnerId);

beforeAll(async () => {
  const keys = rsaPair();
  kalshiPort = await reservePort();
  kalshi = new FakeKalshi({ publicKeyPem: keys.publicKeyPem, clock: Date.now });
  poly = new FakePolymarket();
  await poly.start();
  // What the adapter builds from what the fake serves (the same pure function).
  polyCatalog = buildPolymarketCatalog(poly.events.map(parseGammaEvent), { now: Date.now() });
  svc = await startService({
    FLOW_VENUES: 'sim,kalshi,polymarket',
    FLOW_KALSHI_BASE_URL: `http://127.0.0.1:${kalshiPort}/trade-api/v2`,
    FLOW_KALSHI_WS_URL: `ws://127.0.0.1:${kalshiPort}/trade-api/ws/v2`,
    FLOW_KALSHI_API_KEY_ID: 'test-key-id',
    FLOW_KALSHI_PRIVATE_KEY: keys.privateKeyPem,
    FLOW_POLYMARKET_GAMMA_URL: poly.restBase,
    FLOW_POLYMARKET_CLOB_URL: poly.restBase,
    FLOW_POLYMARKET_WS_URL: poly.wsBase,
  });
  key = demoKey(svc);
  c = client(svc, key);
}, 120_000);

afterAll(async () => {
  await ws?.close().catch(() => undefined);
  await svc?.cleanup();
  await kalshi?.stop();
  await poly?.stop();
}, 60_000);

describe('a venue whose host does not answer', () => {
  it('does not stop the service: ready, the simulator and the other venue flow, a structured warning says why', async () => {
    expect((await fetch(svc.base + '/readyz')).status).toBe(200);
    const warned = await eventually(
      async () => logged('venue not reachable; retrying in the background, the other venues run meanwhile', 'kalshi'),
      (w) => w.length > 0,
    );
    expect(warned[0]).toMatchObject({ level: 40, component: 'venues', partner_id: 'kalshi', attempt: 1, error_code: 'venue_unavailable', error: expect.stringContaining('ECONNREFUSED'), retry_in_ms: expect.any(Number) });
    // The simulator's prices flow as before.
    const simContest = (await c.api('/flow/v1/contests?limit=50')).body.data.find((x: any) => x.tags.home_team);
    const sim = await eventually(() => liquidity(simContest.id), (r) => r.body.data.some((p: any) => p.partner_liquidities.some((q: any) => q.partner_id === 'sim_exchange')));
    expect(sim.status).toBe(200);
    expect(sim.body.data.some((p: any) => p.partner_liquidities.some((q: any) => q.partner_id === 'sim_exchange' && q.price > 0))).toBe(true);
    // Polymarket connected meanwhile; Kalshi has no catalog yet.
    await eventually(async () => logged('venue connected', 'polymarket'), (l) => l.length > 0);
    expect((await c.api(`/flow/v1/contests/${KALSHI_CONTEST}`)).status).toBe(404);
    const metrics = await (await fetch(svc.base + '/metrics')).text();
    expect(metrics).toMatch(/flow_venue_connected\{partner_id="kalshi"\} 0/);
    expect(metrics).toMatch(/flow_venue_connected\{partner_id="polymarket"\} 1/);
    expect(metrics).toMatch(/flow_venue_connect_failures_total\{partner_id="kalshi"\} [1-9]/);
  });

  it('connects in the background once the host answers', async () => {
    await kalshi.start(kalshiPort);
    const connected = await eventually(async () => logged('venue connected', 'kalshi'), (l) => l.length > 0, 45_000);
    expect(connected).toHaveLength(1);
    expect(logged('seeded the venue catalog', 'kalshi')[0]).toMatchObject({ contests: expect.any(Number), positions: expect.any(Number) });
    const metrics = await (await fetch(svc.base + '/metrics')).text();
    expect(metrics).toMatch(/flow_venue_connected\{partner_id="kalshi"\} 1/);
    expect(metrics).toMatch(/flow_kalshi_ws_frames_total [1-9]/);
    expect(metrics).toMatch(/flow_polymarket_ws_frames_total [1-9]/);
  }, 60_000);
});

describe('the real venues in the catalog, the liquidity and the stream', () => {
  it("lists each venue's contests in GET /flow/v1/contests", async () => {
    const kalshiLeague = (await c.api(`/flow/v1/contests/${KALSHI_CONTEST}`)).body.data.league_id;
    expect(kalshiLeague).toMatch(/^kalshi-/);
    const k = await c.api(`/flow/v1/contests?league_id=${kalshiLeague}&limit=200`);
    expect(k.body.data.map((x: any) => x.id)).toContain(KALSHI_CONTEST);
    for (const league of new Set(polyCatalog.contests.filter((x) => x.status === 'open').map((x) => x.league_id))) {
      const r = await c.api(`/flow/v1/contests?league_id=${league}&limit=200`);
      const want = polyCatalog.contests.filter((x) => x.league_id === league && x.status === 'open').map((x) => x.id);
      expect(r.body.data.map((x: any) => x.id).sort()).toEqual(want.sort());
    }
    const partners = (await c.api('/flow/v1/partners')).body.data.map((p: any) => p.partner_id);
    expect(partners).toEqual(expect.arrayContaining(['kalshi', 'polymarket', 'sim_exchange']));
  });

  it("serves each venue's prices in /contests/:id/liquidity", async () => {
    const k = await eventually(() => liquidity(KALSHI_CONTEST), (r) => quoteOf(r, KALSHI_YES, 'kalshi')?.available > 0);
    expect(quoteOf(k, KALSHI_YES, 'kalshi')).toMatchObject({ partner_id: 'kalshi', price: expect.any(Number), is_stale: false });
    const token = polyCatalog.tokens.find((t) => t.token_id === poly.captureToken)!;
    const p = await eventually(() => liquidity(token.contest_id), (r) => quoteOf(r, token.position_hash!, 'polymarket')?.available > 0);
    // The capture's recorded book: best ask 0.397 (test/venues/polymarket/adapter.test.ts).
    expect(quoteOf(p, token.position_hash!, 'polymarket')).toMatchObject({ partner_id: 'polymarket', price: 0.397, is_stale: false });
  });

  it("sends a change on either venue's feed to the liquidity stream", async () => {
    const token = polyCatalog.tokens.find((t) => t.token_id === poly.captureToken)!;
    ws = await connectWs(`ws://127.0.0.1:${svc.streamPort}/flow/v1/stream?api_key=${key}`);
    await ws.next((m) => m.type === 'connected');
    expect((await ws.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [KALSHI_CONTEST, token.contest_id] })).type).toBe('subscribed');

    // Kalshi: one more contract bid at NO 0.88 changes the YES ask's size.
    const before = quoteOf(await liquidity(KALSHI_CONTEST), KALSHI_YES, 'kalshi');
    await eventually(async () => kalshi.subscribers('orderbook_delta', 'KXELONMARS-99'), (n) => n > 0);
    kalshi.pushDelta('KXELONMARS-99', 'no', '0.88', '1.00');
    const ku = await ws.next((m) => m.type === 'liquidity.update' && m.contest_id === KALSHI_CONTEST && m.changed_entries.some((e: any) => e.liquidity_hash === before.liquidity_hash && e.available !== before.available), 15_000);
    const kEntry = ku.changed_entries.find((e: any) => e.liquidity_hash === before.liquidity_hash);
    expect(kEntry.available).toBeGreaterThan(before.available);
    const kAfter = await eventually(() => liquidity(KALSHI_CONTEST), (r) => quoteOf(r, KALSHI_YES, 'kalshi')?.available === kEntry.available);
    expect(quoteOf(kAfter, KALSHI_YES, 'kalshi').available).toBe(kEntry.available);

    // Polymarket: the 15 recorded price_change frames move the capture's best ask from 0.397 to 0.36
    // (test/venues/polymarket/adapter.test.ts).
    const pBefore = quoteOf(await liquidity(token.contest_id), token.position_hash!, 'polymarket');
    expect(pBefore.price).toBe(0.397);
    for (let i = 0; i < 15; i++) poly.broadcast(poly.nextPriceChange());
    const pu = await ws.next((m) => m.type === 'liquidity.update' && m.contest_id === token.contest_id && m.changed_entries.some((e: any) => e.liquidity_hash === pBefore.liquidity_hash && e.price === 0.36), 15_000);
    expect(pu.refresh_required).toBe(false);
    const pAfter = await eventually(() => liquidity(token.contest_id), (r) => quoteOf(r, token.position_hash!, 'polymarket')?.price === 0.36);
    expect(quoteOf(pAfter, token.position_hash!, 'polymarket')).toMatchObject({ price: 0.36, is_stale: false });
  }, 60_000);
});
