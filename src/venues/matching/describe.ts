/**
 * Venue catalog → EventViews: what each venue contest is (league, participants, start) and what each
 * of its positions pays on, in venue-neutral terms. Pure. One reader per catalog dialect, chosen by
 * the contest's `tags.source`:
 *
 * - `kalshi` (src/venues/kalshi/catalog.ts): an event is a contest, each market one participant with a
 *   Yes and a No position. The series (the venue league `kalshi-<SERIES>`) says what every market
 *   is, through the alias table's `venue_leagues` (KXNFLGAME: game winners). A market's subject is
 *   its yes_sub_title, else its ticker's last segment (the team abbreviation). Yes buys the subject's
 *   outcome; No is its complement, which is a price of the opponent's outcome only where nothing
 *   else can happen (a half-point line); otherwise it is left unlinked once merged.
 * - `polymarket` (src/venues/polymarket/catalog.ts): a neg-risk event is an outright (each runner's
 *   Yes), or a three-way game when its title pairs two teams and its runners are those two and a
 *   draw. Any other event's markets are two-outcome markets whose outcome labels say what they are:
 *   the two teams of the event title (winner), Over/Under with "O/U <line>" in the question (total),
 *   or the teams with "Spread: <team> (<line>)" in the question (handicap).
 * - anything else (the simulator, hand-written catalogs): the catalog's own structure: market
 *   `moneyline` (home/away), `spread` (home/away, the line per side), `total` (over/under),
 *   `tournament_winner` (runners).
 *
 * A position the reader cannot place is `loose`: it stays in its venue's contest, never merged.
 */
import type { Contest, PositionDefinition } from '../../domain/catalog.js';
import type { AliasTable, VenueLeagueKind } from './aliases.js';
import { isDrawName, normalizeName, pairingOf, titleTokens } from './normalize.js';
import type { EventShape, EventView, Outcome, PositionReading, VenueCatalog } from './types.js';

export const DRAW = 'draw';

/** Reads every contest of one venue's catalog. Contests come back sorted by id (order-independent). */
export function describeCatalog(partnerId: string, cat: VenueCatalog, aliases: AliasTable): EventView[] {
  const byContest = new Map<string, PositionDefinition[]>();
  for (const p of cat.positions) {
    const list = byContest.get(p.contest_id);
    if (list) list.push(p);
    else byContest.set(p.contest_id, [p]);
  }
  const outcomeOf = new Map<string, string>();
  for (const t of cat.tokens ?? []) if (t.position_hash) outcomeOf.set(t.position_hash, t.outcome);
  const views: EventView[] = [];
  for (const c of [...cat.contests].sort((a, b) => cmp(a.id, b.id))) {
    const positions = [...(byContest.get(c.id) ?? [])].sort((a, b) => cmp(a.position_hash, b.position_hash));
    const source = typeof c.tags?.source === 'string' ? c.tags.source : null;
    const ctx: Ctx = { partnerId, contest: c, positions, aliases, outcomeOf };
    views.push(source === 'kalshi' ? readKalshi(ctx) : source === 'polymarket' ? readPolymarket(ctx) : readStructured(ctx));
  }
  return views;
}

interface Ctx {
  partnerId: string;
  contest: Contest;
  positions: PositionDefinition[];
  aliases: AliasTable;
  outcomeOf: Map<string, string>;
}

export const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function base(ctx: Ctx, league: string | null): EventView {
  const ms = Date.parse(ctx.contest.starts_at);
  return {
    partner_id: ctx.partnerId,
    contest_id: ctx.contest.id,
    title: ctx.contest.title,
    league,
    shape: 'other',
    participants: [],
    home: null,
    starts_at: Number.isFinite(ms) ? ms : 0,
    title_tokens: titleTokens(ctx.contest.title),
    positions: [],
    notes: [],
  };
}

/** Every position loose, with one reason. */
function allLoose(v: EventView, positions: PositionDefinition[], why: string): EventView {
  v.shape = 'other';
  v.positions = positions.map((p) => ({ position_hash: p.position_hash, as: 'loose', market_ref: p.group_key, why }));
  v.notes.push(why);
  return v;
}

function finish(v: EventView, shape: EventShape, participants: Iterable<string>, home: string | null): EventView {
  v.shape = shape;
  v.participants = [...new Set(participants)].filter((p) => p !== DRAW).sort(cmp);
  v.home = home;
  return v;
}

