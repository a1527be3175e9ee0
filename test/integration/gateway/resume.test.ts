/**
 * Event ids and resume on real Redis: every log event carries event_id; subscribe with resume_from
 * replays what the client missed, in order, then live, with no gap and no duplicate, also when
 * events are appended while the replay read is in flight (made deterministic by holding the read).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../../api/gateway/index.js';
import { EventLogReader, REPLAY_PAGE, type LogEvent } from '../../../src/store/redis/eventlog.js';
import { liquidityEvent, startHarness, ticksEvent, type Harness } from './harness.js';
import type { WsClient } from '../../../bench/support/ws-client.js';

let h: Harness;
let log: EventLogReader;
beforeAll(async () => {
  h = await startHarness();
  log = new EventLogReader(h.s.rt.redis, h.s.rt.ks);
});
afterEach(async () => h?.closeClients());
afterAll(async () => h?.close());

const now = () => new Date().toISOString();
const marker = (m: any): string => m.changed_entries?.[0]?.liquidity_hash.split(':').at(-1);
const markersOf = (c: WsClient, contest: string) => c.all.filter((m) => m.type === 'liquidity.update' && m.contest_id === contest).map(marker);

/** Appends liquidity events with markers prefix0..prefixN-1; returns their ids. */
async function appendLiquidity(contest: string, prefix: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await h.append('liquidity', contest, liquidityEvent(contest, `${prefix}${i}`))).id);
  return ids;
}

/**
 * A replay reader whose reads wait for open(): before Redis answers ('before-read') or after
 * ('after-read'), so a test can append events at exactly that point of the replay.
 */
class HeldReader {
  private release!: () => void;
  private readonly gate = new Promise<void>((r) => (this.release = r));
  private enter!: () => void;
  /** Resolves when the first read reached the hold point. */
  readonly entered = new Promise<void>((r) => (this.enter = r));
  readonly reads: string[] = [];

  constructor(
    private readonly real: EventLogReader,
    private readonly hold: 'before-read' | 'after-read',
  ) {}

  async eventsAfter(contestId: string, afterId: string, limit?: number): Promise<LogEvent[] | 'unavailable'> {
    this.reads.push(afterId);
    if (this.hold === 'before-read') {
      this.enter();
      await this.gate;
      return this.real.eventsAfter(contestId, afterId, limit);
    }
    const res = await this.real.eventsAfter(contestId, afterId, limit);
    this.enter();
    await this.gate;
    return res;
  }

  open(): void {
    this.release();
  }
}

async function heldGateway(hold: 'before-read' | 'after-read'): Promise<{ gw: Gateway; reader: HeldReader }> {
  const reader = new HeldReader(log, hold);
  return { gw: await h.startGateway({}, { replayReader: reader }), reader };
}

describe('resume_from validation', () => {
  it('refuses a malformed resume_from with invalid_message and creates nothing', async () => {
    const c = await h.connect((await h.key('pro')).api_key);
    const bad: [unknown, RegExp][] = [
      [['x'], /object/],
      ['1-0', /object/],
      [{ A: 5 }, /event_id string/],
      [{ A: '' }, /event_id string/],
      [Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`c${i}`, '1-0'])), /at most 200/],
    ];
    for (const [resume_from, why] of bad) {
      const e = await c.request({ action: 'subscribe', channel: 'liquidity', resume_from });
      expect(e).toMatchObject({ type: 'error', code: 'invalid_message', channel: 'liquidity' });
      expect(e.message).toMatch(why);
    }
    const stray = await c.request({ action: 'subscribe', channel: 'trades', contest_ids: ['A'], resume_from: { B: '1-0' } });
    expect(stray).toMatchObject({ code: 'invalid_message' });
    expect(stray.message).toMatch(/not in contest_ids: B/);
    expect(await c.request({ action: 'subscribe', channel: 'orders', resume_from: { A: '1-0' } })).toMatchObject({ code: 'invalid_message', channel: 'orders' });
    expect(c.all.filter((m) => m.type === 'subscribed')).toEqual([]);
    // An empty object resumes nothing; null counts as omitted.
    expect(await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['A'], resume_from: {} })).toMatchObject({ type: 'subscribed' });
    expect(await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['A'], resume_from: null })).toMatchObject({ type: 'subscribed' });
  });
});

