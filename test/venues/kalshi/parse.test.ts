/**
 * Every recorded Kalshi payload (test/venues/kalshi/fixtures, provenance in its README) through the
 * adapter's pure parsers, with exact expected values for the fields that matter. The last test proves
 * the table covers every file in the fixtures folder.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../src/venues/errors.js';
import { applyDelta, offers } from '../../../src/venues/kalshi/book.js';
import { buildKalshiCatalog, nativePosition, type KalshiListing } from '../../../src/venues/kalshi/catalog.js';
import { kalshiHttpError } from '../../../src/venues/kalshi/errors.js';
import { DEFAULT_FEE_SCHEDULE } from '../../../src/venues/kalshi/fees.js';
import { marketOrderConfig } from '../../../src/venues/kalshi/grid.js';
import type { KalshiMarket } from '../../../src/venues/kalshi/messages.js';
import {
  buildCreateOrder,
  marketTop,
  parseBalance,
  parseCandles,
  parseDelta,
  parseFill,
  parseOrder,
  parseOrderbook,
  parsePositions,
  parseSnapshot,
  parseTicker,
  parseTrade,
  parseWsFrame,
  quotesOf,
} from '../../../src/venues/kalshi/parse.js';
import { FIXTURES, TEST_PARTNER, fixture, lines } from './support.js';

const TS_INIT = 1_790_000_000_000; // 2026-09-21, after every recording
const covered = new Set<string>();
const use = <T = any>(name: string): T => {
  covered.add(name);
  return fixture<T>(name);
};
const useLines = <T = any>(name: string): T[] => {
  covered.add(name);
  return lines<T>(name);
};

function catalogOf(markets: KalshiMarket[]) {
  return buildKalshiCatalog({ markets, partner: TEST_PARTNER });
}

function listingFor(ticker: string, event = ticker.split('-').slice(0, -1).join('-') || ticker): KalshiListing {
  return {
    ticker,
    event_ticker: event,
    series_ticker: event.split('-')[0]!,
    contest_id: `kalshi-${event}`,
    positions: { yes: nativePosition(event, ticker, 'yes'), no: nativePosition(event, ticker, 'no') },
    fee: DEFAULT_FEE_SCHEDULE,
    price_ranges: null,
    fractional_trading_enabled: true,
    status: 'active',
    last_ask: { yes: null, no: null },
  };
}

describe('market listings (GET /markets, GET /markets/{ticker})', () => {
  it('rest-markets.json: current dollar strings and fixed-point sizes', () => {
    const body = use<{ markets: KalshiMarket[] }>('rest-markets.json');
    const cat = catalogOf(body.markets);
    expect(cat.listings.map((l) => l.ticker)).toEqual(['KXELONMARS-99', 'KXCOLONIZEMARS-50']);
    const [mars, colonize] = cat.listings;
    expect(mars).toMatchObject({ event_ticker: 'KXELONMARS-99', series_ticker: 'KXELONMARS', fractional_trading_enabled: true, status: 'active', last_ask: { yes: 0.12, no: 0.92 } });
    expect(colonize!.last_ask).toEqual({ yes: 0.195, no: 0.837 });
    // The market record states the book identity itself: YES ask 0.12 × 1967.33, NO ask 0.92 sized by the YES bid.
    expect(marketTop(body.markets[0]!)).toEqual({ yes: { price: 120_000n, size: 1_967_330_000n }, no: { price: 920_000n, size: 444_320_000n } });
    expect(marketOrderConfig(body.markets[0]!, true)).toMatchObject({ price_format: 'probability', price_tick: 0.01, min_price: 0.01, max_price: 0.99, whole_contracts: true });
    // deci_cent: a tenth-of-a-cent grid.
    expect(marketOrderConfig(body.markets[1]!, true)).toMatchObject({ price_tick: 0.001, min_price: 0.001, max_price: 0.999 });
    expect(cat.contests[0]).toMatchObject({
      id: 'kalshi-KXELONMARS-99',
      league_id: 'kalshi-KXELONMARS',
      title: 'Will Elon Musk visit Mars before Aug 1, 2099?',
      type: 'event',
      starts_at: '2099-08-01T15:00:00.000Z',
      status: 'open',
      created_at: '2025-08-28T20:40:16.168Z',
    });
    expect(cat.positions.filter((p) => p.participant_id === 'kalshi-KXELONMARS-99').map((p) => [p.position_hash, p.side_key, p.participant_name, p.group_key])).toEqual([
      ['kalshi-KXELONMARS-99:binary:yes:0:kalshi-KXELONMARS-99:ft', 'yes', 'Mars', 'kalshi-KXELONMARS-99/KXELONMARS-99'],
      ['kalshi-KXELONMARS-99:binary:no:0:kalshi-KXELONMARS-99:ft', 'no', 'Mars', 'kalshi-KXELONMARS-99/KXELONMARS-99'],
    ]);
  });

  it('rest-markets-legacy-cents-2025-12.json: integer cents read as cents', () => {
    const body = use<{ markets: KalshiMarket[] }>('rest-markets-legacy-cents-2025-12.json');
    const m = body.markets[0]!;
    expect(marketTop(m)).toEqual({ yes: { price: 620_000n, size: null }, no: { price: 390_000n, size: null } });
    // Cents alone (as the pre-2026 venue sent them) give the same figures.
    expect(marketTop({ ticker: m.ticker, event_ticker: m.event_ticker, yes_ask: 62, no_ask: 39 })).toEqual(marketTop(m));
    const cat = catalogOf(body.markets);
    expect(cat.listings[0]).toMatchObject({ ticker: 'KXNFLGAME-25DEC27BALGB-GB', series_ticker: 'KXNFLGAME', last_ask: { yes: 0.62, no: 0.39 } });
    expect(catalogOf([{ ticker: 'A-B-C', event_ticker: 'A-B', yes_ask: 62, no_ask: 39 }]).listings[0]!.last_ask).toEqual({ yes: 0.62, no: 0.39 });
    expect(cat.contests[0]).toMatchObject({ id: 'kalshi-KXNFLGAME-25DEC27BALGB', title: 'Baltimore at Green Bay Winner?', starts_at: '2025-12-28T04:00:00.000Z' });
    expect(cat.participants[0]!.name).toBe('Green Bay');
    expect(cat.positions[0]!.title).toBe('Baltimore at Green Bay Winner? — Green Bay: Yes');
    expect(marketOrderConfig(m, false)).toMatchObject({ orders_allowed: false, price_tick: 0.01 });
  });

  it('rest-markets-mve-2026-07.json: a multivariate combo on a deci-cent grid with an empty top', () => {
    const body = use<{ markets: KalshiMarket[] }>('rest-markets-mve-2026-07.json');
    const cat = catalogOf(body.markets);
    const l = cat.listings[0]!;
    expect(l.ticker).toBe('KXMVESPORTSMULTIGAMEEXTENDED-S20266D3DB8D5F92-F8F7FBDBF23');
    expect(l.series_ticker).toBe('KXMVESPORTSMULTIGAMEEXTENDED');
    // yes ask 0.0000 and no ask 1.0000 are "nothing offered", never prices.
    expect(l.last_ask).toEqual({ yes: null, no: null });
    expect(marketOrderConfig(body.markets[0]!, true)).toMatchObject({ price_tick: 0.001, min_price: 0.001, max_price: 0.999 });
    expect(quotesOf(l, parseSnapshot({ market_ticker: l.ticker }), { source: 'polling' }, TS_INIT, TS_INIT)).toEqual([]);
  });

  it('rest-market.json: one market, occurrence time as the contest start', () => {
    const body = use<{ market: KalshiMarket }>('rest-market.json');
    const cat = catalogOf([body.market]);
    expect(cat.contests[0]).toMatchObject({ id: 'kalshi-KXCPI-26AUG', league_id: 'kalshi-KXCPI', starts_at: '2026-09-11T13:56:00.000Z', title: 'Will CPI rise more than 1.0% in August 2026?' });
    expect(cat.listings[0]!.last_ask).toEqual({ yes: 0.99, no: 0.99 });
    expect(marketTop(body.market)).toEqual({ yes: { price: 990_000n, size: 65_000_000n }, no: { price: 990_000n, size: 65_000_000n } });
  });
});

describe('order books', () => {
  it('rest-orderbook.json: bids on both sides become asks at 1 − the other side\'s bid', () => {
    const book = parseOrderbook(use('rest-orderbook.json'));
    expect(book.no.size).toBe(18);
    expect(book.yes.size).toBe(8);
    const l = listingFor('KXELONMARS-99', 'KXELONMARS-99');
    const [yes, no] = quotesOf(l, book, { source: 'polling' }, TS_INIT, TS_INIT);
    // Best NO bid 0.88 × 1967.33 → YES ask 0.12 × 1967.33 = USD 236.0796 (the market's yes_ask_dollars/size).
    expect(yes!.price).toBe(0.12);
    expect(yes!.available).toBe(236.0796);
    expect(yes!.levels.slice(0, 4)).toEqual([
      { price: 0.12, available: 236.0796 },
      { price: 0.13, available: 15.4505 },
      { price: 0.26, available: 65 },
      { price: 0.27, available: 10.4571 },
    ]);
    expect(yes!.levels).toHaveLength(18);
    expect(yes!.levels[17]).toEqual({ price: 0.99, available: 13417.47 });
    // Best YES bid 0.08 × 444.32 → NO ask 0.92 × 444.32 = USD 408.7744.
    expect(no!.levels.slice(0, 3)).toEqual([
      { price: 0.92, available: 408.7744 },
      { price: 0.93, available: 2972.1312 },
      { price: 0.94, available: 2069.7484 },
    ]);
    expect(no!).toMatchObject({ liquidity_hash: 'kalshi:KXELONMARS-99:no', venue_side_key: 'no', position_hash: l.positions.no, fee: { kind: 'pq', taker_rate: 0.07, maker_rate: 0 }, real_book: true });
    expect(offers(book, 'yes').reduce((s, o) => s + (o.price * o.count) / 1_000_000n, 0n)).toBe(22_437_652_200n);
  });

  it('the legacy cent book (no recording: built to the documented shape) reads the same', () => {
    const book = parseOrderbook({ orderbook: { yes: [[8, 444]], no: [[87, 118], [88, 1967]] } });
    const [yes] = quotesOf(listingFor('X-Y'), book, { source: 'polling' }, TS_INIT, TS_INIT);
    expect(yes!.levels).toEqual([
      { price: 0.12, available: 236.04 },
      { price: 0.13, available: 15.34 },
    ]);
    // A null side is an empty side.
    expect(parseOrderbook({ orderbook: { yes: null, no: null } }).yes.size).toBe(0);
  });

  it('ws-orderbook_snapshot.jsonl + ws-orderbook_delta.jsonl + ws-ticker.jsonl: the snapshot, a delta, and the ticker agreeing', () => {
    const [full, empty] = useLines('ws-orderbook_snapshot.jsonl');
    expect(parseWsFrame(JSON.stringify(full))).toMatchObject({ type: 'orderbook_snapshot', sid: 1, seq: 1 });
    const book = parseSnapshot(full.msg);
    expect([...book.yes]).toEqual([[10_000n, 1_410_000_000n]]);
    expect([...book.no]).toEqual([
      [10_000n, 100_000_000n],
      [20_000n, 2_500_000_000n],
    ]);
    const l = listingFor('KXGOLDH-26AUG2711-T4615.99');
    const [yes, no] = quotesOf(l, book, { source: 'streaming' }, TS_INIT, TS_INIT);
    expect(yes!.levels).toEqual([
      { price: 0.98, available: 2450 },
      { price: 0.99, available: 99 },
    ]);
    expect(no!.levels).toEqual([{ price: 0.99, available: 1395.9 }]);
    // The live ticker a few seconds later states the same top: YES ask 0.98 × 2500, YES bid 0.01 × 1410.
    const [tick] = useLines('ws-ticker.jsonl');
    expect(parseTicker(tick.msg, TS_INIT)).toEqual({
      ticker: 'KXGOLDH-26AUG2711-T4615.99',
      yes_bid: { price: 0.01, size: 1410 },
      yes_ask: { price: 0.98, size: 2500 },
      last_price: 0,
      volume: 0,
      open_interest: 0,
      ts_event: 1_787_838_990_880,
    });
    // An empty market: neither key, so neither side.
    expect(empty.msg).not.toHaveProperty('yes_dollars_fp');
    const none = parseSnapshot(empty.msg);
    expect(none.yes.size + none.no.size).toBe(0);

    const [delta] = useLines('ws-orderbook_delta.jsonl');
    expect(delta).toMatchObject({ type: 'orderbook_delta', sid: 1, seq: 2 });
    expect(parseDelta(delta.msg)).toEqual({ side: 'yes', price: 10_000n, delta: 10_000_000n });
    expect(applyDelta(book, 'yes', 10_000n, 10_000_000n)).toBe('applied');
    expect(book.yes.get(10_000n)).toBe(1_420_000_000n);
    expect(quotesOf(l, book, { source: 'streaming' }, TS_INIT, TS_INIT)[1]!.levels).toEqual([{ price: 0.99, available: 1405.8 }]);
  });
});

describe('trades', () => {
  it('rest-trades.json: each print on the position its taker bought, fractional sizes kept', () => {
    const body = use<{ trades: any[] }>('rest-trades.json');
    const l = listingFor('KXELONMARS-99', 'KXELONMARS-99');
    const got = body.trades.map((t) => parseTrade(t, l, TS_INIT)!);
    expect(got.map((t) => [t.venue_trade_id, t.position_hash === l.positions.yes ? 'yes' : 'no', t.taker_action, t.price, t.size_contracts, t.executed_at])).toEqual([
      ['6e924506-2c0f-5717-f9b7-eae14a12202a', 'yes', 'buy', 0.1, 9.4, 1_781_284_271_927],
      ['201c12b1-e3fb-7783-370e-5cb5072ef066', 'yes', 'buy', 0.1, 0.94, 1_781_279_105_842],
      ['5abd8b71-1197-4c2c-7686-2f19a30727c9', 'no', 'buy', 0.92, 9.4, 1_781_275_556_123],
    ]);
    expect(got[0]).toMatchObject({ partner_id: 'kalshi', liquidity_hash: 'kalshi:KXELONMARS-99:yes', is_block: false, trader_id: null, trader_id_kind: null, ts_event: 1_781_284_271_927, ts_init: TS_INIT });
    // Only YES linked: the NO taker's print is the complement on YES (a sale at 1 − 0.92).
    const yesOnly = { ...l, positions: { yes: l.positions.yes, no: null } };
    expect(parseTrade(body.trades[2], yesOnly, TS_INIT)).toMatchObject({ position_hash: l.positions.yes, taker_action: 'sell', price: 0.08, relation: 'complement' });
  });

  it('ws-trade.jsonl: a live WS print (ts_ms) on the NO position', () => {
    const [f] = useLines('ws-trade.jsonl');
    expect(parseWsFrame(JSON.stringify(f))).toMatchObject({ type: 'trade', sid: 3, seq: 1 });
    const l = listingFor(f.msg.market_ticker);
    expect(parseTrade(f.msg, l, TS_INIT)).toMatchObject({ position_hash: l.positions.no, taker_action: 'buy', price: 0.2, size_contracts: 2, executed_at: 1_786_956_599_391 });
  });

  it('rest-candlesticks.json: closing bid/ask per period (ccxt stringified the timestamps)', () => {
    expect(parseCandles(use('rest-candlesticks.json'))).toEqual([
      { end_ms: 1_781_143_200_000, yes_bid_close: 0.08, yes_ask_close: 0.1, volume: 0, open_interest: 32764.57 },
      { end_ms: 1_781_172_000_000, yes_bid_close: 0.08, yes_ask_close: 0.1, volume: 0, open_interest: 32764.57 },
    ]);
  });
});

describe('the authenticated API', () => {
  const ctx = { account_id: 'acct_1', position_hash: 'kalshi-KXNFLGAME-25DEC27BALGB:binary:yes:0:kalshi-KXNFLGAME-25DEC27BALGB-GB:ft', order_type: 'limit' as const, requested_amount: null };

  it('rest-portfolio-orders-create.request.json: the body we build is the recorded one, key for key', () => {
    const recorded = use('rest-portfolio-orders-create.request.json');
    const ours = buildCreateOrder({ ticker: 'KXNFLGAME-25DEC27BALGB-GB', side: 'yes', count: 1, limit: 20_000n, clientOrderId: 'vcr-test-1766557486' });
    expect(ours).toEqual(recorded);
    expect(Object.keys(ours)).toEqual(Object.keys(recorded));
    expect(buildCreateOrder({ ticker: 'T', side: 'no', count: 3, limit: 125_000n, clientOrderId: 'c', timeInForce: 'fok' })).toEqual({
      ticker: 'T', side: 'no', action: 'buy', count: 3, type: 'limit', no_price_dollars: '0.1250', client_order_id: 'c', time_in_force: 'fill_or_kill',
    });
  });

  it('rest-portfolio-orders-create.json / rest-portfolio-order.json: a resting legacy-shaped order', () => {
    for (const name of ['rest-portfolio-orders-create.json', 'rest-portfolio-order.json']) {
      const o = parseOrder(use(name).order, ctx, TS_INIT);
      expect(o).toEqual({
        partner_id: 'kalshi',
        venue_order_id: 'b9ef0c93-b795-44ff-b0a1-ddc9113a4e01',
        client_order_id: 'vcr-test-1766557486',
        account_id: 'acct_1',
        position_hash: ctx.position_hash,
        liquidity_hash: 'kalshi:KXNFLGAME-25DEC27BALGB-GB:yes',
        order_type: 'limit',
        status: 'resting',
        requested_amount: null,
        requested_contracts: 1,
        limit_price: 0.02,
        filled_contracts: 0,
        filled_notional: 0,
        avg_price: null,
        fees: 0,
        remaining_contracts: 1,
        reject_code: null,
        reject_reason: null,
        warnings: [],
        currency: 'USD',
        ts_event: Date.parse('2025-12-24T06:24:47.592321Z'),
        ts_init: TS_INIT,
      });
    }
  });

  it('rest-portfolio-order-cancel.json: cancelled, nothing left on the book', () => {
    const body = use('rest-portfolio-order-cancel.json');
    expect(body.reduced_by).toBe(1);
    expect(parseOrder(body.order, ctx, TS_INIT)).toMatchObject({ status: 'cancelled', remaining_contracts: 0, filled_contracts: 0, ts_event: Date.parse('2025-12-24T06:24:50.290971Z') });
    // The same answer to an immediate-or-cancel order that filled nothing is a rejection, not a cancel.
    expect(parseOrder(body.order, { ...ctx, order_type: 'market', time_in_force: 'ioc' }, TS_INIT)).toMatchObject({ status: 'rejected', reject_code: 'unfillable' });
    expect(parseOrder(body.order, { ...ctx, order_type: 'market', time_in_force: 'fok' }, TS_INIT)).toMatchObject({ status: 'rejected', reject_code: 'insufficient_size' });
  });

  it('rest-portfolio-balance.json: integer cents', () => {
    expect(parseBalance(use('rest-portfolio-balance.json'), 'acct_1', TS_INIT)).toEqual({
      partner_id: 'kalshi',
      account_id: 'acct_1',
      currency: 'USD',
      balance: 2350.84,
      held: 0,
      credential_status: 'connected',
      ts_event: 1_763_933_221_000,
      ts_init: TS_INIT,
    });
  });

  it('rest-portfolio-fills.json: a NO fill, its legacy `price` (the YES price) never read as the NO price', () => {
    const [f] = use<{ fills: any[] }>('rest-portfolio-fills.json').fills;
    expect(f.price).toBe(0.04);
    expect(parseFill(f, TS_INIT)).toEqual({
      fill_id: '1f1745ab-6831-701b-e811-42261ae959e6',
      venue_order_id: '8a0790c9-7332-4de7-9b8b-3d918cea00ca',
      ticker: 'KXALIENS-26',
      side: 'no',
      action: 'buy',
      contracts: 103,
      price: 0.96,
      yes_price: 0.04,
      is_taker: true,
      fee: null,
      ts_event: 1_761_358_719_770,
      ts_init: TS_INIT,
    });
  });

  it('rest-portfolio-positions.json: YES and NO netted into one signed count', () => {
    expect(parsePositions(use('rest-portfolio-positions.json'))).toEqual([{ ticker: 'KXALIENS-26', side: 'no', contracts: 103, exposure: 98.88, fees_paid: 0.28, realized_pnl: 0 }]);
  });

  it('rest-errors.jsonl: each error body maps to a VenueError of the right kind', () => {
    const rows = useLines('rest-errors.jsonl');
    const [unavailable, limited] = rows.map((r) => (r.http_status ? kalshiHttpError(r.http_status, r.body, 'test', r.http_status === 429 ? 1000 : null) : null));
    expect(unavailable).toBeInstanceOf(VenueError);
    expect(unavailable).toMatchObject({ kind: 'retryable', code: 'venue_unavailable', details: { status: 503, venue_code: 'service_unavailable' } });
    expect(limited).toMatchObject({ kind: 'retryable', code: 'rate_limited', retry_after_ms: 1000, details: { status: 429, venue_code: 'too_many_requests' } });
    expect(kalshiHttpError(404, { error: { code: 'market_not_found', message: 'x' } }, 't')).toMatchObject({ kind: 'non_retryable', code: 'unknown_position' });
    expect(kalshiHttpError(401, { error: { code: 'whatever' } }, 't')).toMatchObject({ kind: 'fatal', code: 'auth_failed' });
    const ws = rows.filter((r) => r.http_status === null).map((r) => parseWsFrame(JSON.stringify(r.body)));
    expect(ws).toEqual([
      { type: 'error', id: 3, msg: { code: 8, msg: 'Unknown channel name' } },
      { type: 'error', sid: 3, seq: 2, msg: { code: 13, msg: 'Unsupported action' } },
    ]);
  });
});

describe('WebSocket control frames and the AsyncAPI examples', () => {
  it('ws-control.jsonl: acks carry the sid in msg; ok frames addressed to a sid carry its seq', () => {
    const frames = useLines('ws-control.jsonl').map((f) => parseWsFrame(JSON.stringify(f)));
    expect(frames.map((f) => [f.type, f.sid ?? (f.msg as any)?.sid ?? null, f.seq ?? null])).toEqual([
      ['subscribed', 1, null],
      ['ok', 1, 108],
      ['error', null, null],
      ['subscribed', 1, null],
      ['subscribed', 2, null],
      ['subscribed', 3, null],
      ['error', 3, 2],
    ]);
    expect(() => parseWsFrame('{"type":"ok","sid":"1"}')).toThrow(VenueError);
    expect(() => parseWsFrame('not json')).toThrow(VenueError);
  });

  it('ws-asyncapi-doc-examples.jsonl: commands match what the stream sends; every message parses', () => {
    const all = useLines('ws-asyncapi-doc-examples.jsonl');
    const commands = all.filter((x) => 'cmd' in x);
    expect(commands.map((c) => c.cmd)).toEqual([
      'subscribe', 'subscribe', 'subscribe', 'subscribe', 'subscribe', 'subscribe', 'subscribe', 'subscribe',
      'unsubscribe', 'list_subscriptions', 'update_subscription', 'update_subscription', 'update_subscription',
    ]);
    // Our subscribe and unsubscribe commands have the documented shape.
    expect(commands[1].params).toEqual({ channels: ['orderbook_delta', 'ticker'], market_tickers: ['FED-23DEC-T3.00', 'CORIVER-2024-T1030'] });
    expect(commands[8].params).toEqual({ sids: [1, 2] });
    const frames = all.filter((x) => !('cmd' in x)).map((x) => parseWsFrame(JSON.stringify(x)));
    expect(frames).toHaveLength(all.length - commands.length);
    const by = (t: string) => frames.find((f) => f.type === t)!;

    const book = parseSnapshot(by('orderbook_snapshot').msg as any);
    const l = listingFor('FED-23DEC-T3.00');
    const [yes, no] = quotesOf(l, book, { source: 'streaming' }, TS_INIT, TS_INIT);
    expect(yes!.levels).toEqual([
      { price: 0.44, available: 64.24 },
      { price: 0.46, available: 9.2 },
    ]);
    expect(no!.levels).toEqual([
      { price: 0.78, available: 259.74 },
      { price: 0.92, available: 276 },
    ]);
    // The doc's delta removes 54 at a YES price the doc's snapshot does not hold: a book that would
    // go negative, which the stream answers with a resnapshot.
    const d = parseDelta(by('orderbook_delta').msg as any);
    expect(d).toEqual({ side: 'yes', price: 960_000n, delta: -54_000_000n });
    expect(applyDelta(book, d.side, d.price, d.delta)).toBe('negative');
    expect(book.yes.get(960_000n)).toBeUndefined();

    const trade = by('trade').msg as any;
    expect(parseTrade(trade, listingFor(trade.market_ticker), TS_INIT)).toMatchObject({ taker_action: 'buy', price: 0.64, size_contracts: 136, executed_at: 1_669_149_841_000 });
    const order = parseOrder(by('user_order').msg as any, { account_id: 'a', position_hash: 'p', order_type: 'limit', requested_amount: null }, TS_INIT);
    expect(order).toMatchObject({ venue_order_id: 'ee587a1c-8b87-4dcf-b721-9f6f790619fa', status: 'resting', limit_price: 0.35, requested_contracts: 10, remaining_contracts: 10, filled_contracts: 0, filled_notional: 0, client_order_id: 'my-order-1' });
    const fill = parseFill(by('fill').msg as any, TS_INIT);
    expect(fill).toMatchObject({ side: 'yes', contracts: 278, price: 0.75, yes_price: 0.75, is_taker: true, ts_event: 1_671_899_397_000 });
    expect(parseTicker(by('ticker').msg as any, TS_INIT)).toMatchObject({ yes_bid: { price: 0.45, size: null }, yes_ask: { price: 0.53, size: null }, last_price: 0.48, volume: 33896 });
  });
});

describe('the OpenAPI 3.10.0 schema excerpt (drift checks)', () => {
  const schemas = () => use<{ schemas: Record<string, any> }>('openapi-3.10.0-schemas-excerpt.json').schemas;

  it('every order status, fee type and the create-order fields we send are the documented ones', () => {
    const s = schemas();
    const ctx = { account_id: 'a', position_hash: 'p', order_type: 'limit' as const, requested_amount: null };
    const base = { order_id: 'o', ticker: 'T', side: 'yes', action: 'buy', yes_price_dollars: '0.5000', fill_count_fp: '1.00', initial_count_fp: '1.00', remaining_count_fp: '0.00' };
    expect(s.OrderStatus.enum).toEqual(['resting', 'canceled', 'executed']);
    expect(s.OrderStatus.enum.map((st: string) => parseOrder({ ...base, status: st } as any, ctx, TS_INIT).status)).toEqual(['resting', 'cancelled', 'filled']);
    expect(() => parseOrder({ ...base, status: 'exploded' } as any, ctx, TS_INIT)).toThrow(VenueError);
    expect(s.Series.properties.fee_type.enum).toEqual(['quadratic', 'quadratic_with_maker_fees', 'flat']);
    const sent = Object.keys(buildCreateOrder({ ticker: 'T', side: 'no', count: 1, limit: 500_000n, clientOrderId: 'c', timeInForce: 'ioc' }));
    const documented = Object.keys(s.CreateOrderRequest.properties);
    // `type` alone is not in 3.10.0: the live venue accepted it in the recorded request (see buildCreateOrder).
    expect(sent.filter((k) => !documented.includes(k))).toEqual(['type']);
    expect(s.CreateOrderRequest.properties.time_in_force.enum).toEqual(['fill_or_kill', 'good_till_canceled', 'immediate_or_cancel']);
    // The documented price level example parses.
    expect(parseOrderbook({ orderbook_fp: { yes_dollars: [s.PriceLevelDollarsCountFp.example], no_dollars: [] } }).yes.get(150_000n)).toBe(100_000_000n);
    // Every market status the spec lists maps to open or closed.
    const statuses: string[] = s.Market.properties.status.enum;
    const open = statuses.filter((st) => catalogOf([{ ticker: 'A-B', event_ticker: 'A', status: st }]).contests[0]!.status === 'open');
    expect(open).toEqual(['initialized', 'inactive', 'active']);
  });
});

it('covers every recorded Kalshi file', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') || f.endsWith('.jsonl'));
  expect(files.length).toBe(22);
  expect(files.filter((f) => !covered.has(f))).toEqual([]);
});
