/**
 * The matcher's decisions on the recorded Kalshi and Polymarket catalogs (built through the adapters'
 * parse and catalog functions from test/venues/*\/fixtures), exactly: the corpus holds no event on
 * both venues, so every recorded contest stays its own. Then the recorded contests against the
 * hand-written counterparts of fixtures/ (README there): the recorded Kalshi game matches its
 * Polymarket side with the teams listed on opposite sides, and the recorded Polymarket NBA outright
 * matches a Kalshi one while the conference outrights of the same league do not.
 */
import { describe, expect, it } from 'vitest';
import type { KalshiMarket } from '../../../src/venues/kalshi/messages.js';
import { nativePosition } from '../../../src/venues/kalshi/catalog.js';
import { aliasTable, describeCatalog, formatMatchReport, mergeVenueCatalogs, type AliasFile } from '../../../src/venues/matching/index.js';
import type { GammaEvent } from '../../../src/venues/polymarket/messages.js';
import { catalogsFromRecordings } from '../../../src/venues/replay/catalogs.js';
import { aliasesWith, kalshiCatalog, matchFixture, polymarketCatalog, recordings } from './support.js';

const rec = recordings();

describe('the recorded catalogs alone', () => {
  const r = mergeVenueCatalogs(catalogsFromRecordings(rec));

  it('reads 4 Kalshi and 10 Polymarket contests and merges none of them, each for its stated reason', () => {
    expect(r.report).toMatchObject({ venues: ['kalshi', 'polymarket'], contests: 14, matched: 0, low_confidence: 0, unmatched: 14, merged_contests: 0, aligned_positions: 0 });
    expect(r.report.decisions.map((d) => [d.partner_id, d.contest_id, d.decision, d.reason])).toEqual([
      ['kalshi', 'kalshi-KXCOLONIZEMARS-50', 'unmatched', 'venue league kalshi-KXCOLONIZEMARS is not in the alias table'],
      ['kalshi', 'kalshi-KXCPI-26AUG', 'unmatched', 'venue league kalshi-KXCPI is not in the alias table'],
      ['kalshi', 'kalshi-KXELONMARS-99', 'unmatched', 'venue league kalshi-KXELONMARS is not in the alias table'],
      ['kalshi', 'kalshi-KXNFLGAME-25DEC27BALGB', 'unmatched', 'no game in nfl on another venue'],
      ['polymarket', 'pm_ev_260654', 'unmatched', 'venue league pm_other is not in the alias table'],
      ['polymarket', 'pm_ev_27829', 'unmatched', 'no outright in nhl on another venue'],
      ['polymarket', 'pm_ev_27830', 'unmatched', 'no outright in nba on another venue'],
      ['polymarket', 'pm_ev_29005', 'unmatched', 'venue league pm_other is not in the alias table'],
      ['polymarket', 'pm_ev_30615', 'unmatched', 'no outright in fifa_world_cup on another venue'],
      ['polymarket', 'pm_ev_30829', 'unmatched', 'venue league pm_politics is not in the alias table'],
      ['polymarket', 'pm_ev_32755', 'unmatched', 'no outright in nba on another venue'],
      ['polymarket', 'pm_ev_32756', 'unmatched', 'no outright in nba on another venue'],
      ['polymarket', 'pm_ev_36173', 'unmatched', 'venue league pm_other is not in the alias table'],
      ['polymarket', 'pm_ev_52130', 'unmatched', 'venue league pm_other is not in the alias table'],
    ]);
  });

  it('reads the recorded Kalshi NFL game as Baltimore (away) at Green Bay (home), its market as Green Bay winning', () => {
    const cats = catalogsFromRecordings(rec);
    const view = describeCatalog('kalshi', cats.kalshi!, aliasTable()).find((v) => v.contest_id === 'kalshi-KXNFLGAME-25DEC27BALGB')!;
    expect(view).toMatchObject({ league: 'nfl', shape: 'game', participants: ['baltimore_ravens', 'green_bay_packers'], home: 'green_bay_packers', starts_at: Date.parse('2025-12-28T04:00:00Z') });
    expect(view.positions.map((p) => [p.position_hash, p.as, p.as === 'outcome' ? p.outcome : p.as === 'complement' ? p.of : null])).toEqual([
      [nativePosition('KXNFLGAME-25DEC27BALGB', 'KXNFLGAME-25DEC27BALGB-GB', 'no'), 'complement', { kind: 'winner', line: null, pick: 'green_bay_packers' }],
      [nativePosition('KXNFLGAME-25DEC27BALGB', 'KXNFLGAME-25DEC27BALGB-GB', 'yes'), 'outcome', { kind: 'winner', line: null, pick: 'green_bay_packers' }],
    ]);
    // Nothing to merge with: the venues' own catalogs are served unchanged.
    expect(r.catalog.positions.map((p) => p.position_hash).sort()).toEqual([...cats.kalshi!.positions, ...cats.polymarket!.positions].map((p) => p.position_hash).sort());
    expect(r.catalog.contests.map((c) => c.id).sort()).toEqual([...cats.kalshi!.contests, ...cats.polymarket!.contests].map((c) => c.id).sort());
    expect(r.position_map).toEqual({ kalshi: {}, polymarket: {} });
  });
});

