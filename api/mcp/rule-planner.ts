/**
 * The rule-based planner of the MCP `ask` tool (docs/mcp.md "ask"): used when no AI provider is
 * configured, or when the provider planner cannot answer, and it says so (and why) in every answer. It plans from keywords, in this order:
 *
 * 1. Which contest the question is about: a contest id written in it (get_contest on each word that
 *    looks like an id, at most three), else its longest words searched as title text (list_contests
 *    q=word, at most three searches), the contest whose title holds the most of the question's
 *    words winning (earliest start on a tie).
 * 2. What is asked, by keyword: prices and odds (get_contest_liquidity, also the default for a
 *    contest), score and clock (get_contest_state), history and moves (get_contest_price_history),
 *    markets of the contest (list_contest_markets); without a contest: leagues (list_leagues),
 *    venues (list_partners), market types (list_markets), or else the open contests, of the
 *    league the question names if it names one (list_leagues, then list_contests).
 *
 * Every read is a tool's own, with the key's entitlements: a read the plan lacks is reported in the
 * answer (e.g. game state needs gamestate:read), never worked around.
 */
import type { AskAnswer, AskPlanner, AskReads, AskStep } from './planner.js';

export const RULE_BASED = 'rule_based';

const STOPWORDS = new Set(
  'the a an and or of in on at to for from is are was were be what whats what’s which who whom how many much does do did will would can could should show tell me give list about with vs versus game games match matches contest contests market markets price prices odds line lines score scores state clock history moved move moves trend today tonight right now current currently open upcoming next best cheapest venue venues partner partners league leagues please there their this that it its any all'.split(' '),
);

const has = (q: string, words: readonly string[]) => words.some((w) => new RegExp(`\\b${w}`, 'i').test(q));

const INTENT = {
  price: ['price', 'odds', 'liquidity', 'consensus', 'cheap', 'best', 'quote', 'bet', 'line', 'spread', 'total', 'moneyline', 'favorite', 'favourite', 'probab', 'chance'],
  state: ['score', 'scoring', 'state', 'clock', 'period', 'quarter', 'half', 'inning', 'winning', 'leading', 'status', 'live'],
  history: ['history', 'histor', 'moved', 'movement', 'move', 'trend', 'over time', 'earlier', 'changed', 'chart'],
  contestMarkets: ['markets', 'market types', 'which markets', 'what markets'],
  leagues: ['league', 'leagues', 'sports', 'competitions'],
  venues: ['venue', 'venues', 'partner', 'partners', 'exchange', 'exchanges', 'book', 'books', 'sportsbook'],
  marketTypes: ['market type', 'market types', 'kinds of market', 'markets'],
} as const;

interface Contest {
  id: string;
  league_id: string;
  title: string;
  starts_at: string;
  status: string;
}

interface Position {
  position_hash: string;
  title: string;
  consensus_price?: number | null;
  partner_liquidities?: { partner_id: string; partner_name: string; price: number; available: number }[];
}

/** Words of the question worth searching titles for, longest first. */
function searchWords(question: string): string[] {
  const words = question
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3 && w.length <= 100 && !STOPWORDS.has(w) && !/^\d+$/.test(w));
  return [...new Set(words)].sort((a, b) => b.length - a.length);
}

const fmt = (p: number | null | undefined) => (typeof p === 'number' ? p.toFixed(3) : 'n/a');
const usd = (n: number) => `USD ${Math.round(n).toLocaleString('en-US')}`;

export class RuleBasedPlanner implements AskPlanner {
  readonly name = RULE_BASED;
  readonly creditsPerQuestion = 1;

  answer(question: string, reads: AskReads): Promise<AskAnswer> {
    return this.answerBecause(question, reads, 'no AI provider is configured');
  }

  /** The answer, its first line saying why this planner answered (`why`: no provider, or the provider planner's failure). */
  async answerBecause(question: string, reads: AskReads, why: string): Promise<AskAnswer> {
    const steps: AskStep[] = [];
    const run = async (tool: string, args: Record<string, unknown>): Promise<AskStep> => {
      const step = await reads.call(tool, args);
      steps.push(step);
      return step;
    };
    const q = question.toLowerCase();
    const lines: string[] = [];
    const contest = await this.findContest(question, run);

    if (contest) {
      lines.push(`Contest: ${contest.title} (${contest.id}), ${contest.status}, starts ${contest.starts_at}.`);
      const wantsState = has(q, INTENT.state);
      const wantsHistory = has(q, INTENT.history);
      const wantsMarkets = has(q, ['markets', 'market types']) && !has(q, INTENT.price);
      const wantsPrice = has(q, INTENT.price) || !(wantsState || wantsHistory || wantsMarkets);
      if (wantsPrice) lines.push(...describeLiquidity(await run('get_contest_liquidity', { contest_id: contest.id })));
      if (wantsState) lines.push(...describeState(await run('get_contest_state', { contest_id: contest.id })));
      if (wantsHistory) lines.push(...describeHistory(await run('get_contest_price_history', { contest_id: contest.id })));
      if (wantsMarkets) lines.push(...describeList(await run('list_contest_markets', { contest_id: contest.id }), 'Markets', (m: { name?: string; key?: string }) => `${m.name ?? m.key}`));
    } else if (has(q, INTENT.venues)) {
      lines.push(...describeList(await run('list_partners', {}), 'Venues', (p: { name: string; partner_id: string; orders_allowed: boolean }) => `${p.name} (${p.partner_id})${p.orders_allowed ? '' : ', quotes only'}`));
    } else if (has(q, ['market type', 'market types', 'kinds of market']) || (has(q, ['markets']) && !has(q, ['contest', 'game', 'match']))) {
      lines.push(...describeList(await run('list_markets', {}), 'Market types', (m: { name?: string; key?: string }) => `${m.name ?? m.key}`));
    } else if (has(q, INTENT.leagues) && !has(q, ['contest', 'game', 'match', 'upcoming', 'schedule'])) {
      lines.push(...describeList(await run('list_leagues', { limit: 200 }), 'Leagues', (l: { name: string; id: string }) => `${l.name} (${l.id})`));
    } else {
      const leagues = await run('list_leagues', { limit: 200 });
      const asked = new Set(searchWords(question));
      const named = leagues.ok ? (leagues.data as { id: string; name: string }[]).filter((l) => searchWords(l.name).some((w) => asked.has(w))) : [];
      const args: Record<string, unknown> = { limit: 10 };
      if (named.length > 0) args.league_id = named.map((l) => l.id).join(',');
      lines.push(
        ...describeList(await run('list_contests', args), named.length > 0 ? `Open contests of ${named.map((l) => l.name).join(', ')}` : 'Open contests, soonest first', (c: Contest) => `${c.title} (${c.id}), starts ${c.starts_at}`),
      );
    }

    const header = `Answered by the rule-based planner (${why}): it matched keywords of the question and ran the reads listed in steps.`;
    return { answer: [header, ...lines].join('\n'), planner: RULE_BASED, steps };
  }

