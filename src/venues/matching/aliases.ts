/**
 * The alias table: which venue league is which real league, and which names mean which participant.
 *
 * The built-in table is the data file `aliases.json` beside this module; an operator adds leagues,
 * venue leagues and aliases with files of the same format (`flow venues matches --aliases`), read
 * after it: a later file adds aliases to a participant and may re-point a venue league.
 *
 *   { "version": 1,
 *     "leagues": {
 *       "<league key>": {
 *         "name": "NFL", "participant_type": "team" | "athlete" | null,
 *         "open": false,                      // true: a name not in the table is its own participant
 *         "venue_leagues": { "<a venue catalog's league_id>": "winner" | "handicap" | "total" | "outright" | null },
 *         "ambiguous": ["New York"],          // names that never resolve in this league
 *         "participants": { "<participant key>": { "name": "Green Bay Packers", "aliases": ["Green Bay", "GB"] } } } } }
 *
 * `venue_leagues` values say what every market of that venue league is (Kalshi's series are one
 * market type each: KXNFLGAME is game winners); null lets the venue's catalog structure decide.
 * Names compare normalized (normalize.ts). An alias that would name two participants of one league
 * is refused: list it under `ambiguous`, so it never resolves to the wrong team.
 */
import builtin from './aliases.json' with { type: 'json' };
import { keyOf, normalizeName } from './normalize.js';
import { MatchConfigError, Reader, join, parseJsonText } from './strict.js';

/** What every market of a venue league is, when its series/tag says so. */
export type VenueLeagueKind = 'winner' | 'handicap' | 'total' | 'outright';
export const VENUE_LEAGUE_KINDS: readonly VenueLeagueKind[] = ['winner', 'handicap', 'total', 'outright'];

export interface AliasParticipant {
  name: string;
  aliases?: string[];
}

export interface AliasLeague {
  name: string;
  participant_type: 'team' | 'athlete' | null;
  open?: boolean;
  venue_leagues?: Record<string, VenueLeagueKind | null>;
  ambiguous?: string[];
  participants?: Record<string, AliasParticipant>;
}

export interface AliasFile {
  version: 1;
  leagues: Record<string, AliasLeague>;
}

const KEY_RE = /^[a-z0-9][a-z0-9_]{0,79}$/;
const KEY_HINT = 'use lowercase letters, digits and _ (e.g. green_bay_packers)';

/** Checks an alias file strictly (unknown keys, types, key syntax); throws MatchConfigError naming the path. */
export function parseAliasFile(raw: unknown, source: string): AliasFile {
  const r = new Reader(source);
  const top = r.obj(raw, '', ['version', 'leagues'], ['version', 'leagues']);
  if (top.version !== 1) r.fail('version', `must be 1, got ${JSON.stringify(top.version)}`);
  const leagues: Record<string, AliasLeague> = {};
  for (const [lk, lv] of Object.entries(r.map(top.leagues, 'leagues'))) {
    const lp = join('leagues', lk);
    if (!KEY_RE.test(lk)) r.fail(lp, `league key ${JSON.stringify(lk)} is not valid: ${KEY_HINT}`);
    const l = r.obj(lv, lp, ['name', 'participant_type', 'open', 'venue_leagues', 'ambiguous', 'participants'], ['name', 'participant_type']);
    const out: AliasLeague = {
      name: r.str(l.name, join(lp, 'name'), { max: 200 }),
      participant_type: l.participant_type === null ? null : r.oneOf(l.participant_type, join(lp, 'participant_type'), ['team', 'athlete'] as const),
    };
    if (l.open !== undefined) out.open = r.bool(l.open, join(lp, 'open'));
    if (l.venue_leagues !== undefined) {
      out.venue_leagues = {};
      for (const [vk, vv] of Object.entries(r.map(l.venue_leagues, join(lp, 'venue_leagues')))) {
        const vp = join(join(lp, 'venue_leagues'), vk);
        r.str(vk, vp, { max: 200 });
        out.venue_leagues[vk] = vv === null ? null : r.oneOf(vv, vp, VENUE_LEAGUE_KINDS);
      }
    }
    if (l.ambiguous !== undefined) out.ambiguous = r.arr(l.ambiguous, join(lp, 'ambiguous')).map((a, i) => r.str(a, join(join(lp, 'ambiguous'), i), { max: 200 }));
    if (l.participants !== undefined) {
      out.participants = {};
      for (const [pk, pv] of Object.entries(r.map(l.participants, join(lp, 'participants')))) {
        const pp = join(join(lp, 'participants'), pk);
        if (!KEY_RE.test(pk)) r.fail(pp, `participant key ${JSON.stringify(pk)} is not valid: ${KEY_HINT}`);
        const p = r.obj(pv, pp, ['name', 'aliases'], ['name']);
        out.participants[pk] = {
          name: r.str(p.name, join(pp, 'name'), { max: 200 }),
          ...(p.aliases !== undefined ? { aliases: r.arr(p.aliases, join(pp, 'aliases')).map((a, i) => r.str(a, join(join(pp, 'aliases'), i), { max: 200 })) } : {}),
        };
      }
    }
    leagues[lk] = out;
  }
  return { version: 1, leagues };
}

