/**
 * The recorded Gamma catalogs → the normalized catalog: a neg-risk event is one contest with many
 * runners in one exclusive group, other markets are yes/no pairs, closed markets are left out,
 * leagues come from the tags; and the fee packets a Polymarket quote carries, exactly.
 */
import { describe, expect, it } from 'vitest';
import { feePacket, fillFee } from '../../../src/domain/fees.js';
import { parsePositionHash } from '../../../src/domain/hashes.js';
import { buildPolymarketCatalog, leagueOf, type PolymarketCatalog } from '../../../src/venues/polymarket/catalog.js';
import { feeModelOf, POLYMARKET_FALLBACK_FEE } from '../../../src/venues/polymarket/fees.js';
import type { GammaEvent, GammaMarket } from '../../../src/venues/polymarket/messages.js';
import { eventsFromGammaMarkets, parseGammaEvent } from '../../../src/venues/polymarket/parse.js';
import { fixture, servedEvents } from './support.js';

const build = (events: GammaEvent[]): PolymarketCatalog => buildPolymarketCatalog(events.map(parseGammaEvent));
const positionsOf = (cat: PolymarketCatalog, contestId: string) => cat.positions.filter((p) => p.contest_id === contestId);

describe('neg-risk events', () => {
  const cat = build([...fixture<GammaEvent[]>('rest-gamma-events.json'), ...fixture<GammaEvent[]>('rest-gamma-event-negrisk.json')]);

  it('each event is ONE outright contest whose open runners are its positions, in one exclusive group', () => {
    expect(cat.contests.map((c) => [c.id, c.type, c.league_id, positionsOf(cat, c.id).length])).toEqual([
      ['pm_ev_27829', 'outright', 'pm_nhl', 1],
      ['pm_ev_27830', 'outright', 'pm_nba', 1],
      ['pm_ev_30615', 'outright', 'pm_fifa_world_cup', 3],
      ['pm_ev_32755', 'outright', 'pm_nba', 2],
      ['pm_ev_32756', 'outright', 'pm_nba', 1],
      ['pm_ev_30829', 'outright', 'pm_politics', 2],
    ]);
    const wc = positionsOf(cat, 'pm_ev_30615');
    expect(wc.map((p) => [p.participant_name, p.participant_id, p.market_id, p.side_key, p.group_key])).toEqual([
      ['Spain', 'pm_fifa_world_cup_spain', 'tournament_winner', 'yes', 'pm_ev_30615/tournament_winner'],
      ['New Zealand', 'pm_fifa_world_cup_new_zealand', 'tournament_winner', 'yes', 'pm_ev_30615/tournament_winner'],
      ['Switzerland', 'pm_fifa_world_cup_switzerland', 'tournament_winner', 'yes', 'pm_ev_30615/tournament_winner'],
    ]);
    expect(wc[0]!.position_hash).toBe('pm_ev_30615:tournament_winner:yes:0:pm_fifa_world_cup_spain:ft');
    expect(wc[0]!.title).toBe('Will Spain win the 2026 FIFA World Cup?');
    expect(cat.contest_participants.filter((c) => c.contest_id === 'pm_ev_30615').map((c) => c.participant_id)).toEqual(wc.map((p) => p.participant_id));
    expect(cat.contests.find((c) => c.id === 'pm_ev_30615')!.tags).toMatchObject({ source: 'polymarket', neg_risk: true, neg_risk_augmented: true, polymarket_slug: '2026-fifa-world-cup-winner-595' });
  });

  it("a runner's Yes token quotes its position; its No token only prints against it, as the complement", () => {
    const spain = cat.tokens.filter((t) => t.gamma_market_id === '558934');
    expect(spain.map((t) => [t.outcome, t.position_hash !== null, t.trade_relation, t.side_key, t.tick_size, t.min_order_size, t.neg_risk])).toEqual([
      ['Yes', true, 'same', 'yes', 0.001, 5, true],
      ['No', false, 'complement', 'no', 0.001, 5, true],
    ]);
    expect(spain[1]!.trade_position_hash).toBe(spain[0]!.position_hash);
    expect(spain[0]!.complement_token_id).toBe(spain[1]!.token_id);
    expect(spain[0]!.liquidity_hash).toBe(`polymarket:${spain[0]!.token_id}`);
  });

  it('closed runners (eliminated teams, priced 0/1) are left out, with the reason', () => {
    expect(cat.skipped).toEqual(['553827', '553844', '553860', '553875', '564196', '564211', '564212'].map((id) => ({ gamma_market_id: id, reason: 'closed' })));
    expect(cat.tokens).toHaveLength(2 * cat.positions.length);
  });

  it('the same team in two events is one participant; the contests start when the event is decided', () => {
    const okc = cat.participants.filter((p) => p.name === 'Oklahoma City Thunder');
    expect(okc.map((p) => p.id)).toEqual(['pm_nba_oklahoma_city_thunder']);
    expect(positionsOf(cat, 'pm_ev_27830')[0]!.participant_id).toBe('pm_nba_oklahoma_city_thunder');
    expect(positionsOf(cat, 'pm_ev_32756')[0]!.participant_id).toBe('pm_nba_oklahoma_city_thunder');
    const start = (id: string) => cat.contests.find((c) => c.id === id)!.starts_at;
    expect(start('pm_ev_27829')).toBe('2026-06-30T00:00:00.000Z'); // no startTime: the end date
    expect(start('pm_ev_32755')).toBe('2026-06-16T00:00:00.000Z'); // startTime
    expect(start('pm_ev_30829')).toBe('2028-11-07T12:00:00.000Z');
    expect(cat.markets.map((m) => m.id)).toEqual(['tournament_winner']);
    expect(cat.leagues.find((l) => l.id === 'pm_nhl')).toEqual({ id: 'pm_nhl', name: 'NHL', participant_type: 'team', status: 'active' });
  });

  it('every position hash parses and is unique; the build is deterministic', () => {
    const hashes = cat.positions.map((p) => p.position_hash);
    expect(new Set(hashes).size).toBe(hashes.length);
    for (const h of hashes) expect(parsePositionHash(h)).not.toBeNull();
    expect(build([...fixture<GammaEvent[]>('rest-gamma-events.json'), ...fixture<GammaEvent[]>('rest-gamma-event-negrisk.json')])).toEqual(cat);
  });
});

