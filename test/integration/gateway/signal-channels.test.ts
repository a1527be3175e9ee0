/**
 * The `signal` and `arbitrage` channels end to end on real Redis: signal.update events written by
 * SignalStore (as the detectors write them) and arbitrage.update events appended to the contest log
 * (as the liquidity computation appends them) reach subscribers with their event_id; each
 * subscriber's filters apply; a clear reaches every subscriber of the contest, also one whose
 * filters never matched; nothing is sent when every element fails a subscriber's filters;
 * resume_from replays what a client missed, filtered; the entitlements each channel needs.
 *
 * No timing: every subscriber ends on an event it must receive (the clear, or a sentinel on another
 * contest: the gateway delivers the feed in order), so once that arrived, everything before it that
 * was going to arrive has, and the exact sequence each client got can be compared.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Arbitrage } from '../../../src/domain/arbitrage.js';
import type { Signal } from '../../../src/domain/signals.js';
import { logKeys, toLogEvent } from '../../../src/store/redis/eventlog.js';
import { SignalStore } from '../../../src/store/redis/signals.js';
import { testSignal } from '../../support/signals.js';
import { startHarness, type Harness } from './harness.js';
import type { WsClient } from '../../../bench/support/ws-client.js';

let h: Harness;
let store: SignalStore;
beforeAll(async () => {
  h = await startHarness();
  store = new SignalStore(h.s.rt.redis, h.s.rt.ks);
});
afterEach(async () => h?.closeClients());
afterAll(async () => h?.close());

const now = () => new Date().toISOString();
const MIN = 60_000;
const STREAM = ['stream:realtime', 'signals:read', 'arbitrage:read'];

/** The contest's logged events of a channel, oldest first: id and text as the log holds them. */
async function logged(contest: string, channel: 'signal' | 'arbitrage'): Promise<{ id: string; event: string }[]> {
  const raw = (await h.s.rt.redis.xrange(logKeys(h.s.rt.ks).events(contest), '-', '+')) as [string, string[]][];
  return raw.map((e) => toLogEvent(contest, e)).filter((e) => e.channel === channel);
}

/** The signal.update (or arbitrage.update) messages a client got for a contest, as lists of element ids. */
const updates = (c: WsClient, contest: string, type: 'signal.update' | 'arbitrage.update') =>
  c.all.filter((m) => m.type === type && m.contest_id === contest).map((m) => (type === 'signal.update' ? m.signals.map((s: Signal) => s.dedupe_key) : m.arbitrages.map((a: Arbitrage) => a.arbitrage_id)));

/** A client of a pro key of its own (a key opens at most 3 connections) subscribed with `msg`. */
async function subscribe(msg: Record<string, unknown>, apiKey?: string): Promise<WsClient> {
  const c = await h.connect(apiKey ?? (await h.key('pro')).api_key);
  expect(await c.request({ action: 'subscribe', ...msg })).toMatchObject({ type: 'subscribed' });
  return c;
}

