/**
 * The Kalshi adapter end to end against the fake venue: the catalog it builds on connect, the book
 * stream's integrity (a seq gap or an impossible delta → the books dropped, resnapshotted and
 * counted, never a wrong quote), staleness of a silent socket, orders on the market's own grid,
 * the rate-limit buckets, and what happens without credentials.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { quoteStaleAfterMs } from '../../../src/venues/freshness.js';
import { KalshiAdapter } from '../../../src/venues/kalshi/adapter.js';
import { KALSHI_DEFAULTS } from '../../../src/venues/kalshi/config.js';
import { createAdapters } from '../../../src/venues/registry.js';
import type { NormalizedQuote, VenueOrder, VenueOrderRequest } from '../../../src/venues/types.js';
import { loadConfig } from '../../../src/config.js';
import { ACCOUNT, COLONIZE_YES, MARS_NO, MARS_YES, kalshiHarness, waitFor, type KalshiHarness } from './harness.js';
import { FakeKalshi } from './fake-kalshi.js';
import { rsaPair } from './support.js';

let h: KalshiHarness | null = null;
afterEach(async () => {
  await h?.adapter.close();
  await h?.dispose?.();
  h = null;
});

async function streaming(): Promise<KalshiHarness> {
  h = await kalshiHarness({ withCredentials: true });
  await h.adapter.connect();
  await waitFor(() => h!.adapter.feedStats().books_synced === 2, 'both books synced');
  return h;
}

const order = (over: Partial<VenueOrderRequest> = {}): VenueOrderRequest => ({
  client_order_id: `c-${Math.random().toString(36).slice(2)}`,
  account_id: ACCOUNT,
  position_hash: MARS_YES,
  order_type: 'market',
  amount: 1.2,
  max_price: 0.125,
  ...over,
});

describe('catalog on connect (series → league, event → contest, market → two positions)', () => {
  it('uses the series and event records where the venue has them, the ticker conventions where not', async () => {
    h = await kalshiHarness({ withCredentials: false });
    await h.adapter.connect();
    const cat = h.adapter.catalog()!;
    expect(cat.leagues.map((l) => [l.id, l.name])).toEqual([
      ['kalshi-KXELONMARS', 'Elon Musk visits Mars'],
      ['kalshi-KXCOLONIZEMARS', 'KXCOLONIZEMARS'],
    ]);
    expect(cat.contests.map((c) => [c.id, c.title, c.tags.kalshi])).toEqual([
      ['kalshi-KXELONMARS-99', 'Will Elon Musk visit Mars?', { series_ticker: 'KXELONMARS', event_ticker: 'KXELONMARS-99', mutually_exclusive: false, category: 'Science and Technology' }],
      ['kalshi-KXCOLONIZEMARS-50', 'Will humans colonize Mars before 2050?', { series_ticker: 'KXCOLONIZEMARS', event_ticker: 'KXCOLONIZEMARS-50', mutually_exclusive: null, category: null }],
    ]);
    expect(cat.contest_markets).toEqual([
      { contest_id: 'kalshi-KXELONMARS-99', market_id: 'binary' },
      { contest_id: 'kalshi-KXCOLONIZEMARS-50', market_id: 'binary' },
    ]);
    expect(cat.positions.map((p) => p.position_hash)).toEqual([MARS_YES, MARS_NO, COLONIZE_YES, COLONIZE_YES.replace(':yes:', ':no:')]);
    // The series record's fee type reaches the quotes: maker fees on KXELONMARS only.
    expect(cat.listings.map((l) => l.fee)).toEqual([
      { fee_type: 'quadratic_with_maker_fees', fee_multiplier: 1 },
      { fee_type: 'quadratic', fee_multiplier: 1 },
    ]);
    expect(cat.partners).toHaveLength(1);
    const paths = h.fake.requests.map((r) => r.path.replace('/trade-api/v2', ''));
    expect(paths.sort()).toEqual(['/events/KXCOLONIZEMARS-50', '/events/KXELONMARS-99', '/markets', '/series/KXCOLONIZEMARS', '/series/KXELONMARS']);
    // Multivariate combos are filtered at the source.
    expect(h.fake.requests.find((r) => r.path.endsWith('/markets'))!.query).toContain('mve_filter=exclude');
    // A 404 is an answer, not a failure.
    expect(h.adapter.feedStats().catalog_lookup_failures).toBe(0);
    const [q] = await h.adapter.fetchQuotes({ position_hashes: [MARS_YES] });
    expect(q!.fee).toEqual({ kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 });
  });
});

describe('the book stream', () => {
  it('streams exact quotes from snapshot + deltas', async () => {
    const { adapter, fake, settle } = await streaming();
    const got: NormalizedQuote[] = [];
    adapter.subscribeQuotes((q) => got.push(q), { position_hashes: [MARS_YES] });
    const before = adapter.feedStats().frames;
    await settle(before, fake.pushDelta('KXELONMARS-99', 'no', '0.89', '10.00'));
    // A new best NO bid at 0.89 is a new best YES ask at 0.11 × 10.
    expect(got).toHaveLength(1);
    expect(got[0]!.levels.slice(0, 2)).toEqual([
      { price: 0.11, available: 1.1 },
      { price: 0.12, available: 236.0796 },
    ]);
    expect(got[0]).toMatchObject({ price: 0.11, available: 1.1, source: 'streaming', ts_init: h!.now(), ts_event: h!.now() });
  });

  it('a seq gap drops the subscription\'s books, resubscribes and counts it: the lost change is never missing from a quote', async () => {
    const { adapter, fake, settle } = await streaming();
    const got: NormalizedQuote[] = [];
    adapter.subscribeQuotes((q) => got.push(q), { position_hashes: [MARS_YES] });
    const commandsBefore = fake.commands.length;
    // The venue adds 5 contracts at NO 0.88, but that frame is lost; the next frame (a new NO bid at
    // 0.89) arrives with a seq one too far. Applying it would quote a book without the 5 contracts.
    fake.loseDelta('KXELONMARS-99', 'no', '0.88', '5.00');
    const before = adapter.feedStats().frames;
    await settle(before, fake.pushDelta('KXELONMARS-99', 'no', '0.89', '10.00'));
    const s = adapter.feedStats();
    expect([s.seq_gaps, s.resnapshots, s.book_errors]).toEqual([1, 1, 0]);
    // Unsubscribe the old sid, subscribe afresh (new sid, seq from 1, fresh snapshots); the venue reads the commands off the socket a moment later.
    await waitFor(() => fake.commands.length >= commandsBefore + 2, 'the resubscribe commands');
    expect(fake.commands.slice(commandsBefore).map((c) => c.cmd)).toEqual(['unsubscribe', 'subscribe']);
    await waitFor(() => adapter.feedStats().books_synced === 2 && got.length > 0, 'the new snapshots');
    // Every quote shows the venue's true book: YES 0.11 × 10 and 0.12 × 1972.33 (= 236.6796), never 236.0796.
    for (const q of got) {
      expect(q.levels.slice(0, 2)).toEqual([
        { price: 0.11, available: 1.1 },
        { price: 0.12, available: 236.6796 },
      ]);
    }
  });

  it('a delta that would drive a level negative is a book error: resnapshot, never a negative book', async () => {
    const { adapter, fake, settle } = await streaming();
    const got: NormalizedQuote[] = [];
    adapter.subscribeQuotes((q) => got.push(q), { position_hashes: [MARS_YES] });
    const before = adapter.feedStats().frames;
    await settle(before, fake.pushRawDelta('KXELONMARS-99', 'no', '0.8800', '-5000.00'));
    expect(adapter.feedStats()).toMatchObject({ book_errors: 1, resnapshots: 1, seq_gaps: 0 });
    await waitFor(() => got.length > 0, 'the resnapshot');
    expect(got[0]!.levels[0]).toEqual({ price: 0.12, available: 236.0796 });
  });

  it('a quiet socket keeps its books confirmed; a silent one stops, goes stale, and reconnects', async () => {
    const { adapter, clock } = await streaming();
    const got: NormalizedQuote[] = [];
    adapter.subscribeQuotes((q) => got.push(q));
    const freshness = adapter.describe().capabilities.quotes.freshness_ms!;
    expect(freshness).toBe(30_000);
    // Alive (a frame within the silence bound): both books' quotes re-confirmed with a new ts_init.
    clock.advance(4_000);
    expect(adapter.reconfirmQuotes()).toBe(4);
    const confirmed = got.at(-1)!;
    expect(confirmed.ts_init).toBe(h!.now());
    // Nothing at all for 31 s (no frame, no ping): no more confirmations, the books are dropped.
    clock.advance(31_000);
    expect(adapter.reconfirmQuotes()).toBe(0);
    expect(adapter.feedStats()).toMatchObject({ connected: false, books_synced: 0 });
    // So the last confirmation ages past its bound: the quote reads stale, never fresh.
    expect(quoteStaleAfterMs(confirmed.ts_init, freshness)! < h!.now()).toBe(true);
    await waitFor(() => adapter.feedStats().books_synced === 2, 'reconnect and fresh snapshots');
    expect(adapter.feedStats().reconnects).toBe(1);
    expect(adapter.reconfirmQuotes()).toBe(4);
  });

  it('a dropped connection drops every book until the new socket\'s snapshots', async () => {
    const { adapter, fake } = await streaming();
    fake.dropSockets();
    await waitFor(() => !adapter.feedStats().connected, 'the drop to be seen');
    expect(adapter.feedStats().books_synced).toBe(0);
    expect(adapter.reconfirmQuotes()).toBe(0);
    await waitFor(() => adapter.feedStats().books_synced === 2, 'the reconnect');
    expect(fake.subscribers('orderbook_delta')).toBe(1);
  });
});

describe('orders (signed; the market\'s own grid; whole contracts)', () => {
  it('a market order is an immediate-or-cancel limit floored onto the grid, sized by the stake', async () => {
    const { adapter, fake } = await streaming();
    const o = await adapter.placeOrder(order());
    expect(o).toMatchObject({
      status: 'filled',
      limit_price: 0.12,
      requested_contracts: 10,
      filled_contracts: 10,
      filled_notional: 1.2,
      avg_price: 0.12,
      fees: 0.08,
      remaining_contracts: 0,
      warnings: ['price_off_tick'],
      liquidity_hash: 'kalshi:KXELONMARS-99:yes',
    });
    const sent = fake.requests.find((r) => r.method === 'POST')!;
    expect(sent.signed).toBe(true);
    expect(sent.body).toEqual({
      ticker: 'KXELONMARS-99',
      side: 'yes',
      action: 'buy',
      count: 10,
      type: 'limit',
      yes_price_dollars: '0.1200',
      client_order_id: o.client_order_id,
      time_in_force: 'immediate_or_cancel',
    });
  });

  it('a deci-cent market takes a tenth-of-a-cent limit; an IOC that fills nothing is unfillable', async () => {
    const { adapter, fake } = await streaming();
    const o = await adapter.placeOrder(order({ position_hash: COLONIZE_YES.replace(':yes:', ':no:'), max_price: 0.8375, amount: 10 }));
    expect(o).toMatchObject({ status: 'rejected', reject_code: 'unfillable', limit_price: 0.837, filled_contracts: 0, venue_order_id: expect.any(String) });
    expect(fake.requests.find((r) => r.method === 'POST')!.body).toMatchObject({ side: 'no', no_price_dollars: '0.8370', count: 11 });
  });

  it('fill-or-kill that the book cannot fill: insufficient_size, nothing taken', async () => {
    const { adapter } = await streaming();
    const o = await adapter.placeOrder(order({ amount: 1000, max_price: 0.12, time_in_force: 'fok' }));
    expect(o).toMatchObject({ status: 'rejected', reject_code: 'insufficient_size', filled_contracts: 0 });
    const [q] = await adapter.fetchQuotes({ position_hashes: [MARS_YES] });
    expect(q!.levels[0]).toEqual({ price: 0.12, available: 236.0796 });
  });

  it('refusals the caller can act on are rejected orders; a stake below one contract never reaches the venue', async () => {
    const { adapter, fake } = await streaming();
    fake.failNext(400, { error: { code: 'insufficient_balance', message: 'insufficient balance' } });
    expect(await adapter.placeOrder(order())).toMatchObject({ status: 'rejected', reject_code: 'insufficient_balance', venue_order_id: '' });
    const posts = fake.requests.filter((r) => r.method === 'POST').length;
    expect(await adapter.placeOrder(order({ amount: 0.05 }))).toMatchObject({ status: 'rejected', reject_code: 'below_min_order' });
    expect(await adapter.placeOrder(order({ max_price: 0.004 }))).toMatchObject({ status: 'rejected', reject_code: 'price_out_of_band' });
    expect(fake.requests.filter((r) => r.method === 'POST').length).toBe(posts);
    await expect(adapter.placeOrder(order({ account_id: 'someone-else' }))).rejects.toMatchObject({ kind: 'non_retryable', code: 'unknown_account' });
  });

  it('a 429 is retryable and empties the write bucket', async () => {
    const { adapter, fake } = await streaming();
    fake.failNext(429, { error: 'too many requests' });
    await expect(adapter.placeOrder(order())).rejects.toMatchObject({ kind: 'retryable', code: 'rate_limited', retry_after_ms: 1000 });
    expect(adapter.feedStats().rest.rate_limited).toBe(1);
    // The manual clock has not moved: the bucket has not refilled.
    expect((adapter as unknown as { rest: { writes: { available(): number } } }).rest.writes.available()).toBe(0);
  });

  it('placing again under the same client_order_id answers with the order the venue already has', async () => {
    const { adapter } = await streaming();
    const first = await adapter.placeOrder(order({ client_order_id: 'same-intent', order_type: 'limit', max_price: 0.02, amount: 5 }));
    const again = await adapter.placeOrder(order({ client_order_id: 'same-intent', order_type: 'limit', max_price: 0.02, amount: 5 }));
    expect(again.venue_order_id).toBe(first.venue_order_id);
    expect(again.status).toBe('resting');
  });

  it('order updates arrive on the private channel: resting, then cancelled', async () => {
    const { adapter } = await streaming();
    const updates: VenueOrder[] = [];
    adapter.subscribeOrderUpdates((u) => updates.push(u));
    const o = await adapter.placeOrder(order({ order_type: 'limit', max_price: 0.02, amount: 5 }));
    expect(o).toMatchObject({ status: 'resting', requested_contracts: 250, remaining_contracts: 250 });
    await adapter.cancelOrder({ account_id: ACCOUNT, venue_order_id: o.venue_order_id });
    await waitFor(() => updates.length >= 2, 'two order updates');
    expect(updates.map((u) => [u.venue_order_id, u.status, u.remaining_contracts])).toEqual([
      [o.venue_order_id, 'resting', 250],
      [o.venue_order_id, 'cancelled', 0],
    ]);
  });

  it('balance reads are signed, in USD from cents, and pushed to balance subscribers', async () => {
    const { adapter, fake } = await streaming();
    const pushed: unknown[] = [];
    adapter.subscribeBalances((b) => pushed.push(b));
    expect(await adapter.fetchBalance(ACCOUNT)).toMatchObject({ balance: 2350.84, held: 0, currency: 'USD' });
    expect(pushed).toEqual([expect.objectContaining({ cause: 'refresh', balance: 2350.84, venue_order_id: null })]);
    expect(fake.requests.find((r) => r.path.endsWith('/portfolio/balance'))!.signed).toBe(true);
  });
});

describe('rate limits on polling', () => {
  it('reads beyond the tier\'s per-second budget wait for the refill (Basic: 20 reads a second)', async () => {
    let now = 1_790_000_000_000;
    const fake = new FakeKalshi({ publicKeyPem: null, clock: () => now });
    await fake.start();
    const waits: number[] = [];
    const adapter = new KalshiAdapter({ ...KALSHI_DEFAULTS, restBaseUrl: fake.url, wsUrl: fake.wsUrl }, { clock: () => now, reconfirmMs: 0, sleep: async (ms) => { waits.push(ms); now += ms; } });
    try {
      await adapter.connect(); // 5 reads
      for (let i = 0; i < 10; i++) await adapter.fetchQuotes(); // 2 reads each
      expect(adapter.feedStats().rest.requests).toBe(25);
      // 20 fit in the bucket; the other 5 each waited 1/20 s for a token.
      expect(waits).toEqual([50, 50, 50, 50, 50]);
      expect(adapter.feedStats().read_waits).toBe(5);
    } finally {
      await adapter.close();
      await fake.stop();
    }
  });
});

describe('without credentials', () => {
  it('declares orders unsupported and polls books; the socket carries public trades only', async () => {
    h = await kalshiHarness({ withCredentials: false });
    const d = h.adapter.describe();
    expect(d.capabilities).toMatchObject({
      quotes: { snapshot: true, streaming: false, poll_interval_ms: 5000, freshness_ms: 35_000 },
      orders: { place: false, cancel: false, types: [] },
      balance: false,
      trades: true,
    });
    expect(d.partner).toMatchObject({ orders_allowed: false, order_config: { orders_allowed: false, price_format: 'probability', price_tick: 0.01 } });
    await h.adapter.connect();
    await waitFor(() => h!.fake.subscribers('trade') === 1, 'the trade subscription');
    expect(h.fake.subscribers('orderbook_delta')).toBe(0);
    expect(h.fake.commands.map((c) => c.params?.channels)).toEqual([['trade']]);
    const o = await h.adapter.placeOrder(order({ account_id: 'anyone' }));
    expect(o).toMatchObject({ status: 'rejected', reject_code: 'orders_not_supported' });
    expect(h.fake.requests.some((r) => r.method === 'POST' || r.signed)).toBe(false);
    const quotes = await h.adapter.fetchQuotes();
    // KXCOLONIZEMARS-50 has no resting orders: its quotes keep the market's last asks with nothing available.
    expect(quotes.map((q) => [q.liquidity_hash, q.price, q.available, q.source])).toEqual([
      ['kalshi:KXELONMARS-99:yes', 0.12, 236.0796, 'polling'],
      ['kalshi:KXELONMARS-99:no', 0.92, 408.7744, 'polling'],
      ['kalshi:KXCOLONIZEMARS-50:yes', 0.195, 0, 'polling'],
      ['kalshi:KXCOLONIZEMARS-50:no', 0.837, 0, 'polling'],
    ]);
  });

  it('a signature the venue refuses is an auth failure, not a crash', async () => {
    const now = 1_790_000_000_000;
    const fake = new FakeKalshi({ publicKeyPem: rsaPair().publicKeyPem, clock: () => now });
    await fake.start();
    const { generateKeyPairSync } = await import('node:crypto');
    const wrong = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const adapter = new KalshiAdapter({ ...KALSHI_DEFAULTS, restBaseUrl: fake.url, wsUrl: fake.wsUrl, keyId: 'k', privateKeyPem: wrong, accountId: ACCOUNT }, { clock: () => now, reconfirmMs: 0 });
    try {
      await adapter.connect();
      expect(adapter.feedStats()).toMatchObject({ connected: false, connect_failures: 1, last_error: 'upgrade refused: HTTP 401' });
      await expect(adapter.fetchBalance(ACCOUNT)).rejects.toMatchObject({ kind: 'fatal', code: 'auth_failed' });
    } finally {
      await adapter.close();
      await fake.stop();
    }
  });
});

describe('registry and configuration', () => {
  it('FLOW_VENUES=kalshi builds the adapter from the FLOW_KALSHI_* settings', () => {
    const cfg = loadConfig({ FLOW_VENUES: 'kalshi', FLOW_KALSHI_BASE_URL: 'http://127.0.0.1:1/trade-api/v2', FLOW_KALSHI_SERIES: 'KXELONMARS' });
    expect(cfg.venues).toEqual(['kalshi']);
    expect(cfg.kalshi).toMatchObject({ restBaseUrl: 'http://127.0.0.1:1/trade-api/v2', series: ['KXELONMARS'], keyId: null });
    const [a] = createAdapters(cfg.venues, { kalshi: cfg.kalshi });
    expect(a).toBeInstanceOf(KalshiAdapter);
    expect(a!.describe().capabilities.orders.place).toBe(false);
    expect(() => loadConfig({ FLOW_KALSHI_API_KEY_ID: 'k' })).toThrow(/FLOW_KALSHI_PRIVATE_KEY_PATH/);
  });
});
