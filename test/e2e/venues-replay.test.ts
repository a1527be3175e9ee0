/**
 * The service on recorded data, as docs/venues.md "Replay on recorded data" tells an operator to run
 * it: `flow venues replay` serves the recordings, and `flow all` runs with the environment it prints
 * (FLOW_VENUES=kalshi,polymarket and the venues' base URLs pointed at it). The recordings are the
 * repo's copies plus the synthetic pair of test/venues/replay/fixtures/synthetic-pair/ (the corpus
 * holds no event listed on both venues): the recorded Kalshi game Baltimore at Green Bay and a
 * hand-written Polymarket moneyline of it, each with a book.
 *
 * The replay is down when the service starts and a stream client subscribes to every contest's
 * liquidity first, so it sees the venues' prices arrive. Then the replay starts on the port the
 * service was told, both venues connect in the background, and:
 * - the game is ONE contest (the matcher's merge, applied by the ingest role): Green Bay's position
 *   quoted by Kalshi and Polymarket in GET /contests/:id/liquidity, its consensus computed from
 *   both (the documented method, docs/pricing.md, computed here), the venue contests gone;
 * - an unmatched contest of each venue stays its own, quoted by its venue;
 * - both venues' prices reach the liquidity stream; the matcher's counts are in /metrics.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativePosition } from '../../src/venues/kalshi/catalog.js';
import { mergeVenueCatalogs, type MergeResult } from '../../src/venues/matching/index.js';
import { buildPolymarketCatalog } from '../../src/venues/polymarket/catalog.js';
import { parseGammaEvent } from '../../src/venues/polymarket/parse.js';
import { catalogsFromRecordings, loadRecordings, polymarketListed, startReplayServer, type ReplayServer } from '../../src/venues/replay/index.js';
import { connectWs, type WsClient } from '../../bench/support/ws-client.js';
import { runCli } from '../support/cli.js';
import { client, eventually } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';
import { PAIR_KALSHI_CONTEST, PAIR_POLYMARKET_CONTEST, syntheticPairRecordings } from '../venues/replay/synthetic-pair.js';

const dir = syntheticPairRecordings();
const rec = loadRecordings(dir);
/** What the matcher makes of these catalogs (pure functions; the service must arrive at the same). */
const expected: MergeResult = mergeVenueCatalogs(catalogsFromRecordings(rec));
const GAME = expected.report.decisions.find((d) => d.contest_id === PAIR_KALSHI_CONTEST)!.merged_into!;
const PACKERS = expected.position_map.kalshi![nativePosition('KXNFLGAME-25DEC27BALGB', 'KXNFLGAME-25DEC27BALGB-GB', 'yes')]!;
const RAVENS = expected.position_map.polymarket!['pm_ev_900001:yes_no:yes:0:pm_m900011:ft']!;

let replay: ReplayServer | null = null;
let svc: Service;
let c: ReturnType<typeof client>;
let ws: WsClient;

const liquidity = (contestId: string) => c.api(`/flow/v1/contests/${contestId}/liquidity`);
const position = (r: any, hash: string) => r.body.data?.find((p: any) => p.position_hash === hash);
const quoteOf = (r: any, hash: string, partnerId: string) => position(r, hash)?.partner_liquidities.find((q: any) => q.partner_id === partnerId);
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

beforeAll(async () => {
  // The environment the replay prints, on a port it then gives back until the service is up.
  const first = await startReplayServer({ dir });
  const port = first.port;
  const env = first.env();
  await first.close();
  expect(env.FLOW_VENUES).toBe('kalshi,polymarket');
  svc = await startService(env);
  const minted = await runCli(['keys', 'create', '--plan', 'scale', '--type', 'data', '--env', 'test', '--json'], svc.env);
  expect(minted.code).toBe(0);
  c = client(svc, JSON.parse(minted.stdout).api_key);
  ws = await connectWs(`ws://127.0.0.1:${svc.streamPort}/flow/v1/stream?api_key=${JSON.parse(minted.stdout).api_key}`);
  await ws.next((m) => m.type === 'connected');
  expect((await ws.request({ action: 'subscribe', channel: 'liquidity' })).type).toBe('subscribed');
  replay = await startReplayServer({ dir, port });
}, 120_000);

