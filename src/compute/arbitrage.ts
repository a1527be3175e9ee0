/**
 * Cross-venue arbitrage of one contest (spec "Arbitrage"; docs/arbitrage.md): two mutually
 * exclusive positions that together cover every outcome (a group of exactly two: both sides of a
 * moneyline, over and under of one total line, the two sides of one spread line), bought on two
 * different venues for a combined price under 1.0.
 *
 * Which quotes may form one: visible (withheld quotes never do: a venue listing a participant on
 * the side every other venue disagrees with is a mapping error, not a price), fresh, a tradable
 * price with at least USD 1 behind it. And a pair is never formed from two venues that put their
 * participants on the same venue side (each says "home" for the team the other calls away): with
 * only two venues the withholding rule cannot tell who is wrong, but such a pair may be two bets on
 * one outcome, the classic false arb.
 *
 * The selected pair (options[0] of each side) is the cheapest after fees; pairs whose fees are
 * unknown rank after every pair whose fees are known, and among themselves by gross price.
 */
import type { Arbitrage, ArbitrageDepthWalk, ArbitrageOption, ArbitrageSide } from '../domain/arbitrage.js';
import { fnv64Hex } from '../domain/hashes.js';
import { marketSideId, marketVariableId } from '../domain/signals.js';
import { feePacket } from './fees.js';
import { round6 } from './precision.js';
import { isActionable } from './quotes.js';
import type { BookLevel, FeeModel, PositionInput } from './types.js';

/** One side of a two-position group with its per-quote flags (from the contest computation). */
export interface ArbitrageSideInput {
  position: PositionInput;
  withheld: readonly boolean[];
  stale: readonly boolean[];
}

export interface ArbitrageContext {
  contest: Arbitrage['contest'];
  nowIso: string;
  /** detected_at of the arbitrages found last time, by arbitrage_id: kept while they persist. */
  detectedBefore: Readonly<Record<string, string>>;
}

/** A quote able to take part, with what the walk needs. */
interface Candidate {
  option: ArbitrageOption;
  venueSide: string;
  levels: readonly BookLevel[];
  fee: FeeModel;
}

/** The arbitrage of a two-position group, or null when no cross-venue pair prices under 1.0. */
export function groupArbitrage(a: ArbitrageSideInput, b: ArbitrageSideInput, ctx: ArbitrageContext): Arbitrage | null {
  const ca = candidates(a);
  const cb = candidates(b);
  if (ca.length === 0 || cb.length === 0) return null;
  const crossed = a.position.side_key !== b.position.side_key;

  let best: { i: number; j: number; known: boolean; cost: number; gross: number } | null = null;
  for (let i = 0; i < ca.length; i++) {
    const x = ca[i]!;
    for (let j = 0; j < cb.length; j++) {
      const y = cb[j]!;
      if (x.option.partner_id === y.option.partner_id) continue;
      // Two venues each listing their participant on one and the same venue side: one of them has the teams swapped.
      if (crossed && x.venueSide === y.venueSide) continue;
      const gross = x.option.price + y.option.price;
      if (!(gross < 1)) continue;
      const known = x.option.after_fee_price !== null && y.option.after_fee_price !== null;
      const cost = known ? x.option.after_fee_price! + y.option.after_fee_price! : gross;
      if (best === null || better(known, cost, gross, best)) best = { i, j, known, cost, gross };
    }
  }
  if (best === null) return null;

  const x = ca[best.i]!;
  const y = cb[best.j]!;
  const combined = round6(best.gross);
  const id = arbitrageId(a.position.position_hash, x.option.partner_id, b.position.position_hash, y.option.partner_id);
  const contracts = Math.min(x.option.available / x.option.price, y.option.available / y.option.price);
  return {
    arbitrage_id: id,
    contest: ctx.contest,
    market: { id: a.position.market_id, variable_id: marketVariableId(a.position) },
    combined_price: combined,
    roi_pct: roiPct(best.gross),
    after_fee_roi_pct: best.known ? roiPct(best.cost) : null,
    profitable_after_fees: best.known ? best.cost < 1 : null,
    max_investment: round6(contracts * best.gross),
    sides: [side(a.position, ca, best.i), side(b.position, cb, best.j)],
    detected_at: ctx.detectedBefore[id] ?? ctx.nowIso,
    depth_walk: walkBooks(x, y),
  };
}

/** Every arbitrage of a contest: one per two-position group that has one, in group order. */
export function contestArbitrages(groups: readonly (readonly ArbitrageSideInput[])[], ctx: ArbitrageContext): Arbitrage[] {
  const out: Arbitrage[] = [];
  for (const g of groups) {
    if (g.length !== 2) continue;
    const arb = groupArbitrage(g[0]!, g[1]!, ctx);
    if (arb !== null) out.push(arb);
  }
  return out;
}

function better(known: boolean, cost: number, gross: number, best: { known: boolean; cost: number; gross: number }): boolean {
  if (known !== best.known) return known;
  if (cost !== best.cost) return cost < best.cost;
  return gross < best.gross;
}

