import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../../src/venues/errors.js';
import { createSimAdapter } from '../../../../src/venues/sim/index.js';
import { type SimMarket } from '../../../../src/sim/index.js';
import type { GameStateRecord, NormalizedQuote, NormalizedTrade, VenueSettlement } from '../../../../src/venues/types.js';
import { complementOf, contestOf, manualClock, newMarket, phaseOf, pickPosition, positionOf } from './support.js';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(VenueError);
    expect((e as VenueError).kind).toBe('non_retryable');
    return (e as VenueError).code;
  }
  throw new Error('expected a VenueError');
}

function countQuotes(m: SimMarket): { n: number } {
  const c = { n: 0 };
  m.onQuote(() => c.n++);
  return c;
}

describe('freeze', () => {
  it('stops random quote changes and trades; setQuote still flows; unfreezing resumes', () => {
    const m = newMarket();
    const clock = manualClock(m);
    const q = countQuotes(m);
    let trades = 0;
    m.onTrade(() => trades++);
    m.freeze(true);
    expect(m.isFrozen()).toBe(true);
    clock.advance(60_000);
    clock.advance(60_000);
    expect(q.n).toBe(0);
    expect(trades).toBe(0);
    expect(m.burst(100)).toBe(0);
    const pos = pickPosition(m, 'sim_exchange');
    m.setQuote({ partner_id: 'sim_exchange', position_hash: pos, price: 0.41, available: 100 });
    expect(q.n).toBe(1);
    clock.advance(60_000);
    expect(q.n).toBe(1);
    m.freeze(false);
    clock.advance(5_000);
    expect(q.n).toBeGreaterThan(10);
    expect(trades).toBeGreaterThan(0);
  });

  it('validates its argument', () => {
    expect(code(() => newMarket().freeze('yes' as never))).toBe('invalid_request');
  });

  it('is reported by state()', () => {
    const m = newMarket(7);
    m.freeze(true);
    const s = m.state();
    expect(s).toMatchObject({ seed: 7, frozen: true, running: false });
    expect(s.venues.map((v) => v.partner_id)).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice']);
    const ex = s.venues[0]!;
    expect(ex).toMatchObject({ name: 'Sim Exchange', orders_allowed: true, quote_source: 'streaming', publishes_trades: true, internal_book: false });
    expect(ex.listings).toBeGreaterThan(100);
    expect(s.venues.find((v) => v.partner_id === 'sim_sportsbook')).toMatchObject({ quote_source: 'polling', poll_interval_ms: 5000 });
    expect(s.venues.find((v) => v.partner_id === 'practice')).toMatchObject({ quote_source: null, listings: 0, internal_book: true });
  });
});