describe('signal channel', () => {
  // The set: A (arbitrage, active, 80, high), B (block_trade, beta, 90, low), W (whale_trade, beta, 60, medium).
  const sig = (contest: string, league: string) => ({
    A: testSignal('arbitrage', `${contest}-a`, contest, 10 * MIN, { status: 'active', strength: 80, confidence: 'high', position: { router_league_id: league } }),
    B: testSignal('block_trade', `${contest}-b`, contest, 10 * MIN, { strength: 90, confidence: 'low', position: { router_league_id: league } }),
    W: testSignal('whale_trade', `${contest}-w`, contest, 10 * MIN, { strength: 60, confidence: 'medium', position: { router_league_id: league } }),
  });

  it('a SignalStore write reaches subscribers with its event_id; each gets what passes its filters; a clear reaches all; nothing when nothing passes', async () => {
    const G = 'SG1';
    const subs = {
      all: await subscribe({ channel: 'signal', include_beta: true }),
      byContest: await subscribe({ channel: 'signal', contest_ids: [G], include_beta: true }),
      active: await subscribe({ channel: 'signal', contest_ids: [G] }),
      arbOnly: await subscribe({ channel: 'signal', types: ['arbitrage'] }),
      high: await subscribe({ channel: 'signal', min_confidence: 'high', include_beta: true }),
      strong: await subscribe({ channel: 'signal', min_strength: 70, include_beta: true }),
      // Never matches a signal of this contest, still gets its clear.
      never: await subscribe({ channel: 'signal', types: ['volume_spike', 'price_move'], include_beta: true }),
      otherLeague: await subscribe({ channel: 'signal', league_ids: ['LX'], include_beta: true }),
    };
    const s = sig(G, 'LG');
    const w = (upserts: Signal[], owns?: Signal['signal_type']) => store.write({ contestId: G, leagueId: 'LG', upserts, owns, timestamp: now() });
    // e1 {A, B, W}; e2 {B, W} (the arbitrage writer's set is empty); e3 {W}; e4 {} (a clear).
    expect(await w([s.A, s.B, s.W])).toBe(true);
    expect(await w([], 'arbitrage')).toBe(true);
    expect(await w([], 'block_trade')).toBe(true);
    expect(await w([], 'whale_trade')).toBe(true);
    // A sentinel in league LX: the only thing otherLeague may get.
    const sentinel = testSignal('arbitrage', 'sentinel', 'SG1-other', 10 * MIN, { status: 'active', position: { router_league_id: 'LX' } });
    await store.write({ contestId: 'SG1-other', leagueId: 'LX', upserts: [sentinel], timestamp: now() });

    for (const [name, c] of Object.entries(subs)) await c.next((m) => m.type === 'signal.update' && m.contest_id === (name === 'otherLeague' ? 'SG1-other' : G) && (name === 'otherLeague' || m.signals.length === 0));
    const [a, b, ww] = [s.A.dedupe_key, s.B.dedupe_key, s.W.dedupe_key];
    expect(updates(subs.all, G, 'signal.update')).toEqual([[a, b, ww], [b, ww], [ww], []]);
    expect(updates(subs.byContest, G, 'signal.update')).toEqual([[a, b, ww], [b, ww], [ww], []]);
    expect(updates(subs.active, G, 'signal.update')).toEqual([[a], []]);
    expect(updates(subs.arbOnly, G, 'signal.update')).toEqual([[a], []]);
    expect(updates(subs.high, G, 'signal.update')).toEqual([[a], []]);
    expect(updates(subs.strong, G, 'signal.update')).toEqual([[a, b], [b], []]);
    expect(updates(subs.never, G, 'signal.update')).toEqual([[]]);
    expect(updates(subs.otherLeague, G, 'signal.update')).toEqual([]);
    expect(updates(subs.otherLeague, 'SG1-other', 'signal.update')).toEqual([[sentinel.dedupe_key]]);

    // The payload is the logged event with its event_id; unfiltered, byte for byte; filtered, the same event id.
    const log = await logged(G, 'signal');
    expect(log).toHaveLength(4);
    const first = subs.all.all.find((m) => m.type === 'signal.update' && m.contest_id === G);
    expect(first).toEqual({ ...JSON.parse(log[0]!.event), event_id: log[0]!.id });
    expect(first.signals).toEqual([s.A, s.B, s.W]);
    expect(subs.all.texts).toContain(log[0]!.event.replace('{"type":"signal.update",', `{"type":"signal.update","event_id":"${log[0]!.id}",`));
    const filtered = subs.strong.all.filter((m) => m.type === 'signal.update' && m.contest_id === G);
    expect(filtered.map((m) => m.event_id)).toEqual([log[0]!.id, log[1]!.id, log[3]!.id]);
    expect(filtered[0]).toMatchObject({ contest_id: G, league_id: 'LG', signals: [s.A, s.B] });
  });

  it('never sends an unpublished or retired type, even to an unfiltered subscriber', async () => {
    const c = await subscribe({ channel: 'signal', contest_ids: ['SG2'], include_beta: true });
    const burst = testSignal('trade_burst', 'tb', 'SG2', 10 * MIN);
    const retired = testSignal('off_market_price', 'om', 'SG2', 10 * MIN, { status: 'retired' });
    const whale = testSignal('whale_trade', 'w', 'SG2', 10 * MIN);
    // The store refuses these types; a log that holds them anyway (an older build, another writer) still never delivers them.
    await expect(store.write({ contestId: 'SG2', leagueId: null, upserts: [burst, retired], timestamp: now() })).rejects.toThrow(/not published/);
    await h.append('signal', 'SG2', { type: 'signal.update', contest_id: 'SG2', league_id: null, signals: [burst, retired], timestamp: now() }, null);
    await store.write({ contestId: 'SG2', leagueId: null, upserts: [whale], timestamp: now() });
    await c.next((m) => m.type === 'signal.update' && m.signals.length > 0);
    expect(updates(c, 'SG2', 'signal.update')).toEqual([[whale.dedupe_key]]);
  });

  it('resume_from replays the signal.updates a client missed, through its filters, then goes live', async () => {
    const R = 'SG3';
    const s = sig(R, 'LG');
    const w = (upserts: Signal[], owns?: Signal['signal_type']) => store.write({ contestId: R, leagueId: 'LG', upserts, owns, timestamp: now() });
    const first = await subscribe({ channel: 'signal', contest_ids: [R], min_strength: 70, include_beta: true });
    await w([s.A]);
    const seen = await first.next((m) => m.type === 'signal.update');
    await first.close();
    // Missed: {A, B, W} then {B, W} then {W} (nothing for a min_strength 70 subscriber).
    await w([s.B, s.W]);
    await w([], 'arbitrage');
    await w([], 'block_trade');
    const again = await subscribe({ channel: 'signal', contest_ids: [R], min_strength: 70, include_beta: true, resume_from: { [R]: seen.event_id } });
    const replayed = [await again.next((m) => m.type === 'signal.update'), await again.next((m) => m.type === 'signal.update')];
    const log = await logged(R, 'signal');
    expect(replayed.map((m) => m.event_id)).toEqual([log[1]!.id, log[2]!.id]);
    expect(replayed.map((m) => m.signals.map((x: Signal) => x.dedupe_key))).toEqual([[s.A.dedupe_key, s.B.dedupe_key], [s.B.dedupe_key]]);
    // Live after the replay: the clear.
    await w([], 'whale_trade');
    expect(await again.next((m) => m.type === 'signal.update')).toMatchObject({ signals: [], event_id: (await logged(R, 'signal')).at(-1)!.id });
    expect(updates(again, R, 'signal.update')).toHaveLength(3);
  });

  it('needs signals:read and stream:realtime; types must name catalog types', async () => {
    const cases: [string[], string[]][] = [
      [['signals:read'], ['stream:realtime']],
      [['stream:realtime'], ['signals:read']],
      [[], ['stream:realtime', 'signals:read']],
    ];
    for (const [entitlements, missing] of cases) {
      const c = await h.connect((await h.key('pro', { entitlements })).api_key);
      const e = await c.request({ action: 'subscribe', channel: 'signal' });
      expect(e).toMatchObject({ type: 'error', code: 'entitlement_required', channel: 'signal' });
      expect([...e.missing].sort()).toEqual([...missing].sort());
    }
    const c = await h.connect((await h.key('pro', { entitlements: ['stream:realtime', 'signals:read'] })).api_key);
    const bad = await c.request({ action: 'subscribe', channel: 'signal', types: ['whale'] });
    expect(bad).toMatchObject({ type: 'error', code: 'invalid_message', channel: 'signal' });
    expect(bad.message).toContain('whale_trade');
    expect(await c.request({ action: 'subscribe', channel: 'signal', types: ['whale_trade'] })).toMatchObject({ type: 'subscribed' });
  });
});

