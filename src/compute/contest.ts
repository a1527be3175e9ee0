/**
 * One contest's liquidity computation: positions with consensus, depth, and the ticks a change
 * emits. Runs on every liquidity change, so it is a handful of linear passes over the quotes with
 * small per-position arrays and no sort beyond a few venues or ladder lines.
 *
 * Each pass is written per position, per group or per ladder side (the exported helpers below), so
 * the incremental run (contest-run.ts) recomputes just the positions, groups and ladder sides a
 * change touches with exactly the same code as the full computation here.
 */
import { contestArbitrages, type ArbitrageSideInput } from './arbitrage.js';
import { groupConsensus, type ConsensusQuote, type MemberConsensus } from './consensus.js';
import { positionDepth } from './depth.js';
import { feePacket } from './fees.js';
import { fitLadder, type LadderFit, type LadderPoint } from './ladder.js';
import { americanOdds } from './odds.js';
import { isOutlier, realBookMedian } from './outliers.js';
import { round6 } from './precision.js';
import { DEFAULT_MAX_QUOTE_AGE_MS, MIN_QUOTE_USD, isActionable, isStaleAt, isTradablePrice, staleCutoffs, type StaleCutoffs } from './quotes.js';
import { buyId, removalTick, shouldSendTick } from './ticks.js';
import type {
  ContestInput,
  ContestResult,
  ContestSnapshot,
  DistributionPoint,
  Edge,
  PartnerLiquidity,
  PositionDepth,
  PositionInput,
  PositionLiquidity,
  TickEntry,
  VenueQuote,
} from './types.js';
import { withheldMask } from './withholding.js';
import type { PositionDefinition } from '../domain/catalog.js';

/** Pass 1 of one position, one slot per quote: withheld, stale, outlier, and the median the
 *  outliers are judged against. `stale` is the quote's `is_stale` everywhere it appears
 *  (partner_liquidities, ticks, changed entries). */
export interface PositionFlags {
  withheld: boolean[];
  stale: boolean[];
  outlier: boolean[];
  median: number | null;
}

/** Per-position intermediate state of the full computation. */
interface PositionWork extends PositionFlags {
  consensus: number | null;
  consensusWeight: number;
  line: number | null;
  distribution: DistributionPoint[] | null;
}

/** A position's quote outputs that do not depend on the consensus (pass 4 without the edges). */
export interface PositionQuotes {
  /** partner_liquidities: the visible quotes. */
  liquidities: PartnerLiquidity[];
  /** The tick entry of each visible quote, in order (the snapshot keeps them). */
  entries: TickEntry[];
  paperBettable: boolean;
}

/**
 * Computes a contest's liquidity feed from its positions and venue quotes.
 *
 * `prev` is the snapshot this function returned last time for the same contest; without it every
 * visible quote is new and emits a tick. Throws when `prev` belongs to another contest (a wiring
 * bug, not a data condition).
 */
