/** The mapping file's format, read strictly: every mistake names the path and the fix. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAliasTable, loadMappingFile, mappingFileFromText, matchOptionsFromEnv, MatchConfigError, parseMappingFile } from '../../../src/venues/matching/index.js';
import { scratchDir } from '../../support/scratch.js';

const H1 = 'kalshi-KXELONMARS-99:binary:yes:0:kalshi-KXELONMARS-99:ft';
const H2 = 'pm_ev_30829:tournament_winner:yes:0:pm_politics_stephen_a_smith:ft';

describe('the mapping file', () => {
  it('reads a full file', () => {
    const text = JSON.stringify({
      version: 1,
      merge: [{ contests: ['kalshi-KXELONMARS-99', 'pm_ev_30829'], id: 'mars_vs_smith', title: 'A test pairing', positions: [[H1, H2]] }],
      separate: ['pm_ev_27830'],
    });
    expect(mappingFileFromText(text, 'm.json')).toEqual({
      version: 1,
      merge: [{ contests: ['kalshi-KXELONMARS-99', 'pm_ev_30829'], id: 'mars_vs_smith', title: 'A test pairing', positions: [[H1, H2]] }],
      separate: ['pm_ev_27830'],
    });
    expect(parseMappingFile({ version: 1 }, 'm.json')).toEqual({ version: 1, merge: [], separate: [] });
  });

  it.each([
    [[], 'm.json: (top level): must be an object, got an array'],
    [{ merge: [] }, 'm.json: version: is required'],
    [{ version: '1' }, 'm.json: version: must be 1, got "1"'],
    [{ version: 1, merges: [] }, 'm.json: merges: unknown key; allowed here: version, merge, separate'],
    [{ version: 1, merge: {} }, 'm.json: merge: must be an array, got an object'],
    [{ version: 1, merge: [{ contests: ['a'] }] }, 'm.json: merge[0].contests: needs at least 2 items'],
    [{ version: 1, merge: [{ contests: ['a', 'b'], name: 'x' }] }, 'm.json: merge[0].name: unknown key; allowed here: contests, id, title, positions'],
    [{ version: 1, merge: [{ contests: ['a', 'b:c'] }] }, `m.json: merge[0].contests[1]: "b:c" is not valid: ids are letters, digits, '.', '_' and '-' (no ':'), at most 200 characters`],
    [{ version: 1, merge: [{ contests: ['a', 7] }] }, 'm.json: merge[0].contests[1]: must be a non-empty string, got number 7'],
    [{ version: 1, merge: [{ contests: ['a', 'b'] }, { contests: ['c', 'a'] }] }, 'm.json: merge[1].contests[1]: contest "a" is already named at merge[0].contests[0]; a contest may appear once in the file'],
    [{ version: 1, merge: [{ contests: ['a', 'b'] }], separate: ['b'] }, 'm.json: separate[0]: contest "b" is already named at merge[0].contests[1]; a contest may appear once in the file'],
    [{ version: 1, merge: [{ contests: ['a', 'b'], id: 'x' }, { contests: ['c', 'd'], id: 'x' }] }, 'm.json: merge[1].id: "x" is the id of another merge entry'],
    [{ version: 1, merge: [{ contests: ['a', 'b'], positions: [['a:m:yes:0:p:ft']] }] }, 'm.json: merge[0].positions[0]: needs at least 2 items'],
    [
      { version: 1, merge: [{ contests: ['a', 'b'], positions: [['a:m:yes:0:p:ft', 'b:m:yes']] }] },
      'm.json: merge[0].positions[0][1]: "b:m:yes" is not a position_hash (six \':\'-separated parts; copy it from the catalog or `flow venues matches --json`)',
    ],
    [{ version: 1, merge: [{ contests: ['a', 'b'], positions: [['a:m:yes:0:p:ft', 'c:m:yes:0:p:ft']] }] }, 'm.json: merge[0].positions[0][1]: position "c:m:yes:0:p:ft" is not in one of this entry\'s contests'],
    [{ version: 1, merge: [{ contests: ['a', 'b'], positions: [['a:m:yes:0:p:ft', 'b:m:yes:0:p:ft'], ['a:m:yes:0:p:ft', 'b:m:no:0:p:ft']] }] }, 'm.json: merge[0].positions[1][0]: position "a:m:yes:0:p:ft" is listed twice in this entry'],
  ])('refuses %j', (raw, message) => {
    expect(() => parseMappingFile(raw, 'm.json')).toThrow(new MatchConfigError(message));
  });

  it('loads files from disk, naming a missing one', () => {
    const dir = scratchDir('mapping');
    writeFileSync(join(dir, 'ok.json'), JSON.stringify({ version: 1, separate: ['x'] }));
    expect(loadMappingFile(join(dir, 'ok.json')).separate).toEqual(['x']);
    expect(() => loadMappingFile(join(dir, 'missing.json'))).toThrow(`${join(dir, 'missing.json')}: cannot read the mapping file (ENOENT)`);
    writeFileSync(join(dir, 'aliases.json'), JSON.stringify({ version: 1, leagues: { nfl: { name: 'NFL', participant_type: 'team', participants: { green_bay_packers: { name: 'Green Bay Packers', aliases: ['Cheeseheads'] } } } } }));
    expect(loadAliasTable([join(dir, 'aliases.json')]).resolve('nfl', 'cheeseheads')).toBe('green_bay_packers');
  });

  it('reads the files the environment names, naming the variable in an error', () => {
    const dir = scratchDir('mapping-env');
    writeFileSync(join(dir, 'map.json'), JSON.stringify({ version: 1, separate: ['pm_ev_1'] }));
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ version: 1, leagues: { nfl: { name: 'NFL', participant_type: 'team', venue_leagues: { 'kalshi-KXSB': 'outright' } } } }));
    const o = matchOptionsFromEnv({ FLOW_VENUE_ALIASES: ` ${join(dir, 'a.json')} ,`, FLOW_VENUE_MAPPING: join(dir, 'map.json') });
    expect(o.mapping.separate).toEqual(['pm_ev_1']);
    expect(o.aliases.venueLeague('kalshi-KXSB')).toEqual({ league: 'nfl', kind: 'outright' });
    expect(matchOptionsFromEnv({}).mapping).toEqual({ version: 1, merge: [], separate: [] });
    expect(() => matchOptionsFromEnv({ FLOW_VENUE_MAPPING: join(dir, 'nope.json') })).toThrow(`FLOW_VENUE_MAPPING: ${join(dir, 'nope.json')}: cannot read the mapping file (ENOENT)`);
    expect(() => matchOptionsFromEnv({ FLOW_VENUE_ALIASES: join(dir, 'map.json') })).toThrow(`FLOW_VENUE_ALIASES: ${join(dir, 'map.json')}: separate: unknown key; allowed here: version, leagues`);
  });
});
