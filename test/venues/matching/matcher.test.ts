/**
 * The matcher's rules one at a time, on small catalogs: time windows, lines and market types, side
 * alignment across swapped home/away listings, draws, the threshold (a low-confidence pair is never
 * merged), one contest per venue, the mapping file winning both ways, and the metrics.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { scrapedGauge } from '../../../src/metrics.js';
import { buildKalshiCatalog, nativePosition } from '../../../src/venues/kalshi/catalog.js';
import { MATCH_METRICS, MatchConfigError, mergeVenueCatalogs, parseMappingFile, scorePair, type EventView, type MappingFile, type VenueCatalog } from '../../../src/venues/matching/index.js';
import { buildPolymarketCatalog } from '../../../src/venues/polymarket/catalog.js';
import { parseGammaEvent } from '../../../src/venues/polymarket/parse.js';
import { aliasesWith, gamesCatalog, kalshiPartner, TEST_LEAGUES, type GameSpec } from './support.js';

const aliases = aliasesWith(TEST_LEAGUES);
const at = (h: number) => new Date(Date.UTC(2025, 11, 28, 1) + h * 3_600_000).toISOString();
const game = (over: Partial<GameSpec> = {}): GameSpec => ({ id: 'g1', home: 'Green Bay Packers', away: 'Baltimore Ravens', starts: at(0), ...over });
const merge = (a: GameSpec[], b: GameSpec[], mapping?: MappingFile, extra: Record<string, VenueCatalog> = {}) =>
  mergeVenueCatalogs({ a: gamesCatalog('a', 'a_nfl', a), b: gamesCatalog('b', 'b_nfl', b), ...extra }, { aliases, mapping });
const mapping = (raw: unknown) => parseMappingFile(raw, 'mapping.json');
const hash = (venue: string, id: string, market: string, side: string, variable: number, team: string) =>
  `${venue}-${id}:${market}:${side}:${variable}:${venue}_${team.toLowerCase().replace(/[^a-z0-9]+/g, '_')}:ft`;

describe('time windows', () => {
  it.each([
    [0, 'matched', 1],
    [2, 'matched', 0.95],
    [6, 'matched', 0.85],
    [7, 'low_confidence', 0.825],
    [11, 'low_confidence', 0.725],
    [13, 'unmatched', null],
  ])('starts %i h apart → %s', (h, decision, confidence) => {
    const r = merge([game()], [game({ starts: at(h) })]);
    expect(r.report.decisions.map((d) => [d.contest_id, d.decision, d.confidence])).toEqual([
      ['a-g1', decision, confidence],
      ['b-g1', decision, confidence],
    ]);
    if (h === 13) expect(r.report.decisions[0]!.reason).toBe('no candidate: b-g1 ruled out (starts 13 h apart (window 12 h))');
  });

  it('pairs each game of a doubleheader with the nearer start', () => {
    const r = merge([game({ id: 'g1' }), game({ id: 'g2', starts: at(4) })], [game({ id: 'g1', starts: at(3.5) }), game({ id: 'g2', starts: at(0.5) })]);
    const into = Object.fromEntries(r.report.decisions.map((d) => [d.contest_id, d.merged_into]));
    expect(into['a-g1']).toBe(into['b-g2']);
    expect(into['a-g2']).toBe(into['b-g1']);
    expect(into['a-g1']).not.toBe(into['a-g2']);
  });
});

describe('sides, lines and market types', () => {
  it('aligns a team listed home on one venue and away on the other (by team, never by side key)', () => {
    const r = merge([game({ spreads: [-3.5] })], [game({ home: 'Baltimore', away: 'Green Bay', spreads: [3.5] })]);
    expect(r.report.matched).toBe(2);
    const cid = r.report.decisions[0]!.merged_into!;
    const gb = `${cid}:winner:yes:0:mx_nfl_green_bay_packers:ft`;
    expect(r.position_map.a![hash('a', 'g1', 'moneyline', 'home', 0, 'Green Bay Packers')]).toBe(gb);
    expect(r.position_map.b![hash('b', 'g1', 'moneyline', 'away', 0, 'Green Bay')]).toBe(gb);
    // a: home GB −3.5 / away BAL +3.5; b: home BAL +3.5 / away GB −3.5: the same two outcomes.
    expect(r.position_map.a![hash('a', 'g1', 'spread', 'home', -3.5, 'Green Bay Packers')]).toBe(`${cid}:handicap:yes:-3.5:mx_nfl_green_bay_packers:ft`);
    expect(r.position_map.b![hash('b', 'g1', 'spread', 'away', -3.5, 'Green Bay')]).toBe(`${cid}:handicap:yes:-3.5:mx_nfl_green_bay_packers:ft`);
    expect(r.position_map.b![hash('b', 'g1', 'spread', 'home', 3.5, 'Baltimore')]).toBe(`${cid}:handicap:yes:3.5:mx_nfl_baltimore_ravens:ft`);
    expect(r.report.aligned_positions).toBe(4);
    expect(r.catalog.contests.find((c) => c.id === cid)!.title).toBe('Baltimore Ravens at Green Bay Packers');
  });

  it('never makes two lines or two market types one position', () => {
    const r = merge([game({ spreads: [-3.5, -3], totals: [41.5, 3.5] })], [game({ spreads: [-3], totals: [42.5], moneyline: false }), game({ id: 'g9', spreads: [3.5], starts: at(200) })]);
    const cid = r.report.decisions.find((d) => d.contest_id === 'a-g1')!.merged_into!;
    const byMerged = new Map<string, string[]>();
    for (const v of ['a', 'b']) for (const [n, m] of Object.entries(r.position_map[v]!)) if (m) byMerged.set(m, [...(byMerged.get(m) ?? []), n]);
    const shared = [...byMerged].filter(([, ns]) => ns.length > 1).map(([m]) => m).sort();
    // Only the −3 spread pair is on both venues; 41.5 and 42.5 stay two totals; the 3.5 total is not the 3.5 spread.
    expect(shared).toEqual([`${cid}:handicap:yes:-3:mx_nfl_green_bay_packers:ft`, `${cid}:handicap:yes:3:mx_nfl_baltimore_ravens:ft`]);
    const totals = r.catalog.positions.filter((p) => p.contest_id === cid && p.market_id === 'total').map((p) => `${p.side_key} ${p.variable} ${p.group_key}`);
    expect(totals).toEqual([`over 3.5 ${cid}/total/3.5`, `over 41.5 ${cid}/total/41.5`, `over 42.5 ${cid}/total/42.5`, `under 3.5 ${cid}/total/3.5`, `under 41.5 ${cid}/total/41.5`, `under 42.5 ${cid}/total/42.5`]);
  });

  it('reads a three-way game: a Polymarket neg-risk event with a draw against Kalshi markets with a tie', () => {
    const soccer = aliasesWith({ version: 1, leagues: { epl: { name: 'Premier League', participant_type: 'team', open: true, venue_leagues: { 'kalshi-KXEPLGAME': 'winner', pm_epl: null } } } });
    const km = (suffix: string, sub: string) => ({ ticker: `KXEPLGAME-26JAN10ARSCHE-${suffix}`, event_ticker: 'KXEPLGAME-26JAN10ARSCHE', market_type: 'binary', title: 'Chelsea at Arsenal', yes_sub_title: sub, status: 'active', expected_expiration_time: '2026-01-10T17:00:00Z' });
    const k = buildKalshiCatalog({ markets: [km('ARS', 'Arsenal'), km('CHE', 'Chelsea'), km('TIE', 'Tie')], partner: kalshiPartner() });
    const pmMarket = (id: string, title: string, tokens: [string, string]) => ({ id, question: `Will ${title} happen?`, conditionId: `0x${id}`, slug: id, outcomes: '["Yes", "No"]', clobTokenIds: JSON.stringify(tokens), groupItemTitle: title, active: true, closed: false, enableOrderBook: true, negRisk: true });
    const p = buildPolymarketCatalog(
      [
        {
          id: '77',
          slug: 'ars-che',
          title: 'Arsenal vs. Chelsea',
          active: true,
          closed: false,
          negRisk: true,
          startTime: '2026-01-10T15:00:00Z',
          tags: [{ id: '2', slug: 'epl', label: 'EPL' }],
          markets: [pmMarket('771', 'Arsenal', ['1', '2']), pmMarket('772', 'Draw (Arsenal vs. Chelsea)', ['3', '4']), pmMarket('773', 'Chelsea', ['5', '6'])],
        },
      ].map((e) => parseGammaEvent(e as never)),
    );
    const r = mergeVenueCatalogs({ kalshi: k, polymarket: p }, { aliases: soccer });
    expect(r.report.decisions.map((d) => [d.contest_id, d.decision, d.confidence])).toEqual([
      ['kalshi-KXEPLGAME-26JAN10ARSCHE', 'matched', 0.95],
      ['pm_ev_77', 'matched', 0.95],
    ]);
    const cid = r.report.decisions[0]!.merged_into!;
    expect(r.position_map.kalshi![nativePosition('KXEPLGAME-26JAN10ARSCHE', 'KXEPLGAME-26JAN10ARSCHE-TIE', 'yes')]).toBe(`${cid}:winner:yes:0:mx_epl_draw:ft`);
    expect(r.position_map.polymarket!['pm_ev_77:tournament_winner:yes:0:pm_epl_draw_arsenal_vs_chelsea:ft']).toBe(`${cid}:winner:yes:0:mx_epl_draw:ft`);
    expect(r.report.aligned_positions).toBe(3);
    expect(r.catalog.positions.filter((x) => x.contest_id === cid).map((x) => x.title)).toEqual(['Arsenal to win', 'Chelsea to win', 'Draw']);
  });
});

describe('the threshold', () => {
  it('never merges a low-confidence pair: both venue contests and their positions stay as listed', () => {
    // One team in common: 0.70 × 1/3 + 0.30 = 0.533.
    const r = merge([game({ spreads: [-3.5] })], [game({ home: 'Pittsburgh Steelers' })]);
    expect(r.report).toMatchObject({ matched: 0, low_confidence: 2, unmatched: 0, merged_contests: 0, aligned_positions: 0 });
    expect(r.report.decisions[0]).toMatchObject({ decision: 'low_confidence', merged_into: null, confidence: 0.5333 });
    expect(r.report.decisions[0]!.reason).toBe('best candidate scored 0.5333 (< 0.85): kept apart; merge it in the mapping file if it is the same contest');
    expect(r.position_map).toEqual({ a: {}, b: {} });
    expect(r.catalog.contests.map((c) => c.id)).toEqual(['a-g1', 'b-g1']);
    expect(r.catalog.positions).toHaveLength(6);
  });

  it('scores symmetrically, with the documented weights', () => {
    const v = (over: Partial<EventView>): EventView => ({ partner_id: 'a', contest_id: 'x', title: 'A vs B', league: 'nfl', shape: 'game', participants: ['a', 'b'], home: null, starts_at: 0, title_tokens: [], positions: [], notes: [], ...over });
    const x = v({});
    const y = v({ partner_id: 'b', contest_id: 'y', starts_at: 3 * 3_600_000 });
    expect(scorePair(x, y)).toEqual({ score: 0.925, participants: 1, time: 0.75, title: 0, veto: null });
    expect(scorePair(y, x)).toEqual(scorePair(x, y));
    expect(scorePair(x, v({ league: 'nba' })).veto).toBe('leagues differ (nfl / nba)');
    expect(scorePair(x, v({ shape: 'outright' })).veto).toBe('a game and a outright');
    expect(scorePair(x, v({ league: null })).veto).toBe('league not in the alias table');
    expect(scorePair(v({ title_tokens: ['2025'] }), v({ title_tokens: ['2026'] })).veto).toBe('different years (2025 / 2026)');
  });

  it('brings at most one contest per venue into a merged contest, the better pair first', () => {
    const r = merge([game({ id: 'g1' }), game({ id: 'g2', starts: at(1) })], [game({ id: 'g1', starts: at(0.5) })], undefined, { c: gamesCatalog('c', 'c_nfl', [game({ starts: at(0.25) })]) });
    const into = Object.fromEntries(r.report.decisions.map((d) => [d.contest_id, d.merged_into]));
    expect(into['a-g1']).toBe(into['b-g1']);
    expect(into['c-g1']).toBe(into['a-g1']);
    expect(into['a-g2']).toBeNull();
    // a-g2's best candidate was b-g1 (0.5 h apart, 0.9875), taken by a-g1 with c-g1 (0.99375 first).
    expect(r.report.decisions.find((d) => d.contest_id === 'a-g2')).toMatchObject({ decision: 'unmatched', confidence: 0.9875, reason: 'its best candidate b-g1 was merged with a better match' });
    expect(r.report).toMatchObject({ matched: 3, merged_contests: 1 });
  });
});

describe('the mapping file wins', () => {
  it('merges contests the matcher keeps apart (a day apart), with the id and title it names', () => {
    const r = merge([game()], [game({ starts: at(24) })], mapping({ version: 1, merge: [{ contests: ['a-g1', 'b-g1'], id: 'bal_gb', title: 'Ravens at Packers' }] }));
    expect(r.report.decisions.map((d) => [d.contest_id, d.decision, d.by, d.merged_into, d.confidence, d.reason])).toEqual([
      ['a-g1', 'matched', 'override', 'bal_gb', 1, 'the mapping file merges it'],
      ['b-g1', 'matched', 'override', 'bal_gb', 1, 'the mapping file merges it'],
    ]);
    expect(r.catalog.contests.map((c) => [c.id, c.title])).toEqual([['bal_gb', 'Ravens at Packers']]);
    expect(r.position_map.b![hash('b', 'g1', 'moneyline', 'home', 0, 'Green Bay Packers')]).toBe('bal_gb:winner:yes:0:mx_nfl_green_bay_packers:ft');
  });

  it('keeps apart contests the matcher would merge', () => {
    const r = merge([game()], [game()], mapping({ version: 1, separate: ['b-g1'] }));
    expect(r.report.decisions.map((d) => [d.contest_id, d.decision, d.reason])).toEqual([
      ['a-g1', 'unmatched', 'no game in nfl on another venue'],
      ['b-g1', 'separate', 'the mapping file keeps it separate'],
    ]);
    expect(r.report.unmatched).toBe(2);
    expect(r.position_map).toEqual({ a: {}, b: {} });
  });

  it('aligns positions the matcher cannot read, one per venue per group; the rest stay in their own contest', () => {
    const props = (v: string): VenueCatalog => {
      const c = gamesCatalog(v, `${v}_props`, [game()]);
      return { ...c, positions: c.positions.map((p) => ({ ...p })) };
    };
    const a = props('a');
    const b = props('b');
    const [aHome, aAway] = a.positions.map((p) => p.position_hash);
    const [bHome] = b.positions.map((p) => p.position_hash);
    const r = mergeVenueCatalogs({ a, b }, { aliases, mapping: mapping({ version: 1, merge: [{ contests: ['a-g1', 'b-g1'], id: 'prop', positions: [[aHome, bHome]] }] }) });
    expect(r.position_map.a).toEqual({ [aHome!]: 'prop:moneyline:home:0:a_green_bay_packers:ft' });
    expect(r.position_map.b).toEqual({ [bHome!]: 'prop:moneyline:home:0:a_green_bay_packers:ft' });
    // The leagues are not in the alias table: nothing else is read, so the away sides stay in their venues' contests.
    expect(r.catalog.positions.map((p) => p.position_hash)).toEqual(['a-g1:moneyline:away:0:a_baltimore_ravens:ft', 'b-g1:moneyline:away:0:b_baltimore_ravens:ft', 'prop:moneyline:home:0:a_green_bay_packers:ft']);
    expect(r.catalog.contests.map((c) => c.id)).toEqual(['a-g1', 'b-g1', 'prop']);
    expect(r.report.decisions[0]!.positions).toEqual({ aligned: 1, mapped: 0, unlinked: 0, loose: 1 });
    expect(r.contest_map).toEqual({ a: {}, b: {} });
    expect(aAway).toBe('a-g1:moneyline:away:0:a_baltimore_ravens:ft');
    expect(() => mergeVenueCatalogs({ a, b }, { aliases, mapping: mapping({ version: 1, merge: [{ contests: ['a-g1', 'b-g1'], positions: [[aHome, aAway]] }] }) })).toThrow(
      /positions\[0\] holds two positions of a .*; a group takes one position per venue/,
    );
  });

  it('refuses a merge of two contests of one venue, and warns about contests no venue lists', () => {
    expect(() => merge([game(), game({ id: 'g2' })], [], mapping({ version: 1, merge: [{ contests: ['a-g1', 'a-g2'] }] }))).toThrow(
      new MatchConfigError('mapping merge[0]: contests a-g1 and a-g2 are both on a; a merged contest takes one contest per venue'),
    );
    const r = merge([game()], [game()], mapping({ version: 1, merge: [{ contests: ['a-g1', 'z-gone'] }], separate: ['z-old'] }));
    expect(r.report.warnings).toEqual([
      'mapping merge[0]: fewer than two of its contests are listed now; nothing merged',
      'mapping merge[0]: no catalog lists contest z-gone',
      'mapping separate: no catalog lists contest z-old',
    ]);
    // The entry cannot apply now, so it does not hold a-g1 back: the matcher merges it as it would.
    expect(r.report.matched).toBe(2);
  });
});

describe('metrics', () => {
  it('exposes the last report through gauges read at scrape time', async () => {
    const registry = new Registry();
    let report = merge([game()], [game()]).report;
    for (const m of MATCH_METRICS) scrapedGauge(registry, m.name, m.help, () => m.read(report));
    let text = await registry.metrics();
    expect(text).toContain('flow_venue_match_matched 2');
    expect(text).toContain('flow_venue_match_unmatched 0');
    expect(text).toContain('flow_venue_match_merged_contests 1');
    expect(text).toContain('flow_venue_match_aligned_positions 2');
    report = merge([game()], [game({ starts: at(30) })]).report;
    text = await registry.metrics();
    expect(text).toContain('flow_venue_match_matched 0');
    expect(text).toContain('flow_venue_match_unmatched 2');
    expect(text).toContain('flow_venue_match_contests 2');
  });
});
