/**
 * Contest lifecycle of the simulator: scheduled → live (clock, period, scores or leaderboard,
 * sport-specific situation) → final with a result, and the fair probabilities that follow from
 * the game's state. Pure functions over ContestRt plus an explicit Rng.
 */
import type { GameState, LeaderboardEntry, PositionResult } from '../venues/types.js';
import type { SimContestParams, SimSport } from './catalog.js';
import { Rng, hashSeed, normalCdf } from './rng.js';
import type { ContestRt, EffectiveParams, Phase, PosRt } from './runtime.js';

interface PeriodDef {
  n: number;
  len: number;
  type: string;
  label: (n: number) => string;
  /** Points per scoring event and their probabilities. */
  points: [number, number][];
}

const PERIODS: Partial<Record<SimSport, PeriodDef>> = {
  football: { n: 4, len: 900, type: 'quarter', label: (n) => `Q${n}`, points: [[7, 0.6], [3, 0.4]] },
  basketball: { n: 4, len: 720, type: 'quarter', label: (n) => `Q${n}`, points: [[2, 0.65], [3, 0.35]] },
  hockey: { n: 3, len: 1200, type: 'period', label: (n) => `P${n}`, points: [[1, 1]] },
  mma: { n: 3, len: 300, type: 'round', label: (n) => `Round ${n}`, points: [[0, 1]] },
};

const MIN_REMAINING = 0.01;

export const clamp = (x: number, lo: number, hi: number) => (x < lo ? lo : x > hi ? hi : x);

function avgPoints(def: PeriodDef): number {
  let s = 0;
  for (const [pts, pr] of def.points) s += pts * pr;
  return s;
}

function samplePoints(def: PeriodDef, rng: Rng): number {
  let u = rng.next();
  for (const [pts, pr] of def.points) {
    if (u < pr) return pts;
    u -= pr;
  }
  return def.points[def.points.length - 1]![0];
}

export function progress(c: ContestRt, nowMs: number): number {
  return clamp((nowMs - c.p.start_ms) / c.p.duration_ms, 0, 1);
}

function emptyEff(p: SimContestParams): EffectiveParams {
  return { f: 0, mu: p.mu0, sigma: p.sigma, tau: p.tau0, sigmaT: p.sigma_t, pmu: p.players.map((x) => x.mu), psd: p.players.map((x) => x.sd), win: [] };
}

export function newEff(p: SimContestParams): EffectiveParams {
  return emptyEff(p);
}

/** Recomputes the effective (state-aware) parameters the fair prices come from. */
export function refreshEffective(c: ContestRt, nowMs: number): void {
  const p = c.p;
  const e = c.eff;
  const f = c.phase === 'live' ? progress(c, nowMs) : c.phase === 'final' ? 1 : 0;
  const rem = Math.max(1 - f, MIN_REMAINING);
  e.f = f;
  if (p.kind === 'team_h2h') {
    e.mu = c.home - c.away + c.mu * (1 - f);
    e.sigma = p.sigma * Math.sqrt(rem);
    e.tau = c.home + c.away + c.tau * (1 - f);
    e.sigmaT = p.sigma_t * Math.sqrt(rem);
    for (let i = 0; i < p.players.length; i++) {
      const pl = p.players[i]!;
      const cur = c.phase === 'live' && c.playerFinal.length > i ? Math.floor(c.playerFinal[i]! * f) : 0;
      e.pmu[i] = cur + pl.mu * (1 - f);
      e.psd[i] = pl.sd * Math.sqrt(rem);
    }
  } else if (p.kind === 'athlete_h2h') {
    if (p.sport === 'tennis') {
      e.mu = c.mu + 1.2 * (c.home - c.away);
      e.sigma = Math.max(0.25, Math.sqrt(rem));
    } else {
      e.mu = c.mu;
      e.sigma = 1;
    }
  } else {
    let z = 0;
    const w = (e.win = new Array<number>(p.entrant_ids.length));
    for (let i = 0; i < p.entrant_ids.length; i++) {
      const x = c.eliminated.has(p.entrant_ids[i]!) ? 0 : Math.exp(c.strengths[i]!);
      w[i] = x;
      z += x;
    }
    for (let i = 0; i < w.length; i++) w[i] = z > 0 ? w[i]! / z : 0;
  }
}