describe('setQuote', () => {
  it('sets the exact book and reaches the adapters', async () => {
    const m = newMarket();
    const clock = manualClock(m);
    m.freeze(true);
    const pos = pickPosition(m, 'sim_exchange');
    const ex = createSimAdapter(m, 'sim_exchange', { clock: clock.now });
    await ex.connect();
    const got: NormalizedQuote[] = [];
    ex.subscribeQuotes((x) => got.push(x));
    m.setQuote({ partner_id: 'sim_exchange', position_hash: pos, price: 0.555, available: 500, levels: [{ price: 0.57, available: 1000 }] });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ position_hash: pos, price: 0.555, available: 500, levels: [{ price: 0.555, available: 500 }, { price: 0.57, available: 1000 }], source: 'streaming', ts_init: clock.now() });
    // polled venue: visible on the next snapshot
    const sb = createSimAdapter(m, 'sim_sportsbook', { clock: clock.now });
    await sb.connect();
    const sbPos = pickPosition(m, 'sim_sportsbook');
    m.setQuote({ partner_id: 'sim_sportsbook', position_hash: sbPos, price: 0.6, available: 750 });
    const snap = await sb.fetchQuotes({ position_hashes: [sbPos] });
    expect(snap[0]).toMatchObject({ price: 0.6, available: 750, source: 'polling' });
  });

  it('accepts levels that include the best level, and empties a book with available 0', async () => {
    const m = newMarket();
    const pos = pickPosition(m, 'sim_book01');
    const ev = m.setQuote({ partner_id: 'sim_book01', position_hash: pos, price: 0.3, available: 10, levels: [{ price: 0.3, available: 10 }, { price: 0.31, available: 20 }] });
    expect(ev.levels).toEqual([{ price: 0.3, available: 10 }, { price: 0.31, available: 20 }]);
    const a = createSimAdapter(m, 'sim_book01', { clock: () => m.nowMs() });
    await a.connect();
    m.setQuote({ partner_id: 'sim_book01', position_hash: pos, price: 0.3, available: 0 });
    const [q] = await a.fetchQuotes({ position_hashes: [pos] });
    expect(q).toMatchObject({ price: 0.3, available: 0, levels: [] });
  });

  it('can list a position a venue did not list', () => {
    const m = newMarket();
    const pp = m.catalog.positions.find((p) => p.market_key === 'player_points' && phaseOf(m, p.contest_id) === 'scheduled')!;
    expect(m.instrumentForPosition('sim_quotes', pp.position_hash)).toBeUndefined();
    m.setQuote({ partner_id: 'sim_quotes', position_hash: pp.position_hash, price: 0.5, available: 100 });
    expect(m.instrumentForPosition('sim_quotes', pp.position_hash)).toBeDefined();
  });

  it('refuses bad input with stable codes', () => {
    const m = newMarket();
    const pos = pickPosition(m, 'sim_exchange');
    const base = { partner_id: 'sim_exchange', position_hash: pos, price: 0.5, available: 10 };
    expect(code(() => m.setQuote({ ...base, partner_id: 'nope' }))).toBe('unknown_partner');
    expect(code(() => m.setQuote({ ...base, position_hash: 'x:y:z:0:p:ft' }))).toBe('unknown_position');
    for (const price of [0, 1, -0.1, 1.2, Number.NaN, '0.5' as unknown as number]) expect(code(() => m.setQuote({ ...base, price }))).toBe('invalid_price');
    expect(code(() => m.setQuote({ ...base, available: -1 }))).toBe('invalid_available');
    expect(code(() => m.setQuote({ ...base, levels: [{ price: 0.6, available: 1 }, { price: 0.55, available: 1 }] }))).toBe('invalid_levels');
    expect(code(() => m.setQuote({ ...base, levels: [{ price: 0.4, available: 1 }] }))).toBe('invalid_levels');
    expect(code(() => m.setQuote({ ...base, levels: [{ price: 0.5, available: 99 }] }))).toBe('invalid_levels');
    expect(code(() => m.setQuote({ ...base, partner_id: 'practice' }))).toBe('quotes_not_supported');
    const closed = m.catalog.contests.find((c) => c.status === 'closed')!;
    const closedPos = m.catalog.positions.find((p) => p.contest_id === closed.id)!;
    expect(code(() => m.setQuote({ ...base, position_hash: closedPos.position_hash }))).toBe('contest_settled');
  });
});

