/**
 * One contest's liquidity computation: positions with consensus, depth, and the ticks a change
 * emits. Runs on every liquidity change, so it is a handful of linear passes over the quotes with
 * small per-position arrays and no sort beyond a few venues or ladder lines.
 */
import { contestArbitrages, type ArbitrageSideInput } from './arbitrage.js';
import { groupConsensus, type ConsensusQuote } from './consensus.js';
import { positionDepth } from './depth.js';
import { feePacket } from './fees.js';
import { fitLadder, type LadderPoint } from './ladder.js';
import { americanOdds } from './odds.js';
import { isOutlier, realBookMedian } from './outliers.js';
import { round6 } from './precision.js';
import { DEFAULT_MAX_QUOTE_AGE_MS, MIN_QUOTE_USD, isActionable, isStaleAt, isTradablePrice, staleCutoffs } from './quotes.js';
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
} from './types.js';
import { withheldMask } from './withholding.js';

/** Per-position intermediate state, one slot per quote where it is an array. `stale` is the
 *  quote's `is_stale` everywhere it appears (partner_liquidities, ticks, changed entries). */
interface PositionWork {
  withheld: boolean[];
  stale: boolean[];
  outlier: boolean[];
  median: number | null;
  consensus: number | null;
  consensusWeight: number;
  line: number | null;
  distribution: DistributionPoint[] | null;
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
  const cutoffs = staleCutoffs(nowMs, input.max_quote_age_ms ?? DEFAULT_MAX_QUOTE_AGE_MS);
  const positions = input.positions;
  const n = positions.length;

  // Pass 1: per-quote flags (withheld, stale, outlier) and the groups.
  const work = new Array<PositionWork>(n);
  const groups = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const p = positions[i];
    const quotes = p.quotes;
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
    work[i] = { withheld, stale, outlier, median, consensus: null, consensusWeight: 0, line: null, distribution: null };
    let group = groups.get(p.group_key);
    if (group === undefined) groups.set(p.group_key, (group = []));
    group.push(i);
  }

  // Pass 2: consensus per mutually exclusive group.
  for (const members of groups.values()) {
    const usable = new Array<ConsensusQuote[]>(members.length);
    for (let m = 0; m < members.length; m++) usable[m] = consensusQuotes(positions[members[m]], work[members[m]]);
    const result = groupConsensus(usable);
    for (let m = 0; m < members.length; m++) {
      const w = work[members[m]];
      w.consensus = result[m].price;
      w.consensusWeight = result[m].weight;
    }
  }

  // Pass 3: ladder model per ladder side (same ladder, side and participant across lines).
  const series = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const p = positions[i];
    if (p.ladder_key === null) continue;
    const key = p.ladder_key + '\u0000' + p.side_key + '\u0000' + p.participant_id;
    let s = series.get(key);
    if (s === undefined) series.set(key, (s = []));
    s.push(i);
  }
  for (const members of series.values()) {
    const points: LadderPoint[] = [];
    for (const i of members) {
      const w = work[i];
      if (w.consensus !== null) points.push({ variable: positions[i].variable, price: w.consensus, weight: w.consensusWeight });
    }
    const fit = fitLadder(points);
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
    const quotes = p.quotes;
    const consensus = w.consensus === null ? null : round6(w.consensus);
    const liquidities: PartnerLiquidity[] = [];
    const edges: Edge[] = [];
    let paperBettable = false;
    for (let j = 0; j < quotes.length; j++) {
      if (w.withheld[j]) continue;
      const q = quotes[j];
      const oddsText = americanOdds(q.price);
      const fees = feePacket(q.price, q.fee);
      const stale = w.stale[j];
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
      if (consensus !== null) edges.push({ partner_id: q.partner_id, edge: round6(consensus - q.price) });
      // Matches what a practice order accepts: a tradable price with at least USD 1 behind it.
      if (!paperBettable && isTradablePrice(q.price) && q.available >= MIN_QUOTE_USD) paperBettable = true;

      const tick: TickEntry = {
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
        outlier: w.outlier[j],
        median: w.median,
      };
      snapshotQuotes[q.liquidity_hash] = tick;
      const before = prevQuotes !== undefined && Object.hasOwn(prevQuotes, q.liquidity_hash) ? prevQuotes[q.liquidity_hash] : undefined;
      if (shouldSendTick(before, tick)) ticks.push(tick);
    }
    out[i] = {
      position_hash: p.position_hash,
      contest_id: p.contest_id,
      title: p.title,
      market_key: p.market_key,
      side_key: p.side_key,
      variable: p.variable,
      participant_id: p.participant_id,
      participant_name: p.participant_name,
      participant_image_url: p.participant_image_url,
      consensus_price: consensus,
      consensus_line: w.line,
      distribution_prices: w.distribution,
      edges,
      paper_bettable: paperBettable,
      partner_liquidities: liquidities,
    };
    depth[i] = positionDepth(p.position_hash, quotes, w.withheld, nowIso);
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
    pairs.push(members.map((i) => ({ position: positions[i], withheld: work[i].withheld, stale: work[i].stale })));
  }
  const arbitrages = contestArbitrages(pairs, {
    contest: { id: input.contest_id, label: input.label ?? null, league_id: input.league_id ?? null },
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
 * The quotes of a position the consensus may use: visible, not an outlier, a tradable price, and for
 * a real book at least USD 1 behind it (an emptied book's price is no longer on offer). A quote
 * without a real book (a sportsbook line) has no depth to weight by and counts at the minimum weight.
 */
function consensusQuotes(p: PositionInput, w: PositionWork): ConsensusQuote[] {
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