const FAIR_MIN = 0.005;
const FAIR_MAX = 0.995;

/** True probability of a position given the contest's effective parameters. */
export function fairOf(pr: PosRt): number {
  const e = pr.c.eff;
  const m = pr.meta;
  let p: number;
  switch (m.kind) {
    case 'ml_home':
      p = normalCdf(e.mu / e.sigma);
      break;
    case 'ml_away':
      p = 1 - normalCdf(e.mu / e.sigma);
      break;
    case 'spread_home':
      p = normalCdf((e.mu + m.line) / e.sigma);
      break;
    case 'spread_away':
      p = 1 - normalCdf((e.mu + m.line) / e.sigma);
      break;
    case 'over':
      p = 1 - normalCdf((m.line - e.tau) / e.sigmaT);
      break;
    case 'under':
      p = normalCdf((m.line - e.tau) / e.sigmaT);
      break;
    case 'pp_over':
      p = 1 - normalCdf((m.line - e.pmu[m.index]!) / e.psd[m.index]!);
      break;
    case 'pp_under':
      p = normalCdf((m.line - e.pmu[m.index]!) / e.psd[m.index]!);
      break;
    case 'winner':
      p = e.win[m.index] ?? 0;
      break;
  }
  return clamp(p, FAIR_MIN, FAIR_MAX);
}

/** Random walk of the latent expectations (Ornstein-Uhlenbeck around the opening numbers). */
export function walkLatent(c: ContestRt, dtMs: number, rng: Rng): void {
  if (dtMs <= 0 || c.phase === 'final') return;
  const dt = dtMs / 1000;
  const sq = Math.sqrt(dt);
  const k = Math.min(1, dt / 1800);
  const p = c.p;
  if (p.kind === 'outright') {
    for (let i = 0; i < c.strengths.length; i++) {
      c.strengths[i] = c.strengths[i]! + -(c.strengths[i]! - p.strengths[i]!) * k + 0.002 * sq * rng.normal();
    }
    return;
  }
  // Pre-game lines drift a few cents an hour; in play they move faster (on top of the score).
  const vol = c.phase === 'live' ? 0.004 : 0.0015;
  c.mu += -(c.mu - p.mu0) * k + vol * p.sigma * sq * rng.normal();
  if (p.sigma_t > 0) c.tau += -(c.tau - p.tau0) * k + vol * p.sigma_t * sq * rng.normal();
}

/** Draws the hidden final player points when a game goes live. */
function drawPlayerFinals(c: ContestRt, rng: Rng): void {
  if (c.playerFinal.length === c.p.players.length) return;
  c.playerFinal = c.p.players.map((pl) => Math.max(0, Math.round(pl.mu + pl.sd * rng.normal())));
}

/** Scoring over `dtMs` of a live contest. Returns true when anything scored. */
function score(c: ContestRt, nowMs: number, dtMs: number, rng: Rng): boolean {
  const p = c.p;
  if (dtMs <= 0) return false;
  if (p.kind === 'team_h2h') {
    const def = PERIODS[p.sport]!;
    const avg = avgPoints(def);
    const homeRate = Math.max(0.05, (c.tau + c.mu) / 2) / avg / p.duration_ms;
    const awayRate = Math.max(0.05, (c.tau - c.mu) / 2) / avg / p.duration_ms;
    const nh = rng.poisson(homeRate * dtMs);
    const na = rng.poisson(awayRate * dtMs);
    if (nh + na === 0) return false;
    const f = progress(c, nowMs);
    const curPeriod = Math.min(def.n, Math.floor(f * def.n) + 1);
    const prevPeriod = Math.min(def.n, Math.floor(progress(c, nowMs - dtMs) * def.n) + 1);
    ensurePeriods(c, curPeriod);
    for (let i = 0; i < nh + na; i++) {
      const pts = samplePoints(def, rng);
      const per = prevPeriod === curPeriod ? curPeriod : rng.int(prevPeriod, curPeriod);
      const slot = c.periodScores[per - 1]!;
      if (i < nh) {
        c.home += pts;
        slot.home_score += pts;
      } else {
        c.away += pts;
        slot.away_score += pts;
      }
    }
    return true;
  }
  if (p.kind === 'athlete_h2h') {
    if (p.sport === 'tennis') {
      const n = rng.poisson((2.5 / p.duration_ms) * dtMs);
      for (let i = 0; i < n && c.phase === 'live'; i++) {
        const homeWins = rng.bool(normalCdf(c.mu));
        const loserGames = rng.int(0, 4);
        c.periodScores.push({ home_score: homeWins ? 6 : loserGames, away_score: homeWins ? loserGames : 6 });
        if (homeWins) c.home++;
        else c.away++;
        if (c.home >= 2 || c.away >= 2) finalize(c, rng);
      }
      return n > 0;
    }
    // mma: a finish ends the fight early
    if (rng.bool(1 - Math.exp((-0.6 / p.duration_ms) * dtMs))) {
      finalize(c, rng, rng.bool(normalCdf(c.mu)) ? p.home_id : p.away_id, rng.pick(['KO/TKO', 'Submission']));
      return true;
    }
  }
  return false;
}

