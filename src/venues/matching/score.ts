/**
 * How alike two venue contests are. Pure and symmetric: score(a, b) = score(b, a).
 *
 * Hard rules first (any one fails → score 0, with the reason):
 *   both leagues known and equal; both the same shape, `game` or `outright` (an `other` contest is
 *   matched only by the mapping file); starts within the shape's window; no year named in both
 *   titles that differs; for an outright, the same title qualifiers (East champion ≠ champion).
 * Then a weighted sum in [0, 1]:
 *   game      0.70 × participants (Jaccard of the two sides: 1 when both teams agree, 1/3 for one)
 *             + 0.30 × time (1 at the same start, falling linearly to 0 at the window's edge)
 *   outright  0.45 × title (Jaccard of the titles' identity words)
 *             + 0.25 × runners (shared runners / the smaller list: venues list different subsets)
 *             + 0.30 × time
 * A pair is merged at MATCH_THRESHOLD or above. With one team in common a game scores at most
 * 0.70/3 + 0.30 < 0.85, so a game merges only when both teams agree and the starts are within half
 * the window. LOW_CONFIDENCE_FLOOR is where a near miss is still reported as a candidate.
 */
import { TITLE_QUALIFIERS, jaccard, overlap } from './normalize.js';
import type { EventView, ScoreDetail } from './types.js';

export const MATCH_THRESHOLD = 0.85;
export const LOW_CONFIDENCE_FLOOR = 0.5;

export const WEIGHTS = {
  game: { participants: 0.7, time: 0.3 },
  outright: { title: 0.45, participants: 0.25, time: 0.3 },
} as const;

/**
 * Start-time windows. A game's start differs by venue (Polymarket gives kickoff, Kalshi the
 * expected expiration a few hours later), and two games of the same teams are rarely closer than a
 * day (a baseball doubleheader is: the nearer start wins, see merge.ts). An outright's date is when
 * it is decided, which venues put days apart.
 */
export const WINDOW_MS = { game: 12 * 3_600_000, outright: 31 * 86_400_000 } as const;

const veto = (why: string): ScoreDetail => ({ score: 0, participants: 0, time: 0, title: 0, veto: why });

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export function scorePair(a: EventView, b: EventView): ScoreDetail {
  if (a.league === null || b.league === null) return veto('league not in the alias table');
  if (a.league !== b.league) return veto(`leagues differ (${a.league} / ${b.league})`);
  if (a.shape === 'other' || b.shape === 'other') return veto('not a game or an outright the matcher can read');
  if (a.shape !== b.shape) return veto(`a ${a.shape} and a ${b.shape}`);
  const window = WINDOW_MS[a.shape];
  const dt = Math.abs(a.starts_at - b.starts_at);
  if (dt > window) return veto(`starts ${Math.round(dt / 3_600_000)} h apart (window ${window / 3_600_000} h)`);
  const ya = a.title_tokens.filter(isYear);
  const yb = b.title_tokens.filter(isYear);
  if (ya.length > 0 && yb.length > 0 && !ya.some((y) => yb.includes(y))) return veto(`different years (${ya.join(',')} / ${yb.join(',')})`);
  const time = 1 - dt / window;
  const pa = new Set(a.participants);
  const pb = new Set(b.participants);
  if (a.shape === 'game') {
    const participants = jaccard(pa, pb);
    const w = WEIGHTS.game;
    return { score: round4(w.participants * participants + w.time * time), participants: round4(participants), time: round4(time), title: 0, veto: null };
  }
  const qa = a.title_tokens.filter((t) => TITLE_QUALIFIERS.has(t)).sort();
  const qb = b.title_tokens.filter((t) => TITLE_QUALIFIERS.has(t)).sort();
  if (qa.join(' ') !== qb.join(' ')) return veto(`different prizes (${qa.join(' ') || 'none'} / ${qb.join(' ') || 'none'})`);
  const title = jaccard(new Set(a.title_tokens), new Set(b.title_tokens));
  const participants = overlap(pa, pb);
  const w = WEIGHTS.outright;
  return {
    score: round4(w.title * title + w.participants * participants + w.time * time),
    participants: round4(participants),
    time: round4(time),
    title: round4(title),
    veto: null,
  };
}

const isYear = (w: string) => /^(19|20|21)\d\d$/.test(w);