describe('recorded contests against hand-written counterparts', () => {
  const nbaKalshi = matchFixture<{ markets: KalshiMarket[] }>('kalshi-markets-nba-champion.json').markets;
  const nflPm = matchFixture<GammaEvent[]>('gamma-events-nfl-ravens-packers.json');
  const aliases = aliasesWith(matchFixture<AliasFile>('aliases-kalshi-nba-outright.json'));
  const r = mergeVenueCatalogs({ kalshi: kalshiCatalog(rec, nbaKalshi), polymarket: polymarketCatalog(rec, nflPm) }, { aliases });
  const d = (id: string) => r.report.decisions.find((x) => x.contest_id === id)!;

  it('matches exactly two pairs, with the documented scores', () => {
    expect(r.report).toMatchObject({ contests: 16, matched: 4, low_confidence: 0, unmatched: 12, merged_contests: 2, aligned_positions: 2 });
    const matched = r.report.decisions.filter((x) => x.decision === 'matched').map((x) => [x.contest_id, x.merged_into, x.confidence]);
    const game = d('kalshi-KXNFLGAME-25DEC27BALGB').merged_into!;
    const outright = d('kalshi-KXNBA-26').merged_into!;
    expect(game).not.toBe(outright);
    // game: both teams (0.70) + kickoff 01:00Z vs Kalshi's expected expiration 04:00Z, 3 h of 12 (0.30 × 0.75)
    // outright: titles {2026, nba, champion} / {2026, nba, finals, champion} (0.45 × 3/4) + runners (0.25 × 1) + 1 day of 31 (0.30 × 30/31)
    expect(matched).toEqual([
      ['kalshi-KXNBA-26', outright, 0.8778],
      ['kalshi-KXNFLGAME-25DEC27BALGB', game, 0.925],
      ['pm_ev_27830', outright, 0.8778],
      ['pm_ev_900001', game, 0.925],
    ]);
  });

  it('keeps the conference outrights of the same league apart from the league champion', () => {
    expect(d('pm_ev_32755')).toMatchObject({ decision: 'unmatched', merged_into: null, confidence: null });
    expect(d('pm_ev_32755').candidate).toMatchObject({ contest_id: 'kalshi-KXNBA-26', detail: { score: 0, veto: 'different prizes (none / conference eastern)' } });
    expect(d('pm_ev_32756').candidate?.detail.veto).toBe('different prizes (none / conference western)');
    expect(r.catalog.contests.map((c) => c.id)).toEqual(expect.arrayContaining(['pm_ev_32755', 'pm_ev_32756']));
  });

  it('aligns Kalshi "Green Bay: Yes" with the Polymarket outcome Packers, listed as the second outcome (side no)', () => {
    const game = d('kalshi-KXNFLGAME-25DEC27BALGB').merged_into!;
    const gbYes = nativePosition('KXNFLGAME-25DEC27BALGB', 'KXNFLGAME-25DEC27BALGB-GB', 'yes');
    const gbNo = nativePosition('KXNFLGAME-25DEC27BALGB', 'KXNFLGAME-25DEC27BALGB-GB', 'no');
    const packers = `${game}:winner:yes:0:mx_nfl_green_bay_packers:ft`;
    expect(r.position_map.kalshi![gbYes]).toBe(packers);
    expect(r.position_map.polymarket!['pm_ev_900001:yes_no:no:0:pm_m900011:ft']).toBe(packers);
    expect(r.position_map.polymarket!['pm_ev_900001:yes_no:yes:0:pm_m900011:ft']).toBe(`${game}:winner:yes:0:mx_nfl_baltimore_ravens:ft`);
    // Kalshi's No on Green Bay is its complement, not a price of Baltimore (a tie pays neither): unlinked.
    expect(r.position_map.kalshi![gbNo]).toBeNull();
    expect(d('kalshi-KXNFLGAME-25DEC27BALGB').positions).toEqual({ aligned: 1, mapped: 0, unlinked: 1, loose: 0 });
    expect(d('pm_ev_900001').positions).toEqual({ aligned: 1, mapped: 5, unlinked: 0, loose: 0 });
  });

  it('builds the merged game: one contest, the lines as the venue listed them, the venue contests gone', () => {
    const game = d('kalshi-KXNFLGAME-25DEC27BALGB').merged_into!;
    const c = r.catalog.contests.find((x) => x.id === game)!;
    expect(c).toMatchObject({ title: 'Baltimore Ravens at Green Bay Packers', league_id: 'mx_nfl', type: 'match', starts_at: '2025-12-28T01:00:00.000Z', status: 'open' });
    expect(c.tags).toMatchObject({ source: 'matched', matched_by: 'score', home_participant_id: 'mx_nfl_green_bay_packers', away_participant_id: 'mx_nfl_baltimore_ravens' });
    expect(r.catalog.positions.filter((p) => p.contest_id === game).map((p) => [p.title, p.market_id, p.side_key, p.variable, p.group_key])).toEqual([
      ['Green Bay Packers -2.5', 'handicap', 'yes', -2.5, `${game}/handicap/2.5/green_bay_packers`],
      ['Baltimore Ravens +2.5', 'handicap', 'yes', 2.5, `${game}/handicap/2.5/green_bay_packers`],
      ['Over 41.5', 'total', 'over', 41.5, `${game}/total/41.5`],
      ['Under 41.5', 'total', 'under', 41.5, `${game}/total/41.5`],
      ['Baltimore Ravens to win', 'winner', 'yes', 0, `${game}/winner`],
      ['Green Bay Packers to win', 'winner', 'yes', 0, `${game}/winner`],
    ]);
    const ids = r.catalog.contests.map((x) => x.id);
    expect(ids).not.toContain('kalshi-KXNFLGAME-25DEC27BALGB');
    expect(ids).not.toContain('pm_ev_900001');
    expect(r.contest_map.kalshi).toEqual({ 'kalshi-KXNFLGAME-25DEC27BALGB': game, 'kalshi-KXNBA-26': d('kalshi-KXNBA-26').merged_into });
    expect(r.catalog.leagues.map((l) => l.id)).toEqual(expect.arrayContaining(['mx_nfl', 'mx_nba']));
    expect(r.catalog.contest_markets.filter((x) => x.contest_id === game).map((x) => x.market_id)).toEqual(['handicap', 'total', 'winner']);
    expect(r.catalog.contest_participants.filter((x) => x.contest_id === game).map((x) => x.participant_id)).toEqual(['mx_nfl_baltimore_ravens', 'mx_nfl_green_bay_packers']);
  });

  it('reports it in text as the CLI prints it', () => {
    const text = formatMatchReport(r.report);
    expect(text).toContain('contests: 16  matched: 4  low confidence: 0  unmatched: 12  merged contests: 2');
    expect(text).toContain('kalshi kalshi-KXNFLGAME-25DEC27BALGB [0.93]  "Baltimore at Green Bay Winner?"');
    expect(text).toContain('no candidate: kalshi-KXNBA-26 ruled out (different prizes (none / conference eastern))');
  });
});