describe('binary markets', () => {
  it('GET /markets results regroup into their events; each market is a yes/no pair of its own', () => {
    const cat = buildPolymarketCatalog(eventsFromGammaMarkets(fixture<GammaMarket[]>('rest-gamma-markets.json')));
    expect(cat.contests.map((c) => [c.id, c.type, c.league_id, c.title])).toEqual([
      ['pm_ev_29005', 'event', 'pm_other', 'MegaETH airdrop by...?'],
      ['pm_ev_36173', 'event', 'pm_other', 'When will Bitcoin hit $150k?'],
      ['pm_ev_52130', 'event', 'pm_other', 'Opensea FDV above ___ one day after launch?'],
    ]);
    const btc = positionsOf(cat, 'pm_ev_36173');
    expect(btc.map((p) => [p.market_id, p.side_key, p.participant_id, p.participant_name, p.group_key])).toEqual([
      ['yes_no', 'yes', 'pm_m573655', 'by June 30, 2026', 'pm_ev_36173/yes_no/573655'],
      ['yes_no', 'no', 'pm_m573655', 'by June 30, 2026', 'pm_ev_36173/yes_no/573655'],
      ['yes_no', 'yes', 'pm_m573656', 'by December 31, 2026', 'pm_ev_36173/yes_no/573656'],
      ['yes_no', 'no', 'pm_m573656', 'by December 31, 2026', 'pm_ev_36173/yes_no/573656'],
    ]);
    expect(btc[1]!.title).toBe('Will Bitcoin hit $150k by June 30, 2026?: No');
    expect(cat.tokens.every((t) => t.trade_relation === 'same' && t.position_hash !== null)).toBe(true);
    expect(cat.tokens.filter((t) => t.gamma_market_id === '573656').map((t) => t.tick_size)).toEqual([0.01, 0.01]);
  });

  it('outcomes other than Yes/No map by position: Up is side yes, Down side no', () => {
    const served = servedEvents();
    const cat = build(served.slice(-1));
    expect(cat.positions.map((p) => [p.side_key, p.title])).toEqual([
      ['yes', 'Bitcoin Up or Down - March 12, 5:20AM-5:25AM ET: Up'],
      ['no', 'Bitcoin Up or Down - March 12, 5:20AM-5:25AM ET: Down'],
    ]);
    expect(cat.contests[0]!.starts_at).toBe('2026-03-12T09:20:00.000Z');
    expect(cat.tokens[0]!.fee).toEqual(POLYMARKET_FALLBACK_FEE);
  });

  it('two runners of one event with the same name stay two participants and two positions', () => {
    const [e] = fixture<GammaEvent[]>('rest-gamma-event-negrisk.json');
    const [m1, m2] = e!.markets!;
    const cat = build([{ ...e!, markets: [m1!, { ...m2!, groupItemTitle: 'Stephen A. Smith' }] }]);
    expect(cat.positions.map((p) => p.participant_id)).toEqual(['pm_politics_stephen_a_smith', 'pm_politics_stephen_a_smith_559659']);
  });

  it('a closed event, and markets without two tokens or an order book, are left out', () => {
    const [e] = fixture<GammaEvent[]>('rest-gamma-event-negrisk.json');
    const [m1, m2] = e!.markets!;
    const cat = build([
      { ...e!, id: 'a', markets: [{ ...m1!, enableOrderBook: false }, { ...m2!, clobTokenIds: '["only-one"]' }] },
      { ...e!, id: 'b', closed: true },
    ]);
    expect(cat.contests).toEqual([]);
    expect(cat.skipped).toEqual([
      { gamma_market_id: '559657', reason: 'no order book' },
      { gamma_market_id: '559659', reason: '1 token ids' },
      { gamma_market_id: '559657', reason: 'event closed' },
      { gamma_market_id: '559659', reason: 'event closed' },
    ]);
  });
});