describe('event ids', () => {
  it('every log channel carries event_id, the id the log issued, identical for every subscriber', async () => {
    const k = await h.key('scale', { entitlements: ['stream:realtime', 'stream:ticks', 'trades:read', 'arbitrage:read', 'signals:read'] });
    const c = await h.connect(k.api_key);
    for (const channel of ['liquidity', 'contest_state', 'ticks', 'trades', 'arbitrage', 'signal']) {
      expect(await c.request({ action: 'subscribe', channel, contest_ids: ['EV'] })).toMatchObject({ type: 'subscribed', channel });
    }
    const sent = [
      await h.append('liquidity', 'EV', liquidityEvent('EV')),
      await h.append('contest_state', 'EV', { type: 'contest_state.update', contest_id: 'EV', state: {}, refreshed_at: now(), timestamp: now() }),
      await h.append('ticks', 'EV', ticksEvent('EV')),
      await h.append('trades', 'EV', { type: 'trades', contest_id: 'EV', trades: [], timestamp: now() }),
      await h.append('arbitrage', 'EV', { type: 'arbitrage.update', contest_id: 'EV', arbitrages: [], timestamp: now() }),
      await h.append('signal', 'EV', { type: 'signal.update', contest_id: 'EV', signals: [], timestamp: now() }),
    ];
    const got = [];
    for (let i = 0; i < sent.length; i++) got.push(await c.next((m) => m.contest_id === 'EV'));
    expect(got.map((m) => m.event_id)).toEqual(sent.map((s) => s.id));
    expect(got.map((m) => m.type)).toEqual(['liquidity.update', 'contest_state.update', 'ticks', 'trades', 'arbitrage.update', 'signal.update']);
    expect(c.texts.find((t) => t.includes('"type":"ticks"'))).toMatch(/^\{"type":"ticks","seq":1,"event_id":"\d+-\d+",/);
  });
});

describe('resume', () => {
  it('a client that was away while 100 changes happened gets all 100 in order, none twice, then live', async () => {
    const k = await h.key('free');
    const a = await h.connect(k.api_key);
    await a.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['R'] });
    await h.append('liquidity', 'R', liquidityEvent('R', 'first'));
    const last = (await a.next((m) => m.type === 'liquidity.update')).event_id as string;
    await a.close();
    // Changes made by compute (state and events in one write), interleaved with other channels.
    for (let v = 1; v <= 100; v++) {
      await h.hot.writeComputed('R', v, '[]', '{}', [], {
        events: [
          { channel: 'liquidity', league_id: null, event: JSON.stringify(liquidityEvent('R', `c${v}`)) },
          { channel: 'ticks', league_id: null, event: JSON.stringify(ticksEvent('R')) },
        ],
      });
    }
    const b = await h.connect(k.api_key);
    expect(await b.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['R'], resume_from: { R: last } })).toMatchObject({ type: 'subscribed' });
    await b.next((m) => marker(m) === 'c100');
    await h.append('liquidity', 'R', liquidityEvent('R', 'live'));
    await b.next((m) => marker(m) === 'live');
    expect(markersOf(b, 'R')).toEqual([...Array.from({ length: 100 }, (_, i) => `c${i + 1}`), 'live']);
    const ids = b.all.filter((m) => m.type === 'liquidity.update').map((m) => m.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(b.all.filter((m) => m.type === 'ticks' || m.type === 'error')).toEqual([]);
  });

  it('replays in pages when more than a page was missed', async () => {
    const c = await h.connect((await h.key('free')).api_key);
    const first = (await h.append('liquidity', 'PG', liquidityEvent('PG', 'p0'))).id;
    const n = REPLAY_PAGE * 2 + 5;
    const events = Array.from({ length: n }, (_, i) => ({ channel: 'liquidity' as const, league_id: null, event: JSON.stringify(liquidityEvent('PG', `p${i + 1}`)) }));
    await h.hot.append('PG', events);
    await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['PG'], resume_from: { PG: first } });
    await c.next((m) => marker(m) === `p${n}`, 10_000);
    expect(markersOf(c, 'PG')).toEqual(Array.from({ length: n }, (_, i) => `p${i + 1}`));
  });

  it('ticks seq stays contiguous per connection across replay and live', async () => {
    const c = await h.connect((await h.key('scale')).api_key);
    await c.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['Q2'] });
    await h.append('ticks', 'Q2', ticksEvent('Q2'));
    expect((await c.next((m) => m.type === 'ticks')).seq).toBe(1);
    const from = (await h.append('ticks', 'Q1', ticksEvent('Q1', 'q1-0'))).id;
    for (let i = 1; i <= 5; i++) await h.append('ticks', 'Q1', ticksEvent('Q1', `q1-${i}`));
    // The re-subscribe keeps Q2 live while Q1 replays.
    await c.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['Q1', 'Q2'], resume_from: { Q1: from } });
    await h.append('ticks', 'Q2', ticksEvent('Q2'));
    await h.append('ticks', 'Q1', ticksEvent('Q1', 'q1-6'));
    await c.next((m) => m.type === 'ticks' && m.ticks[0].liquidity_hash === 'sim:q1-6');
    await h.append('ticks', 'Q2', ticksEvent('Q2', 'q2-last'));
    await c.next((m) => m.type === 'ticks' && m.ticks[0].liquidity_hash === 'sim:q2-last');
    const ticks = c.all.filter((m) => m.type === 'ticks');
    expect(ticks.map((m) => m.seq)).toEqual(ticks.map((_, i) => i + 1));
    expect(ticks.filter((m) => m.contest_id === 'Q1').map((m) => m.ticks[0].liquidity_hash)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `sim:q1-${i}`));
    expect(ticks.filter((m) => m.contest_id === 'Q2')).toHaveLength(3);
  });

  it('an id the log never issued or no longer holds: resume_unavailable, then live', async () => {
    const k = await h.key('free');
    const c = await h.connect(k.api_key);
    const watcher = await h.connect(k.api_key);
    await watcher.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['U1'] });
    await h.append('liquidity', 'U1', liquidityEvent('U1', 'old'));
    // Delivered live before c subscribes (else c would rightly get it live too).
    await watcher.next((m) => marker(m) === 'old');
    await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['U1', 'U2'], resume_from: { U1: '1-0', U2: 'not-an-id' } });
    const errors = [await c.next((m) => m.type === 'error'), await c.next((m) => m.type === 'error')];
    expect(errors.map((e) => e.contest_id).sort()).toEqual(['U1', 'U2']);
    for (const e of errors) {
      expect(e).toMatchObject({ type: 'error', code: 'resume_unavailable', channel: 'liquidity', message: expect.stringMatching(/REST/) });
    }
    await h.append('liquidity', 'U1', liquidityEvent('U1', 'new1'));
    await h.append('liquidity', 'U2', liquidityEvent('U2', 'new2'));
    await c.next((m) => marker(m) === 'new1');
    await c.next((m) => marker(m) === 'new2');
    expect(c.all.filter((m) => m.type === 'liquidity.update').map(marker)).toEqual(['new1', 'new2']);
  });

  it('applies the channel filters to replayed events', async () => {
    const c = await h.connect((await h.key('pro')).api_key);
    const print = (id: string, notional: number) => ({ venue_trade_id: id, notional_usd: notional, partner_id: 'sim' });
    const from = (await h.append('trades', 'TF', { type: 'trades', contest_id: 'TF', trades: [print('t0', 5_000)], timestamp: now() })).id;
    await h.append('trades', 'TF', { type: 'trades', contest_id: 'TF', trades: [print('small', 10), print('big', 5_000)], timestamp: now() });
    await h.append('trades', 'TF', { type: 'trades', contest_id: 'TF', trades: [print('tiny', 1)], timestamp: now() });
    await h.append('trades', 'TF', { type: 'trades', contest_id: 'TF', trades: [print('edge', 1_000)], timestamp: now() });
    await c.request({ action: 'subscribe', channel: 'trades', contest_ids: ['TF'], min_notional_usd: 1_000, resume_from: { TF: from } });
    await c.next((m) => m.trades?.[0]?.venue_trade_id === 'edge');
    expect(c.all.filter((m) => m.type === 'trades').map((m) => m.trades.map((t: any) => t.venue_trade_id))).toEqual([['big'], ['edge']]);
  });

  it('a gateway that has delivered nothing of the contest yet: replay, then each later event once', async () => {
    const from = (await appendLiquidity('FR', 'f', 4))[0]!;
    const fromS = (await appendLiquidity('FS', 's', 2))[0]!;
    const gw = await h.startGateway();
    const k = await h.key('free');
    const listed = await h.connect(k.api_key, { gw });
    const every = await h.connect(k.api_key, { gw });
    await listed.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['FR'], resume_from: { FR: from } });
    await every.request({ action: 'subscribe', channel: 'liquidity', resume_from: { FR: from, FS: fromS } });
    for (const c of [listed, every]) await c.next((m) => marker(m) === 'f3');
    await every.next((m) => marker(m) === 's1');
    // The gateway cannot tell yet whether its tail has passed the replay: the next event decides
    // (for `every`, FR goes live while FS still waits).
    await appendLiquidity('FR', 'g', 3);
    for (const c of [listed, every]) {
      await c.next((m) => marker(m) === 'g2');
      expect(markersOf(c, 'FR')).toEqual(['f1', 'f2', 'f3', 'g0', 'g1', 'g2']);
    }
    await appendLiquidity('FS', 't', 2);
    await h.append('liquidity', 'FR', liquidityEvent('FR', 'end'));
    await every.next((m) => marker(m) === 'end');
    expect(markersOf(every, 'FS')).toEqual(['s1', 't0', 't1']);
    expect(markersOf(every, 'FR')).toEqual(['f1', 'f2', 'f3', 'g0', 'g1', 'g2', 'end']);
    await h.closeClients();
    await gw.stop();
  });

  it('a subscription to every contest resumes one contest while the others stay live', async () => {
    const from = (await appendLiquidity('EA', 'a', 3))[0]!;
    const { gw, reader } = await heldGateway('after-read');
    const k = await h.key('free');
    const c = await h.connect(k.api_key, { gw });
    await c.request({ action: 'subscribe', channel: 'liquidity', resume_from: { EA: from } });
    await reader.entered;
    await h.append('liquidity', 'EB', liquidityEvent('EB', 'b0'));
    await c.next((m) => marker(m) === 'b0');
    await appendLiquidity('EA', 'x', 2);
    reader.open();
    await c.next((m) => marker(m) === 'x1');
    await h.append('liquidity', 'EA', liquidityEvent('EA', 'y'));
    await h.append('liquidity', 'EB', liquidityEvent('EB', 'b1'));
    await c.next((m) => marker(m) === 'b1');
    expect(markersOf(c, 'EA')).toEqual(['a1', 'a2', 'x0', 'x1', 'y']);
    expect(markersOf(c, 'EB')).toEqual(['b0', 'b1']);
    await gw.stop();
  });
});

