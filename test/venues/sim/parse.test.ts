/**
 * Recorded payloads → domain objects, one table per message kind (CCXT static tests / Nautilus
 * test_data style), plus a round trip of what the simulated servers actually send.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../src/venues/errors.js';
import type { SimInstrument, SimWireQuote } from '../../../src/sim/messages.js';
import { SIM_PERSONALITIES, SimMarket, type SimPartnerId } from '../../../src/sim/index.js';
import {
  parseBalanceEvent,
  parseOrderAck,
  parseQuote,
  parseScoreboard,
  parseSettlement,
  parseTrade,
  quoteRef,
  type QuoteParseContext,
} from '../../../src/venues/sim/parse.js';
import { encodeQuote, encodeScoreboard, encodeTrade } from '../../../src/sim/server.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = <T = unknown>(name: string): T => JSON.parse(readFileSync(join(dir, name), 'utf8')) as T;
const TS_INIT = 1_768_068_000_123;

const inst = (partner: string, id: string, side: string, position_hash = 'ct_sfl_003:moneyline:away:0:tm_sfl_den:ft'): SimInstrument => ({
  instrument_id: id,
  position_hash,
  contest_id: 'ct_sfl_003',
  liquidity_hash: `${partner}:${id}`,
  venue_side_key: side,
});

const ctx = (id: SimPartnerId): QuoteParseContext => ({
  partner_id: id,
  fee: SIM_PERSONALITIES[id].fee,
  real_book: SIM_PERSONALITIES[id].real_book,
  source: SIM_PERSONALITIES[id].capabilities.quotes.streaming ? 'streaming' : 'polling',
});

describe('quote payloads', () => {
  const cases: { file: string; partner: SimPartnerId; id: string; side: string; expect: Record<string, unknown> }[] = [
    {
      file: 'exchange_book.json',
      partner: 'sim_exchange',
      id: 'SX-000012',
      side: 'home',
      expect: {
        price: 0.55,
        available: 66,
        levels: [
          { price: 0.55, available: 66 },
          { price: 0.56, available: 224 },
          { price: 0.58, available: 580 },
        ],
        fee: { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 },
        source: 'streaming',
        real_book: true,
        ts_event: 1768067999960,
        venue_side_key: 'home',
      },
    },
    { file: 'exchange_book_empty.json', partner: 'sim_exchange', id: 'SX-000012', side: 'home', expect: { price: 0.61, available: 0, levels: [], ts_event: 1768068000960 } },
    {
      file: 'book01_book.json',
      partner: 'sim_book01',
      id: '73529011400031',
      side: 'away',
      expect: {
        price: 0.47,
        available: 100.0019,
        levels: [
          { price: 0.47, available: 100.0019 },
          { price: 0.48, available: 480 },
        ],
        fee: { kind: 'pq', taker_rate: 0.02, maker_rate: 0 },
        ts_event: 1768067999880,
      },
    },
    { file: 'sportsbook_offer.json', partner: 'sim_sportsbook', id: 'SB100012', side: 'away', expect: { price: 0.52381, available: 500, levels: [{ price: 0.52381, available: 500 }], fee: { kind: 'none' }, source: 'polling', ts_event: Date.parse('2026-01-10T17:59:59.700Z') } },
    { file: 'sportsbook_offer_suspended.json', partner: 'sim_sportsbook', id: 'SB100013', side: 'home', expect: { price: 0.4, available: 0, levels: [] } },
    {
      file: 'p2p_line.json',
      partner: 'sim_p2p',
      id: 'line-31',
      side: 'away',
      expect: { price: 0.4, available: 120.5, levels: [{ price: 0.4, available: 120.5 }, { price: 0.416667, available: 300 }], fee: { kind: 'flat_pct', taker_pct: 1, maker_pct: 0 }, ts_event: 1768067999800 },
    },
    { file: 'quotes_feed.json', partner: 'sim_quotes', id: 'q9', side: 'over', expect: { price: 0.524, available: 1500, levels: [{ price: 0.524, available: 1500 }], fee: { kind: 'unknown' }, real_book: false, ts_event: 1768067999500 } },
  ];

  it.each(cases)('$file', (c) => {
    const wire = SIM_PERSONALITIES[c.partner].wire;
    const msg = fixture<SimWireQuote>(c.file);
    expect(quoteRef(wire, msg)).toBe(c.id);
    const i = inst(c.partner, c.id, c.side);
    const q = parseQuote(wire, msg, i, ctx(c.partner), TS_INIT);
    expect(q).toMatchObject({ partner_id: c.partner, liquidity_hash: i.liquidity_hash, position_hash: i.position_hash, venue_market_id: c.id, ts_init: TS_INIT, ...c.expect });
  });

  it('refuses malformed payloads with malformed_message', () => {
    const bad: [SimPartnerId, unknown][] = [
      ['sim_exchange', { type: 'orderbook_snapshot', asks: [['x', 1]], last_price_cents: 5, ts_ms: 1 }],
      ['sim_exchange', { type: 'other' }],
      ['sim_book01', { event_type: 'book', asks: [{ price: 'abc', size: '1' }] }],
      ['sim_sportsbook', { odds_american: 50, max_stake: 1, updated_at: '2026-01-01T00:00:00Z' }],
      ['sim_sportsbook', { odds_american: -110, max_stake: 1, updated_at: 'soon' }],
      ['sim_p2p', { offers: [{ decimal_odds: 0.9, stake: 1 }], last_decimal_odds: 2, as_of: 1 }],
      ['sim_quotes', { implied_pct: 120, depth_usd: 1, as_of_ms: 1 }],
    ];
    for (const [p, msg] of bad) {
      let err: unknown;
      try {
        parseQuote(SIM_PERSONALITIES[p].wire, msg as SimWireQuote, inst(p, 'x', 'home'), ctx(p), TS_INIT);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(msg)).toBeInstanceOf(VenueError);
      expect((err as VenueError).code).toBe('malformed_message');
    }
  });
});

describe('trade payloads', () => {
  it('exchange print with a block flag and no trader identity', () => {
    const t = parseTrade(fixture('exchange_trade.json'), inst('sim_exchange', 'SX-000012', 'home'), 'sim_exchange', TS_INIT);
    expect(t).toEqual({
      partner_id: 'sim_exchange',
      venue_trade_id: 'sim_exchange-t88',
      venue_market_id: 'SX-000012',
      liquidity_hash: 'sim_exchange:SX-000012',
      position_hash: 'ct_sfl_003:moneyline:away:0:tm_sfl_den:ft',
      taker_action: 'buy',
      price: 0.56,
      size_contracts: 3000,
      is_block: true,
      trader_id: null,
      trader_id_kind: null,
      executed_at: 1768067990000,
      ts_event: 1768067990000,
      ts_init: TS_INIT,
    });
  });

  it('book01 print with a wallet', () => {
    const t = parseTrade(fixture('book01_trade.json'), inst('sim_book01', '73529011400031', 'away'), 'sim_book01', TS_INIT);
    expect(t).toMatchObject({ taker_action: 'sell', price: 0.46, size_contracts: 12.5, is_block: false, trader_id: '0x9f3c2a7e1b0d4c5a6e8f7a9b0c1d2e3f4a5b6c7d', trader_id_kind: 'wallet', executed_at: 1768067995000 });
  });
});

describe('scoreboard payloads', () => {
  it('a live team game → state with clock, period, scores and situation', () => {
    const r = parseScoreboard(fixture('sportsbook_scoreboard_live.json'), 'sim_sportsbook', TS_INIT);
    expect(r).toEqual({
      partner_id: 'sim_sportsbook',
      contest_id: 'ct_sba_003',
      ts_event: Date.parse('2026-01-10T18:00:00.000Z'),
      ts_init: TS_INIT,
      state: {
        game_status: 'live',
        clock: { display: '4:05', remaining_seconds: 245, is_running: true },
        period: { number: 3, label: 'Q3', type: 'quarter' },
        contest_result: null,
        winner_participant_id: null,
        scores: {
          home_score: 78,
          away_score: 71,
          period_scores: [
            { home_score: 28, away_score: 22 },
            { home_score: 30, away_score: 31 },
            { home_score: 20, away_score: 18 },
          ],
        },
        situation: { possession: 'home', home_fouls: 3, away_fouls: 4, bonus: null },
        leaderboard: null,
      },
    });
  });

  it('a finished outright → leaderboard and winner, no team scores', () => {
    const r = parseScoreboard(fixture('sportsbook_scoreboard_final_outright.json'), 'sim_sportsbook', TS_INIT);
    expect(r.state).toMatchObject({ game_status: 'final', scores: null, contest_result: 'decided', winner_participant_id: 'ath_stt_mateo_rivas' });
    expect(r.state.leaderboard![0]).toEqual({ participant_id: 'ath_stt_mateo_rivas', participant_name: 'Mateo Rivas', rank: 1, score: null, status: 'winner' });
  });
});

describe('order acks', () => {
  const exInst = inst('sim_exchange', 'SX-000012', 'home');
  const cases: { file: string; partner: SimPartnerId; instrument: SimInstrument | null; expect: Record<string, unknown> }[] = [
    {
      file: 'order_ack_exchange_partial.json',
      partner: 'sim_exchange',
      instrument: exInst,
      expect: { status: 'partially_filled', limit_price: 0.42, avg_price: 0.405, filled_contracts: 200, filled_notional: 81, fees: 3.38, reject_code: null, reject_reason: null, liquidity_hash: 'sim_exchange:SX-000012', currency: 'USD' },
    },
    { file: 'order_ack_exchange_rejected.json', partner: 'sim_exchange', instrument: exInst, expect: { status: 'rejected', reject_code: 'unfillable', reject_reason: 'the stake buys no whole contract', avg_price: null } },
    {
      file: 'order_ack_sportsbook_filled.json',
      partner: 'sim_sportsbook',
      instrument: inst('sim_sportsbook', 'SB100012', 'away'),
      expect: { status: 'filled', limit_price: 0.6, avg_price: 0.52381, filled_contracts: 190.909091, filled_notional: 100 },
    },
    { file: 'order_ack_p2p_pending.json', partner: 'sim_p2p', instrument: inst('sim_p2p', 'line-31', 'away'), expect: { status: 'pending', filled_contracts: 0, avg_price: null, limit_price: 0.5 } },
    {
      file: 'order_ack_practice_filled.json',
      partner: 'practice',
      instrument: null,
      expect: { status: 'filled', currency: 'ATLAS', avg_price: 0.45, liquidity_hash: null, position_hash: 'ct_sfl_003:moneyline:away:0:tm_sfl_den:ft' },
    },
    { file: 'order_ack_unknown_reason.json', partner: 'sim_book01', instrument: inst('sim_book01', '73529011400031', 'away'), expect: { status: 'rejected', reject_code: null, reject_reason: 'SELF_TRADE', order_type: 'limit' } },
  ];

  it.each(cases)('$file', (c) => {
    const o = parseOrderAck(fixture(c.file), { partner_id: c.partner, price_format: SIM_PERSONALITIES[c.partner].partner.order_config.price_format, instrument: c.instrument, warnings: ['price_off_tick'] }, TS_INIT);
    expect(o).toMatchObject({ partner_id: c.partner, account_id: 'acct_1', ts_event: 1768068000000, ts_init: TS_INIT, warnings: ['price_off_tick'], ...c.expect });
  });
});

describe('balances and settlement', () => {
  it('a balance event → update with its cause', () => {
    expect(parseBalanceEvent(fixture('balance_event.json'), 'sim_exchange', TS_INIT)).toEqual({
      partner_id: 'sim_exchange',
      account_id: 'acct_1',
      currency: 'USD',
      balance: 990.5,
      held: 9,
      credential_status: 'connected',
      cause: 'order_hold',
      venue_order_id: 'sim_exchange-o7',
      ts_event: 1768068000000,
      ts_init: TS_INIT,
    });
  });

  it('settlement outcomes join to positions; unknown instruments are skipped', () => {
    const map: Record<string, string> = { 'SX-000012': 'p1', 'SX-000013': 'p2' };
    const s = parseSettlement(fixture('settlement.json'), (ref) => map[ref], 'sim_exchange', TS_INIT);
    expect(s).toEqual({
      partner_id: 'sim_exchange',
      contest_id: 'ct_sfl_003',
      winner_participant_id: 'tm_sfl_den',
      results: [
        { position_hash: 'p1', result: 'win' },
        { position_hash: 'p2', result: 'lose' },
      ],
      ts_event: 1768080000000,
      ts_init: TS_INIT,
    });
  });
});

describe('what the simulated servers send parses back to the model', () => {
  const m = new SimMarket({ seed: 5, now: Date.UTC(2026, 0, 10, 18) });
  m.burst(3000);

  it.each(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'] as const)('%s quotes', (id) => {
    const p = SIM_PERSONALITIES[id];
    const books = m.books(id);
    expect(books.length).toBeGreaterThan(50);
    for (const ev of books) {
      const q = parseQuote(p.wire, encodeQuote(p, ev, 1), ev.instrument, ctx(id), TS_INIT);
      expect(q.levels).toEqual(ev.levels);
      expect(q.price).toBe(ev.levels[0]?.price ?? ev.last_price);
      expect(q.ts_event).toBe(ev.ts_event);
      expect(q.venue_side_key).toBe(ev.instrument.venue_side_key);
    }
  });

  it.each(['sim_exchange', 'sim_book01'] as const)('%s trades', (id) => {
    const pos = m.instruments(id)[0]!;
    const ev = m.emitTrade({ partner_id: id, position_hash: pos.position_hash, price: 0.37, size_contracts: 4, taker_action: 'sell', trader_id: id === 'sim_book01' ? '0xabc' : null });
    const t = parseTrade(encodeTrade(SIM_PERSONALITIES[id].wire, ev), ev.instrument, id, TS_INIT);
    expect(t).toMatchObject({ venue_trade_id: ev.trade_id, price: 0.37, size_contracts: 4, taker_action: 'sell', executed_at: ev.executed_at, trader_id: ev.trader_id });
  });

  it('scoreboards of every contest', () => {
    for (const id of m.contestIds()) {
      const s = m.gameState(id)!;
      const r = parseScoreboard(encodeScoreboard(id, s.state, s.ts_event), 'sim_sportsbook', TS_INIT);
      expect(r.state).toEqual(s.state);
      expect(r.ts_event).toBe(s.ts_event);
    }
  });
});