export function computeContest(input: ContestInput, prev?: ContestSnapshot): ContestResult {
  if (prev !== undefined && prev.contest_id !== input.contest_id) {
    throw new Error(`snapshot of contest ${prev.contest_id} passed for contest ${input.contest_id}`);
  }
  const nowMs = input.now_ms;
  const nowIso = new Date(nowMs).toISOString();
  const cutoffs = contestCutoffs(input);
  const positions = input.positions;
  const n = positions.length;

  // Pass 1: per-quote flags (withheld, stale, outlier) and the groups.
  const work = new Array<PositionWork>(n);
  const groups = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const p = positions[i];
    work[i] = { ...positionFlags(p.quotes, cutoffs), consensus: null, consensusWeight: 0, line: null, distribution: null };
    let group = groups.get(p.group_key);
    if (group === undefined) groups.set(p.group_key, (group = []));
    group.push(i);
  }

  // Pass 2: consensus per mutually exclusive group.
  for (const members of groups.values()) {
    const result = membersConsensus(members.map((i) => [positions[i], work[i]]));
    for (let m = 0; m < members.length; m++) {
      const w = work[members[m]];
      w.consensus = result[m].price;
      w.consensusWeight = result[m].weight;
    }
  }

  // Pass 3: ladder model per ladder side (same ladder, side and participant across lines).
  const series = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const key = seriesKey(positions[i]);
    if (key === null) continue;
    let s = series.get(key);
    if (s === undefined) series.set(key, (s = []));
    s.push(i);
  }
  for (const members of series.values()) {
    const fit = seriesFit(members.map((i) => [positions[i].variable, work[i].consensus, work[i].consensusWeight]));
    // Every position of the ladder side shares one (read-only) curve.
    for (const i of members) {
      work[i].line = fit.line;
      work[i].distribution = fit.distribution;
    }
  }

  // Pass 4: outputs, depth and ticks.
  const out = new Array<PositionLiquidity>(n);
  const depth = new Array<PositionDepth>(n);
  const ticks: TickEntry[] = [];
  const snapshotQuotes: Record<string, TickEntry> = {};
  const prevQuotes = prev?.quotes;
  for (let i = 0; i < n; i++) {
    const p = positions[i];
    const w = work[i];
    const consensus = w.consensus === null ? null : round6(w.consensus);
    const q = positionQuotes(p, w);
    for (const tick of q.entries) {
      snapshotQuotes[tick.liquidity_hash] = tick;
      const before = prevQuotes !== undefined && Object.hasOwn(prevQuotes, tick.liquidity_hash) ? prevQuotes[tick.liquidity_hash] : undefined;
      if (shouldSendTick(before, tick)) ticks.push(tick);
    }
    out[i] = positionLiquidity(p, consensus, w.line, w.distribution, positionEdges(p, w, consensus), q);
    depth[i] = positionDepth(p.position_hash, p.quotes, w.withheld, nowIso);
  }

  // Quotes gone since the last run (or now withheld) are sent once with nothing available.
  if (prevQuotes !== undefined) {
    for (const hash in prevQuotes) {
      if (!Object.hasOwn(snapshotQuotes, hash)) ticks.push(removalTick(prevQuotes[hash], nowMs, nowIso));
    }
  }

  // Pass 5: cross-venue arbitrage per group of two mutually exclusive positions.
  const pairs: ArbitrageSideInput[][] = [];
  for (const members of groups.values()) {
    if (members.length !== 2) continue;
    pairs.push(members.map((i) => arbitrageSide(positions[i], work[i])));
  }
  const arbitrages = contestArbitrages(pairs, {
    contest: arbitrageContest(input),
    nowIso,
    detectedBefore: prev?.arbs ?? {},
  });
  const arbs: Record<string, string> = {};
  for (const a of arbitrages) arbs[a.arbitrage_id] = a.detected_at;

  return {
    contest_id: input.contest_id,
    positions: out,
    depth,
    ticks,
    arbitrages,
    snapshot: { contest_id: input.contest_id, quotes: snapshotQuotes, arbs },
  };
}

/**
 * A position of the input: its catalog fields and its quotes, always built as this one literal.
 * Objects made by spreading a definition (`{ ...def, quotes }`) get a new hidden class each time in
 * V8, so every read of a field of them is a slow lookup, and a contest's computation reads them
 * thousands of times.
 */
export function positionInput(d: PositionDefinition, quotes: readonly VenueQuote[]): PositionInput {
  return {
    position_hash: d.position_hash,
    contest_id: d.contest_id,
    title: d.title,
    market_id: d.market_id,
    market_key: d.market_key,
    side_key: d.side_key,
    variable: d.variable,
    participant_id: d.participant_id,
    participant_name: d.participant_name,
    participant_image_url: d.participant_image_url,
    timeframe: d.timeframe,
    group_key: d.group_key,
    ladder_key: d.ladder_key,
    quotes,
  };
}

/** The stale cutoffs of a computation (its clock and age policy). */
export function contestCutoffs(input: ContestInput): StaleCutoffs {
  return staleCutoffs(input.now_ms, input.max_quote_age_ms ?? DEFAULT_MAX_QUOTE_AGE_MS);
}

/** The contest as an arbitrage names it. */
export function arbitrageContest(input: ContestInput): { id: string; label: string | null; league_id: string | null } {
  return { id: input.contest_id, label: input.label ?? null, league_id: input.league_id ?? null };
}

/** Pass 1 of one position. */
export function positionFlags(quotes: readonly VenueQuote[], cutoffs: StaleCutoffs): PositionFlags {
  const withheld = withheldMask(quotes);
  const stale = new Array<boolean>(quotes.length);
  const outOfMedian = new Array<boolean>(quotes.length);
  for (let j = 0; j < quotes.length; j++) {
    stale[j] = isStaleAt(quotes[j], cutoffs);
    outOfMedian[j] = withheld[j] || stale[j];
  }
  const median = realBookMedian(quotes, outOfMedian);
  const outlier = new Array<boolean>(quotes.length);
  for (let j = 0; j < quotes.length; j++) outlier[j] = !withheld[j] && isOutlier(quotes[j].price, median);
  return { withheld, stale, outlier, median };
}

/** Pass 2 of one mutually exclusive group: the consensus of each member, in order. */
export function membersConsensus(members: readonly (readonly [PositionInput, PositionFlags])[]): MemberConsensus[] {
  const usable = new Array<ConsensusQuote[]>(members.length);
  for (let m = 0; m < members.length; m++) usable[m] = consensusQuotes(members[m][0], members[m][1]);
  return groupConsensus(usable);
}

/** The ladder side a position belongs to (pass 3), or null for a market without lines. */
export function seriesKey(p: PositionInput): string | null {
  return p.ladder_key === null ? null : p.ladder_key + '\u0000' + p.side_key + '\u0000' + p.participant_id;
}

