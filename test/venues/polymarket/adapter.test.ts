/**
 * The Polymarket adapter end to end against a local Polymarket serving the recorded payloads
 * (support.ts): catalog over Gamma, books over REST and the market WebSocket, tick-size changes,
 * price_change disagreements, trade prints, and what happens when the venue goes silent.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { parsePositionHash } from '../../../src/domain/hashes.js';
import { normalizeVenueTrade } from '../../../src/domain/trades.js';
import { VenueError } from '../../../src/venues/errors.js';
import { quoteStaleAfterMs } from '../../../src/venues/freshness.js';
import { createPolymarketAdapter, POLYMARKET_FEED_METRICS, type PolymarketAdapter } from '../../../src/venues/polymarket/index.js';
import { MarketStream } from '../../../src/venues/polymarket/stream.js';
import { WS_SILENCE_MS } from '../../../src/venues/polymarket/venue.js';
import { createAdapters, knownVenueIds } from '../../../src/venues/registry.js';
import type { NormalizedQuote, NormalizedTrade } from '../../../src/venues/types.js';
import { FakePolymarket, TEST_NOW, fixtureLines, until } from './support.js';

let venue: FakePolymarket;
let adapter: PolymarketAdapter;
let now: number;

beforeEach(async () => {
  venue = new FakePolymarket();
  await venue.start();
  now = TEST_NOW;
  adapter = createPolymarketAdapter({ urls: venue.urls(), clock: () => now });
});

afterEach(async () => {
  await adapter.close();
  await venue.stop();
});

const tokenOf = (id: string) => adapter.catalog()!.tokens.find((t) => t.token_id === id)!;
const positionOf = (id: string) => tokenOf(id).position_hash!;
/** A runner listed at tick 0.01 whose served book states no tick_size of its own (a rest-clob-book-2024 copy). */
const plainTick = () => adapter.catalog()!.tokens.find((t) => t.position_hash !== null && t.tick_size === 0.01 && venue.books.get(t.token_id)?.tick_size === undefined)!;

/** Connected, subscribed, and the subscription's snapshots handled (the capture's book is live). */
async function connectLive(): Promise<void> {
  await adapter.connect();
  await venue.untilSubscribed();
  await until(() => adapter.feedStats().frames >= adapter.catalog()!.positions.length, 'the subscription snapshots');
}

describe('connect', () => {
  it('reads the catalog from Gamma and subscribes every listed token, both outcomes, on the market channel', async () => {
    await connectLive();
    const cat = adapter.catalog()!;
    expect(venue.requests.filter((r) => r === 'GET /events')).toHaveLength(1);
    expect(cat.contests).toHaveLength(7);
    expect(cat.positions).toHaveLength(12); // 8 sports runners + 2 nominees + Up + Down
    expect(cat.tokens).toHaveLength(22); // both outcomes of each market
    expect(venue.subscribedCount()).toBe(1);
    expect(adapter.feedStats()).toMatchObject({ connections: 1, live_connections: 1, connects: 1, drops: 0, parse_errors: 0, book_mismatches: 0 });
    // The /events read spent a token of the venue-wide, the Gamma and the /events bucket.
    const spent = adapter.rest.limiter.spent;
    expect([spent.get('general'), spent.get('gamma'), spent.get('gamma:/events'), spent.get('clob')]).toEqual([1, 1, 1, undefined]);
  });

  it('its feed metrics read their own figures from feedStats() (counters end in _total, gauges do not)', async () => {
    await connectLive();
    const stats = adapter.feedStats();
    expect(stats).toMatchObject({ rest_requests: 1, rest_failures: 0, rate_limit_waits: 0 });
    const names = POLYMARKET_FEED_METRICS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    for (const m of POLYMARKET_FEED_METRICS) expect(m.name).toMatch(m.kind === 'gauge' ? /^flow_polymarket_[a-z_]+(?<!_total)$/ : /^flow_polymarket_[a-z_]+_total$/);
    const byName = Object.fromEntries(POLYMARKET_FEED_METRICS.map((m) => [m.name, m.read(stats)]));
    expect(byName).toMatchObject({
      flow_polymarket_ws_live_connections: 1,
      flow_polymarket_ws_connects_total: 1,
      flow_polymarket_ws_frames_total: stats.frames,
      flow_polymarket_rest_requests_total: 1,
    });
    expect(stats.frames).toBeGreaterThan(0);
  });

  it('is unreachable → connect rejects retryable, and nothing claims to be connected', async () => {
    venue.failRest = 503;
    const err = await adapter.connect().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VenueError);
    expect((err as VenueError).kind).toBe('retryable');
    expect((err as VenueError).code).toBe('venue_unavailable');
    await expect(adapter.fetchQuotes()).rejects.toMatchObject({ code: 'not_connected' });
  });
});