/** A participant key for a venue name in `league` (a draw label is DRAW). */
function who(aliases: AliasTable, league: string, name: string | null | undefined, listedOnly = false): string | null {
  if (!name) return null;
  if (isDrawName(name)) return DRAW;
  return aliases.resolve(league, name, { listedOnly });
}

/** The two sides of a pairing title, resolved; null unless both resolve to two different participants. */
function sidesOf(aliases: AliasTable, league: string, title: string): { a: string; b: string; home: string | null } | null {
  const p = pairingOf(title);
  if (!p) return null;
  const a = who(aliases, league, p.first);
  const b = who(aliases, league, p.second);
  if (!a || !b || a === b || a === DRAW || b === DRAW) return null;
  return { a, b, home: p.home === 'second' ? b : null };
}

const isHalf = (x: number) => Math.abs(x * 2 - Math.round(x * 2)) < 1e-9 && Math.abs(x - Math.round(x)) > 1e-9;

// ---- Kalshi ----------------------------------------------------------------------------------

/** "Green Bay wins by over 3.5 points", "Green Bay by more than 3.5" → team and margin. */
const KALSHI_MARGIN = /^(.+?)\s+(?:wins?\s+)?by\s+(?:over|more than)\s+(\d+(?:\.\d+)?)/i;
/** "Over 45.5 points", "Total over 45.5", "45.5+ points"? only the explicit "over" forms. */
const KALSHI_OVER = /\bover\s+(\d+(?:\.\d+)?)/i;

function readKalshi(ctx: Ctx): EventView {
  const hit = ctx.aliases.venueLeague(ctx.contest.league_id);
  const v = base(ctx, hit?.league ?? null);
  if (!hit) return allLoose(v, ctx.positions, `venue league ${ctx.contest.league_id} is not in the alias table`);
  if (!hit.kind) return allLoose(v, ctx.positions, `the alias table does not say what ${ctx.contest.league_id} markets are`);
  const league = hit.league;
  // One Kalshi market per participant id; its positions are that market's yes and no.
  const markets = new Map<string, PositionDefinition[]>();
  for (const p of ctx.positions) {
    const list = markets.get(p.participant_id);
    if (list) list.push(p);
    else markets.set(p.participant_id, [p]);
  }
  const subjectOf = (pid: string, name: string): string | null => {
    const byName = who(ctx.aliases, league, name);
    const suffix = pid.slice(pid.lastIndexOf('-') + 1);
    // A ticker's last segment is an abbreviation: it counts only when the table lists it.
    const byTicker = suffix && suffix !== pid ? who(ctx.aliases, league, suffix, true) : null;
    if (byName && byTicker && byName !== byTicker) return null;
    return byName ?? byTicker;
  };
  const kind: VenueLeagueKind = hit.kind;
  if (kind === 'outright') {
    const runners: string[] = [];
    for (const [pid, ps] of markets) {
      const key = subjectOf(pid, ps[0]!.participant_name);
      if (key && key !== DRAW) runners.push(key);
      for (const p of ps) v.positions.push(yesNo(p, key && key !== DRAW ? { kind: 'winner', line: null, pick: key } : null, null, `runner ${JSON.stringify(p.participant_name)} is not in the alias table`));
    }
    return finish(v, 'outright', runners, null);
  }
  // A game: its two sides from the title, else from the markets' subjects.
  let sides = sidesOf(ctx.aliases, league, ctx.contest.title);
  if (!sides && kind === 'winner') {
    const keys = [...new Set([...markets].map(([pid, ps]) => subjectOf(pid, ps[0]!.participant_name)).filter((k): k is string => k !== null && k !== DRAW))];
    if (keys.length === 2) sides = { a: keys[0]!, b: keys[1]!, home: null };
  }
  if (!sides) return allLoose(v, ctx.positions, `cannot tell the two sides of ${JSON.stringify(ctx.contest.title)}`);
  const other = (k: string) => (k === sides!.a ? sides!.b : k === sides!.b ? sides!.a : null);
  for (const [pid, ps] of markets) {
    const subject = ps[0]!.participant_name;
    let yes: Outcome | null = null;
    let no: Outcome | null = null;
    let why = `market ${JSON.stringify(subject)} is not one of the two sides`;
    if (kind === 'winner') {
      const key = subjectOf(pid, subject);
      if (key === DRAW || (key && other(key))) yes = { kind: 'winner', line: null, pick: key };
    } else if (kind === 'handicap') {
      const m = KALSHI_MARGIN.exec(subject);
      const key = m ? who(ctx.aliases, league, m[1]!) : null;
      const margin = m ? Number(m[2]) : NaN;
      if (key && other(key) && Number.isFinite(margin)) {
        yes = { kind: 'handicap', line: -margin, pick: key };
        // Over a half-point margin or not: nothing else can happen, so No is the other side's +margin.
        if (isHalf(margin)) no = { kind: 'handicap', line: margin, pick: other(key)! };
      } else why = `cannot read a team and margin from ${JSON.stringify(subject)}`;
    } else {
      const m = KALSHI_OVER.exec(subject);
      const line = m ? Number(m[1]) : NaN;
      if (Number.isFinite(line)) {
        yes = { kind: 'total', line, pick: 'over' };
        if (isHalf(line)) no = { kind: 'total', line, pick: 'under' };
      } else why = `cannot read a total line from ${JSON.stringify(subject)}`;
    }
    for (const p of ps) v.positions.push(yesNo(p, yes, no, why));
  }
  return finish(v, 'game', [sides.a, sides.b], sides.home);
}

