/**
 * Name and title normalization for cross-venue matching. Pure.
 *
 * Two venues spell one team or one event differently ("St. Louis Blues", "St Louis", "Montréal
 * Canadiens", "Montreal"); matching compares normalized forms, never raw text:
 *   NFKD, diacritics dropped, lowercase, `&` → "and", apostrophes dropped ("A's" → "as"), every
 *   other run of non-alphanumerics → one space, a leading "the" dropped, trimmed.
 */

/** The normalized form of a participant name or alias (see the module comment). */
export function normalizeName(s: string): string {
  const out = s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/['’`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .replace(/^the\s+/, '');
  return out;
}

/** A normalized name as an id fragment: `[a-z0-9_]`, never empty. */
export function keyOf(s: string): string {
  const k = normalizeName(s).replace(/ /g, '_');
  return k.length > 0 ? k.slice(0, 80) : 'x';
}

/** Words that carry no identity in an event title. */
const TITLE_STOP = new Set([
  'a', 'an', 'and', 'at', 'by', 'for', 'in', 'of', 'on', 'or', 'the', 'to', 'vs', 'v', 'versus', 'will', 'who', 'which',
  'win', 'wins', 'winner', 'winners', 'won', 'be', 'is', 'are',
]);

/** Title words that name a different prize when present on one side only (East champion ≠ league champion). */
export const TITLE_QUALIFIERS: ReadonlySet<string> = new Set([
  'eastern', 'western', 'east', 'west', 'north', 'south', 'central', 'atlantic', 'pacific', 'metropolitan',
  'conference', 'division', 'group', 'mvp', 'rookie', 'coach', 'scorer', 'draft', 'seed', 'record', 'wildcard',
  'semifinal', 'semifinals', 'quarterfinal', 'quarterfinals', 'runner', 'relegated', 'relegation', 'top', 'first', 'last',
]);

/** The identity-bearing words of a title: normalized, stop words dropped (order kept, no duplicates). */
export function titleTokens(title: string): string[] {
  const seen = new Set<string>();
  for (const w of normalizeName(title).split(' ')) if (w && !TITLE_STOP.has(w)) seen.add(w);
  return [...seen];
}

/** Four-digit years (1900-2199) named in a title. */
export function yearsOf(title: string): string[] {
  return titleTokens(title).filter((w) => /^(19|20|21)\d\d$/.test(w));
}

/** Jaccard similarity of two sets (1 when both are empty). */
export function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/** |A ∩ B| / min(|A|, |B|): how much of the smaller set the larger one holds (0 when either is empty). */
export function overlap<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / Math.min(a.size, b.size);
}

/**
 * The two sides of a head-to-head title, away first when the title says so: "Baltimore at Green
 * Bay" (away at home), "Ravens @ Packers", "Ravens vs. Packers" (no home stated). A trailing
 * " Winner?" / "?" and a leading "League:" label are dropped. null when the title is not a pairing.
 */
export function pairingOf(title: string): { first: string; second: string; home: 'second' | null } | null {
  let t = title.trim().replace(/\?+$/, '').replace(/\s+winner$/i, '').trim();
  const colon = t.indexOf(': ');
  if (colon > 0 && colon < 24 && !/ (vs\.?|v\.?|at|@) /i.test(t.slice(0, colon))) t = t.slice(colon + 2);
  const at = /^(.+?)\s+(?:at|@)\s+(.+)$/i.exec(t);
  if (at) return { first: at[1]!.trim(), second: at[2]!.trim(), home: 'second' };
  const vs = /^(.+?)\s+(?:vs\.?|v\.?|versus)\s+(.+)$/i.exec(t);
  if (vs) return { first: vs[1]!.trim(), second: vs[2]!.trim(), home: null };
  return null;
}

/** A runner or outcome label that means "neither side wins" (a draw) in a game. */
export function isDrawName(s: string): boolean {
  const n = normalizeName(s);
  return n === 'draw' || n === 'tie' || n.startsWith('draw ') || n.startsWith('tie ');
}