/** Reads an alias file's text (JSON). */
export function aliasFileFromText(text: string, source: string): AliasFile {
  return parseAliasFile(parseJsonText(text, source), source);
}

interface LeagueIndex {
  key: string;
  name: string;
  participant_type: 'team' | 'athlete' | null;
  open: boolean;
  /** normalized name → participant key */
  names: Map<string, string>;
  ambiguous: Set<string>;
  display: Map<string, string>;
}

/** The merged, indexed alias tables. Immutable once built. */
export class AliasTable {
  private readonly leagues = new Map<string, LeagueIndex>();
  private readonly venueLeagues = new Map<string, { league: string; kind: VenueLeagueKind | null }>();

  private constructor() {}

  /** Indexes `files` in order (later files extend earlier ones). Throws MatchConfigError on a clash. */
  static from(files: readonly { file: AliasFile; source: string }[]): AliasTable {
    const t = new AliasTable();
    /** normalized name → where it was declared, per league (for the clash message). */
    const origin = new Map<string, string>();
    for (const { file, source } of files) {
      for (const [lk, l] of Object.entries(file.leagues)) {
        let idx = t.leagues.get(lk);
        if (!idx) {
          idx = { key: lk, name: l.name, participant_type: l.participant_type, open: l.open ?? false, names: new Map(), ambiguous: new Set(), display: new Map() };
          t.leagues.set(lk, idx);
        } else {
          idx.name = l.name;
          idx.participant_type = l.participant_type;
          if (l.open !== undefined) idx.open = l.open;
        }
        for (const [vk, kind] of Object.entries(l.venue_leagues ?? {})) t.venueLeagues.set(vk, { league: lk, kind });
        for (const a of l.ambiguous ?? []) {
          const n = normalizeName(a);
          idx.ambiguous.add(n);
          idx.names.delete(n);
        }
        for (const [pk, p] of Object.entries(l.participants ?? {})) {
          idx.display.set(pk, p.name);
          for (const name of [p.name, ...(p.aliases ?? [])]) {
            const n = normalizeName(name);
            if (n === '') throw new MatchConfigError(`${source}: leagues.${lk}.participants.${pk}: the name ${JSON.stringify(name)} normalizes to nothing`);
            if (idx.ambiguous.has(n)) continue;
            const prev = idx.names.get(n);
            if (prev !== undefined && prev !== pk) {
              throw new MatchConfigError(
                `${source}: leagues.${lk}.participants.${pk}: ${JSON.stringify(name)} already names ${prev} (${origin.get(`${lk}\u0000${n}`)}); ` +
                  `a name may mean one participant per league: list it under leagues.${lk}.ambiguous instead`,
              );
            }
            idx.names.set(n, pk);
            origin.set(`${lk}\u0000${n}`, source);
          }
        }
      }
    }
    return t;
  }

  /** The canonical league (and market kind) of a venue catalog's league id, or null when not in the table. */
  venueLeague(leagueId: string): { league: string; kind: VenueLeagueKind | null } | null {
    return this.venueLeagues.get(leagueId) ?? null;
  }

  league(key: string): { key: string; name: string; participant_type: 'team' | 'athlete' | null } | null {
    const l = this.leagues.get(key);
    return l ? { key: l.key, name: l.name, participant_type: l.participant_type } : null;
  }

  /**
   * The participant key a name means in `league`: by the table, else (an `open` league, unless
   * `listedOnly`) the normalized name itself; null when ambiguous, empty or unknown in a closed league.
   */
  resolve(league: string, name: string, opts: { listedOnly?: boolean } = {}): string | null {
    const l = this.leagues.get(league);
    if (!l) return null;
    const n = normalizeName(name);
    if (n === '' || l.ambiguous.has(n)) return null;
    const hit = l.names.get(n);
    if (hit !== undefined) return hit;
    return l.open && !opts.listedOnly ? keyOf(n) : null;
  }

  /** The display name of a participant key (the table's, else null). */
  displayName(league: string, key: string): string | null {
    return this.leagues.get(league)?.display.get(key) ?? null;
  }
}

/** The built-in table (aliases.json), checked like any operator file. */
export function builtinAliasFile(): AliasFile {
  return parseAliasFile(structuredClone(builtin) as unknown, 'src/venues/matching/aliases.json');
}

/** The built-in table plus operator files, in order. */
export function aliasTable(extra: readonly { file: AliasFile; source: string }[] = []): AliasTable {
  return AliasTable.from([{ file: builtinAliasFile(), source: 'src/venues/matching/aliases.json' }, ...extra]);
}