afterAll(async () => {
  await ws?.close().catch(() => undefined);
  await svc?.cleanup();
  await replay?.close();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('the event both venues list', () => {
  it('is one contest: Green Bay quoted by Kalshi and Polymarket, its consensus computed from both', async () => {
    const r = await eventually(
      () => liquidity(GAME),
      (x) => x.status === 200 && quoteOf(x, PACKERS, 'kalshi')?.available > 0 && quoteOf(x, PACKERS, 'polymarket')?.available > 0 && quoteOf(x, RAVENS, 'polymarket')?.available > 0 && position(x, PACKERS)?.consensus_price != null,
      60_000,
    );
    // Kalshi: best NO bid 0.38 × 500 → YES (Green Bay) ask 0.62 × 500; Polymarket: Packers ask 0.60 × 1000,
    // Ravens the mirror of the best Packers bid 0.58 × 900 (fixtures/synthetic-pair/README.md).
    expect(quoteOf(r, PACKERS, 'kalshi')).toMatchObject({ price: 0.62, available: 310, is_stale: false });
    expect(quoteOf(r, PACKERS, 'polymarket')).toMatchObject({ price: 0.6, available: 600, is_stale: false });
    expect(quoteOf(r, RAVENS, 'polymarket')).toMatchObject({ price: 0.42, available: 378, is_stale: false });
    // Kalshi's No on Green Bay is no price of Baltimore (a tie pays neither): not quoted on Baltimore.
    expect(quoteOf(r, RAVENS, 'kalshi')).toBeUndefined();
    // Consensus (docs/pricing.md): Polymarket prices the whole group, devigged, weighted by √(thinner side USD);
    // Kalshi prices Green Bay alone, its raw price at half its weight; then the group is renormalized.
    const wPm = Math.sqrt(378);
    const wK = 0.5 * Math.sqrt(310);
    const packers = (wPm * (0.6 / 1.02) + wK * 0.62) / (wPm + wK);
    const ravens = 0.42 / 1.02;
    expect(position(r, PACKERS).consensus_price).toBe(r6(packers / (packers + ravens)));
    expect(position(r, RAVENS).consensus_price).toBe(r6(ravens / (packers + ravens)));

    const contest = (await c.api(`/flow/v1/contests/${GAME}`)).body.data;
    expect(contest).toMatchObject({ id: GAME, league_id: 'mx_nfl', title: 'Baltimore Ravens at Green Bay Packers', status: 'open' });
    // The venue contests it absorbed are not open contests of their own.
    for (const id of [PAIR_KALSHI_CONTEST, PAIR_POLYMARKET_CONTEST]) {
      const v = await c.api(`/flow/v1/contests/${id}`);
      expect(v.status === 404 || v.body.data.status !== 'open').toBe(true);
    }
    const nfl = (await c.api('/flow/v1/contests?league_id=mx_nfl&limit=50')).body.data.map((x: any) => x.id);
    expect(nfl).toEqual([GAME]);
  }, 90_000);
});

describe('contests the matcher left apart', () => {
  it('stay their venue\'s own, quoted by that venue', async () => {
    const kalshiOnly = 'kalshi-KXELONMARS-99';
    const k = await eventually(() => liquidity(kalshiOnly), (x) => quoteOf(x, nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'yes'), 'kalshi')?.available > 0, 30_000);
    expect(quoteOf(k, nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'yes'), 'kalshi')).toMatchObject({ price: 0.12, is_stale: false });
    expect(k.body.data.every((p: any) => p.partner_liquidities.every((q: any) => q.partner_id === 'kalshi'))).toBe(true);

    // The Polymarket market the replay lent the first recorded book to.
    const cat = buildPolymarketCatalog(polymarketListed(rec.polymarket!).map(parseGammaEvent));
    const lent = replay!.summary().polymarket.find((a) => a.borrowed_from !== null)!;
    const token = cat.tokens.find((t) => t.token_id === lent.token_id)!;
    const p = await eventually(() => liquidity(token.contest_id), (x) => quoteOf(x, token.position_hash!, 'polymarket') !== undefined, 30_000);
    expect(expected.report.decisions.find((d) => d.contest_id === token.contest_id)!.decision).toBe('unmatched');
    expect(p.body.data.every((x: any) => x.partner_liquidities.every((q: any) => q.partner_id === 'polymarket'))).toBe(true);
    expect((await c.api(`/flow/v1/contests/${token.contest_id}`)).body.data.status).toBe('open');
  }, 60_000);
});

describe('the stream and the metrics', () => {
  it("carries both venues' prices on the liquidity stream", async () => {
    const seen = (partner: string) => ws.all.some((m) => m.type === 'liquidity.update' && m.contest_id === GAME && m.changed_entries.some((e: any) => e.partner_id === partner && e.price > 0));
    await eventually(async () => seen('kalshi') && seen('polymarket'), (ok) => ok, 30_000);
    expect(seen('kalshi')).toBe(true);
    expect(seen('polymarket')).toBe(true);
    const pm = ws.all.filter((m) => m.type === 'liquidity.update' && m.contest_id === GAME).flatMap((m) => m.changed_entries).filter((e: any) => e.partner_id === 'polymarket');
    expect(pm.map((e: any) => e.price)).toEqual(expect.arrayContaining([0.6, 0.42]));
  });

  it("reports the matcher's last merge in /metrics", async () => {
    const text = await eventually(async () => (await fetch(svc.base + '/metrics')).text(), (t) => metric(t, 'flow_venue_match_contests') === expected.report.contests);
    expect(metric(text, 'flow_venue_match_contests')).toBe(expected.report.contests);
    expect(metric(text, 'flow_venue_match_matched')).toBe(2);
    expect(metric(text, 'flow_venue_match_merged_contests')).toBe(1);
    expect(metric(text, 'flow_venue_match_unmatched')).toBe(expected.report.unmatched);
    expect(metric(text, 'flow_venue_match_aligned_positions')).toBe(expected.report.aligned_positions);
    expect(text).toMatch(/flow_venue_connected\{partner_id="kalshi"\} 1/);
    expect(text).toMatch(/flow_venue_connected\{partner_id="polymarket"\} 1/);
  });
});
