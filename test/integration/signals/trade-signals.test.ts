/**
 * Trade-derived signals end to end on real Redis, PostgreSQL and the simulator: prints emitted with
 * POST /sim/v1/trades reach the event log through the ingester, the trade-signal consumer
 * (pipelines/signals/trades.ts) examines them on the compute threads and upserts the signals, each
 * change published as one signal.update. A whale with exact evidence (median, threshold, depth, the
 * pre-start cap), a block, five one-way prints, a buy through the cached quote, trade_burst never
 * stored; a consumer stopped mid-stream, or dead between its upsert and its commit, loses nothing
 * and doubles nothing; the scheduler's sweep clears expired signals.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComputePool } from '../../../pipelines/compute-pool.js';
import { SignalExpirySweeper } from '../../../pipelines/signals/expiry.js';
import { TradeSignalConsumer, tradeSignalKeys, type TradeSignalConsumerDeps } from '../../../pipelines/signals/trades.js';
import { parseWindow } from '../../../src/compute/trade-signals.js';
import type { Signal } from '../../../src/domain/signals.js';
import type { TradePrint } from '../../../src/domain/stream.js';
import { ArbitrageStore } from '../../../src/store/redis/arbitrages.js';
import { logKeys, toLogEvent } from '../../../src/store/redis/eventlog.js';
import { SignalStore } from '../../../src/store/redis/signals.js';
import type { StoredQuote } from '../../../src/venues/types.js';
import { eventually } from '../../support/e2e.js';
import { send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

const VENUE = 'sim_exchange';
let o: OrderStack;
let store: SignalStore;
let compute: ComputePool;
/** Moneyline positions of open contests starting more than an hour from now, one contest each. */
let scheduled: string[];

beforeAll(async () => {
  o = await startOrderStack(11, { trades: true });
  store = new SignalStore(o.s.rt.redis, o.s.rt.ks);
  compute = new ComputePool(1);
  const later = new Set(o.market.catalog.contests.filter((c) => c.status === 'open' && Date.parse(c.starts_at) > Date.now() + 3_600_000).map((c) => c.id));
  const byContest = new Map<string, string>();
  for (const p of o.market.catalog.positions) if (later.has(p.contest_id) && p.market_key === 'moneyline' && !byContest.has(p.contest_id)) byContest.set(p.contest_id, p.position_hash);
  scheduled = [...byContest.values()];
  expect(scheduled.length).toBeGreaterThanOrEqual(8);
}, 120_000);
afterAll(async () => {
  await compute?.close();
  await o?.close();
});

let used = 0;
/** A position (and contest) no other test has touched. */
const fresh = () => scheduled[used++]!;
const contestOf = (h: string) => h.split(':')[0]!;

function consumer(over: Partial<TradeSignalConsumerDeps> = {}): TradeSignalConsumer {
  return new TradeSignalConsumer({
    redis: o.s.rt.redis,
    redisUrl: o.s.env.REDIS_URL!,
    ks: o.s.rt.ks,
    pool: o.s.rt.pool,
    hot: o.hot,
    signals: store,
    compute,
    log: pino({ level: 'silent' }),
    now: Date.now,
    leaseMs: 1_000,
    blockMs: 50,
    ...over,
  }).start();
}

/** Emits a print on the simulator; its venue_trade_id. */
async function emit(positionHash: string, body: Record<string, unknown>): Promise<string> {
  const r = await send(o.s.built.app, 'POST', '/sim/v1/trades', { partner_id: VENUE, position_hash: positionHash, price: 0.5, taker_action: 'buy', ...body }, o.admin);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.venue_trade_id as string;
}

async function contestLog(contestId: string) {
  const raw = (await o.s.rt.redis.xrange(logKeys(o.s.rt.ks).events(contestId), '-', '+')) as [string, string[]][];
  return raw.map((e) => toLogEvent(contestId, e));
}