function ensurePeriods(c: ContestRt, n: number): void {
  while (c.periodScores.length < n) c.periodScores.push({ home_score: 0, away_score: 0 });
}

/** Moves a contest to live (drawing what a live game needs). */
export function goLive(c: ContestRt, nowMs: number, rng: Rng): void {
  c.phase = 'live';
  drawPlayerFinals(c, rng);
  if (c.p.kind === 'team_h2h') ensurePeriods(c, 1);
  // A contest that started before the sim did: play the elapsed part at once.
  const elapsed = Math.min(nowMs, c.p.start_ms + c.p.duration_ms) - c.p.start_ms;
  if (elapsed > 0 && (c.p.kind === 'team_h2h' || c.p.sport === 'tennis')) score(c, nowMs, elapsed, rng);
}

/**
 * Ends a contest: decides the winner (from the scores, or `forcedWinner`), breaks ties the way
 * the sport would (overtime), and fixes every position's result.
 */
export function finalize(c: ContestRt, rng: Rng, forcedWinner?: string | null, method?: string): void {
  const p = c.p;
  drawPlayerFinals(c, rng);
  if (p.kind === 'team_h2h') {
    if (c.periodScores.length === 0) {
      // never played (settled before start): a plausible final score
      const def = PERIODS[p.sport]!;
      ensurePeriods(c, def.n);
      const h = Math.max(0, Math.round((c.tau + c.mu) / 2 + (p.sigma / 2) * rng.normal()));
      const a = Math.max(0, Math.round((c.tau - c.mu) / 2 + (p.sigma / 2) * rng.normal()));
      c.home = h;
      c.away = a;
      c.periodScores[def.n - 1] = { home_score: h, away_score: a };
    }
    const def = PERIODS[p.sport]!;
    const bump = def.points[def.points.length - 1]![0] || 1;
    let winner = forcedWinner ?? null;
    if (winner === null && c.home === c.away) winner = rng.bool(normalCdf(c.mu / p.sigma)) ? p.home_id : p.away_id;
    if (winner !== null) {
      const last = c.periodScores[c.periodScores.length - 1]!;
      if (winner === p.home_id && c.home <= c.away) {
        const d = c.away - c.home + bump;
        c.home += d;
        last.home_score += d;
      } else if (winner === p.away_id && c.away <= c.home) {
        const d = c.home - c.away + bump;
        c.away += d;
        last.away_score += d;
      }
    }
    c.winner = c.home > c.away ? p.home_id : p.away_id;
    c.result = c.home > c.away ? 'home_win' : 'away_win';
  } else if (p.kind === 'athlete_h2h') {
    let winner = forcedWinner ?? null;
    if (winner === null && p.sport === 'tennis' && c.home !== c.away) winner = c.home > c.away ? p.home_id : p.away_id;
    if (winner === null) winner = rng.bool(normalCdf(c.mu)) ? p.home_id : p.away_id;
    if (p.sport === 'tennis') {
      // the winner takes sets until they have two, the loser keeps what it had (max one)
      const homeWins = winner === p.home_id;
      if (homeWins) c.away = Math.min(c.away, 1);
      else c.home = Math.min(c.home, 1);
      while ((homeWins ? c.home : c.away) < 2) {
        c.periodScores.push({ home_score: homeWins ? 6 : rng.int(0, 4), away_score: homeWins ? rng.int(0, 4) : 6 });
        if (homeWins) c.home++;
        else c.away++;
      }
    }
    c.winner = winner;
    c.result = winner === p.home_id ? 'home_win' : 'away_win';
    c.finishMethod = method ?? (p.sport === 'mma' ? 'Decision' : null);
  } else {
    let winner = forcedWinner ?? null;
    if (winner === null) {
      refreshEffective(c, c.p.start_ms + c.p.duration_ms);
      const u = rng.next();
      let acc = 0;
      for (let i = 0; i < p.entrant_ids.length; i++) {
        acc += c.eff.win[i]!;
        if (u < acc) {
          winner = p.entrant_ids[i]!;
          break;
        }
      }
      winner ??= p.entrant_ids.find((id) => !c.eliminated.has(id)) ?? p.entrant_ids[0]!;
    }
    c.winner = winner;
    c.result = 'decided';
  }
  c.phase = 'final';
}

