/**
 * How a simulated venue prices a listing: a lagged view of the model's fair value with the venue's
 * own vig, bias (one opinion per market: what it adds to one side it takes off the other), grid and
 * depth; outlier and arbitrage episodes override the ask while they last. Books are versioned by
 * strictly increasing ts_event per listing.
 */
import { americanToProb, probToAmerican, roundAskOnGrid, round6 } from '../domain/prices.js';
import type { PriceLevel } from '../venues/types.js';
import type { MarketCore } from './core.js';
import { clamp, fairOf } from './game.js';
import type { Listing, PosRt } from './runtime.js';
import { shiftNow } from './situations.js';

/** Re-derives a listing's book from the (lagged) truth. */
export function reprice(core: MarketCore, l: Listing, now: number, initial = false): void {
  const d = l.v.pers.dynamics;
  const fair = fairNow(l.pr, now);
  // A venue's opinion is one number per market: what it adds to one side of a two-way group
  // it takes off the other, so its own two sides always sum to 1 + vig.
  const g = l.pr.pos.group_key;
  let bias = l.v.groupBias.get(g);
  if (bias === undefined) l.v.groupBias.set(g, (bias = core.rng.normal() * d.bias_sd));
  if (!initial) {
    // In-play every venue follows the game closely (or suspends): a quarter of its lag.
    const lag = l.pr.c.phase === 'live' ? d.lag_ms / 4 : d.lag_ms;
    const a = lag > 0 ? 1 - Math.exp(-(now - l.lagTs) / lag) : 1;
    l.lag += (fair - l.lag) * a;
    bias = bias * 0.97 + core.rng.normal() * d.bias_sd * 0.25;
    l.v.groupBias.set(g, bias);
  }
  l.lagTs = now;
  const sign = l.pr.complement && l.pr.complement.i < l.pr.i ? -1 : 1;
  let ask = l.pr.meta.kind === 'winner' ? l.lag * (1 + d.vig) + bias * 0.5 : l.lag + d.vig / 2 + sign * bias;
  if (now < l.outlierUntil) ask = l.lag + l.outlierOff;
  if (now < l.arbUntil) ask = l.lag + l.arbOff;
  ask = clamp(ask, 0.01, 0.99);
  l.levels = buildBook(core, l, ask);
  stamp(core, l, now - d.net_delay_ms);
}

/** The truth a venue follows: the model's fair value, moved by any price move still fading out. */
export function fairNow(pr: PosRt, now: number): number {
  const shift = shiftNow(pr, now);
  return shift === 0 ? fairOf(pr) : clamp(fairOf(pr) + shift, 0.01, 0.99);
}

/**
 * Versions a listing's book: ts_event strictly increases per listing (a quote version is keyed
 * by liquidity_hash and ts_event downstream), moving model time on by a millisecond when a
 * burst changes one listing several times within the same millisecond.
 */
export function stamp(core: MarketCore, l: Listing, t: number): void {
  const ts = t > l.ts_event ? t : l.ts_event + 1;
  l.ts_event = ts;
  if (ts > core.lastNow) core.lastNow = ts;
}

export function quantize(l: Listing, p: number): number {
  switch (l.v.pers.wire) {
    case 'exchange':
      return roundAskOnGrid('cents', p * 100, 1) / 100;
    case 'book01':
      return roundAskOnGrid('probability', p, 0.01);
    case 'sportsbook':
      return round6(americanToProb(roundAskOnGrid('american', probToAmerican(clamp(p, 0.001, 0.999)), 1)));
    case 'p2p':
      return roundAskOnGrid('probability', p, 0.001);
    default:
      return Math.round(p * 1000) / 1000;
  }
}

export function buildBook(core: MarketCore, l: Listing, ask: number): PriceLevel[] {
  const d = l.v.pers.dynamics;
  const out: PriceLevel[] = [];
  const [lo, hi] = d.level_usd;
  for (let k = 0; k < d.levels; k++) {
    let p = quantize(l, ask + k * d.level_step);
    const prev = out.length > 0 ? out[out.length - 1]!.price : 0;
    if (p <= prev) p = quantize(l, prev + 0.0011);
    if (p > 0.99 || p <= 0) break;
    const usd = core.rng.float(lo, hi) * (1 + 0.5 * k);
    let available: number;
    switch (l.v.pers.wire) {
      case 'exchange':
        available = round6(Math.max(1, Math.round(usd / p)) * p);
        break;
      case 'book01':
        available = round6((Math.round((usd / p) * 100) / 100) * p);
        break;
      case 'sportsbook':
        available = Math.max(50, Math.round(usd / 50) * 50);
        break;
      case 'p2p':
        available = Math.round(usd * 100) / 100;
        break;
      default:
        available = Math.round(usd);
    }
    out.push({ price: p, available });
  }
  return out;
}

/** Best live price across real venues with at least USD 1 offered (practice fills). */
export function bestLivePrice(core: MarketCore, hash: string): number | null {
  const pr = core.byHash.get(hash);
  if (!pr || pr.c.settled) return null;
  let best: number | null = null;
  for (const l of pr.listings) {
    if (l.closed || l.v.pers.partner.internal_book) continue;
    const top = l.levels[0];
    if (!top || top.available < 1) continue;
    if (best === null || top.price < best) best = top.price;
  }
  return best;
}