  /** The contest the question names by id, or whose title best matches its words; null when none does. */
  private async findContest(question: string, run: (tool: string, args: Record<string, unknown>) => Promise<AskStep>): Promise<Contest | null> {
    // Ids are opaque: a word that looks like one (it has an underscore or a digit) is tried as one,
    // at most three of them, never matched by its prefix.
    const idLike = [...new Set(question.split(/[\s,;?!()"']+/).map((t) => t.replace(/[.:]+$/, '')).filter((t) => t.length >= 3 && t.length <= 200 && /[_\d]/.test(t)))];
    for (const token of idLike.slice(0, 3)) {
      const step = await run('get_contest', { contest_id: token });
      if (step.ok) return step.data as Contest;
    }
    const words = searchWords(question);
    for (const word of words.slice(0, 3)) {
      const step = await run('list_contests', { q: word, limit: 50 });
      const found = step.ok ? (step.data as Contest[]) : [];
      if (found.length === 0) continue;
      const score = (c: Contest) => words.filter((w) => c.title.toLowerCase().includes(w)).length;
      return found.reduce((best, c) => (score(c) > score(best) ? c : best));
    }
    return null;
  }
}

function refused(step: AskStep, what: string): string[] {
  const e = step.error!;
  if (e.code === 'entitlement_required') return [`${what}: not available to this key (its plan lacks ${((e.details?.missing as string[]) ?? []).join(', ')}).`];
  if (e.code === 'not_found') return [`${what}: none held.`];
  return [`${what}: ${e.code} (${e.message}).`];
}

function describeLiquidity(step: AskStep): string[] {
  if (!step.ok) return refused(step, 'Prices');
  const positions = step.data as Position[];
  if (positions.length === 0) return ['Prices: nothing is quoted for this contest yet.'];
  const out = [`Prices (${positions.length} positions; consensus, then the cheapest venue to buy at):`];
  for (const p of positions.slice(0, 12)) {
    const venues = p.partner_liquidities ?? [];
    const best = venues.reduce<(typeof venues)[number] | null>((b, v) => (b === null || v.price < b.price ? v : b), null);
    out.push(`- ${p.title}: consensus ${fmt(p.consensus_price)}${best ? `; best ${fmt(best.price)} at ${best.partner_name} (${usd(best.available)} available)` : ''}`);
  }
  if (positions.length > 12) out.push(`- ... and ${positions.length - 12} more (get_contest_liquidity lists them all).`);
  return out;
}

function describeState(step: AskStep): string[] {
  if (!step.ok) return refused(step, 'Game state');
  const s = (step.data as { state?: Record<string, any>; refreshed_at?: string }).state ?? {};
  const parts = [`status ${s.game_status ?? 'unknown'}`];
  if (s.scores && typeof s.scores.home_score === 'number') parts.push(`score ${s.scores.home_score}-${s.scores.away_score} (home-away)`);
  if (s.period?.label) parts.push(`period ${s.period.label}`);
  if (s.clock?.display) parts.push(`clock ${s.clock.display}`);
  return [`Game state: ${parts.join(', ')}.`];
}

function describeHistory(step: AskStep): string[] {
  if (!step.ok) return refused(step, 'Price history');
  const h = step.data as { resolution: string; points: { t: number; position_hash: string; price: number }[] };
  if (h.points.length === 0) return ['Price history: no points in the last hour.'];
  const series = new Map<string, { first: number; last: number }>();
  for (const p of h.points) {
    const s = series.get(p.position_hash);
    if (!s) series.set(p.position_hash, { first: p.price, last: p.price });
    else s.last = p.price;
  }
  const out = [`Price history (last hour, ${h.resolution} resolution, ${series.size} series):`];
  for (const [hash, s] of [...series].slice(0, 8)) out.push(`- ${hash}: ${fmt(s.first)} → ${fmt(s.last)}`);
  return out;
}

function describeList<T>(step: AskStep, what: string, line: (item: T) => string): string[] {
  if (!step.ok) return refused(step, what);
  const items = step.data as T[];
  if (items.length === 0) return [`${what}: none.`];
  return [`${what}:`, ...items.slice(0, 20).map((i) => `- ${line(i)}`), ...(items.length > 20 ? [`- ... and ${items.length - 20} more.`] : [])];
}
