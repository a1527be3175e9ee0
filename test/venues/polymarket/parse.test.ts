/**
 * Every recorded Polymarket payload → its parsed record, one table row per file (CCXT static tests
 * / Nautilus test_data style), with the key fields checked exactly. The last test proves the table
 * covers every file in fixtures/.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../src/venues/errors.js';
import { httpError } from '../../../src/venues/polymarket/errors.js';
import { feeModelOf } from '../../../src/venues/polymarket/fees.js';
import type { ClobBook, ClobMarket, ClobMarketsPage, ClobUserOrder, ClobUserTrade, DataApiTrade, GammaEvent, GammaMarket } from '../../../src/venues/polymarket/messages.js';
import {
  eventsFromGammaMarkets,
  parseBook,
  parseBooks,
  parseCancelResponse,
  parseClobMarket,
  parseClobMarketsPage,
  parseDataApiTrade,
  parseErrorBody,
  parseFeeRate,
  parseGammaEvent,
  parseGammaMarket,
  parseMarketMessage,
  parseOrderPostResponse,
  parsePricesHistory,
  parseUserOrder,
  parseUserTrade,
  type PmMarketFrame,
} from '../../../src/venues/polymarket/parse.js';
import { FIXTURES, fixture, fixtureText } from './support.js';

const lines = (name: string) => fixtureText(name).split('\n').filter((l) => l.trim() !== '');
/** Each line of a .jsonl file as the market channel would deliver it. */
const frames = (name: string): PmMarketFrame[] => lines(name).flatMap((l) => parseMarketMessage(l));
const only = <K extends PmMarketFrame['kind']>(f: PmMarketFrame, kind: K) => {
  expect(f.kind).toBe(kind);
  return f as Extract<PmMarketFrame, { kind: K }>;
};

const CAROLINA_YES = '79397003434468715775480922117285203652110865791390656395657957066470661722480';

interface Case {
  file: string;
  check: () => void;
}