describe('replay racing live events', () => {
  for (const hold of ['after-read', 'before-read'] as const) {
    it(`events appended while the replay read is held (${hold}): no gap, no duplicate`, async () => {
      const contest = `RACE-${hold}`;
      const from = (await appendLiquidity(contest, 'r', 4))[0]!;
      const { gw, reader } = await heldGateway(hold);
      const watcher = await h.connect((await h.key('free')).api_key, { gw });
      await watcher.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [contest] });
      const c = await h.connect((await h.key('free')).api_key, { gw });
      expect(await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [contest], resume_from: { [contest]: from } })).toMatchObject({ type: 'subscribed' });
      await reader.entered;
      // Appended while the read is held: the gateway's tail delivers them (the watcher sees them)
      // while the resuming connection must wait. 'before-read': the read will hold them too.
      await appendLiquidity(contest, 'm', 5);
      await watcher.next((m) => marker(m) === 'm4');
      expect(markersOf(c, contest)).toEqual([]);
      reader.open();
      await c.next((m) => marker(m) === 'm4');
      await appendLiquidity(contest, 'z', 2);
      await c.next((m) => marker(m) === 'z1');
      expect(markersOf(c, contest)).toEqual(['r1', 'r2', 'r3', 'm0', 'm1', 'm2', 'm3', 'm4', 'z0', 'z1']);
      await h.closeClients();
      await gw.stop();
    });
  }

  it('a re-subscribe or unsubscribe during the replay drops it and what it buffered', async () => {
    const from = (await appendLiquidity('RS', 's', 3))[0]!;
    const { gw, reader } = await heldGateway('after-read');
    const k = await h.key('free');
    const c = await h.connect(k.api_key, { gw });
    const d = await h.connect(k.api_key, { gw });
    const watcher = await h.connect(k.api_key, { gw });
    await watcher.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['RS'] });
    await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['RS'], resume_from: { RS: from } });
    await d.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['RS'], resume_from: { RS: from } });
    await reader.entered;
    await h.append('liquidity', 'RS', liquidityEvent('RS', 'buffered'));
    await watcher.next((m) => marker(m) === 'buffered');
    // c goes plain live, d leaves; then the held reads answer.
    expect(await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['RS'] })).toMatchObject({ type: 'subscribed' });
    expect(await d.request({ action: 'unsubscribe', channel: 'liquidity' })).toMatchObject({ type: 'unsubscribed' });
    reader.open();
    await h.append('liquidity', 'RS', liquidityEvent('RS', 'after'));
    await c.next((m) => marker(m) === 'after');
    await d.request({ action: 'ping' });
    expect(markersOf(c, 'RS')).toEqual(['after']);
    expect(markersOf(d, 'RS')).toEqual([]);
    await h.closeClients();
    await gw.stop();
  });

  it('a replay larger than the send buffer waits for the client instead of dropping', async () => {
    const gw = await h.startGateway({ maxBackpressureBytes: 64 * 1024 });
    const c = await h.connect((await h.key('free')).api_key, { gw });
    const from = (await h.append('liquidity', 'BIG', liquidityEvent('BIG', 'b'))).id;
    const n = 300;
    await h.hot.append(
      'BIG',
      Array.from({ length: n }, (_, i) => ({ channel: 'liquidity' as const, league_id: null, event: JSON.stringify({ ...liquidityEvent('BIG', `b${i}`), pad: 'x'.repeat(20_000) }) })),
    );
    c.socket.pause();
    c.send({ action: 'subscribe', channel: 'liquidity', contest_ids: ['BIG'], resume_from: { BIG: from } });
    await new Promise((r) => setTimeout(r, 300));
    c.socket.resume();
    await c.next((m) => marker(m) === `b${n - 1}`, 10_000);
    expect(markersOf(c, 'BIG')).toEqual(Array.from({ length: n }, (_, i) => `b${i}`));
    expect(c.all.filter((m) => m.type === 'error')).toEqual([]);
    await h.closeClients();
    await gw.stop();
  });
});

