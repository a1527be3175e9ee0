/**
 * The mapping file: the operator's word over the matcher's. JSON, read strictly (strict.ts).
 *
 *   {
 *     "version": 1,
 *     "merge": [
 *       { "contests": ["kalshi-KXNFLGAME-25DEC27BALGB", "pm_ev_12345"],   // one per venue, 2 or more
 *         "id": "nfl_2025_12_27_bal_gb",                                // optional: the merged contest's id
 *         "title": "Baltimore Ravens at Green Bay Packers",             // optional
 *         "positions": [ ["<native position_hash>", "<native position_hash>"] ] }   // optional
 *     ],
 *     "separate": ["pm_ev_67890"]
 *   }
 *
 * - `merge`: these venue contests are one contest, whatever the score (confidence 1). Positions the
 *   matcher can read (winner, handicap, total) align as usual; `positions` aligns others (a yes/no
 *   proposition listed on two venues): each list is one outcome, one position per venue. A position
 *   in neither stays in its venue's own contest.
 * - `separate`: never merge these contests (a false match the matcher keeps making).
 * A contest id may appear once in the whole file. An id no catalog holds is a warning in the
 * report, not an error (the venue may list it later).
 */
import { HASH_SEPARATOR } from '../../domain/hashes.js';
import { MatchConfigError, Reader, join, parseJsonText } from './strict.js';

export interface MergeOverride {
  contests: string[];
  id?: string;
  title?: string;
  positions?: string[][];
}

export interface MappingFile {
  version: 1;
  merge: MergeOverride[];
  separate: string[];
}

export const EMPTY_MAPPING: MappingFile = { version: 1, merge: [], separate: [] };

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._\-]{0,199}$/;
const ID_HINT = `ids are letters, digits, '.', '_' and '-' (no '${HASH_SEPARATOR}'), at most 200 characters`;

/** Checks a mapping file; throws MatchConfigError naming the path and the fix. */
export function parseMappingFile(raw: unknown, source: string): MappingFile {
  const r = new Reader(source);
  const top = r.obj(raw, '', ['version', 'merge', 'separate'], ['version']);
  if (top.version !== 1) r.fail('version', `must be 1, got ${JSON.stringify(top.version)}`);
  const seen = new Map<string, string>();
  const once = (id: string, path: string) => {
    const prev = seen.get(id);
    if (prev !== undefined) r.fail(path, `contest ${JSON.stringify(id)} is already named at ${prev}; a contest may appear once in the file`);
    seen.set(id, path);
  };
  const merge: MergeOverride[] = [];
  const mergeIds = new Set<string>();
  const list = top.merge === undefined ? [] : r.arr(top.merge, 'merge', { max: 100_000 });
  list.forEach((m, i) => {
    const mp = join('merge', i);
    const o = r.obj(m, mp, ['contests', 'id', 'title', 'positions'], ['contests']);
    const contests = r.arr(o.contests, join(mp, 'contests'), { min: 2, max: 20 }).map((c, j) => {
      const id = r.str(c, join(join(mp, 'contests'), j), { pattern: ID_RE, hint: ID_HINT });
      once(id, join(join(mp, 'contests'), j));
      return id;
    });
    const out: MergeOverride = { contests };
    if (o.id !== undefined) {
      out.id = r.str(o.id, join(mp, 'id'), { pattern: ID_RE, hint: ID_HINT });
      if (mergeIds.has(out.id)) r.fail(join(mp, 'id'), `${JSON.stringify(out.id)} is the id of another merge entry`);
      mergeIds.add(out.id);
    }
    if (o.title !== undefined) out.title = r.str(o.title, join(mp, 'title'), { max: 300 });
    if (o.positions !== undefined) {
      const used = new Set<string>();
      out.positions = r.arr(o.positions, join(mp, 'positions'), { max: 1000 }).map((g, j) => {
        const gp = join(join(mp, 'positions'), j);
        return r.arr(g, gp, { min: 2, max: 20 }).map((h, k) => {
          const hp = join(gp, k);
          const hash = r.str(h, hp, { max: 1000 });
          if (hash.split(HASH_SEPARATOR).length !== 6) r.fail(hp, `${JSON.stringify(hash)} is not a position_hash (six ':'-separated parts; copy it from the catalog or \`flow venues matches --json\`)`);
          if (!contests.includes(hash.split(HASH_SEPARATOR)[0]!)) r.fail(hp, `position ${JSON.stringify(hash)} is not in one of this entry's contests`);
          if (used.has(hash)) r.fail(hp, `position ${JSON.stringify(hash)} is listed twice in this entry`);
          used.add(hash);
          return hash;
        });
      });
    }
    merge.push(out);
  });
  const separate = top.separate === undefined ? [] : r.arr(top.separate, 'separate', { max: 100_000 }).map((c, i) => {
    const id = r.str(c, join('separate', i), { pattern: ID_RE, hint: ID_HINT });
    once(id, join('separate', i));
    return id;
  });
  return { version: 1, merge, separate };
}

/** Reads a mapping file's text (JSON). */
export function mappingFileFromText(text: string, source: string): MappingFile {
  return parseMappingFile(parseJsonText(text, source), source);
}

export { MatchConfigError };
