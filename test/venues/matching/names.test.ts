/** Name normalization, title pairings and the alias table (built-in and operator files, read strictly). */
import { describe, expect, it } from 'vitest';
import { aliasFileFromText, aliasTable, builtinAliasFile, MatchConfigError, normalizeName, pairingOf, parseAliasFile, titleTokens } from '../../../src/venues/matching/index.js';
import { isDrawName, jaccard, keyOf, overlap } from '../../../src/venues/matching/normalize.js';
import { aliasesWith } from './support.js';

describe('normalizeName', () => {
  it.each([
    ['Montréal Canadiens', 'montreal canadiens'],
    ['St. Louis Blues', 'st louis blues'],
    ["A's", 'as'],
    ['The Athletics', 'athletics'],
    ['  Bosnia-Herzegovina ', 'bosnia herzegovina'],
    ['Côte d’Ivoire', 'cote divoire'],
    ['Texas A&M', 'texas a and m'],
    ['...', ''],
  ])('%j → %j', (raw, want) => {
    expect(normalizeName(raw)).toBe(want);
  });

  it('makes id fragments of [a-z0-9_], never empty', () => {
    expect(keyOf('São Paulo FC')).toBe('sao_paulo_fc');
    expect(keyOf('!!!')).toBe('x');
  });
});