describe('quotes from the feed', () => {
  it('snapshots answer from live books with no REST read; streamed changes push exact quotes', async () => {
    await connectLive();
    const pos = positionOf(venue.captureToken);
    const [q] = await adapter.fetchQuotes({ position_hashes: [pos] });
    expect(adapter.feedStats().rest_snapshots).toBe(0);
    expect(q).toMatchObject({ price: 0.397, available: 39.73573, ts_event: 1790658661234, ts_init: TEST_NOW, source: 'streaming' });

    const got: NormalizedQuote[] = [];
    adapter.subscribeQuotes((x) => got.push(x), { position_hashes: [pos] });
    for (let i = 0; i < 15; i++) venue.broadcast(venue.nextPriceChange());
    await until(() => got.length === 15, '15 quotes');
    expect(got.at(-1)!.levels.slice(0, 3)).toEqual([
      { price: 0.36, available: 108 },
      { price: 0.389, available: 42.79 },
      { price: 0.39, available: 1858.35 },
    ]);
    expect(got.at(-1)!.ts_event).toBe(1790658701600);
    expect(adapter.feedStats().book_mismatches).toBe(0);
  });

  it('a change whose touch disagrees drops the book and re-reads it from REST', async () => {
    await connectLive();
    const pos = positionOf(venue.captureToken);
    const got: NormalizedQuote[] = [];
    adapter.subscribeQuotes((x) => got.push(x), { position_hashes: [pos] });
    const bad = venue.nextPriceChange();
    (bad.price_changes as Record<string, unknown>[])[0]!.best_ask = '0.35';
    venue.broadcast(bad);
    await until(() => adapter.feedStats().resyncs === 1 && venue.requests.includes('GET /book'), 'the resync');
    expect(adapter.feedStats().book_mismatches).toBe(1);
    // The disagreeing change is not quoted; the re-read snapshot is.
    await until(() => got.length === 1, 'the resynced quote');
    expect(got[0]).toMatchObject({ price: 0.397, available: 39.73573 });
  });

  it('tick_size_change moves the market grid in its order_config (both outcomes)', async () => {
    await connectLive();
    const t = plainTick();
    expect(adapter.orderConfigFor(t.position_hash!)).toMatchObject({ price_tick: 0.01, min_price: 0.01, max_price: 0.99, price_format: 'probability', orders_allowed: false });
    expect(adapter.marketRules(t.position_hash!)).toMatchObject({ tick_size: 0.01, min_order_size: 5, neg_risk: true });
    const [frame] = fixtureLines('ws-tick_size_change.jsonl');
    venue.broadcast({ ...frame, asset_id: t.token_id });
    await until(() => adapter.orderConfigFor(t.position_hash!)!.price_tick === 0.001, 'the new tick');
    expect(adapter.orderConfigFor(t.position_hash!)).toMatchObject({ price_tick: 0.001, min_price: 0.001, max_price: 0.999 });
    expect(adapter.marketRules(t.complement_token_id)!.tick_size).toBe(0.001);
    expect(adapter.marketRules(`polymarket:${t.token_id}`)!.tick_size).toBe(0.001);
    // The venue-wide grid does not move.
    expect(adapter.describe().partner.order_config.price_tick).toBe(0.01);
    expect(adapter.orderConfigFor('no:such:position:0:x:ft')).toBeNull();
  });

  it("a snapshot's tick_size and min_order_size set the market's rules", async () => {
    await connectLive();
    // The capture's book (tick 0.001) is served for Carolina, listed at 0.01 on Gamma.
    expect(tokenOf(venue.captureToken).tick_size).toBe(0.01);
    expect(adapter.marketRules(positionOf(venue.captureToken))!.tick_size).toBe(0.001);
  });
});