describe('emitTrade', () => {
  it('publishes on the venue feed, normalized by the adapter', async () => {
    const m = newMarket();
    const clock = manualClock(m);
    const pos = pickPosition(m, 'sim_book01');
    const a = createSimAdapter(m, 'sim_book01', { clock: clock.now });
    await a.connect();
    const got: NormalizedTrade[] = [];
    a.subscribeTrades((t) => got.push(t));
    m.emitTrade({ partner_id: 'sim_book01', position_hash: pos, price: 0.47, size_contracts: 12.5, taker_action: 'sell', trader_id: '0xabc', executed_at: '2026-01-10T17:59:00.000Z' });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      partner_id: 'sim_book01',
      position_hash: pos,
      taker_action: 'sell',
      price: 0.47,
      size_contracts: 12.5,
      is_block: false,
      trader_id: '0xabc',
      trader_id_kind: 'wallet',
      executed_at: Date.parse('2026-01-10T17:59:00.000Z'),
    });
    expect(got[0]!.liquidity_hash).toBe(m.instrumentForPosition('sim_book01', pos)!.liquidity_hash);
  });

  it('carries block flags on the exchange and filters by contest', async () => {
    const m = newMarket();
    const pos = pickPosition(m, 'sim_exchange');
    const a = createSimAdapter(m, 'sim_exchange', { clock: () => m.nowMs() });
    await a.connect();
    const mine: NormalizedTrade[] = [];
    const other: NormalizedTrade[] = [];
    a.subscribeTrades((t) => mine.push(t), { contest_ids: [contestOf(m, pos)] });
    a.subscribeTrades((t) => other.push(t), { contest_ids: ['ct_none'] });
    m.emitTrade({ partner_id: 'sim_exchange', position_hash: pos, price: 0.5, size_contracts: 3000, taker_action: 'buy', is_block: true });
    expect(mine[0]).toMatchObject({ is_block: true, size_contracts: 3000, trader_id: null, trader_id_kind: null });
    expect(other).toHaveLength(0);
  });

  it('refuses bad input with stable codes', () => {
    const m = newMarket();
    const pos = pickPosition(m, 'sim_exchange');
    const base = { partner_id: 'sim_exchange', position_hash: pos, price: 0.5, size_contracts: 1, taker_action: 'buy' as const };
    expect(code(() => m.emitTrade({ ...base, partner_id: 'sim_sportsbook' }))).toBe('trades_not_supported');
    expect(code(() => m.emitTrade({ ...base, partner_id: 'sim_quotes' }))).toBe('trades_not_supported');
    expect(code(() => m.emitTrade({ ...base, partner_id: 'zz' }))).toBe('unknown_partner');
    expect(code(() => m.emitTrade({ ...base, position_hash: 'nope' }))).toBe('unknown_position');
    expect(code(() => m.emitTrade({ ...base, price: 1 }))).toBe('invalid_price');
    expect(code(() => m.emitTrade({ ...base, size_contracts: 0 }))).toBe('invalid_size');
    expect(code(() => m.emitTrade({ ...base, taker_action: 'hold' as never }))).toBe('invalid_taker_action');
    expect(code(() => m.emitTrade({ ...base, executed_at: 'yesterday' }))).toBe('invalid_executed_at');
  });
});

describe('setState', () => {
  it('sets live state seen by the game-state feed and stops automatic lifecycle', async () => {
    const m = newMarket();
    const clock = manualClock(m);
    const contest = m.catalog.contests.find((c) => c.type === 'match' && c.tags.home_team && phaseOf(m, c.id) === 'scheduled')!;
    const sb = createSimAdapter(m, 'sim_sportsbook', { clock: clock.now });
    await sb.connect();
    const got: GameStateRecord[] = [];
    sb.subscribeGameState((r) => got.push(r), { contest_ids: [contest.id] });
    const st = m.setState(contest.id, {
      game_status: 'live',
      clock: { display: '5:00', remaining_seconds: 300, is_running: true },
      period: { number: 2, label: 'Q2', type: 'quarter' },
      scores: { home_score: 14, away_score: 7, period_scores: [{ home_score: 7, away_score: 7 }, { home_score: 7, away_score: 0 }] },
      situation: { possession: 'home' },
    });
    expect(st.game_status).toBe('live');
    expect(got).toHaveLength(1);
    expect(got[0]!.state).toMatchObject({ game_status: 'live', clock: { remaining_seconds: 300 }, scores: { home_score: 14, away_score: 7 }, situation: { possession: 'home' } });
    const [rec] = await sb.fetchGameState([contest.id]);
    expect(rec!.state.period).toEqual({ number: 2, label: 'Q2', type: 'quarter' });
    // no automatic progress for a contest the operator drives: even far past its end
    clock.advance(14 * 24 * 3_600_000);
    expect(m.gameState(contest.id)!.state.scores).toMatchObject({ home_score: 14, away_score: 7 });
    expect(phaseOf(m, contest.id)).toBe('live');
  });

  it('moves the fair price with the score', () => {
    const m = newMarket();
    m.freeze(false);
    const contest = m.catalog.contests.find((c) => c.tags.home_team && phaseOf(m, c.id) === 'scheduled' && c.league_id === 'lg_sba')!;
    const home = m.catalog.positions.find((p) => p.contest_id === contest.id && p.market_key === 'moneyline' && p.side_key === 'home')!;
    const inst = m.instrumentForPosition('sim_exchange', home.position_hash)!;
    m.setState(contest.id, { game_status: 'live', scores: { home_score: 60, away_score: 20, period_scores: [] } });
    m.tick(m.nowMs() + 30_000);
    expect(m.book('sim_exchange', inst.instrument_id)!.levels[0]!.price).toBeGreaterThan(0.9);
  });

  it('refuses bad input with stable codes', () => {
    const m = newMarket();
    const c = m.catalog.contests[5]!.id;
    expect(code(() => m.setState('ct_nope', { game_status: 'live' }))).toBe('unknown_contest');
    expect(code(() => m.setState(c, { gamestatus: 'live' } as never))).toBe('unknown_field');
    expect(code(() => m.setState(c, { game_status: 3 } as never))).toBe('invalid_state');
    expect(code(() => m.setState(c, { clock: { display: '1:00' } } as never))).toBe('invalid_state');
    expect(code(() => m.setState(c, { scores: { home_score: 'x' } } as never))).toBe('invalid_state');
    expect(code(() => m.setState(c, { winner_participant_id: 'someone_else' }))).toBe('unknown_participant');
    expect(code(() => m.setState(c, null as never))).toBe('invalid_state');
  });
});

