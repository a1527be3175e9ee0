/** Routing of log events (orders and balance: account events in the feed) to subscribers: contests, per-connection seq, event ids, filters, private channels, scale-out. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/ids.js';
import { LOG_LIMITS, logKeys } from '../../../src/store/redis/eventlog.js';
import { liquidityEvent, startHarness, ticksEvent, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterEach(async () => h?.closeClients());
afterAll(async () => h?.close());

const now = () => new Date().toISOString();

describe('liquidity', () => {
  it('routes by contest, unfiltered gets every contest, payloads are verbatim and never duplicated', async () => {
    const k = await h.key('free');
    const a = await h.connect(k.api_key);
    const b = await h.connect(k.api_key);
    const every = await h.connect(k.api_key);
    await a.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['A'] });
    await b.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['A', 'B'] });
    // Unfiltered first, then filtered, then unfiltered again: the socket must end in exactly one topic set.
    await every.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['A'] });
    expect(await every.request({ action: 'subscribe', channel: 'liquidity' })).toEqual({ type: 'subscribed', channel: 'liquidity', contest_ids: null });

    const sent: Record<string, string> = {};
    for (const id of ['A', 'B', 'C']) sent[id] = await h.publish('liquidity', id, liquidityEvent(id));
    sent.end = await h.publish('liquidity', 'END', liquidityEvent('END'));
    await every.next((m) => m.contest_id === 'END');
    await h.publish('liquidity', 'A', liquidityEvent('A', 'end-a'));
    await a.next((m) => m.changed_entries?.[0]?.liquidity_hash.endsWith('end-a'));
    await b.next((m) => m.changed_entries?.[0]?.liquidity_hash.endsWith('end-a'));
    await every.next((m) => m.changed_entries?.[0]?.liquidity_hash.endsWith('end-a'));

    const ids = (c: typeof a) => c.all.filter((m) => m.type === 'liquidity.update').map((m) => m.contest_id);
    expect(ids(a)).toEqual(['A', 'A']);
    expect(ids(b)).toEqual(['A', 'B', 'A']);
    expect(ids(every)).toEqual(['A', 'B', 'C', 'END', 'A']);
    // The logged event string is forwarded byte for byte, with only its event_id spliced in.
    expect(every.texts).toContain(sent.C);
    expect(sent.C).toMatch(/^\{"type":"liquidity.update","event_id":"\d+-\d+","contest_id":"C",/);
    expect(b.texts).toContain(sent.B);
  });

  it('contest_state goes to its subscribers only', async () => {
    const c = await h.connect((await h.key('pro')).api_key);
    const other = await h.connect((await h.key('pro')).api_key);
    await c.request({ action: 'subscribe', channel: 'contest_state', contest_ids: ['S1'] });
    await other.request({ action: 'subscribe', channel: 'contest_state' });
    const ev = { type: 'contest_state.update', contest_id: 'S1', state: { game_status: 'live' }, refreshed_at: now(), timestamp: now() };
    await h.publish('contest_state', 'S2', { ...ev, contest_id: 'S2' });
    const text = await h.publish('contest_state', 'S1', ev);
    expect(await c.next()).toEqual({ ...ev, event_id: expect.stringMatching(/^\d+-\d+$/) });
    expect(c.texts.at(-1)).toBe(text);
    expect((await other.next()).contest_id).toBe('S2');
    expect((await other.next()).contest_id).toBe('S1');
    expect(c.all.filter((m) => m.contest_id === 'S2')).toEqual([]);
  });
});

describe('ticks', () => {
  it('adds seq, +1 per ticks event per connection, independent across connections', async () => {
    const k = await h.key('scale');
    const one = await h.connect(k.api_key);
    const two = await h.connect(k.api_key);
    await one.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['T1', 'T2'] });
    await two.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['T1'] });
    const events = [ticksEvent('T1'), ticksEvent('T2'), ticksEvent('T1'), ticksEvent('T3'), ticksEvent('T2')];
    for (const e of events) await h.publish('ticks', e.contest_id, e);
    const got1 = [await one.next(), await one.next(), await one.next(), await one.next()];
    const got2 = [await two.next(), await two.next()];
    expect(got1.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    expect(got1.map((m) => m.contest_id)).toEqual(['T1', 'T2', 'T1', 'T2']);
    expect(got2.map((m) => m.seq)).toEqual([1, 2]);
    // Apart from seq and event_id, the event is the published one; both connections got the same id.
    expect(got1[0]).toEqual({ ...events[0], seq: 1, event_id: expect.stringMatching(/^\d+-\d+$/) });
    expect(got2[1]).toEqual({ ...events[2], seq: 2, event_id: got1[2].event_id });
    expect(one.texts[one.texts.length - 4]!.startsWith(`{"type":"ticks","seq":1,"event_id":"${got1[0].event_id}","contest_id":"T1"`)).toBe(true);
    // Re-subscribing keeps counting on the same connection.
    await two.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['T2'] });
    await h.publish('ticks', 'T2', ticksEvent('T2'));
    expect((await two.next((m) => m.type === 'ticks')).seq).toBe(3);
  });
});

describe('trades', () => {
  const print = (notional: number, id: string) => ({
    partner_id: 'sim',
    partner_name: 'Sim',
    venue_trade_id: id,
    venue_market_id: 'vm',
    liquidity_hash: 'sim:x',
    position_hash: 'TR:ml:home:0:p1:ft',
    router_contest_id: 'TR',
    router_market_id: 'm',
    taker_action: 'buy',
    price: 0.5,
    size_contracts: notional * 2,
    notional_usd: notional,
    is_block: false,
    trader_id: null,
    trader_id_kind: null,
    executed_at: now(),
  });
  const tradesEvent = (...prints: ReturnType<typeof print>[]) => ({ type: 'trades', contest_id: 'TR', trades: prints, timestamp: now() });

  it('min_notional_usd drops small prints and whole events with nothing left', async () => {
    const k = await h.key('pro');
    const big = await h.connect(k.api_key);
    const all = await h.connect(k.api_key);
    expect(await big.request({ action: 'subscribe', channel: 'trades', contest_ids: ['TR'], min_notional_usd: 1000 })).toMatchObject({ type: 'subscribed' });
    await all.request({ action: 'subscribe', channel: 'trades', contest_ids: ['TR'] });

    const mixed = tradesEvent(print(500, 'small'), print(1500, 'large'));
    const mixedText = await h.publish('trades', 'TR', mixed);
    await h.publish('trades', 'TR', tradesEvent(print(200, 'tiny')));
    await h.publish('trades', 'TR', tradesEvent(print(1000, 'edge')));

    const filtered = await big.next();
    expect(filtered).toEqual({ ...mixed, trades: [mixed.trades[1]], event_id: JSON.parse(mixedText).event_id });
    expect((await big.next()).trades.map((t: { venue_trade_id: string }) => t.venue_trade_id)).toEqual(['edge']);
    await all.next();
    expect(all.texts.find((t) => t.startsWith('{"type":"trades"'))).toBe(mixedText);
    expect((await all.next()).trades[0].venue_trade_id).toBe('tiny');
    expect((await all.next()).trades[0].venue_trade_id).toBe('edge');
    expect(big.all.some((m) => m.trades?.some((t: { venue_trade_id: string }) => t.venue_trade_id === 'tiny'))).toBe(false);
  });
});

describe('signal and arbitrage filters', () => {
  it('signal: league_ids, include_beta and min_strength; a clear reaches every subscriber', async () => {
    const k = await h.key('pro');
    const strict = await h.connect(k.api_key);
    const loose = await h.connect(k.api_key);
    await strict.request({ action: 'subscribe', channel: 'signal', league_ids: ['L1'], min_strength: 60 });
    await loose.request({ action: 'subscribe', channel: 'signal', include_beta: true });
    const sig = (id: string, strength: number, status: string) => ({ signal_id: id, signal_type: 'price_move', status, strength, confidence: 'high' });
    const ev = (league: string, signals: object[]) => ({ type: 'signal.update', contest_id: 'G1', league_id: league, signals, timestamp: now() });
    const pub = (league: string, signals: object[]) => h.publish('signal', 'G1', ev(league, signals), { league_id: league });

    await pub('L2', [sig('other-league', 90, 'active')]);
    await pub('L1', [sig('weak', 10, 'active'), sig('strong', 90, 'active'), sig('beta', 95, 'beta')]);
    await pub('L1', [sig('weak-only', 10, 'active')]);
    await pub('L1', []);

    const s1 = await strict.next();
    expect(s1.signals.map((s: { signal_id: string }) => s.signal_id)).toEqual(['strong']);
    expect((await strict.next()).signals).toEqual([]);
    expect(strict.all.filter((m) => m.type === 'signal.update')).toHaveLength(2);

    expect((await loose.next()).signals[0].signal_id).toBe('other-league');
    expect((await loose.next()).signals).toHaveLength(3);
    expect((await loose.next()).signals[0].signal_id).toBe('weak-only');
    expect((await loose.next()).signals).toEqual([]);
  });

  it('arbitrage: after_fee_only and min_roi_pct', async () => {
    const c = await h.connect((await h.key('pro')).api_key);
    await c.request({ action: 'subscribe', channel: 'arbitrage', contest_ids: ['AR'], after_fee_only: true, min_roi_pct: 1 });
    const arb = (id: string, roi: number, profitable: boolean | null) => ({ arbitrage_id: id, roi_pct: roi, after_fee_roi_pct: profitable ? roi - 0.5 : null, profitable_after_fees: profitable, max_investment: 100 });
    const ev = (arbs: object[]) => ({ type: 'arbitrage.update', contest_id: 'AR', league_id: 'L', arbitrages: arbs, timestamp: now() });
    await h.publish('arbitrage', 'AR', ev([arb('x', 3, true), arb('fees-unknown', 5, null), arb('thin', 0.5, true)]));
    await h.publish('arbitrage', 'AR', ev([arb('thin', 0.5, true)]));
    await h.publish('arbitrage', 'AR', ev([]));
    expect((await c.next()).arbitrages.map((a: { arbitrage_id: string }) => a.arbitrage_id)).toEqual(['x']);
    expect((await c.next()).arbitrages).toEqual([]);
  });
});

describe('private channels', () => {
  const order = (id: string) => ({ type: 'order.update', router_order_id: id, partner_id: 'sim', status: 'open', fill_status: 'unfilled', filled_amt: 0, unfilled_amt: 10, avg_price: 0, timestamp: now() });

  it("orders and balance deliver only the key's own account", async () => {
    const mine = await h.key('pro');
    const theirs = await h.key('pro');
    const a = await h.connect(mine.api_key);
    const b = await h.connect(theirs.api_key);
    for (const c of [a, b]) {
      expect(await c.request({ action: 'subscribe', channel: 'orders' })).toEqual({ type: 'subscribed', channel: 'orders', contest_ids: null });
      await c.request({ action: 'subscribe', channel: 'balance' });
    }
    await h.publish('orders', null, order('ord-mine'), { account_id: mine.router_account_id });
    await h.publish('orders', null, order('ord-theirs'), { account_id: theirs.router_account_id });
    await h.publish('balance', null, { type: 'balance.update', account_partner_id: 'ap', balance: 5, timestamp: now() }, { account_id: mine.router_account_id });
    expect((await a.next()).router_order_id).toBe('ord-mine');
    expect((await a.next()).type).toBe('balance.update');
    expect((await b.next()).router_order_id).toBe('ord-theirs');
    await b.drain(() => true, 100);
    expect(a.all.filter((m) => m.router_order_id === 'ord-theirs')).toEqual([]);
    expect(b.all.filter((m) => m.router_order_id === 'ord-mine' || m.type === 'balance.update')).toEqual([]);
  });

  it('an organization key sees its own accounts with all: true or account_ids, never another organization', async () => {
    const org = await h.key('organization');
    const outsider = await h.key('pro');
    const sub = newId('acct');
    await h.s.rt.pool.query("INSERT INTO accounts (router_account_id, workspace_id, environment, external_user_id) VALUES ($1, $2, 'test', 'user-7')", [sub, org.workspace_id]);

    const all = await h.connect(org.api_key);
    const named = await h.connect(org.api_key);
    expect(await all.request({ action: 'subscribe', channel: 'orders', all: true })).toMatchObject({ type: 'subscribed', all: true });
    expect(await named.request({ action: 'subscribe', channel: 'orders', account_ids: ['user-7'] })).toMatchObject({ type: 'subscribed', account_ids: ['user-7'] });
    expect(await named.request({ action: 'subscribe', channel: 'balance', account_ids: [outsider.router_account_id] })).toMatchObject({
      type: 'error',
      code: 'account_forbidden',
    });

    await h.publish('orders', null, order('o-outsider'), { account_id: outsider.router_account_id });
    await h.publish('orders', null, order('o-owner'), { account_id: org.router_account_id });
    await h.publish('orders', null, order('o-sub'), { account_id: sub });
    expect((await all.next()).router_order_id).toBe('o-owner');
    expect((await all.next()).router_order_id).toBe('o-sub');
    expect((await named.next()).router_order_id).toBe('o-sub');
    expect([...all.all, ...named.all].filter((m) => m.router_order_id === 'o-outsider')).toEqual([]);
    expect(named.all.filter((m) => m.router_order_id === 'o-owner')).toEqual([]);
  });
});

describe('private channels: a gateway further behind than the feed holds', () => {
  it('tells its orders and balance subscribers once to refetch (no log holds those events for a resume), then delivers on', async () => {
    const k = await h.key('pro');
    const c = await h.connect(k.api_key);
    const liq = await h.connect(k.api_key);
    await c.request({ action: 'subscribe', channel: 'balance' });
    await c.request({ action: 'subscribe', channel: 'orders' });
    await liq.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['GAP'] });
    const balance = (v: number) => ({ type: 'balance.update', account_partner_id: 'ap_gap', balance_version: v, timestamp: now() });
    // The gateway's position: the feed entry of an event it delivered.
    await h.publish('balance', null, balance(1), { account_id: k.router_account_id });
    expect(await c.next()).toMatchObject({ balance_version: 1 });
    // More than the feed holds, in one script run: that position is trimmed away before the gateway reads on.
    const burst = `for i = 1, tonumber(ARGV[1]) do redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'a', 'acct_nobody', 'ch', 'balance', 'e', '{}') end`;
    await h.s.rt.redis.eval(burst, 1, logKeys(h.s.rt.ks).feed, String(LOG_LIMITS.feedMax + 2_000), String(LOG_LIMITS.feedMax));
    await h.publish('balance', null, balance(2), { account_id: k.router_account_id });
    const missed = [await c.next(), await c.next()];
    expect(missed.map((m) => [m.type, m.code, m.channel]).sort()).toEqual([
      ['error', 'events_missed', 'balance'],
      ['error', 'events_missed', 'orders'],
    ]);
    expect(missed[0].message).toMatch(/refetch/);
    expect(await c.next(undefined, 5_000)).toMatchObject({ balance_version: 2 });
    await c.drain(() => true, 150);
    expect(c.all.filter((m) => m.code === 'events_missed')).toHaveLength(2);
    expect(liq.all.filter((m) => m.type === 'error')).toEqual([]);
  });
});

describe('scale-out', () => {
  it('two gateways on two ports both deliver the same published event', async () => {
    const gw2 = await h.startGateway();
    expect(gw2.port).not.toBe(h.gw.port);
    const k = await h.key('free');
    const c1 = await h.connect(k.api_key);
    const c2 = await h.connect(k.api_key, { gw: gw2 });
    await c1.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['SO'] });
    await c2.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['SO'] });
    const text = await h.publish('liquidity', 'SO', liquidityEvent('SO'));
    await c1.next();
    await c2.next();
    expect(c1.texts.at(-1)).toBe(text);
    expect(c2.texts.at(-1)).toBe(text);
    await h.closeClients();
    await gw2.stop();
  });
});