describe('a venue that goes silent', () => {
  it('is never shown fresh: no re-confirmation from memory, REST when it answers, an error when nothing does', async () => {
    await connectLive();
    const pos = positionOf(venue.captureToken);
    const freshness = adapter.describe().capabilities.quotes.freshness_ms!;
    const [before] = await adapter.fetchQuotes({ position_hashes: [pos] });
    expect(before!.ts_init).toBe(TEST_NOW);

    // The feed stops (no frames, no PONG) and REST fails: past the silence bound nothing confirms.
    venue.silent = true;
    venue.failRest = 503;
    now += WS_SILENCE_MS + 1;
    expect(adapter.feedStats().live_connections).toBe(0);
    const err = await adapter.fetchQuotes().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VenueError);
    expect((err as VenueError).kind).toBe('retryable');
    await expect(adapter.fetchDepth(pos)).rejects.toMatchObject({ code: 'venue_unavailable' });
    // What ingest holds stops counting as confirmed once the freshness bound passes.
    now = TEST_NOW + freshness + 1;
    expect(quoteStaleAfterMs(before!.ts_init, freshness)! < now).toBe(true);

    // REST answers again: quotes are fresh because the venue answered them, counted as REST reads.
    venue.failRest = null;
    const after = await adapter.fetchQuotes({ position_hashes: [pos] });
    expect(after).toHaveLength(1);
    expect(after[0]!.ts_init).toBe(now);
    expect(adapter.feedStats().rest_snapshots).toBeGreaterThan(0);
    expect(venue.requests).toContain('POST /books');
  });

  it('a dropped connection reads from REST until the new subscription’s snapshots arrive', async () => {
    await connectLive();
    venue.dropConnections();
    await until(() => adapter.feedStats().drops === 1, 'the drop');
    const qs = await adapter.fetchQuotes();
    expect(qs).toHaveLength(12);
    expect(adapter.feedStats().rest_snapshots).toBe(12);
    // The adapter reconnects (backoff 1 s) and resubscribes; its snapshots make the books live again.
    await until(() => adapter.feedStats().connects === 2 && adapter.feedStats().live_connections === 1, 'the reconnect');
    await until(() => adapter.feedStats().frames >= 2 * 12, 'the new snapshots');
    await adapter.fetchQuotes();
    expect(adapter.feedStats().rest_snapshots).toBe(12);
  });
});

describe('the market channel connection', () => {
  it('PINGs are answered by PONG (liveness); a connection silent past the bound is dropped and reported down', async () => {
    let t = TEST_NOW;
    let downs = 0;
    const frames: string[] = [];
    const s = new MarketStream({ url: `${venue.wsBase}/ws/market`, assetIds: [venue.captureToken], now: () => t, onFrames: (fs) => frames.push(...fs.map((f) => f.kind)), onDown: () => downs++ });
    s.start();
    try {
      await s.ready(5_000);
      await until(() => frames.includes('book'), 'the snapshot');
      expect(s.live()).toBe(true);
      t += WS_SILENCE_MS - 1;
      s.tick(); // sends PING; the PONG refreshes liveness
      await until(() => frames.includes('pong'), 'the PONG');
      expect(s.lastMessageAt).toBe(t);
      venue.silent = true;
      t += WS_SILENCE_MS + 1;
      expect(s.live()).toBe(false);
      s.tick(); // silent past the bound: dropped, reported, reconnect scheduled
      await until(() => downs === 1, 'the drop');
      expect(s.drops).toBe(1);
    } finally {
      s.stop();
    }
  });
});