describe('titles', () => {
  it.each([
    ['Baltimore at Green Bay Winner?', { first: 'Baltimore', second: 'Green Bay', home: 'second' }],
    ['Ravens @ Packers', { first: 'Ravens', second: 'Packers', home: 'second' }],
    ['Ravens vs. Packers', { first: 'Ravens', second: 'Packers', home: null }],
    ['NFL: Ravens vs Packers', { first: 'Ravens', second: 'Packers', home: null }],
    ['Spain v Brazil', { first: 'Spain', second: 'Brazil', home: null }],
    ['2026 NBA Champion', null],
  ])('pairingOf(%j)', (title, want) => {
    expect(pairingOf(title)).toEqual(want);
  });

  it('keeps identity words of a title', () => {
    expect(titleTokens('Will the Carolina Hurricanes win the 2026 NHL Stanley Cup?')).toEqual(['carolina', 'hurricanes', '2026', 'nhl', 'stanley', 'cup']);
    expect(isDrawName('Draw (Spain vs. Brazil)')).toBe(true);
    expect(isDrawName('Tie')).toBe(true);
    expect(isDrawName('Tiesto')).toBe(false);
  });

  it('scores sets', () => {
    expect(jaccard(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3);
    expect(overlap(new Set(['a']), new Set(['a', 'b', 'c']))).toBe(1);
    expect(overlap(new Set(), new Set(['a']))).toBe(0);
  });
});

describe('the alias table', () => {
  const t = aliasTable();

  it('resolves full names, cities, nicknames and abbreviations to one participant per league', () => {
    for (const n of ['Green Bay Packers', 'Green Bay', 'packers', 'GB', 'THE GREEN BAY PACKERS']) expect(t.resolve('nfl', n)).toBe('green_bay_packers');
    expect(t.resolve('nhl', 'Montréal')).toBe('montreal_canadiens');
    expect(t.resolve('mlb', "A's")).toBe('athletics');
    expect(t.resolve('nfl', 'Cardinals')).toBe('arizona_cardinals');
    expect(t.resolve('mlb', 'Cardinals')).toBe('st_louis_cardinals');
    expect(t.displayName('nfl', 'green_bay_packers')).toBe('Green Bay Packers');
  });

  it('never resolves an ambiguous name, and knows only the listed names of a closed league', () => {
    expect(t.resolve('nfl', 'New York')).toBeNull();
    expect(t.resolve('nfl', 'NY Giants')).toBe('new_york_giants');
    expect(t.resolve('mlb', 'Chicago')).toBeNull();
    expect(t.resolve('nba', 'New York')).toBe('new_york_knicks');
    expect(t.resolve('nfl', 'Springfield Atoms')).toBeNull();
    expect(t.resolve('no_such_league', 'Green Bay')).toBeNull();
  });

  it('lets an open league name anyone, with aliases for the variants', () => {
    expect(t.resolve('fifa_world_cup', 'Brazil')).toBe('brazil');
    expect(t.resolve('fifa_world_cup', 'USA')).toBe('united_states');
    expect(t.resolve('fifa_world_cup', "Côte d'Ivoire")).toBe('ivory_coast');
  });

  it('maps venue leagues to leagues and market kinds', () => {
    expect(t.venueLeague('kalshi-KXNFLGAME')).toEqual({ league: 'nfl', kind: 'winner' });
    expect(t.venueLeague('pm_nba')).toEqual({ league: 'nba', kind: null });
    expect(t.venueLeague('kalshi-KXELONMARS')).toBeNull();
    expect(t.league('nhl')).toEqual({ key: 'nhl', name: 'NHL', participant_type: 'team' });
  });

  it('takes operator files after the built-in one: more aliases, more venue leagues, more ambiguity', () => {
    const x = aliasesWith({
      version: 1,
      leagues: {
        nfl: { name: 'NFL', participant_type: 'team', venue_leagues: { 'kalshi-KXSB': 'outright' }, ambiguous: ['Packers'], participants: { green_bay_packers: { name: 'Green Bay Packers', aliases: ['Pack'] } } },
      },
    });
    expect(x.resolve('nfl', 'Pack')).toBe('green_bay_packers');
    expect(x.resolve('nfl', 'Packers')).toBeNull();
    expect(x.venueLeague('kalshi-KXSB')).toEqual({ league: 'nfl', kind: 'outright' });
  });

  it('refuses a name that would mean two participants of one league, saying what to do', () => {
    expect(() => aliasesWith({ version: 1, leagues: { nfl: { name: 'NFL', participant_type: 'team', participants: { baltimore_ravens: { name: 'Baltimore Ravens', aliases: ['Packers'] } } } } })).toThrow(
      'test-aliases-0: leagues.nfl.participants.baltimore_ravens: "Packers" already names green_bay_packers (src/venues/matching/aliases.json); a name may mean one participant per league: list it under leagues.nfl.ambiguous instead',
    );
  });

  it('reads files strictly, naming the path and the fix', () => {
    const bad = (raw: unknown) => () => parseAliasFile(raw, 'extra.json');
    expect(bad({ version: 2, leagues: {} })).toThrow('extra.json: version: must be 1, got 2');
    expect(bad({ version: 1, leagues: {}, teams: {} })).toThrow('extra.json: teams: unknown key; allowed here: version, leagues');
    expect(bad({ version: 1, leagues: { NFL: { name: 'NFL', participant_type: 'team' } } })).toThrow('extra.json: leagues.NFL: league key "NFL" is not valid: use lowercase letters, digits and _ (e.g. green_bay_packers)');
    expect(bad({ version: 1, leagues: { nfl: { name: 'NFL', participant_type: 'team', venue_leagues: { x: 'moneyline' } } } })).toThrow(
      'extra.json: leagues.nfl.venue_leagues.x: must be one of "winner", "handicap", "total", "outright", got string "moneyline"',
    );
    expect(bad({ version: 1, leagues: { nfl: { name: 'NFL', participant_type: 'team', participants: { gb: { name: 'GB', aliases: 'Pack' } } } } })).toThrow('extra.json: leagues.nfl.participants.gb.aliases: must be an array, got string "Pack"');
    expect(() => aliasFileFromText('{"version": 1,', 'broken.json')).toThrow(MatchConfigError);
    expect(() => aliasFileFromText('{"version": 1,', 'broken.json')).toThrow(/^broken\.json: not valid JSON/);
  });

  it('ships a built-in table that passes its own checks', () => {
    const f = builtinAliasFile();
    expect(Object.keys(f.leagues)).toEqual(['nfl', 'nba', 'nhl', 'mlb', 'fifa_world_cup']);
    expect(Object.keys(f.leagues.nfl!.participants!)).toHaveLength(32);
    expect(Object.keys(f.leagues.nba!.participants!)).toHaveLength(30);
    expect(Object.keys(f.leagues.nhl!.participants!)).toHaveLength(32);
    expect(Object.keys(f.leagues.mlb!.participants!)).toHaveLength(30);
  });
});