function candidates(s: ArbitrageSideInput): Candidate[] {
  const out: Candidate[] = [];
  const quotes = s.position.quotes;
  for (let j = 0; j < quotes.length; j++) {
    const q = quotes[j]!;
    if (s.withheld[j] || !isActionable(q.price, q.available, s.stale[j]!)) continue;
    const packet = feePacket(q.price, q.fee);
    out.push({
      option: {
        partner_id: q.partner_id,
        partner_name: q.partner_name,
        price: q.price,
        after_fee_price: packet === null ? null : packet.taker_price,
        available: q.available,
        title: s.position.title,
        position_hash: s.position.position_hash,
        source: q.source,
      },
      venueSide: q.venue_side_key,
      levels: q.levels,
      fee: q.fee,
    });
  }
  return out;
}

/** The side with the selected venue first, then the others cheapest after fees (unknown fees last), then by price. */
function side(p: PositionInput, cs: readonly Candidate[], selected: number): ArbitrageSide {
  const rest = cs.filter((_, k) => k !== selected).map((c) => c.option);
  rest.sort((u, v) => {
    if ((u.after_fee_price === null) !== (v.after_fee_price === null)) return u.after_fee_price === null ? 1 : -1;
    if (u.after_fee_price !== null && v.after_fee_price !== null && u.after_fee_price !== v.after_fee_price) return u.after_fee_price - v.after_fee_price;
    if (u.price !== v.price) return u.price - v.price;
    return u.partner_id < v.partner_id ? -1 : u.partner_id > v.partner_id ? 1 : 0;
  });
  return { market_side_id: marketSideId(p), title: p.title, options: [cs[selected]!.option, ...rest] };
}

const roiPct = (cost: number): number => round6(((1 - cost) / cost) * 100);

/**
 * Walks both books best level first, buying equal contracts on each side while the next contract
 * pair costs under 1.0 after fees: every such pair adds profit, and the first that does not ends
 * the walk (levels only get dearer), so the stake reached is the largest that stays profitable and
 * also the one that earns most.
 */
export function walkBooks(x: Pick<Candidate, 'levels' | 'fee' | 'option'>, y: Pick<Candidate, 'levels' | 'fee' | 'option'>): ArbitrageDepthWalk | null {
  const la = bookOf(x);
  const lb = bookOf(y);
  if (la.length === 0 || lb.length === 0) return null;
  const feesKnown = x.fee.kind !== 'unknown' && y.fee.kind !== 'unknown';
  let i = 0;
  let j = 0;
  // Contracts left at the current level of each book.
  let leftA = la[0]!.available / la[0]!.price;
  let leftB = lb[0]!.available / lb[0]!.price;
  let contracts = 0;
  let stake = 0;
  while (i < la.length && j < lb.length) {
    const pa = allIn(la[i]!.price, x.fee);
    const pb = allIn(lb[j]!.price, y.fee);
    if (!(pa + pb < 1)) break;
    const n = Math.min(leftA, leftB);
    contracts += n;
    stake += n * (pa + pb);
    leftA -= n;
    leftB -= n;
    if (leftA <= 1e-12 && ++i < la.length) leftA = la[i]!.available / la[i]!.price;
    if (leftB <= 1e-12 && ++j < lb.length) leftB = lb[j]!.available / lb[j]!.price;
  }
  if (contracts === 0) return { contracts: 0, deployable_stake: 0, profit_usd: 0, after_fee_edge_pct: 0, fees_known: feesKnown };
  const profit = contracts - stake;
  return {
    contracts: round6(contracts),
    deployable_stake: round6(stake),
    profit_usd: round6(profit),
    after_fee_edge_pct: round6((profit / stake) * 100),
    fees_known: feesKnown,
  };
}

/** The venue's levels with USD behind them, best first; a real book that shows only its top reads as one level. */
function bookOf(c: Pick<Candidate, 'levels' | 'option'>): BookLevel[] {
  const levels = c.levels.filter((l) => l.available > 0 && l.price > 0 && l.price < 1);
  if (levels.length === 0 && c.option.available > 0) return [{ price: c.option.price, available: c.option.available }];
  return levels.sort((u, v) => u.price - v.price);
}

/** What one contract costs at `price` after the taker fee (no fee where the fee model is unknown). */
function allIn(price: number, fee: FeeModel): number {
  const p = feePacket(price, fee);
  return p === null ? price : p.taker_price;
}

/** arbitrage_id: the hash of the two (position, venue) legs, in position order (stable across repricings, distinct per venue pair). */
export function arbitrageId(positionA: string, partnerA: string, positionB: string, partnerB: string): string {
  // The legs in position order: the same two legs name the same arbitrage whichever side came first.
  const text = positionA <= positionB ? `${positionA}\u0000${partnerA}\u0000${positionB}\u0000${partnerB}` : `${positionB}\u0000${partnerB}\u0000${positionA}\u0000${partnerA}`;
  return `arb_${fnv64Hex(text)}`;
}