/** Waits until the print is in the contest's log; its trades event's id and the print. */
async function landed(contestId: string, tradeId: string): Promise<{ eventId: string; print: TradePrint }> {
  const find = async () => {
    for (const e of await contestLog(contestId)) {
      if (e.channel !== 'trades') continue;
      const p = (JSON.parse(e.event) as { trades: TradePrint[] }).trades.find((t) => t.venue_trade_id === tradeId);
      if (p) return { eventId: e.id, print: p };
    }
    return null;
  };
  const hit = await eventually(find, (x) => x !== null, 10_000);
  if (!hit) throw new Error(`print ${tradeId} never reached the log`);
  return hit;
}

const signalsOf = async (contestId: string): Promise<Signal[]> => (await store.live(Date.now())).find((x) => x.contestId === contestId)?.signals ?? [];
const signalUpdates = async (contestId: string) =>
  (await contestLog(contestId)).filter((e) => e.channel === 'signal').map((e) => JSON.parse(e.event) as { type: string; contest_id: string; league_id: string | null; signals: Signal[] });
const msOf = (eventId: string) => Number(eventId.split('-')[0]);
const windowOf = async (h: string) => parseWindow(await o.s.rt.redis.get(tradeSignalKeys(o.s.rt.ks).window(h)));

describe('trade-derived signals from the simulator', () => {
  it('a whale after a baseline: exact evidence, the pre-start cap, one signal.update; trade_burst is computed and never stored', async () => {
    const h = fresh();
    const c = contestOf(h);
    await o.setBook(VENUE, h, [{ price: 0.5, available: 1_000 }, { price: 0.52, available: 3_000 }]);
    const consumerA = consumer();
    try {
      // 20 prints of USD 50, alternating sides: the median is 50, so the threshold is the USD 500 floor.
      for (let i = 0; i < 20; i++) await emit(h, { size_contracts: 100, taker_action: i % 2 ? 'sell' : 'buy' });
      const whaleId = await emit(h, { size_contracts: 4_000 });
      const { eventId } = await landed(c, whaleId);
      await consumerA.drain();
      const whale = (await signalsOf(c)).find((s) => s.dedupe_key === `whale_trade:${VENUE}:${whaleId}`)!;
      expect(whale).toMatchObject({
        signal_type: 'whale_trade',
        status: 'beta',
        // 2,000 is 4× the threshold: 40 + 60 × 2/8.
        strength: 55,
        // 20 prints under the median would be high; before the scheduled start it is at most medium.
        confidence: 'medium',
        detected_at: new Date(msOf(eventId)).toISOString(),
        expires_at: new Date(msOf(eventId) + 600_000).toISOString(),
        venues: [{ partner_id: VENUE, partner_name: VENUE }],
        position: { position_hash: h, router_contest_id: c },
      });
      expect(whale.evidence).toEqual({
        notional_usd: 2_000,
        size_multiple: 4,
        threshold_usd: 500,
        baseline_median_notional_usd: 50,
        // 2,000 against the 4,000 the venue's book showed.
        depth_ratio: 0.5,
        contest_phase: 'pre_start',
        trader_id: null,
        is_block: false,
        partner_id: VENUE,
      });
      // Published once, through the event log, as the whole set.
      const updates = (await signalUpdates(c)).filter((u) => u.signals.some((s) => s.dedupe_key === whale.dedupe_key));
      expect(updates).toHaveLength(1);
      expect(updates[0]!.signals).toEqual([whale]);
      expect(updates[0]!.league_id).toBe(whale.position.router_league_id);
      // 21 prints within seconds on one venue are a burst: computed, never in the store.
      expect(consumerA.stats().computed).toBeGreaterThan(0);
      for (const { signals } of await store.live(Date.now())) expect(signals.filter((s) => s.signal_type === 'trade_burst')).toEqual([]);
      // Each print once in the window.
      expect((await windowOf(h))!.prints).toHaveLength(21);
    } finally {
      await consumerA.stop();
    }
  });

  it('a block print: block_trade, and a whale that says it is a block; a whale names the trader where the venue does', async () => {
    const h = fresh();
    const c = contestOf(h);
    const consumerA = consumer();
    try {
      const id = await emit(h, { size_contracts: 3_000, price: 0.4, is_block: true });
      await landed(c, id);
      await consumerA.drain();
      const signals = await signalsOf(c);
      const block = signals.find((s) => s.dedupe_key === `block_trade:${VENUE}:${id}`)!;
      // ln(1,200/1,000) / ln(50) of the way from 20 to 100.
      expect(block).toMatchObject({ signal_type: 'block_trade', strength: 24, confidence: 'high', venues: [{ partner_id: VENUE, partner_name: VENUE }] });
      // sim_exchange publishes no trader identity.
      expect(block.evidence).toEqual({ notional_usd: 1_200, price: 0.4, trader_id: null, partner_id: VENUE });
      expect(signals.find((s) => s.dedupe_key === `whale_trade:${VENUE}:${id}`)!.evidence).toMatchObject({ notional_usd: 1_200, size_multiple: 2.4, is_block: true });
      // sim_book01 publishes the taker's wallet (and flags no blocks): the whale names it.
      const w = fresh();
      const wid = await emit(w, { partner_id: 'sim_book01', size_contracts: 3_000, price: 0.4, trader_id: '0xdesk1' });
      await landed(contestOf(w), wid);
      await consumerA.drain();
      const whale = (await signalsOf(contestOf(w))).find((s) => s.dedupe_key === `whale_trade:sim_book01:${wid}`)!;
      expect(whale.venues).toEqual([{ partner_id: 'sim_book01', partner_name: 'sim_book01' }]);
      expect(whale.evidence).toMatchObject({ trader_id: '0xdesk1', is_block: false, partner_id: 'sim_book01' });
    } finally {
      await consumerA.stop();
    }
  });

  it('five one-way prints: flow_imbalance; a buy through the cached quote: trade_through with the quote age', async () => {
    const h = fresh();
    const c = contestOf(h);
    const consumerA = consumer();
    try {
      for (let i = 0; i < 5; i++) await emit(h, { size_contracts: 400 });
      const last = await emit(h, { size_contracts: 400 });
      await landed(c, last);
      await consumerA.drain();
      const flow = (await signalsOf(c)).find((s) => s.signal_type === 'flow_imbalance')!;
      // ln(1.2) / ln(20) of the way from 30 to 100.
      expect(flow).toMatchObject({ dedupe_key: `flow_imbalance:${h}:buy`, strength: 34, confidence: 'low' });
      // Six buys of 200: first detected at the fifth, updated (same id) at the sixth.
      expect(flow.evidence).toEqual({
        buy_notional_usd: 1_200,
        sell_notional_usd: 0,
        imbalance: 1,
        venues: [{ partner_id: VENUE, partner_name: VENUE, trades: 6, notional_usd: 1_200 }],
        partner_id: VENUE,
      });
      const flowUpdates = (await signalUpdates(c)).map((u) => u.signals.find((s) => s.signal_type === 'flow_imbalance')).filter((s) => s !== undefined);
      // The fifth and sixth may share a batch: then only the latest is written. Either way, one signal.
      expect(flowUpdates.map((s) => s.evidence.buy_notional_usd)).toEqual(flowUpdates.length === 2 ? [1_000, 1_200] : [1_200]);
      expect(new Set(flowUpdates.map((s) => s.signal_id))).toEqual(new Set([flow.signal_id]));

      const t = fresh();
      await o.setBook(VENUE, t, [{ price: 0.5, available: 1_000 }]);
      const id = await emit(t, { size_contracts: 10, price: 0.53 });
      const { print } = await landed(contestOf(t), id);
      await consumerA.drain();
      const quote = JSON.parse((await o.hot.venueQuotes(contestOf(t), [print.liquidity_hash]))[0]!) as StoredQuote;
      const through = (await signalsOf(contestOf(t))).find((s) => s.signal_type === 'trade_through')!;
      expect(through).toMatchObject({ dedupe_key: `trade_through:${VENUE}:${id}`, strength: 30 });
      expect(through.evidence).toEqual({ price: 0.53, cached_price: 0.5, through: 0.03, quote_age_ms: Date.parse(print.executed_at) - quote.ts_init, partner_id: VENUE });
    } finally {
      await consumerA.stop();
    }
  });

  it('a consumer stopped mid-stream: the next one takes up where it stopped, nothing lost, nothing doubled', async () => {
    const h = fresh();
    const c = contestOf(h);
    const a = consumer();
    const first: string[] = [];
    for (let i = 0; i < 3; i++) first.push(await emit(h, { size_contracts: 400 }));
    await landed(c, first[2]!);
    await a.drain();
    await a.stop();
    // Emitted while no consumer runs.
    const later = [await emit(h, { size_contracts: 400 }), await emit(h, { size_contracts: 400 })];
    await landed(c, later[1]!);
    const b = consumer();
    try {
      await b.drain();
      const flow = (await signalsOf(c)).find((s) => s.signal_type === 'flow_imbalance')!;
      expect(flow.evidence).toMatchObject({ buy_notional_usd: 1_000, venues: [{ partner_id: VENUE, partner_name: VENUE, trades: 5, notional_usd: 1_000 }] });
      expect((await windowOf(h))!.prints.map((p) => p[1])).toEqual([...first, ...later]);
      expect(a.stats().prints + b.stats().prints).toBe(5);
    } finally {
      await b.stop();
    }
  });

  it('a consumer dead between its upsert and its commit: the successor examines the batch again, same signal, no second update, counted once', async () => {
    const h = fresh();
    const c = contestOf(h);
    let writes = 0;
    // Writes, then never returns: the batch is upserted, its window not stored, nothing acknowledged.
    const dying: SignalStore = Object.assign(Object.create(store) as SignalStore, {
      async write(w: Parameters<SignalStore['write']>[0]) {
        await store.write(w);
        writes++;
        return new Promise<boolean>(() => undefined);
      },
    });
    const a = consumer({ signals: dying });
    const id = await emit(h, { size_contracts: 3_000 });
    await landed(c, id);
    await eventually(async () => writes, (n) => n > 0, 10_000);
    expect(writes).toBe(1);
    const before = (await signalsOf(c)).find((s) => s.dedupe_key === `whale_trade:${VENUE}:${id}`)!;
    expect(before).toBeDefined();
    expect(await windowOf(h)).toBeNull();
    await a.stop(50);
    const b = consumer();
    try {
      await b.drain();
      expect(b.stats()).toMatchObject({ prints: 1, duplicates: 0 });
      const after = (await signalsOf(c)).find((s) => s.dedupe_key === before.dedupe_key)!;
      expect(after).toEqual(before);
      expect((await signalUpdates(c)).filter((u) => u.signals.some((s) => s.dedupe_key === before.dedupe_key))).toHaveLength(1);
      expect((await windowOf(h))!.prints.map((p) => p[1])).toEqual([id]);
    } finally {
      await b.stop();
    }
  });

  it("the scheduler's sweep drops expired signals and publishes the set without them", async () => {
    const h = fresh();
    const c = contestOf(h);
    const a = consumer();
    const id = await emit(h, { size_contracts: 3_000 });
    try {
      await landed(c, id);
      await a.drain();
    } finally {
      await a.stop();
    }
    expect((await signalsOf(c)).map((s) => s.signal_type)).toEqual(['whale_trade']);
    // Its life is over (as if 600 s had passed).
    const league = (await signalsOf(c))[0]!.position.router_league_id;
    await o.s.rt.redis.zadd(o.s.rt.ks.k('sigx', c), String(Date.now() - 1), `whale_trade:${VENUE}:${id}`);
    await o.s.rt.redis.zadd(o.s.rt.ks.k('sigidx'), String(Date.now() - 1), `${c}\n${league}`);
    const sweeper = new SignalExpirySweeper({ arbitrages: new ArbitrageStore(o.s.rt.redis, o.s.rt.ks), signals: store, log: pino({ level: 'silent' }), now: Date.now });
    await sweeper.sweep();
    expect(sweeper.signalsSwept).toBe(1);
    expect(await signalsOf(c)).toEqual([]);
    expect((await signalUpdates(c)).at(-1)!.signals).toEqual([]);
  });
});