describe('settle', () => {
  it('by winner: results follow the final score, books close, holders are paid', async () => {
    const m = newMarket();
    const clock = manualClock(m);
    m.freeze(true);
    const pos = pickPosition(m, 'sim_exchange');
    const p = positionOf(m, pos);
    const contest = m.catalog.contests.find((c) => c.id === p.contest_id)!;
    m.connectAccount('acct', { partner_id: 'sim_exchange', balance: 1000 });
    const ex = createSimAdapter(m, 'sim_exchange', { clock: clock.now });
    await ex.connect();
    m.setQuote({ partner_id: 'sim_exchange', position_hash: pos, price: 0.4, available: 400 });
    const o = await ex.placeOrder({ client_order_id: 'c1', account_id: 'acct', position_hash: pos, order_type: 'market', amount: 40, max_price: 0.5 });
    expect(o.filled_contracts).toBe(100);
    const before = (await ex.fetchBalance('acct')).balance;

    const quotes: NormalizedQuote[] = [];
    ex.subscribeQuotes((q) => quotes.push(q));
    const settlements: VenueSettlement[] = [];
    ex.subscribeSettlements((s) => settlements.push(s));
    const ev = m.settle(contest.id, { winner_participant_id: p.participant_id });

    const res = new Map(ev.results.map((r) => [r.position_hash, r.result]));
    expect(res.get(pos)).toBe('win');
    expect(res.get(complementOf(m, pos))).toBe('lose');
    const st = m.gameState(contest.id)!.state;
    expect(st).toMatchObject({ game_status: 'final', winner_participant_id: p.participant_id });
    const margin = st.scores!.home_score - st.scores!.away_score;
    expect(p.side_key === 'home' ? margin > 0 : margin < 0).toBe(true);
    for (const q of m.catalog.positions.filter((x) => x.contest_id === contest.id)) {
      const r = res.get(q.position_hash)!;
      if (q.market_key === 'spread') {
        const x = q.side_key === 'home' ? margin + q.variable : -margin + q.variable;
        expect(r).toBe(x > 0 ? 'win' : x < 0 ? 'lose' : 'push');
      }
      if (q.market_key === 'total') {
        const x = (st.scores!.home_score + st.scores!.away_score - q.variable) * (q.side_key === 'over' ? 1 : -1);
        expect(r).toBe(x > 0 ? 'win' : x < 0 ? 'lose' : 'push');
      }
    }
    // books of the contest emptied on the stream, settlement on the venue feed, payout $1 a contract
    expect(quotes.some((q) => q.position_hash === pos && q.available === 0 && q.levels.length === 0)).toBe(true);
    expect(settlements[0]!.results.find((r) => r.position_hash === pos)!.result).toBe('win');
    expect((await ex.fetchBalance('acct')).balance).toBeCloseTo(before + 100, 6);
    expect(code(() => m.settle(contest.id, { winner_participant_id: p.participant_id }))).toBe('already_settled');
  });

  it('by results: listed positions decide their group, the rest push', () => {
    const m = newMarket();
    const pos = pickPosition(m, 'sim_exchange', 'total');
    const p = positionOf(m, pos);
    const ev = m.settle(p.contest_id, { results: { [pos]: 'win' } });
    const res = new Map(ev.results.map((r) => [r.position_hash, r.result]));
    expect(res.get(pos)).toBe('win');
    expect(res.get(complementOf(m, pos))).toBe('lose');
    const unrelated = m.catalog.positions.find((x) => x.contest_id === p.contest_id && x.market_key === 'moneyline')!;
    expect(res.get(unrelated.position_hash)).toBe('push');
    expect(ev.results).toHaveLength(m.catalog.positions.filter((x) => x.contest_id === p.contest_id).length);
  });

  it('refuses bad input with stable codes', () => {
    const m = newMarket();
    const pos = pickPosition(m, 'sim_exchange');
    const c = contestOf(m, pos);
    const other = m.catalog.positions.find((x) => x.contest_id !== c)!.position_hash;
    expect(code(() => m.settle('ct_nope', { winner_participant_id: 'x' }))).toBe('unknown_contest');
    expect(code(() => m.settle(c, { winner_participant_id: 'not_in_it' }))).toBe('unknown_participant');
    expect(code(() => m.settle(c, { results: { [other]: 'win' } }))).toBe('unknown_position');
    expect(code(() => m.settle(c, { results: { [pos]: 'maybe' as never } }))).toBe('invalid_result');
    expect(code(() => m.settle(c, { results: {} }))).toBe('invalid_request');
    expect(code(() => m.settle(c, {} as never))).toBe('invalid_request');
    // nothing was settled by the failed attempts
    expect(m.gameState(c)!.state.game_status).toBe('scheduled');
  });
});

