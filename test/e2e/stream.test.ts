/**
 * The stream end to end: simulator → ingest → compute → event log → gateway → WebSocket clients,
 * with the spec's tick-sending rule, per-connection seq, outlier flags and withholding, event ids,
 * and resume (REST snapshot then stream; reconnect after missing changes); and a practice deposit's
 * balance.update through the api role's account-event relay.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWs, type WsClient } from '../../bench/support/ws-client.js';
import { client, demoKey, eventually, findTotalLine } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let c: ReturnType<typeof client>;
let key: string;
let line: Awaited<ReturnType<typeof findTotalLine>>;
const sockets: WsClient[] = [];
let a: WsClient;

const exOver = () => line.over.partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange').liquidity_hash;
const book01Over = () => line.over.partner_liquidities.find((q: any) => q.partner_id === 'sim_book01').liquidity_hash;

async function open(): Promise<WsClient> {
  const ws = await connectWs(`ws://127.0.0.1:${svc.streamPort}/flow/v1/stream?api_key=${key}`);
  sockets.push(ws);
  await ws.next((m) => m.type === 'connected');
  return ws;
}
const setOver = (partner: string, price: number, available: number) =>
  c.sim('/sim/v1/quotes', { partner_id: partner, position_hash: line.over.position_hash, price, available });
/** The next ticks event carrying a tick for this quote. */
const tickFor = (ws: WsClient, hash: string, pred: (t: any) => boolean = () => true) =>
  ws.next((m) => m.type === 'ticks' && m.ticks.some((t: any) => t.liquidity_hash === hash && pred(t)), 5_000).then((m) => ({ event: m, tick: m.ticks.find((t: any) => t.liquidity_hash === hash && pred(t)) }));

beforeAll(async () => {
  // Resume tests reconnect while other sockets of the same key stay open.
  svc = await startService({ FLOW_STREAM_MAX_CONNECTIONS_PER_KEY: '20' });
  key = demoKey(svc);
  c = client(svc, key);
  await c.sim('/sim/v1/freeze', { frozen: true });
  line = await findTotalLine(c);
  a = await open();
  expect(await a.request({ action: 'subscribe', channel: 'ticks', contest_ids: [line.contestId] })).toMatchObject({ type: 'subscribed', channel: 'ticks', contest_ids: [line.contestId] });
  expect((await a.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [line.contestId] })).type).toBe('subscribed');
  // Exactly three real books near each other so the median exists (an emptied book does not count).
  await setOver('sim_sportsbook', 0.6, 0);
  await setOver('sim_book01', 0.6, 3_000);
  await setOver('sim_p2p', 0.6, 3_000);
  await setOver('sim_exchange', 0.6, 5_000);
  await tickFor(a, exOver(), (t) => t.available === 5_000);
  await a.drain(() => true, 300);
}, 120_000);
afterAll(async () => {
  for (const s of sockets) await s.close().catch(() => undefined);
  await svc?.cleanup();
}, 60_000);