describe('a gateway the feed was trimmed past', () => {
  it('tells the contest subscribers events_missed, and resuming from their last id fills the gap', async () => {
    const k = await h.key('free');
    const c = await h.connect(k.api_key);
    await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['G1'] });
    const [seen] = await appendLiquidity('G1', 'g-before', 1);
    await c.next((m) => marker(m) === 'g-before0');
    // An event that reached the contest's log but not the feed the gateway reads (the feed's cap
    // trimmed it before the gateway got there): written to the log alone, as the script would.
    const missing = await h.s.rt.redis.xadd(h.s.rt.ks.k('ev', 'G1'), '*', 'ch', 'liquidity', 'l', '', 'e', JSON.stringify(liquidityEvent('G1', 'g-lost')));
    await appendLiquidity('G1', 'g-after', 1);
    const told = await c.next((m) => m.type === 'error');
    expect(told).toMatchObject({ type: 'error', code: 'events_missed', channel: 'liquidity', contest_id: 'G1', message: expect.stringMatching(/resume_from/) });
    await c.next((m) => marker(m) === 'g-after0');
    expect(markersOf(c, 'G1')).toEqual(['g-before0', 'g-after0']);
    // The client does as told: resuming from its last id before the gap brings the missed event back, once.
    const again = await h.connect(k.api_key);
    await again.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['G1'], resume_from: { G1: seen! } });
    await again.next((m) => marker(m) === 'g-after0');
    expect(markersOf(again, 'G1')).toEqual(['g-lost', 'g-after0']);
    expect(missing).toMatch(/^\d+-\d+$/);
  });
});