describe('trades and orders', () => {
  it("a print on a runner's No token is the complement of the runner's Yes position", async () => {
    await connectLive();
    const yes = tokenOf(venue.captureToken);
    const got: NormalizedTrade[] = [];
    adapter.subscribeTrades((t) => got.push(t), { contest_ids: [yes.contest_id] });
    venue.broadcast(venue.tradeFrame(yes.complement_token_id));
    await until(() => got.length === 1, 'the print');
    const t = got[0]!;
    expect(t).toMatchObject({
      partner_id: 'polymarket',
      venue_market_id: yes.complement_token_id,
      position_hash: yes.position_hash,
      liquidity_hash: yes.liquidity_hash,
      relation: 'complement',
      taker_action: 'sell',
      price: 0.491,
      size_contracts: 85.36,
      executed_at: 1724564136087,
      ts_init: TEST_NOW,
      trader_id: null,
    });
    // Ingest's complement rule: a sell of No at 0.491 is a buy of Yes at 0.509.
    const key = parsePositionHash(t.position_hash)!;
    const r = normalizeVenueTrade(
      { ...t, partner_name: 'Polymarket' },
      { position_hash: t.position_hash, liquidity_hash: t.liquidity_hash, router_contest_id: key.contest_id, router_market_id: key.market_id, relation: t.relation! },
    );
    expect(r.ok && [r.print.taker_action, r.print.price, r.print.notional_usd]).toEqual(['buy', 0.509, 43.44824]);
  });

  it('orders are refused as orders_not_supported, by position or liquidity hash; no account capabilities', async () => {
    await connectLive();
    const t = tokenOf(venue.captureToken);
    const base = { client_order_id: 'c1', account_id: 'a1', order_type: 'limit' as const, amount: 10, max_price: 0.5 };
    const o = await adapter.placeOrder({ ...base, liquidity_hash: t.liquidity_hash });
    expect(o).toMatchObject({ status: 'rejected', reject_code: 'orders_not_supported', position_hash: t.position_hash, venue_order_id: '', filled_contracts: 0 });
    await expect(adapter.placeOrder({ ...base, liquidity_hash: `polymarket:${t.complement_token_id}` })).rejects.toMatchObject({ code: 'unknown_position' });
    await expect(adapter.placeOrder({ ...base, liquidity_hash: 'sim_exchange:SX-1' })).rejects.toMatchObject({ code: 'liquidity_hash_mismatch' });
    const caps = adapter.describe().capabilities;
    expect(caps.orders).toEqual({ place: false, cancel: false, types: [], async_fills: false });
    await expect(adapter.cancelOrder({ account_id: 'a1', venue_order_id: 'x' })).rejects.toMatchObject({ code: 'capability_not_supported', kind: 'non_retryable' });
    expect(() => adapter.subscribeBalances(() => {})).toThrow(VenueError);
  });
});

describe('registry', () => {
  it('FLOW_VENUES=polymarket builds this adapter on the hosts the environment names', async () => {
    expect(knownVenueIds()).toContain('polymarket');
    const config = loadConfig({
      FLOW_POLYMARKET_GAMMA_URL: venue.restBase,
      FLOW_POLYMARKET_CLOB_URL: venue.restBase,
      FLOW_POLYMARKET_WS_URL: venue.wsBase,
      FLOW_POLYMARKET_MAX_EVENTS: '2',
    });
    const [a] = createAdapters(['polymarket'], { clock: () => now, polymarket: config.polymarket });
    expect(a!.id).toBe('polymarket');
    try {
      await a!.connect();
      expect((a as PolymarketAdapter).catalog()!.contests.map((c) => c.id)).toEqual(['pm_ev_27829', 'pm_ev_27830']);
    } finally {
      await a!.close();
    }
  });
});
