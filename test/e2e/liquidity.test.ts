/**
 * The live pipeline end to end: the whole service runs as an operator starts it, the simulator is
 * frozen and driven through /sim/v1, and REST shows exactly what the spec's rules say.
 * Expected numbers are computed here from the documented method (docs/pricing.md), not by the code
 * under test: multiplicative devig per venue, weights √(clamped USD), one-sided quotes at half weight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, client, demoKey, eventually, findTotalLine } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let api: ReturnType<typeof client>['api'];
let sim: ReturnType<typeof client>['sim'];
const ADMIN = { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' };

const w = (usd: number) => Math.sqrt(Math.min(100_000, Math.max(100, usd)));
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

let contestId: string;
let over: any;
let under: any;

beforeAll(async () => {
  svc = await startService();
  ({ api, sim } = client(svc, demoKey(svc)));
  await sim('/sim/v1/freeze', { frozen: true });
  // A total line that every quoting venue lists (totals have no home/away to list the wrong way round).
  ({ contestId, over, under } = await findTotalLine(client(svc, demoKey(svc))));
}, 120_000);
afterAll(async () => svc?.cleanup(), 60_000);

const liquidity = () => api(`/flow/v1/contests/${contestId}/liquidity`);
const find = (r: any, hash: string) => r.body.data.find((p: any) => p.position_hash === hash);
const setBoth = async (partner: string, o: number, u: number, available: number) => {
  await sim('/sim/v1/quotes', { partner_id: partner, position_hash: over.position_hash, price: o, available });
  await sim('/sim/v1/quotes', { partner_id: partner, position_hash: under.position_hash, price: u, available });
};
const quoteOf = (pos: any, partner: string) => pos.partner_liquidities.find((q: any) => q.partner_id === partner);

describe('consensus through the whole pipeline', () => {
  it('is the liquidity-weighted mean of each venue\'s devigged prices', async () => {
    await setBoth('sim_exchange', 0.6, 0.45, 10_000);
    await setBoth('sim_book01', 0.5, 0.55, 2_500);
    await setBoth('sim_p2p', 0.58, 0.47, 400);
    await setBoth('sim_quotes', 0.52, 0.53, 1_000); // no real book: counts at the minimum weight
    await setBoth('sim_sportsbook', 0.6, 0.45, 0); // an emptied book does not count
    const rows = [
      [0.6, 0.45, w(10_000)],
      [0.5, 0.55, w(2_500)],
      [0.58, 0.47, w(400)],
      [0.52, 0.53, w(0)],
    ] as const;
    const num = rows.reduce((s, [o, u, wt]) => s + wt * (o / (o + u)), 0);
    const den = rows.reduce((s, [, , wt]) => s + wt, 0);
    const expected = r6(num / den);
    const r = await eventually(
      liquidity,
      (x) => find(x, over.position_hash)?.consensus_price === expected && quoteOf(find(x, under.position_hash), 'sim_sportsbook')?.available === 0,
    );
    const o = find(r, over.position_hash);
    expect(o.consensus_price).toBe(expected);
    expect(find(r, under.position_hash).consensus_price).toBe(r6(1 - num / den));
    // Just set, so confirmed within the venue's freshness bound; as_of is when ingest saw it.
    expect(quoteOf(o, 'sim_exchange')).toMatchObject({ price: 0.6, available: 10_000, is_stale: false });
    expect(Date.parse(quoteOf(o, 'sim_exchange').as_of)).toBeGreaterThan(Date.now() - 120_000);
    // A polled venue that withdraws its offer reads as an emptied quote, on both sides.
    expect(quoteOf(o, 'sim_sportsbook').available).toBe(0);
    expect(quoteOf(find(r, under.position_hash), 'sim_sportsbook').available).toBe(0);
    expect(o.paper_bettable).toBe(true);
    expect(o.edges.find((e: any) => e.partner_id === 'sim_book01').edge).toBe(r6(expected - 0.5));
  });

  it('flags a quote more than 0.15 from the median of three real books and leaves it out of consensus', async () => {
    await sim('/sim/v1/quotes', { partner_id: 'sim_book01', position_hash: over.position_hash, price: 0.8, available: 2_500 });
    // Real books on over: exchange .60, book01 .80, p2p .58 → median .60; .80 is .20 away.
    // Consensus: book01's over is out; its under (.55) stays as a one-sided quote at half weight.
    const oNum = w(10_000) * (0.6 / 1.05) + w(400) * (0.58 / 1.05) + w(0) * (0.52 / 1.05);
    const oDen = w(10_000) + w(400) + w(0);
    const uNum = w(10_000) * (0.45 / 1.05) + w(400) * (0.47 / 1.05) + w(0) * (0.53 / 1.05) + 0.5 * w(2_500) * 0.55;
    const uDen = w(10_000) + w(400) + w(0) + 0.5 * w(2_500);
    const oRaw = oNum / oDen;
    const uRaw = uNum / uDen;
    const expected = r6(oRaw / (oRaw + uRaw));
    const r = await eventually(liquidity, (x) => find(x, over.position_hash)?.consensus_price === expected);
    expect(find(r, over.position_hash).consensus_price).toBe(expected);
    // Outliers are flagged, not removed: the quote is still listed.
    expect(quoteOf(find(r, over.position_hash), 'sim_book01').price).toBe(0.8);
  });

  it('exactly 0.15 from the median is not an outlier', async () => {
    await sim('/sim/v1/quotes', { partner_id: 'sim_book01', position_hash: over.position_hash, price: 0.75, available: 2_500 });
    const rows = [
      [0.6, 0.45, w(10_000)],
      [0.75, 0.55, w(2_500)],
      [0.58, 0.47, w(400)],
      [0.52, 0.53, w(0)],
    ] as const;
    const expected = r6(rows.reduce((s, [o, u, wt]) => s + wt * (o / (o + u)), 0) / rows.reduce((s, [, , wt]) => s + wt, 0));
    const r = await eventually(liquidity, (x) => find(x, over.position_hash)?.consensus_price === expected);
    expect(find(r, over.position_hash).consensus_price).toBe(expected);
  });

  it('depth lists each venue\'s book best first, with totals', async () => {
    await sim('/sim/v1/quotes', {
      partner_id: 'sim_exchange',
      position_hash: over.position_hash,
      price: 0.6,
      available: 100,
      levels: [
        { price: 0.6, available: 100 },
        { price: 0.61, available: 250 },
        { price: 0.63, available: 50 },
      ],
    });
    const read = () => api(`/flow/v1/depth/${encodeURIComponent(over.position_hash)}`);
    const r = await eventually(read, (x) => x.body.data?.partners?.find((p: any) => p.partner_id === 'sim_exchange')?.total_available === 400);
    const ex = r.body.data.partners.find((p: any) => p.partner_id === 'sim_exchange');
    expect(ex.levels).toEqual([
      { price: 0.6, available: 100 },
      { price: 0.61, available: 250 },
      { price: 0.63, available: 50 },
    ]);
    expect(ex.best_price).toBe(0.6);
    expect(r.body.data.position_hash).toBe(over.position_hash);
    expect((await api('/flow/v1/depth/nope%3Anope')).status).toBe(404);
  });
});

describe('opposite-side withholding through the whole pipeline', () => {
  it('withholds the quotes of a venue that lists the participant on the other side from every other venue', async () => {
    const liq = await liquidity();
    const home = liq.body.data.find((p: any) => p.market_key === 'moneyline' && p.side_key === 'home');
    const away = liq.body.data.find((p: any) => p.market_key === 'moneyline' && p.side_key === 'away');
    const venues = ['sim_exchange', 'sim_book01', 'sim_p2p', 'sim_quotes'];
    for (const v of venues) {
      const flipped = v === 'sim_book01';
      await sim('/sim/v1/quotes', { partner_id: v, position_hash: home.position_hash, price: 0.55, available: 1_000, listed_side: flipped ? 'away' : 'home' });
      await sim('/sim/v1/quotes', { partner_id: v, position_hash: away.position_hash, price: 0.5, available: 1_000, listed_side: flipped ? 'home' : 'away' });
    }
    await sim('/sim/v1/quotes', { partner_id: 'sim_sportsbook', position_hash: home.position_hash, price: 0.55, available: 0, listed_side: 'home' });
    await sim('/sim/v1/quotes', { partner_id: 'sim_sportsbook', position_hash: away.position_hash, price: 0.5, available: 0, listed_side: 'away' });
    const r = await eventually(liquidity, (x) => {
      const h = find(x, home.position_hash);
      return h && !quoteOf(h, 'sim_book01') && quoteOf(h, 'sim_p2p')?.price === 0.55 && quoteOf(h, 'sim_quotes')?.price === 0.55 && quoteOf(find(x, away.position_hash), 'sim_sportsbook')?.available === 0;
    });
    const h = find(r, home.position_hash);
    expect(h.partner_liquidities.map((q: any) => q.partner_id).sort()).toEqual(['sim_exchange', 'sim_p2p', 'sim_quotes', 'sim_sportsbook']);
    expect(quoteOf(find(r, away.position_hash), 'sim_book01')).toBeUndefined();
    // Every remaining venue prices .55/.50: consensus is their common devigged price.
    expect(h.consensus_price).toBe(r6(0.55 / 1.05));
    expect(h.edges.map((e: any) => e.partner_id)).not.toContain('sim_book01');
    // Listed the right way round again, the venue is back.
    await sim('/sim/v1/quotes', { partner_id: 'sim_book01', position_hash: home.position_hash, price: 0.55, available: 1_000, listed_side: 'home' });
    const back = await eventually(liquidity, (x) => !!quoteOf(find(x, home.position_hash), 'sim_book01'));
    expect(quoteOf(find(back, home.position_hash), 'sim_book01').price).toBe(0.55);
  });
});

describe('state and entitlements', () => {
  it('serves game state set through the simulator, single and batched', async () => {
    await sim(`/sim/v1/contests/${contestId}/state`, {
      game_status: 'live',
      clock: { display: '07:12', remaining_seconds: 432, is_running: true },
      period: { number: 2, label: 'Q2', type: 'quarter' },
      scores: { home_score: 14, away_score: 10, period_scores: [{ home_score: 7, away_score: 3 }, { home_score: 7, away_score: 7 }] },
    });
    const r = await eventually(
      () => api(`/flow/v1/contests/${contestId}/state`),
      (x) => x.body.data?.state?.clock?.display === '07:12',
    );
    expect(r.body.data).toMatchObject({ contest_id: contestId, state: { game_status: 'live', scores: { home_score: 14, away_score: 10 } } });
    expect(typeof r.body.data.refreshed_at).toBe('string');
    expect(typeof r.body.data.cached_at).toBe('string');
    const batch = await api('/flow/v1/contest-state/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contest_ids: [contestId, 'ct_missing'] }) });
    expect(Object.keys(batch.body.data)).toEqual([contestId]);
    expect(batch.body.data[contestId].state.period.label).toBe('Q2');
    const tooMany = await api('/flow/v1/contest-state/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contest_ids: Array.from({ length: 201 }, (_, i) => `c${i}`) }) });
    expect(tooMany.status).toBe(400);
    expect((await api('/flow/v1/contests/ct_missing/state')).status).toBe(404);
  });

  it('the simulator control API wants the admin token and validates input', async () => {
    const noToken = await fetch(svc.base + '/sim/v1/freeze', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"frozen":true}' });
    expect(noToken.status).toBe(401);
    const bad = await fetch(svc.base + '/sim/v1/quotes', { method: 'POST', headers: ADMIN, body: JSON.stringify({ partner_id: 'nope', position_hash: over.position_hash, price: 0.5, available: 1 }) });
    expect(bad.status).toBe(404);
    const badPrice = await fetch(svc.base + '/sim/v1/quotes', { method: 'POST', headers: ADMIN, body: JSON.stringify({ partner_id: 'sim_exchange', position_hash: over.position_hash, price: 1.5, available: 1 }) });
    expect(badPrice.status).toBe(400);
    const state = (await (await fetch(svc.base + '/sim/v1/state', { headers: ADMIN })).json()) as any;
    expect(state.data).toMatchObject({ seed: 1, frozen: true });
  });

  it('liquidity answers with the envelope and the rate-limit headers', async () => {
    const r = await fetch(`${svc.base}/flow/v1/contests/${contestId}/liquidity`, { headers: { 'x-api-key': demoKey(svc) } });
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    for (const h of ['x-ratelimit-limit-minute', 'x-ratelimit-remaining-minute', 'x-ratelimit-reset-minute', 'x-ratelimit-limit-day', 'x-ratelimit-remaining-day', 'x-ratelimit-reset-day']) {
      expect(r.headers.get(h), h).toMatch(/^\d+$/);
    }
    const body = (await r.json()) as any;
    // event_id: the stream position of this snapshot (docs/stream.md "Event ids and resume").
    expect(body.meta).toEqual({ timestamp: expect.any(String), api_version: 'v1', event_id: expect.stringMatching(/^\d+-\d+$/) });
    expect(Array.isArray(body.data)).toBe(true);
  });

  it('liquidity of an unknown contest is 404', async () => {
    expect((await api('/flow/v1/contests/ct_none/liquidity')).status).toBe(404);
  });
});