describe('ticks', () => {
  it('a price change sends a tick with every field, and seq grows by one per event', async () => {
    await setOver('sim_exchange', 0.61, 5_000);
    const first = await tickFor(a, exOver(), (t) => t.price === 0.61);
    expect(first.tick).toMatchObject({
      position_hash: line.over.position_hash,
      partner_id: 'sim_exchange',
      partner_name: expect.any(String),
      price: 0.61,
      american_odds: '-156',
      available: 5_000,
      liquidity_hash: exOver(),
      actionable: true,
      source: 'streaming',
      outlier: false,
      median: 0.6,
    });
    expect(Object.keys(first.tick).sort()).toEqual(
      ['actionable', 'american_odds', 'as_of', 'available', 'buy_id', 'fee_packet', 'is_stale', 'liquidity_hash', 'median', 'outlier', 'partner_id', 'partner_name', 'position_hash', 'price', 'source'].sort(),
    );
    expect(first.event).toMatchObject({ type: 'ticks', contest_id: line.contestId, seq: expect.any(Number), event_id: expect.stringMatching(/^\d+-\d+$/), timestamp: expect.any(String) });
    await setOver('sim_exchange', 0.62, 5_000);
    const second = await tickFor(a, exOver(), (t) => t.price === 0.62);
    expect(second.event.seq).toBe(first.event.seq + 1);
  });

  it('a size-only move above USD 1,000 sends no tick but a liquidity.update', async () => {
    await setOver('sim_exchange', 0.62, 4_000);
    const upd = await a.next((m) => m.type === 'liquidity.update' && m.changed_entries.some((e: any) => e.liquidity_hash === exOver() && e.available === 4_000), 5_000);
    expect(upd.refresh_required).toBe(false);
    expect(upd.event_id).toMatch(/^\d+-\d+$/);
    const ticks = await a.drain((m) => m.type === 'ticks', 400);
    expect(ticks.flatMap((m) => m.ticks).filter((t: any) => t.liquidity_hash === exOver()).map((t: any) => [t.price, t.available, t.is_stale, t.as_of])).toEqual([]);
  });

  it('sends size-only moves that shrink to USD 1,000 or less, empty, or refill from empty', async () => {
    await setOver('sim_exchange', 0.62, 1_000);
    expect((await tickFor(a, exOver(), (t) => t.available === 1_000)).tick.price).toBe(0.62);
    await setOver('sim_exchange', 0.62, 0);
    const emptied = await tickFor(a, exOver(), (t) => t.available === 0);
    expect(emptied.tick.actionable).toBe(false);
    await setOver('sim_exchange', 0.62, 2_500);
    expect((await tickFor(a, exOver(), (t) => t.available === 2_500)).tick.actionable).toBe(true);
    // Growing from 2,500 to 3,000 is a size-only move above the threshold: nothing.
    await setOver('sim_exchange', 0.62, 3_000);
    await a.next((m) => m.type === 'liquidity.update' && m.changed_entries.some((e: any) => e.liquidity_hash === exOver() && e.available === 3_000), 5_000);
    const quiet = await a.drain((m) => m.type === 'ticks', 400);
    expect(quiet.flatMap((m) => m.ticks).filter((t: any) => t.liquidity_hash === exOver())).toEqual([]);
  });

  it('flags an outlier (> 0.15 from the median of three real books) without removing it', async () => {
    await setOver('sim_book01', 0.8, 3_000);
    const { tick } = await tickFor(a, book01Over(), (t) => t.price === 0.8);
    expect(tick.outlier).toBe(true);
    expect(tick.median).toBe(0.62);
    await setOver('sim_book01', 0.6, 3_000);
    expect((await tickFor(a, book01Over(), (t) => t.price === 0.6)).tick.outlier).toBe(false);
  });

  it('seq is per connection: a second connection counts from its own start', async () => {
    const b = await open();
    await b.request({ action: 'subscribe', channel: 'ticks', contest_ids: [line.contestId] });
    await setOver('sim_exchange', 0.63, 3_000);
    const fromA = await tickFor(a, exOver(), (t) => t.price === 0.63);
    const fromB = await tickFor(b, exOver(), (t) => t.price === 0.63);
    // b counts its own events from 1, whatever else of the contest reached it first (a slow machine
    // may deliver another tick of the contest before this one); a counts from its own, earlier start.
    const bSeqs = () => b.all.filter((m) => m.type === 'ticks').map((m) => m.seq);
    expect(bSeqs()[0]).toBe(1);
    expect(fromB.event.seq).toBe(bSeqs().indexOf(fromB.event.seq) + 1);
    expect(fromA.event.seq).toBeGreaterThan(fromB.event.seq);
    await setOver('sim_exchange', 0.64, 3_000);
    const next = await tickFor(b, exOver(), (t) => t.price === 0.64);
    expect(bSeqs()).toEqual(bSeqs().map((_, i) => i + 1));
    expect(next.event.seq).toBeGreaterThan(fromB.event.seq);
  });

  it('a withheld quote is sent as gone, then never ticks while withheld', async () => {
    const home = (await c.api(`/flow/v1/contests/${line.contestId}/liquidity`)).body.data.find((p: any) => p.market_key === 'moneyline' && p.side_key === 'home');
    for (const v of ['sim_exchange', 'sim_p2p', 'sim_quotes']) {
      await c.sim('/sim/v1/quotes', { partner_id: v, position_hash: home.position_hash, price: 0.55, available: 2_000, listed_side: 'home' });
    }
    const bookHash = home.partner_liquidities.find((q: any) => q.partner_id === 'sim_book01').liquidity_hash;
    await c.sim('/sim/v1/quotes', { partner_id: 'sim_book01', position_hash: home.position_hash, price: 0.55, available: 2_000, listed_side: 'away' });
    const gone = await tickFor(a, bookHash, (t) => t.available === 0);
    expect(gone.tick.position_hash).toBe(home.position_hash);
    await c.sim('/sim/v1/quotes', { partner_id: 'sim_book01', position_hash: home.position_hash, price: 0.4, available: 2_000, listed_side: 'away' });
    await eventually(
      () => c.api(`/flow/v1/contests/${line.contestId}/liquidity`),
      (r) => r.status === 200,
    );
    const later = await a.drain((m) => m.type === 'ticks', 600);
    expect(later.flatMap((m) => m.ticks).filter((t: any) => t.liquidity_hash === bookHash)).toEqual([]);
  });
});