/** A yes/no position: yes buys `yes`; no buys `no` when given, else it is yes's complement. */
function yesNo(p: PositionDefinition, yes: Outcome | null, no: Outcome | null, why: string): PositionReading {
  if (!yes) return { position_hash: p.position_hash, as: 'loose', market_ref: p.group_key, why };
  if (p.side_key === 'yes') return { position_hash: p.position_hash, as: 'outcome', outcome: yes, market_ref: p.group_key };
  if (p.side_key === 'no') return no ? { position_hash: p.position_hash, as: 'outcome', outcome: no, market_ref: p.group_key } : { position_hash: p.position_hash, as: 'complement', of: yes, market_ref: p.group_key };
  return { position_hash: p.position_hash, as: 'loose', market_ref: p.group_key, why: `side ${p.side_key} is not yes or no` };
}

// ---- Polymarket ------------------------------------------------------------------------------

const PM_TOTAL = /\bO\/U\s+(\d+(?:\.\d+)?)/i;
const PM_SPREAD = /^Spread:\s*(.+?)\s*\(([+-]?\d+(?:\.\d+)?)\)/i;

function readPolymarket(ctx: Ctx): EventView {
  const hit = ctx.aliases.venueLeague(ctx.contest.league_id);
  const v = base(ctx, hit?.league ?? null);
  if (!hit) return allLoose(v, ctx.positions, `venue league ${ctx.contest.league_id} is not in the alias table`);
  const league = hit.league;
  const sides = sidesOf(ctx.aliases, league, ctx.contest.title);

  if (ctx.contest.type === 'outright') {
    // Neg-risk: one Yes position per runner.
    const keys = ctx.positions.map((p) => who(ctx.aliases, league, p.participant_name));
    const twoAndDraw = sides !== null && keys.every((k) => k === DRAW || k === sides.a || k === sides.b) && keys.includes(sides.a) && keys.includes(sides.b);
    ctx.positions.forEach((p, i) => {
      const k = keys[i];
      if (k && (twoAndDraw || k !== DRAW)) v.positions.push({ position_hash: p.position_hash, as: 'outcome', outcome: { kind: 'winner', line: null, pick: k }, market_ref: p.group_key });
      else v.positions.push({ position_hash: p.position_hash, as: 'loose', market_ref: p.group_key, why: `runner ${JSON.stringify(p.participant_name)} is not in the alias table` });
    });
    if (twoAndDraw) return finish(v, 'game', [sides.a, sides.b], sides.home);
    return finish(v, 'outright', keys.filter((k): k is string => k !== null && k !== DRAW), null);
  }

  if (!sides) return allLoose(v, ctx.positions, `cannot tell the two sides of ${JSON.stringify(ctx.contest.title)}`);
  const other = (k: string | null) => (k === sides.a ? sides.b : k === sides.b ? sides.a : null);
  const markets = new Map<string, PositionDefinition[]>();
  for (const p of ctx.positions) {
    const list = markets.get(p.group_key);
    if (list) list.push(p);
    else markets.set(p.group_key, [p]);
  }
  for (const [, ps] of markets) {
    const labelOf = (p: PositionDefinition) => ctx.outcomeOf.get(p.position_hash) ?? p.title.slice(p.title.lastIndexOf(': ') + 2);
    const question = questionOf(ps[0]!, labelOf(ps[0]!));
    const total = PM_TOTAL.exec(question);
    const spread = PM_SPREAD.exec(question);
    for (const p of ps) {
      const label = labelOf(p);
      const n = normalizeName(label);
      let o: Outcome | null = null;
      let why = `cannot place outcome ${JSON.stringify(label)} of ${JSON.stringify(question)}`;
      if (total) {
        if (n === 'over' || n === 'under') o = { kind: 'total', line: Number(total[1]), pick: n };
      } else if (spread) {
        const named = who(ctx.aliases, league, spread[1]!);
        const k = who(ctx.aliases, league, label);
        const line = Number(spread[2]);
        if (named && other(named) && k && other(k) && Number.isFinite(line)) o = { kind: 'handicap', line: k === named ? line : -line, pick: k };
      } else {
        const k = who(ctx.aliases, league, label);
        if (k && other(k)) o = { kind: 'winner', line: null, pick: k };
        else if (n === 'yes' || n === 'no') why = `a yes/no proposition (${JSON.stringify(question)}) is matched only by the mapping file`;
      }
      v.positions.push(o ? { position_hash: p.position_hash, as: 'outcome', outcome: o, market_ref: p.group_key } : { position_hash: p.position_hash, as: 'loose', market_ref: p.group_key, why });
    }
  }
  return finish(v, 'game', [sides.a, sides.b], sides.home);
}