describe('connectAccount', () => {
  it('connects with a balance the adapter reads, and reconnecting updates it', async () => {
    const m = newMarket();
    const a = createSimAdapter(m, 'sim_p2p', { clock: () => m.nowMs() });
    await a.connect();
    expect(m.connectAccount('u1', { partner_id: 'sim_p2p', balance: 250 })).toMatchObject({ router_account_id: 'u1', partner_id: 'sim_p2p', balance: 250, credential_status: 'connected' });
    expect((await a.fetchBalance('u1')).balance).toBe(250);
    m.connectAccount('u1', { partner_id: 'sim_p2p', balance: 80, credential_status: 'failed' });
    expect(await a.fetchBalance('u1')).toMatchObject({ balance: 80, held: 0, credential_status: 'failed' });
    // a connection that is not validated cannot trade
    const o = await a.placeOrder({ client_order_id: 'x', account_id: 'u1', position_hash: pickPosition(m, 'sim_p2p'), order_type: 'market', amount: 10, max_price: 0.99 });
    expect(o).toMatchObject({ status: 'rejected', reject_code: 'venue_disabled' });
  });

  it('refuses bad input with stable codes', () => {
    const m = newMarket();
    expect(code(() => m.connectAccount('u', { partner_id: 'nope', balance: 1 }))).toBe('unknown_partner');
    expect(code(() => m.connectAccount('u', { partner_id: 'practice', balance: 1 }))).toBe('not_connectable');
    expect(code(() => m.connectAccount('u', { partner_id: 'sim_quotes', balance: 1 }))).toBe('not_connectable');
    expect(code(() => m.connectAccount('u', { partner_id: 'sim_exchange', balance: -5 }))).toBe('invalid_balance');
    expect(code(() => m.connectAccount('u', { partner_id: 'sim_exchange', balance: Number.NaN }))).toBe('invalid_balance');
    expect(code(() => m.connectAccount('u', { partner_id: 'sim_exchange', balance: 1, credential_status: 'ok' as never }))).toBe('invalid_credential_status');
    expect(code(() => m.connectAccount('', { partner_id: 'sim_exchange', balance: 1 }))).toBe('invalid_request');
  });
});

describe('listeners', () => {
  it('a throwing subscriber does not stop the market and is counted', () => {
    const m = newMarket();
    m.onQuote(() => {
      throw new Error('bad subscriber');
    });
    let ok = 0;
    m.onQuote(() => ok++);
    expect(m.burst(50)).toBe(50);
    expect(ok).toBe(50);
    expect(m.state().listener_errors).toBe(50);
  });

  it('unsubscribe stops delivery', () => {
    const m = newMarket();
    let n = 0;
    const off = m.onQuote(() => n++, 'sim_exchange');
    m.burst(200);
    const seen = n;
    expect(seen).toBeGreaterThan(0);
    off();
    m.burst(200);
    expect(n).toBe(seen);
  });
});