describe('trades channel', () => {
  it('delivers prints of the subscribed contests at or above min_notional_usd, deltas only', async () => {
    const t = await open();
    expect((await t.request({ action: 'subscribe', channel: 'trades' })).code).toBe('contest_ids_required');
    expect(await t.request({ action: 'subscribe', channel: 'trades', contest_ids: [line.contestId], min_notional_usd: 10 })).toMatchObject({ type: 'subscribed', channel: 'trades' });
    const emit = (size: number) =>
      c.sim('/sim/v1/trades', { partner_id: 'sim_exchange', position_hash: line.over.position_hash, price: 0.5, size_contracts: size, taker_action: 'buy' });
    await emit(4); // notional 2: below the filter
    await emit(40); // notional 20
    const m = await t.next((x) => x.type === 'trades', 5_000);
    expect(m.contest_id).toBe(line.contestId);
    expect(m.event_id).toMatch(/^\d+-\d+$/);
    expect(m.trades.map((p: any) => p.notional_usd)).toEqual([20]);
    expect(m.trades[0]).toMatchObject({ partner_id: 'sim_exchange', position_hash: line.over.position_hash, taker_action: 'buy', size_contracts: 40, price: 0.5 });
    const more = await t.drain((x) => x.type === 'trades', 300);
    expect(more.flatMap((x) => x.trades).filter((p: any) => p.notional_usd < 10)).toEqual([]);
  });
});

describe('contest_state channel', () => {
  it('delivers game state set through the simulator', async () => {
    expect((await a.request({ action: 'subscribe', channel: 'contest_state', contest_ids: [line.contestId] })).type).toBe('subscribed');
    await c.sim(`/sim/v1/contests/${line.contestId}/state`, { game_status: 'live', clock: { display: '01:00', remaining_seconds: 60, is_running: false } });
    const m = await a.next((x) => x.type === 'contest_state.update' && x.state?.clock?.display === '01:00', 5_000);
    expect(m).toMatchObject({ contest_id: line.contestId, event_id: expect.stringMatching(/^\d+-\d+$/), refreshed_at: expect.any(String), timestamp: expect.any(String) });
  });
});