describe('arbitrage channel', () => {
  const arb = (contest: string, id: string, roi: number, afterFee: number | null, investment: number): Arbitrage => ({
    arbitrage_id: id,
    contest: { id: contest, label: 'A v B', league_id: 'LA' },
    market: { id: 'mk', variable_id: null },
    combined_price: Number((1 / (1 + roi / 100)).toFixed(6)),
    roi_pct: roi,
    after_fee_roi_pct: afterFee,
    profitable_after_fees: afterFee === null ? null : afterFee > 0,
    max_investment: investment,
    sides: [
      { market_side_id: 'mk:home', title: 'A', options: [{ partner_id: 'v1', partner_name: 'V1', price: 0.45, after_fee_price: null, available: investment / 2, title: 'A', position_hash: `${contest}:h`, source: 'streaming' }] },
      { market_side_id: 'mk:away', title: 'B', options: [{ partner_id: 'v2', partner_name: 'V2', price: 0.5, after_fee_price: null, available: investment / 2, title: 'B', position_hash: `${contest}:a`, source: 'polling' }] },
    ],
    detected_at: now(),
    depth_walk: null,
  });
  /** As the liquidity computation appends it (pipelines/processors/liquidity.ts). */
  const update = (contest: string, arbitrages: Arbitrage[]) => h.append('arbitrage', contest, { type: 'arbitrage.update', contest_id: contest, league_id: 'LA', arbitrages, timestamp: now() }, 'LA');

  it('each subscriber gets the arbitrages passing its thresholds, with the event_id; a clear reaches all; nothing when nothing passes', async () => {
    const C = 'AR1';
    const subs = {
      all: await subscribe({ channel: 'arbitrage', contest_ids: [C] }),
      afterFee: await subscribe({ channel: 'arbitrage', after_fee_only: true }),
      roi: await subscribe({ channel: 'arbitrage', min_roi_pct: 3 }),
      afterFeeRoi: await subscribe({ channel: 'arbitrage', min_after_fee_roi_pct: 2 }),
      investment: await subscribe({ channel: 'arbitrage', min_investment: 500 }),
      never: await subscribe({ channel: 'arbitrage', league_ids: ['LA'], after_fee_only: true, min_investment: 2_000 }),
    };
    // X: 5 % gross, 3 % after fees, USD 1,000. Y: 2 %, fees unknown, USD 200. Z: 4 %, loses after fees, USD 600.
    const [X, Y, Z] = [arb(C, 'X', 5, 3, 1_000), arb(C, 'Y', 2, null, 200), arb(C, 'Z', 4, -0.5, 600)];
    const e1 = await update(C, [X, Y, Z]);
    await update(C, [Y]);
    const e3 = await update(C, []);
    for (const c of Object.values(subs)) await c.next((m) => m.type === 'arbitrage.update' && m.arbitrages.length === 0);
    expect(updates(subs.all, C, 'arbitrage.update')).toEqual([['X', 'Y', 'Z'], ['Y'], []]);
    expect(updates(subs.afterFee, C, 'arbitrage.update')).toEqual([['X'], []]);
    expect(updates(subs.roi, C, 'arbitrage.update')).toEqual([['X', 'Z'], []]);
    // Unknown fees (null) never pass an after-fee threshold.
    expect(updates(subs.afterFeeRoi, C, 'arbitrage.update')).toEqual([['X'], []]);
    expect(updates(subs.investment, C, 'arbitrage.update')).toEqual([['X', 'Z'], []]);
    expect(updates(subs.never, C, 'arbitrage.update')).toEqual([[]]);
    expect(subs.all.texts[subs.all.texts.length - 3]).toBe(e1.text);
    expect(subs.roi.all.find((m) => m.type === 'arbitrage.update')).toEqual({ type: 'arbitrage.update', event_id: e1.id, contest_id: C, league_id: 'LA', arbitrages: [X, Z], timestamp: expect.any(String) });
    expect(subs.never.all.find((m) => m.type === 'arbitrage.update').event_id).toBe(e3.id);
  });

  it('resume_from replays the arbitrage.updates a client missed, through its thresholds', async () => {
    const C = 'AR2';
    const first = await subscribe({ channel: 'arbitrage', contest_ids: [C], min_roi_pct: 3 });
    const e1 = await update(C, [arb(C, 'X', 5, 3, 1_000)]);
    expect((await first.next((m) => m.type === 'arbitrage.update')).event_id).toBe(e1.id);
    await first.close();
    await update(C, [arb(C, 'Y', 2, null, 200)]);
    const e3 = await update(C, [arb(C, 'Y', 2, null, 200), arb(C, 'Z', 4, -0.5, 600)]);
    const e4 = await update(C, []);
    const again = await subscribe({ channel: 'arbitrage', contest_ids: [C], min_roi_pct: 3, resume_from: { [C]: e1.id } });
    const got = [await again.next((m) => m.type === 'arbitrage.update'), await again.next((m) => m.type === 'arbitrage.update')];
    expect(got.map((m) => [m.event_id, m.arbitrages.map((a: Arbitrage) => a.arbitrage_id)])).toEqual([
      [e3.id, ['Z']],
      [e4.id, []],
    ]);
    const e5 = await update(C, [arb(C, 'W', 9, 8, 100)]);
    expect(await again.next((m) => m.type === 'arbitrage.update')).toMatchObject({ event_id: e5.id, arbitrages: [{ arbitrage_id: 'W' }] });
    expect(updates(again, C, 'arbitrage.update')).toHaveLength(3);
  });

  it('needs arbitrage:read and stream:realtime', async () => {
    for (const [entitlements, missing] of [
      [['arbitrage:read'], ['stream:realtime']],
      [['stream:realtime', 'signals:read'], ['arbitrage:read']],
    ] as [string[], string[]][]) {
      const c = await h.connect((await h.key('pro', { entitlements })).api_key);
      expect(await c.request({ action: 'subscribe', channel: 'arbitrage' })).toMatchObject({ type: 'error', code: 'entitlement_required', channel: 'arbitrage', missing });
    }
    const free = await h.connect((await h.key('free')).api_key);
    expect(await free.request({ action: 'subscribe', channel: 'arbitrage' })).toMatchObject({ code: 'entitlement_required' });
    const ok = await h.connect((await h.key('pro', { entitlements: STREAM })).api_key);
    expect(await ok.request({ action: 'subscribe', channel: 'arbitrage', min_investment: -1 })).toMatchObject({ code: 'invalid_message' });
  });
});