/** Pass 3 of one ladder side: its members' [line, consensus, weight], in position order. */
export function seriesFit(members: readonly (readonly [number, number | null, number])[]): LadderFit {
  const points: LadderPoint[] = [];
  for (const [variable, price, weight] of members) if (price !== null) points.push({ variable, price, weight });
  return fitLadder(points);
}

/** Pass 4 of one position, the consensus aside: its visible quotes as partner_liquidities and tick entries. */
export function positionQuotes(p: PositionInput, flags: PositionFlags): PositionQuotes {
  const quotes = p.quotes;
  const liquidities: PartnerLiquidity[] = [];
  const entries: TickEntry[] = [];
  let paperBettable = false;
  for (let j = 0; j < quotes.length; j++) {
    if (flags.withheld[j]) continue;
    const q = quotes[j];
    const oddsText = americanOdds(q.price);
    const fees = feePacket(q.price, q.fee);
    const stale = flags.stale[j];
    liquidities.push({
      partner_id: q.partner_id,
      partner_name: q.partner_name,
      price: q.price,
      american_odds: oddsText,
      available: q.available,
      liquidity_hash: q.liquidity_hash,
      fee_packet: fees,
      as_of: q.as_of,
      is_stale: stale,
    });
    // Matches what a practice order accepts: a tradable price with at least USD 1 behind it.
    if (!paperBettable && isTradablePrice(q.price) && q.available >= MIN_QUOTE_USD) paperBettable = true;
    entries.push({
      partner_id: q.partner_id,
      partner_name: q.partner_name,
      price: q.price,
      american_odds: oddsText,
      available: q.available,
      liquidity_hash: q.liquidity_hash,
      fee_packet: fees,
      as_of: q.as_of,
      is_stale: stale,
      position_hash: p.position_hash,
      actionable: isActionable(q.price, q.available, stale),
      buy_id: buyId(q.liquidity_hash, q.ts_event),
      source: q.source,
      outlier: flags.outlier[j],
      median: flags.median,
    });
  }
  return { liquidities, entries, paperBettable };
}

/** The edges of a position's visible quotes against its (rounded) consensus; none without one. */
export function positionEdges(p: PositionInput, flags: PositionFlags, consensus: number | null): Edge[] {
  const edges: Edge[] = [];
  if (consensus === null) return edges;
  const quotes = p.quotes;
  for (let j = 0; j < quotes.length; j++) {
    if (!flags.withheld[j]) edges.push({ partner_id: quotes[j].partner_id, edge: round6(consensus - quotes[j].price) });
  }
  return edges;
}

/** The catalog fields a Position carries, in its order. */
export function positionHead(p: PositionHeadFields): Pick<PositionLiquidity, keyof PositionHeadFields> {
  return {
    position_hash: p.position_hash,
    contest_id: p.contest_id,
    title: p.title,
    market_key: p.market_key,
    side_key: p.side_key,
    variable: p.variable,
    participant_id: p.participant_id,
    participant_name: p.participant_name,
    participant_image_url: p.participant_image_url,
  };
}

type PositionHeadFields = Pick<PositionDefinition, 'position_hash' | 'contest_id' | 'title' | 'market_key' | 'side_key' | 'variable' | 'participant_id' | 'participant_name' | 'participant_image_url'>;

/** One element of the contest liquidity array. */
export function positionLiquidity(
  p: PositionInput,
  consensus: number | null,
  line: number | null,
  distribution: DistributionPoint[] | null,
  edges: Edge[],
  q: PositionQuotes,
): PositionLiquidity {
  return {
    ...positionHead(p),
    consensus_price: consensus,
    consensus_line: line,
    distribution_prices: distribution,
    edges,
    paper_bettable: q.paperBettable,
    partner_liquidities: q.liquidities,
  };
}

/** A position as one side of a two-position group's arbitrage. */
export function arbitrageSide(position: PositionInput, flags: PositionFlags): ArbitrageSideInput {
  return { position, withheld: flags.withheld, stale: flags.stale };
}

/**
 * The quotes of a position the consensus may use: visible, not an outlier, a tradable price, and for
 * a real book at least USD 1 behind it (an emptied book's price is no longer on offer). A quote
 * without a real book (a sportsbook line) has no depth to weight by and counts at the minimum weight.
 */
function consensusQuotes(p: PositionInput, w: PositionFlags): ConsensusQuote[] {
  const quotes = p.quotes;
  const usable: ConsensusQuote[] = [];
  for (let j = 0; j < quotes.length; j++) {
    const q = quotes[j];
    if (w.withheld[j] || w.outlier[j] || !isTradablePrice(q.price)) continue;
    if (q.real_book && q.available < MIN_QUOTE_USD) continue;
    usable.push({ partner_id: q.partner_id, price: q.price, available: q.real_book ? q.available : 0, stale: w.stale[j] });
  }
  return usable;
}