const cases: Case[] = [
  {
    file: 'rest-gamma-markets.json',
    check: () => {
      const raw = fixture<GammaMarket[]>('rest-gamma-markets.json');
      const events = eventsFromGammaMarkets(raw);
      // GET /markets nests each market's event: five markets regroup into their three events.
      expect(events.map((e) => [e.id, e.markets.map((m) => m.gamma_id)])).toEqual([
        ['29005', ['556108']],
        ['36173', ['573655', '573656']],
        ['52130', ['618454', '618455']],
      ]);
      const m = events[1]!.markets[0]!;
      expect(m).toMatchObject({
        question: 'Will Bitcoin hit $150k by June 30, 2026?',
        group_item_title: 'by June 30, 2026',
        outcomes: ['Yes', 'No'],
        outcome_prices: [0.0135, 0.9865],
        tick_size: 0.001,
        min_order_size: 5,
        neg_risk: false,
        end_ms: Date.parse('2026-07-01T04:00:00Z'),
        fee_schedule: { rate: 0.07, exponent: 1, taker_only: true, rebate_rate: 0.2 },
      });
      expect(m.token_ids).toHaveLength(2);
      expect(m.token_ids[0]!.startsWith('139156893172')).toBe(true);
      expect(events[2]!.markets[0]!.group_item_title).toBe('$500M'); // "$500M " trimmed
      expect(feeModelOf(m)).toEqual({ kind: 'pq', taker_rate: 0.07, maker_rate: 0 });
    },
  },
  {
    file: 'rest-gamma-market.json',
    check: () => {
      const m = parseGammaMarket(fixture<GammaMarket>('rest-gamma-market.json'));
      expect(m).toMatchObject({
        gamma_id: '1557558',
        condition_id: '0x78443f961b9a65869dcb39359de9960165c7e5cbad0904eac7f29cd77872a63b',
        outcomes: ['Up', 'Down'],
        outcome_prices: [0.505, 0.495],
        token_ids: [
          '104239898038807136052399800151408521467737075933964991162589336683346093173875',
          '71183960810705820955071415844881728181970340514894896943812046065452395013351',
        ],
        tick_size: 0.01,
        min_order_size: 5,
        active: true,
        closed: false,
        event_start_ms: Date.parse('2026-03-12T09:20:00Z'),
        fees_enabled: true,
        fee_type: 'crypto_fees',
        fee_schedule: null,
      });
      expect(m.event?.id).toBe('260654');
      // Fees on without a schedule: the most any category charges, never less.
      expect(feeModelOf(m)).toEqual({ kind: 'pq', taker_rate: 0.07, maker_rate: 0 });
    },
  },
  {
    file: 'rest-gamma-events.json',
    check: () => {
      const events = fixture<GammaEvent[]>('rest-gamma-events.json').map(parseGammaEvent);
      expect(events.map((e) => [e.id, e.title, e.neg_risk, e.markets.length])).toEqual([
        ['27829', '2026 NHL Stanley Cup Champion', true, 3],
        ['27830', '2026 NBA Champion', true, 3],
        ['30615', '2026 FIFA World Cup Winner', true, 3],
        ['32755', 'NBA Playoffs: Eastern Conference Champion', true, 3],
        ['32756', 'NBA Playoffs:  Western Conference Champion', true, 3],
      ]);
      expect(events[0]!.tags.map((t) => t.slug)).toEqual(['sports', 'hockey', 'nhl', 'stanley-cup', '2026-nhl-playoffs']);
      expect(events[2]!.neg_risk_augmented).toBe(true);
      expect(events[3]!.start_time_ms).toBe(Date.parse('2026-06-16T00:00:00Z'));
      const carolina = events[0]!.markets[0]!;
      expect(carolina).toMatchObject({
        gamma_id: '553824',
        group_item_title: 'Carolina Hurricanes',
        outcome_prices: [0.375, 0.625],
        tick_size: 0.01,
        neg_risk: true,
        closed: false,
        fee_type: 'sports_fees_v2',
        fee_schedule: { rate: 0.03, exponent: 1, taker_only: true, rebate_rate: 0.25 },
      });
      expect(carolina.token_ids[0]).toBe(CAROLINA_YES);
      expect(events[0]!.markets[1]).toMatchObject({ group_item_title: 'Dallas Stars', closed: true, outcome_prices: [0, 1], tick_size: 0.001 });
      expect(feeModelOf(carolina)).toEqual({ kind: 'pq', taker_rate: 0.03, maker_rate: 0 });
    },
  },
  {
    file: 'rest-gamma-event-negrisk.json',
    check: () => {
      const [e] = fixture<GammaEvent[]>('rest-gamma-event-negrisk.json').map(parseGammaEvent);
      expect(e).toMatchObject({
        id: '30829',
        slug: 'democratic-presidential-nominee-2028',
        neg_risk: true,
        neg_risk_augmented: true,
        start_time_ms: Date.parse('2028-11-07T12:00:00Z'),
        end_ms: Date.parse('2028-11-07T00:00:00Z'),
      });
      expect(e!.markets.map((m) => [m.group_item_title, m.outcome_prices, m.tick_size, m.fees_enabled])).toEqual([
        ['Stephen A. Smith', [0.0105, 0.9895], 0.001, false],
        ['Gretchen Whitmer', [0.0145, 0.9855], 0.001, false],
      ]);
      expect(feeModelOf(e!.markets[0]!)).toEqual({ kind: 'pq', taker_rate: 0, maker_rate: 0 });
    },
  },
  {
    file: 'rest-clob-markets.json',
    check: () => {
      const page = parseClobMarketsPage(fixture<ClobMarketsPage>('rest-clob-markets.json'));
      expect(page.next_cursor).toBe('MTAwMA==');
      expect(page.markets.map((m) => [m.condition_id.slice(0, 10), m.closed, m.tick_size, m.min_order_size, m.tokens.map((t) => [t.outcome, t.winner])])).toEqual([
        ['0x5eed579f', true, 0.01, 15, [['Arizona State', true], ['Nevada', false]]],
        ['0x8901bf36', true, 0.01, 15, [['Tennessee', true], ['Duke', false]]],
        ['0x8945183c', true, 0.01, 15, [['Clippers', false], ['Magic', true]]],
      ]);
      expect(page.markets[0]!.game_start_ms).toBe(Date.parse('2023-03-16T01:10:00Z'));
    },
  },
  {
    file: 'rest-clob-market.json',
    check: () => {
      const m = parseClobMarket(fixture<ClobMarket>('rest-clob-market.json'));
      expect(m).toMatchObject({
        condition_id: '0xd57eed0d44f5b8ca54925d8d6ff440b146b3e6e071da18136ee3ee572d34479e',
        slug: 'russia-x-ukraine-ceasefire-by-end-of-2027',
        closed: true,
        accepting_orders: true,
        enable_order_book: false,
        tick_size: 0.01,
        min_order_size: 5,
        neg_risk: false,
        end_ms: Date.parse('2027-12-31T00:00:00Z'),
      });
      expect(m.tokens.map((t) => [t.outcome, t.price, t.winner])).toEqual([
        ['Yes', 1, true],
        ['No', 0, false],
      ]);
    },
  },
  {
    file: 'rest-clob-book.json',
    check: () => {
      const b = parseBook(fixture<ClobBook>('rest-clob-book.json'));
      // Recorded best-level-last (and trimmed to the far levels): bids 0.001…0.005, asks 0.999…0.995.
      expect(b.bids.map((l) => [l.price, l.size])).toEqual([
        [0.005, 1000],
        [0.004, 12364],
        [0.003, 135826.51],
        [0.002, 1000005],
        [0.001, 2202468],
      ]);
      expect(b.asks.map((l) => [l.price, l.size])).toEqual([
        [0.995, 222222],
        [0.996, 5000],
        [0.997, 7.06],
        [0.998, 5007500],
        [0.999, 45521.44],
      ]);
      expect(b).toMatchObject({ ts: 1781289337944, tick_size: 0.001, min_order_size: 5, neg_risk: true, last_trade_price: 0.152, hash: '3082b8da1567a4510e93544031cb9144524f2de7' });
    },
  },
  {
    file: 'rest-clob-book-2024.json',
    check: () => {
      const b = parseBook(fixture<ClobBook>('rest-clob-book-2024.json'));
      expect(b.asks.map((l) => [l.price, l.size])).toEqual([
        [0.14, 705],
        [0.2, 70],
        [0.38, 192.3],
        [0.46, 10],
        [0.47, 50],
        [0.5, 30],
        [0.98, 5000],
      ]);
      expect(b.bids[0]).toEqual({ price: 0.1, size: 125 });
      expect(b.bids.at(-1)).toEqual({ price: 0.01, size: 1000 });
      expect(b).toMatchObject({ ts: 1728799418260, tick_size: null, neg_risk: null, last_trade_price: null });
    },
  },
  {
    file: 'rest-clob-prices-history.json',
    check: () => {
      const h = parsePricesHistory(fixture('rest-clob-prices-history.json'));
      expect(h).toHaveLength(20);
      expect(h[0]).toEqual({ ts: 1781282044000, price: 0.151 });
      expect(h[19]).toEqual({ ts: 1781283184000, price: 0.1505 });
    },
  },
  {
    file: 'rest-data-api-trades.json',
    check: () => {
      const ts = fixture<DataApiTrade[]>('rest-data-api-trades.json').map(parseDataApiTrade);
      expect(ts.map((t) => [t.side, t.size, t.price, t.ts, t.wallet])).toEqual([
        ['buy', 256, 0.152, 1781289172000, '0xa0f21e6d351baa9185716b5c00c2925ed9621848'],
        ['sell', 11.77, 0.848, 1781288635000, '0xbe55fa3947e0dd06887444f9b6cbf05dcfb8c2ee'],
        ['buy', 368, 0.152, 1781288632000, '0xa0f21e6d351baa9185716b5c00c2925ed9621848'],
      ]);
      expect(ts[0]!.trade_id.startsWith('0x3c49025c45025d25c7e4a88619ca9454135f6dcb53343096a7aa361003b471d0-')).toBe(true);
      expect(new Set(ts.map((t) => t.trade_id)).size).toBe(3);
    },
  },
  {
    file: 'rest-clob-data-trades-item.json',
    check: () => {
      const t = parseUserTrade(fixture<ClobUserTrade>('rest-clob-data-trades-item.json'));
      expect(t).toMatchObject({ id: '0c357886-b9d3-44bb-9aa9-72d8abc90e6e', side: 'buy', size: 5, price: 0.489, status: 'CONFIRMED', role: 'taker', match_ms: 1726043102000, fee_rate_bps: 0 });
      expect(t.maker_orders).toEqual([
        { order_id: '0x6dd169f87692751b75b4ed673158721cdbf56ec49f29aa94a6aaa05b93b1b0ab', token_id: t.token_id, price: 0.489, matched: 5, outcome: 'Yes' },
      ]);
    },
  },
  {
    file: 'rest-clob-order-post.fixture-ok.json',
    check: () => {
      expect(parseOrderPostResponse(fixture('rest-clob-order-post.fixture-ok.json'))).toEqual({
        accepted: true,
        order_id: '0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef12',
        error: null,
      });
    },
  },
  {
    file: 'rest-clob-order-post.fixture-failed.json',
    check: () => {
      expect(parseOrderPostResponse(fixture('rest-clob-order-post.fixture-failed.json'))).toEqual({ accepted: false, order_id: null, error: 'Insufficient balance' });
    },
  },
  {
    file: 'rest-clob-order-cancel.fixture.json',
    check: () => {
      expect(parseCancelResponse(fixture('rest-clob-order-cancel.fixture.json'))).toEqual({
        canceled: [],
        not_canceled: [{ order_id: '0xb816482a1234567890abcdef1234567890abcdef1234567890abcdef12345678', reason: 'already canceled or matched' }],
      });
    },
  },
  {
    file: 'rest-clob-fee-rate.fixture.json',
    check: () => {
      expect(parseFeeRate(fixture('rest-clob-fee-rate.fixture.json'))).toEqual({ base_fee_bps: 150 });
    },
  },
  {
    file: 'rest-errors.jsonl',
    check: () => {
      const rows = lines('rest-errors.jsonl').map((l) => JSON.parse(l) as { http_status: number; body: unknown });
      const errs = rows.map((r) => httpError(r.http_status, JSON.stringify(r.body), 'GET /x'));
      expect(errs[0]!.kind).toBe('non_retryable');
      expect(errs[0]!.code).toBe('invalid_request');
      expect(errs[0]!.details).toEqual({ status: 400, venue_message: "invalid filters: the time component is mandatory, please use 'startTs' and 'endTs' or 'interval'" });
      expect(errs[1]!.details?.venue_message).toBe('Invalid token id');
      // The third is a 200 whose body is an error: a books read refuses it as malformed.
      expect(parseErrorBody(JSON.stringify(rows[2]!.body))).toBe('Invalid payload');
      let err: unknown;
      try {
        parseBooks(rows[2]!.body);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(VenueError);
      expect((err as VenueError).code).toBe('malformed_message');
      // Retry rules by status.
      expect([429, 503, 404, 401].map((s) => [httpError(s, '{}', 'x', '2').kind, httpError(s, '{}', 'x', '2').code])).toEqual([
        ['retryable', 'rate_limited'],
        ['retryable', 'venue_unavailable'],
        ['non_retryable', 'not_found'],
        ['fatal', 'auth_failed'],
      ]);
      expect(httpError(429, '{}', 'x', '2').retry_after_ms).toBe(2000);
    },
  },
  {
    file: 'ws-book.jsonl',
    check: () => {
      const books = frames('ws-book.jsonl').map((f) => only(f, 'book').book);
      // Best level last on the wire; best first once parsed.
      expect(books.map((b) => [b.token_id.slice(0, 10), b.bids[0], b.asks[0], b.asks[1], b.ts, b.tick_size, b.last_trade_price])).toEqual([
        ['3509777698', { price: 0.07, size: 182528.55 }, { price: 0.08, size: 228198.28 }, { price: 0.09, size: 153220.41 }, 1786604072222, 0.01, 0.92],
        ['7667056713', { price: 0.3, size: 5000 }, { price: 0.397, size: 100.09 }, { price: 0.398, size: 3737.87 }, 1790658661234, 0.001, 0.255],
        ['4833104333', { price: 0.511, size: 1304.72 }, { price: 0.514, size: 20230.87 }, { price: 0.515, size: 43551.96 }, 1728799418260, null, null],
      ]);
      expect(books.map((b) => [b.bids.length, b.asks.length])).toEqual([
        [7, 20],
        [20, 20],
        [20, 20],
      ]);
    },
  },
  {
    file: 'ws-price_change.jsonl',
    check: () => {
      const pcs = frames('ws-price_change.jsonl').map((f) => only(f, 'price_change'));
      expect(pcs).toHaveLength(15);
      for (const f of pcs) expect(f.changes).toHaveLength(2); // the token and its complement at 1 − p
      expect(pcs[0]).toEqual({
        kind: 'price_change',
        condition_id: '0x285746de0e4f751fd4dc8f9dc2cecd0101ba9ad0096a43145ed9643b09514f01',
        ts: 1790658674035,
        changes: [
          { token_id: '76670567130917723816490572615540605537878462672464291990940067659127658071111', side: 'bid', price: 0.301, size: 1000, best_bid: 0.301, best_ask: 0.397 },
          { token_id: '54179564009642723353355316176091991063553046330768303687769988635499280029688', side: 'ask', price: 0.699, size: 1000, best_bid: 0.603, best_ask: 0.699 },
        ],
      });
      expect(pcs[2]!.changes[0]).toMatchObject({ side: 'ask', price: 0.399, size: 0 }); // size 0 removes the level
    },
  },
  {
    file: 'ws-price_change-legacy.jsonl',
    check: () => {
      const [a, b] = frames('ws-price_change-legacy.jsonl').map((f) => only(f, 'price_change'));
      expect(a!.changes.map((c) => [c.side, c.price, c.size, c.best_bid, c.best_ask])).toEqual([
        ['bid', 0.6, 3300, 0.6, 0.7],
        ['bid', 0.5, 3400, 0.6, 0.7],
        ['bid', 0.7, 3400, 0.6, 0.7],
      ]);
      // Pre-2025 flat schema: one change at the top level, no touch reported.
      expect(b).toEqual({
        kind: 'price_change',
        condition_id: '0xdd22472e552920b8438158ea7238bfadfa4f736aa4cee91a6b86c39ead110917',
        ts: 1723967931411,
        changes: [{ token_id: '48331043336612883890938759509493159234755048973500640148014422747788308965732', side: 'ask', price: 0.514, size: 21574.08, best_bid: null, best_ask: null }],
      });
    },
  },
  {
    file: 'ws-last_trade_price.jsonl',
    check: () => {
      const t = only(frames('ws-last_trade_price.jsonl')[0]!, 'last_trade_price').trade;
      expect(t).toMatchObject({
        token_id: '21742633143463906290569050155826241533067272736897614950488156847949938836455',
        condition_id: '0xdd22472e552920b8438158ea7238bfadfa4f736aa4cee91a6b86c39ead110917',
        side: 'sell',
        price: 0.491,
        size: 85.36,
        ts: 1724564136087,
        wallet: null,
      });
      expect(t.trade_id).toMatch(/^lt-1724564136087-[0-9a-f]{16}$/);
      // The id is a function of the print: the same frame twice is the same trade.
      expect(only(frames('ws-last_trade_price.jsonl')[0]!, 'last_trade_price').trade.trade_id).toBe(t.trade_id);
    },
  },
  {
    file: 'ws-tick_size_change.jsonl',
    check: () => {
      expect(frames('ws-tick_size_change.jsonl')[0]).toEqual({
        kind: 'tick_size_change',
        token_id: '115474063863764126958837769719736461272619491980773624567012766320777398670353',
        condition_id: '0xbacdf04bf7f22a670dc4fb408878ec56b76f9934599829455b9371693ba84b8b',
        old_tick_size: 0.01,
        new_tick_size: 0.001,
        ts: 1739068041853,
      });
    },
  },
  {
    file: 'ws-best_bid_ask.jsonl',
    check: () => {
      expect(frames('ws-best_bid_ask.jsonl')[0]).toEqual({
        kind: 'best_bid_ask',
        token_id: '85354956062430465315924116860125388538595433819574542752031640332592237464430',
        best_bid: 0.73,
        best_ask: 0.77,
        ts: 1766789469958,
      });
    },
  },
  {
    file: 'ws-new_market.jsonl',
    check: () => {
      const f = only(frames('ws-new_market.jsonl')[0]!, 'new_market');
      expect(f).toMatchObject({
        condition_id: '0x311d0c4b6671ab54af4970c06fcf58662516f5168997bdda209ec3db5aa6b0c1',
        gamma_id: '1031769',
        question: 'Will NVIDIA (NVDA) close above $240 end of January?',
        outcomes: ['Yes', 'No'],
        tick_size: 0.01,
        ts: 1766790415550,
      });
      expect(f.token_ids).toHaveLength(2);
    },
  },
  {
    file: 'ws-market_resolved.jsonl',
    check: () => {
      expect(frames('ws-market_resolved.jsonl')[0]).toMatchObject({
        kind: 'market_resolved',
        condition_id: '0x311d0c4b6671ab54af4970c06fcf58662516f5168997bdda209ec3db5aa6b0c1',
        winning_token_id: '76043073756653678226373981964075571318267289248134717369284518995922789326425',
        winning_outcome: 'Yes',
        ts: 1766790415550,
      });
    },
  },
  {
    file: 'ws-user-order.jsonl',
    check: () => {
      const os = lines('ws-user-order.jsonl').map((l) => parseUserOrder(JSON.parse(l) as ClobUserOrder));
      expect(os.map((o) => [o.change, o.side, o.price, o.original_size, o.size_matched, o.status, o.ts])).toEqual([
        ['placement', 'buy', 0.513, 5, 0, 'LIVE', 1725842520990],
        ['cancellation', 'sell', 0.513, 5, 5, 'CANCELED', 1725841743272],
      ]);
    },
  },
  {
    file: 'ws-user-trade.jsonl',
    check: () => {
      const ts = lines('ws-user-trade.jsonl').map((l) => parseUserTrade(JSON.parse(l) as ClobUserTrade));
      expect(ts.map((t) => [t.side, t.size, t.price, t.status, t.role, t.match_ms, t.maker_orders.length])).toEqual([
        ['buy', 5, 0.52, 'MATCHED', 'taker', 1725958681000, 1],
        ['buy', 1096.87, 0.518, 'MINED', 'maker', 1725868859000, 6],
      ]);
      // One maker order sits on the other outcome (No at 0.482 = 1 − 0.518).
      expect(ts[1]!.maker_orders.map((o) => [o.outcome, o.price, o.matched])).toEqual([
        ['No', 0.482, 10],
        ['Yes', 0.518, 247.68],
        ['Yes', 0.518, 227.92],
        ['Yes', 0.518, 5],
        ['Yes', 0.518, 394.46],
        ['Yes', 0.518, 211.81],
      ]);
    },
  },
];

describe('Polymarket recorded payloads', () => {
  for (const c of cases) it(c.file, c.check);

  it('covers every recorded file', () => {
    const files = readdirSync(FIXTURES).filter((f) => f !== 'README.md');
    expect(files.sort()).toEqual(cases.map((c) => c.file).sort());
  });

  it('refuses malformed payloads with a non-retryable malformed_message', () => {
    const bad: (() => unknown)[] = [
      () => parseGammaMarket({ ...fixture<GammaMarket>('rest-gamma-market.json'), clobTokenIds: '[1, 2' }),
      () => parseBook({ asset_id: 'x', market: 'm', bids: [{ price: '1.5', size: '1' }], asks: [] }),
      () => parseBook({ asset_id: 'x', market: 'm', bids: [], asks: [{ price: '0.5', size: 'lots' }] }),
      () => parseMarketMessage('{"event_type":"price_change","timestamp":"1","market":"m"}'),
      () => parseMarketMessage('{"event_type":"last_trade_price","asset_id":"a","price":"0.5","size":"1","side":"HOLD","timestamp":"1"}'),
      () => parseMarketMessage('not json'),
    ];
    for (const f of bad) {
      let err: unknown;
      try {
        f();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(VenueError);
      expect((err as VenueError).code).toBe('malformed_message');
      expect((err as VenueError).kind).toBe('non_retryable');
    }
    // Unknown event types are not errors, and PONG answers our PING.
    expect(parseMarketMessage('{"event_type":"something_new"}')).toEqual([{ kind: 'ignored', event_type: 'something_new' }]);
    expect(parseMarketMessage('PONG')).toEqual([{ kind: 'pong' }]);
  });
});