/**
 * Advances one contest by `dtMs` to `nowMs`. Returns what happened so the model can emit state
 * and settle.
 */
export function stepContest(c: ContestRt, nowMs: number, dtMs: number, rng: Rng): { stateChanged: boolean; finalized: boolean } {
  if (c.manual || c.settled || c.phase === 'final') return { stateChanged: false, finalized: false };
  walkLatent(c, dtMs, rng);
  let stateChanged = false;
  if (c.phase === 'scheduled' && nowMs >= c.p.start_ms) {
    goLive(c, nowMs, rng);
    stateChanged = true;
  } else if (c.phase === 'live') {
    if (score(c, nowMs, dtMs, rng)) stateChanged = true;
  }
  if (c.phase === 'live' && nowMs >= c.p.start_ms + c.p.duration_ms) {
    finalize(c, rng);
  }
  const finalized = (c.phase as Phase) === 'final';
  return { stateChanged: stateChanged || finalized, finalized };
}

const mmss = (s: number) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;

/** The spec's state object for a contest at `nowMs` (no randomness consumed). */
export function buildState(c: ContestRt, nowMs: number, names: (id: string) => string): GameState {
  const p = c.p;
  const base: GameState = {
    game_status: c.phase,
    clock: null,
    period: null,
    contest_result: c.phase === 'final' ? c.result : null,
    winner_participant_id: c.phase === 'final' ? c.winner : null,
    scores: null,
    situation: null,
    leaderboard: null,
  };
  const def = PERIODS[p.sport];
  const f = c.phase === 'live' ? progress(c, nowMs) : c.phase === 'final' ? 1 : 0;

  if (p.kind === 'team_h2h') {
    if (c.phase !== 'scheduled') {
      base.scores = { home_score: c.home, away_score: c.away, period_scores: c.periodScores.map((x) => ({ ...x })) };
    }
    if (c.phase !== 'scheduled' && def) {
      const elapsed = f * def.n * def.len;
      const n = Math.min(def.n, Math.floor(elapsed / def.len) + 1);
      const rem = c.phase === 'final' ? 0 : Math.max(0, Math.round(n * def.len - elapsed));
      base.period = { number: n, label: def.label(n), type: def.type };
      base.clock = { display: mmss(rem), remaining_seconds: rem, is_running: c.phase === 'live' };
      if (c.phase === 'live') base.situation = situation(c, n, rem);
    }
    return base;
  }

  if (p.kind === 'athlete_h2h') {
    const homeWon = c.phase === 'final' && c.winner === p.home_id;
    const awayWon = c.phase === 'final' && c.winner === p.away_id;
    const entry = (id: string, sc: number, won: boolean, lost: boolean): LeaderboardEntry => ({
      participant_id: id,
      participant_name: names(id),
      rank: 0,
      score: p.sport === 'tennis' ? sc : null,
      status: won ? 'winner' : lost ? 'eliminated' : 'active',
    });
    const lb = [entry(p.home_id!, c.home, homeWon, awayWon), entry(p.away_id!, c.away, awayWon, homeWon)];
    lb.sort((a, b) => Number(b.status === 'winner') - Number(a.status === 'winner') || (b.score ?? 0) - (a.score ?? 0));
    lb.forEach((e, i) => (e.rank = i + 1));
    base.leaderboard = lb;
    if (p.sport === 'tennis' && c.phase !== 'scheduled') {
      const set = Math.min(3, c.home + c.away + (c.phase === 'live' ? 1 : 0));
      base.period = { number: Math.max(1, set), label: `Set ${Math.max(1, set)}`, type: 'set' };
      if (c.phase === 'live') base.situation = { server: (c.situationSeed + Math.floor(nowMs / 60_000)) % 2 === 0 ? 'home' : 'away' };
    } else if (p.sport === 'mma' && c.phase !== 'scheduled' && def) {
      const elapsed = f * def.n * def.len;
      const n = Math.min(def.n, Math.floor(elapsed / def.len) + 1);
      const rem = c.phase === 'final' ? 0 : Math.max(0, Math.round(n * def.len - elapsed));
      base.period = { number: n, label: def.label(n), type: def.type };
      base.clock = { display: mmss(rem), remaining_seconds: rem, is_running: c.phase === 'live' };
      if (c.phase === 'final') base.situation = { method: c.finishMethod ?? 'Decision' };
    }
    return base;
  }

  // outright: leaderboard by current win probability
  const lb: LeaderboardEntry[] = p.entrant_ids.map((id, i) => ({
    participant_id: id,
    participant_name: names(id),
    rank: 0,
    score: c.phase === 'final' ? null : Math.round((c.eff.win[i] ?? 0) * 1000) / 1000,
    status: c.phase === 'final' ? (id === c.winner ? 'winner' : 'eliminated') : c.eliminated.has(id) ? 'eliminated' : 'active',
  }));
  const order = (e: LeaderboardEntry) => (e.status === 'winner' ? 2 : e.status === 'active' ? 1 : 0);
  lb.sort((a, b) => order(b) - order(a) || (b.score ?? 0) - (a.score ?? 0) || (a.participant_id < b.participant_id ? -1 : 1));
  lb.forEach((e, i) => (e.rank = i + 1));
  base.leaderboard = lb;
  return base;
}