describe('leagues from tags', () => {
  const tags = (...slugs: string[]) => ({ tags: slugs.map((s) => ({ id: s, slug: s, label: s.toUpperCase() })) });
  it('a league tag first, then a category by priority, else other', () => {
    expect(leagueOf(tags('sports', 'nba')).id).toBe('pm_nba');
    expect(leagueOf(tags('sports', 'ufc')).participant_type).toBe('athlete');
    expect(leagueOf(tags('elections', 'crypto')).id).toBe('pm_politics');
    expect(leagueOf(tags('hide-from-new', 'bitcoin')).id).toBe('pm_crypto');
    expect(leagueOf(tags('sports', 'hockey')).id).toBe('pm_sports');
    expect(leagueOf(tags()).id).toBe('pm_other');
  });
});

describe('fee packets', () => {
  it("a sports market's schedule (rate 0.03, exponent 1, takers only) is pq 0.03/0 with exact packets", () => {
    const carolina = parseGammaEvent(fixture<GammaEvent[]>('rest-gamma-events.json')[0]!).markets[0]!;
    const model = feeModelOf(carolina);
    expect(model).toEqual({ kind: 'pq', taker_rate: 0.03, maker_rate: 0 });
    // At the recorded 0.375: price + 0.03·0.375·0.625 per contract; on USD 100, 100·0.03·0.625.
    expect(feePacket(0.375, model)).toEqual({ taker_price: 0.382031, maker_price: 0.375, taker_fee: 1.875, maker_fee: 0 });
    expect(feePacket(0.5, model)).toEqual({ taker_price: 0.5075, maker_price: 0.5, taker_fee: 1.5, maker_fee: 0 });
    // 100 shares at 0.5: 100 · 0.03 · 0.25 = 0.75 USD.
    expect(fillFee(model, 'taker', 0.5, 100)).toBe(0.75);
    expect(fillFee(model, 'maker', 0.5, 100)).toBe(0);
  });

  it('fees disabled is a zero pq (the prices of none); a crypto schedule is 0.07', () => {
    const nominee = parseGammaEvent(fixture<GammaEvent[]>('rest-gamma-event-negrisk.json')[0]!).markets[0]!;
    expect(feePacket(0.0105, feeModelOf(nominee))).toEqual({ taker_price: 0.0105, maker_price: 0.0105, taker_fee: 0, maker_fee: 0 });
    const crypto = eventsFromGammaMarkets(fixture<GammaMarket[]>('rest-gamma-markets.json'))[0]!.markets[0]!;
    expect(feePacket(0.31, feeModelOf(crypto))).toEqual({ taker_price: 0.324973, maker_price: 0.31, taker_fee: 4.83, maker_fee: 0 });
  });

  it('an exponent above 1 is bounded from above (exact at p = 0.5), never understated', () => {
    const model = feeModelOf({ fees_enabled: true, fee_schedule: { rate: 0.25, exponent: 2, taker_only: true, rebate_rate: null } });
    expect(model).toEqual({ kind: 'pq', taker_rate: 0.0625, maker_rate: 0 });
    for (const p of [0.05, 0.2, 0.5, 0.7, 0.95]) {
      const venue = 100 * 0.25 * (p * (1 - p)) ** 2;
      expect(fillFee(model, 'taker', p, 100)).toBeGreaterThanOrEqual(Math.floor(venue * 1e6) / 1e6);
    }
    expect(fillFee(model, 'taker', 0.5, 100)).toBe(1.5625);
    // A schedule taking maker fees too charges both sides.
    expect(feeModelOf({ fees_enabled: true, fee_schedule: { rate: 0.04, exponent: 1, taker_only: false, rebate_rate: null } })).toEqual({ kind: 'pq', taker_rate: 0.04, maker_rate: 0.04 });
    expect(feeModelOf({ fees_enabled: null, fee_schedule: { rate: 0.04, exponent: 0.5, taker_only: true, rebate_rate: null } })).toEqual(POLYMARKET_FALLBACK_FEE);
  });
});