describe('event ids and resume', () => {
  const liquidityUpdate = (ws: WsClient, available: number) =>
    ws.next((m) => m.type === 'liquidity.update' && m.changed_entries.some((e: any) => e.liquidity_hash === exOver() && e.available === available), 5_000);
  const liquidityOf = () => c.api(`/flow/v1/contests/${line.contestId}/liquidity`);
  const available = (m: any) => m.changed_entries.find((e: any) => e.liquidity_hash === exOver())?.available;

  it('GET liquidity meta.event_id is the id of the last liquidity.update received', async () => {
    await setOver('sim_exchange', 0.6, 7_000);
    const upd = await liquidityUpdate(a, 7_000);
    const r = await eventually(liquidityOf, (x) => x.body.meta.event_id === upd.event_id);
    expect(r.body.meta.event_id).toBe(upd.event_id);
    expect(r.body.data.find((p: any) => p.position_hash === line.over.position_hash).partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange').available).toBe(7_000);
  });

  it('snapshot then stream: GET liquidity, then subscribe with resume_from meta.event_id, misses nothing', async () => {
    await setOver('sim_exchange', 0.6, 7_100);
    await liquidityUpdate(a, 7_100);
    const snap = await eventually(liquidityOf, (x) => quoteAvailable(x) === 7_100);
    expect(quoteAvailable(snap)).toBe(7_100);
    // A change between the snapshot and the subscribe: without resume it would be lost.
    await setOver('sim_exchange', 0.6, 7_200);
    await liquidityUpdate(a, 7_200);
    const s = await open();
    expect(await s.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [line.contestId], resume_from: { [line.contestId]: snap.body.meta.event_id } })).toMatchObject({ type: 'subscribed' });
    await liquidityUpdate(s, 7_200);
    await setOver('sim_exchange', 0.6, 7_300);
    await liquidityUpdate(s, 7_300);
    const got = s.all.filter((m) => m.type === 'liquidity.update');
    expect(got.map(available)).toEqual([7_200, 7_300]);
    await s.close();
  });

  it('a client away for 5 s while 100 changes happen resumes from its last event_id: all 100, in order, none twice', async () => {
    const r1 = await open();
    await r1.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [line.contestId] });
    await setOver('sim_exchange', 0.6, 8_000);
    const last = (await liquidityUpdate(r1, 8_000)).event_id;
    await r1.close();
    const away = Date.now();
    const seen: any[] = [];
    for (let i = 1; i <= 100; i++) {
      await setOver('sim_exchange', 0.6, 8_000 + i);
      seen.push(await liquidityUpdate(a, 8_000 + i));
    }
    await new Promise((res) => setTimeout(res, Math.max(0, 5_000 - (Date.now() - away))));
    const r2 = await open();
    await r2.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [line.contestId], resume_from: { [line.contestId]: last } });
    await liquidityUpdate(r2, 8_100);
    await setOver('sim_exchange', 0.6, 8_200);
    await liquidityUpdate(r2, 8_200);
    await liquidityUpdate(a, 8_200);
    const got = r2.all.filter((m) => m.type === 'liquidity.update');
    // The very events the connected client got after `last`, same ids, same order, each once. (A
    // slow machine may add one of its own between two changes, e.g. the quote turning stale: both
    // clients then have it.)
    const live = a.all.filter((m) => m.type === 'liquidity.update' && m.contest_id === line.contestId);
    const fromLast = live.slice(live.findIndex((m) => m.event_id === last) + 1);
    expect(got.map((m) => m.event_id)).toEqual(fromLast.map((m) => m.event_id));
    expect(new Set(got.map((m) => m.event_id)).size).toBe(got.length);
    expect(seen.every((m) => got.some((g) => g.event_id === m.event_id))).toBe(true);
    // Every change once, in order.
    const changes = got.map(available).filter((x, i, all) => x !== undefined && x !== all[i - 1]);
    expect(changes).toEqual([...Array.from({ length: 100 }, (_, i) => 8_001 + i), 8_200]);
    await r2.close();
  }, 60_000);

  it('an id the service never issued: resume_unavailable, then live', async () => {
    const u = await open();
    await u.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [line.contestId], resume_from: { [line.contestId]: '1-0' } });
    expect(await u.next((m) => m.type === 'error', 5_000)).toMatchObject({ code: 'resume_unavailable', channel: 'liquidity', contest_id: line.contestId });
    await setOver('sim_exchange', 0.6, 9_000);
    expect((await liquidityUpdate(u, 9_000)).event_id).toMatch(/^\d+-\d+$/);
    await u.close();
  });
});

describe('balance', () => {
  it('a practice deposit over REST reaches the balance channel through the api role’s relay and the event log', async () => {
    const b = await open();
    expect(await b.request({ action: 'subscribe', channel: 'balance' })).toEqual({ type: 'subscribed', channel: 'balance', contest_ids: null });
    const before = (await c.api('/flow/v1/auth/account/paper')).body.data.balance as number;
    const r = await c.api('/flow/v1/auth/account/paper/deposit', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body: JSON.stringify({ amount: 12.5 }) });
    expect(r.status).toBe(201);
    const ev = await b.next((m) => m.type === 'balance.update', 5_000);
    expect(ev).toMatchObject({ partner_id: 'practice', currency: 'ATLAS', balance: before + 12.5, cause: 'wallet', router_order_id: null });
    await b.close();
  });
});

function quoteAvailable(r: { body: any }): number | undefined {
  return r.body.data.find((p: any) => p.position_hash === line.over.position_hash)?.partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange')?.available;
}