function situation(c: ContestRt, period: number, rem: number): Record<string, unknown> {
  // Derived from a hash of the contest and the game clock, so reading state consumes no randomness.
  const h = hashSeed(c.situationSeed, `${period}/${Math.floor(rem / 30)}`);
  const side = h % 2 === 0 ? 'home' : 'away';
  switch (c.p.sport) {
    case 'football':
      return { possession: side, down: (h % 4) + 1, distance: ((h >>> 3) % 10) + 1, yard_line: ((h >>> 7) % 99) + 1 };
    case 'basketball':
      return { possession: side, home_fouls: (h >>> 4) % 6, away_fouls: (h >>> 9) % 6, bonus: null };
    case 'hockey':
      return { power_play: (h >>> 5) % 5 === 0 ? side : null };
    default:
      return {};
  }
}

/** Every position's result from the final state (scores, winner, player points). */
export function computeResults(c: ContestRt): Map<string, PositionResult> {
  const out = new Map<string, PositionResult>();
  const cmp = (x: number): PositionResult => (x > 0 ? 'win' : x < 0 ? 'lose' : 'push');
  const margin = c.home - c.away;
  for (const pr of c.positions) {
    const m = pr.meta;
    let r: PositionResult;
    switch (m.kind) {
      case 'ml_home':
      case 'ml_away':
      case 'winner':
        r = c.winner === null ? 'push' : pr.pos.participant_id === c.winner ? 'win' : 'lose';
        break;
      case 'spread_home':
        r = cmp(margin + m.line);
        break;
      case 'spread_away':
        r = cmp(-(margin + m.line));
        break;
      case 'over':
        r = cmp(c.home + c.away - m.line);
        break;
      case 'under':
        r = cmp(m.line - (c.home + c.away));
        break;
      case 'pp_over':
        r = cmp((c.playerFinal[m.index] ?? 0) - m.line);
        break;
      case 'pp_under':
        r = cmp(m.line - (c.playerFinal[m.index] ?? 0));
        break;
    }
    out.set(pr.pos.position_hash, r);
  }
  return out;
}