/** The market question of a Polymarket position (its title is `<question>: <outcome>`). */
function questionOf(p: PositionDefinition, label: string): string {
  const suffix = `: ${label}`;
  return p.title.endsWith(suffix) ? p.title.slice(0, -suffix.length) : p.participant_name;
}

// ---- structured catalogs (the simulator, hand-written) -----------------------------------------

function readStructured(ctx: Ctx): EventView {
  const hit = ctx.aliases.venueLeague(ctx.contest.league_id);
  const v = base(ctx, hit?.league ?? null);
  if (!hit) return allLoose(v, ctx.positions, `venue league ${ctx.contest.league_id} is not in the alias table`);
  const league = hit.league;
  const keyOfPos = (p: PositionDefinition) => who(ctx.aliases, league, p.participant_name);
  const teams = new Set<string>();
  let home: string | null = null;
  let outright = false;
  for (const p of ctx.positions) {
    if (p.market_id === 'moneyline' || p.market_id === 'spread') {
      const k = keyOfPos(p);
      if (k && k !== DRAW) teams.add(k);
      if (k && p.side_key === 'home') home = k;
    } else if (p.market_id === 'tournament_winner') outright = true;
  }
  if (outright && teams.size === 0) {
    const runners: string[] = [];
    for (const p of ctx.positions) {
      const k = p.market_id === 'tournament_winner' ? keyOfPos(p) : null;
      if (k && k !== DRAW) {
        runners.push(k);
        v.positions.push({ position_hash: p.position_hash, as: 'outcome', outcome: { kind: 'winner', line: null, pick: k }, market_ref: p.group_key });
      } else v.positions.push({ position_hash: p.position_hash, as: 'loose', market_ref: p.group_key, why: `cannot place ${JSON.stringify(p.title)}` });
    }
    return finish(v, 'outright', runners, null);
  }
  if (teams.size !== 2) return allLoose(v, ctx.positions, `cannot tell the two sides of ${JSON.stringify(ctx.contest.title)}`);
  for (const p of ctx.positions) {
    const k = keyOfPos(p);
    let o: Outcome | null = null;
    if (p.market_id === 'moneyline' && k) o = { kind: 'winner', line: null, pick: k };
    else if (p.market_id === 'spread' && k && k !== DRAW) o = { kind: 'handicap', line: p.variable, pick: k };
    else if (p.market_id === 'total' && (p.side_key === 'over' || p.side_key === 'under')) o = { kind: 'total', line: p.variable, pick: p.side_key };
    v.positions.push(o ? { position_hash: p.position_hash, as: 'outcome', outcome: o, market_ref: p.group_key } : { position_hash: p.position_hash, as: 'loose', market_ref: p.group_key, why: `cannot place ${JSON.stringify(p.title)}` });
  }
  return finish(v, 'game', teams, home);
}
