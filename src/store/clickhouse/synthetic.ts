/**
 * Deterministic synthetic history for `flow history backfill` and the benchmarks: per position a
 * latent random walk (the consensus), per venue a mean-reverting offset around it (the venue's
 * quote), quote changes as ticks, consensus changes as price points, and a trickle of trade prints
 * on the venues that publish trades. One seed and one set of arguments always give the same rows:
 * every series draws from its own stream, derived from the seed and the series' ids.
 */
import { positionHash } from '../../domain/hashes.js';
import { hashSeed, mulberry32 } from '../../domain/random.js';
import type { TradePrint } from '../../domain/stream.js';
import { normalizeVenueTrade } from '../../domain/trades.js';
import type { PricePointRow, TickRow } from './writer.js';

export interface SyntheticPosition {
  position_hash: string;
  contest_id: string;
  market_id: string;
}

export interface SyntheticVenue {
  partner_id: string;
  name: string;
  publishes_trades: boolean;
}

export interface SyntheticOptions {
  /** Inclusive start and exclusive end, unix ms. */
  from: number;
  to: number;
  intervalMs: number;
  seed: number;
  positions: SyntheticPosition[];
  venues: SyntheticVenue[];
  /** Chance per step that a venue reprices a position (default 0.5). */
  repriceProbability?: number;
  /** Chance per step that a trade prints on a publishing venue for a position (default 0.01). */
  tradeProbability?: number;
}

export interface SyntheticSink {
  tick(row: TickRow): void;
  point(row: PricePointRow): void;
  trade(print: TradePrint): void;
}

function gaussian(next: () => number): number {
  const u = Math.max(next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const LOGIT_SD = 1.2;
const round = (v: number, decimals: number) => Math.round(v * 10 ** decimals) / 10 ** decimals;

interface PositionState {
  pos: SyntheticPosition;
  rng: () => number;
  logit: number;
  consensus: number;
  venues: VenueState[];
}

interface VenueState {
  venue: SyntheticVenue;
  rng: () => number;
  offset: number;
  price: number;
  available: number;
  liquidity_hash: string;
  venue_market_id: string;
  trades: number;
}

/** Positions when the catalog has none: contests of up to 20 positions each. */
export function syntheticPositions(count: number, perContest = 20): SyntheticPosition[] {
  const out: SyntheticPosition[] = [];
  for (let i = 0; i < count; i++) {
    const contest_id = `syn-ct-${Math.floor(i / perContest) + 1}`;
    const key = { contest_id, market_id: 'mk-syn', side_key: 'yes', variable: 0, participant_id: `syn-p${(i % perContest) + 1}`, timeframe: 'ft' };
    out.push({ position_hash: positionHash(key), contest_id, market_id: key.market_id });
  }
  return out;
}

/** Venues when the catalog has none: four, every other one publishing trades. */
export function syntheticVenues(): SyntheticVenue[] {
  return ['alpha', 'beta', 'gamma', 'delta'].map((n, i) => ({
    partner_id: `syn-${n}`,
    name: `Synthetic ${n[0]!.toUpperCase()}${n.slice(1)}`,
    publishes_trades: i % 2 === 0,
  }));
}

export class SyntheticHistory {
  readonly steps: number;
  private readonly state: PositionState[];
  private readonly reprice: number;
  private readonly tradeP: number;
  private readonly decay: number;
  private readonly shock: number;

  constructor(private readonly o: SyntheticOptions) {
    if (!(o.intervalMs >= 1)) throw new RangeError('intervalMs must be at least 1');
    if (!(o.to > o.from)) throw new RangeError('to must be after from');
    this.steps = Math.ceil((o.to - o.from) / o.intervalMs);
    this.reprice = o.repriceProbability ?? 0.5;
    this.tradeP = o.tradeProbability ?? 0.01;
    // Stationary spread of the logit 1.2 (prices mostly 0.1-0.9), mean reversion over ~6 hours.
    this.decay = Math.exp(-o.intervalMs / (6 * 3_600_000));
    this.shock = LOGIT_SD * Math.sqrt(1 - this.decay * this.decay);
    this.state = o.positions.map((pos) => {
      const rng = mulberry32(hashSeed(o.seed, `pos|${pos.position_hash}`));
      const logit = gaussian(rng) * LOGIT_SD;
      return {
        pos,
        rng,
        logit,
        consensus: round(sigmoid(logit), 4),
        venues: o.venues.map((venue, vi) => {
          const vr = mulberry32(hashSeed(o.seed, `venue|${pos.position_hash}|${venue.partner_id}`));
          const offset = gaussian(vr) * 0.05;
          return {
            venue,
            rng: vr,
            offset,
            price: round(sigmoid(logit + offset), 3),
            available: round(50 + vr() * 5000, 2),
            liquidity_hash: `${venue.partner_id}:syn:${pos.position_hash}`,
            venue_market_id: `${venue.partner_id}-m-${vi}-${hashSeed(0, pos.position_hash).toString(36)}`,
            trades: 0,
          };
        }),
      };
    });
  }

  /** Expected rows per table over the whole range (for progress and ETA). */
  estimate(): { ticks: number; points: number; trades: number } {
    const p = this.o.positions.length;
    const publishing = this.o.venues.filter((v) => v.publishes_trades).length;
    return {
      ticks: Math.round(this.steps * p * this.o.venues.length * this.reprice * 0.97),
      points: Math.round(this.steps * p * 0.9),
      trades: Math.round(this.steps * p * publishing * this.tradeP),
    };
  }

  /** Emits the rows of step `i` (call with i = 0, 1, 2, ... in order); returns how many. */
  step(i: number, sink: SyntheticSink): number {
    const t = this.o.from + i * this.o.intervalMs;
    let rows = 0;
    for (const s of this.state) {
      // The latent walk: mean-reverting (Ornstein-Uhlenbeck in logit space) so its statistics, and
      // so the rate of quote changes, stay the same across the whole range.
      s.logit = s.logit * this.decay + gaussian(s.rng) * this.shock;
      const consensus = round(sigmoid(s.logit), 4);
      if (consensus !== s.consensus) {
        s.consensus = consensus;
        sink.point({ ts: t, contest_id: s.pos.contest_id, position_hash: s.pos.position_hash, price: consensus });
        rows++;
      }
      for (const v of s.venues) {
        if (v.rng() < this.reprice) {
          v.offset = v.offset * 0.98 + gaussian(v.rng) * 0.01;
          const price = Math.min(0.999, Math.max(0.001, round(sigmoid(s.logit + v.offset), 3)));
          const at = t + Math.floor(v.rng() * Math.min(this.o.intervalMs, 1000));
          if (price !== v.price) {
            v.price = price;
            v.available = round(Math.max(1, v.available * (0.8 + v.rng() * 0.4)), 2);
            sink.tick({
              ts: at,
              contest_id: s.pos.contest_id,
              position_hash: s.pos.position_hash,
              partner_id: v.venue.partner_id,
              price,
              available: v.available,
              liquidity_hash: v.liquidity_hash,
              source: 'streaming',
              outlier: false,
            });
            rows++;
          }
        }
        if (v.venue.publishes_trades && v.rng() < this.tradeP) {
          v.trades++;
          const size = round(Math.exp(3 + gaussian(v.rng)), 2) || 1;
          const identified = v.rng() < 0.3;
          const r = normalizeVenueTrade(
            {
              partner_id: v.venue.partner_id,
              partner_name: v.venue.name,
              venue_trade_id: `syn-${this.o.seed}-${hashSeed(0, v.liquidity_hash).toString(36)}-${v.trades}`,
              venue_market_id: v.venue_market_id,
              taker_action: v.rng() < 0.55 ? 'buy' : 'sell',
              price: v.price,
              size_contracts: size,
              is_block: size > 500,
              trader_id: identified ? `syn-trader-${Math.floor(v.rng() * 50)}` : null,
              trader_id_kind: identified ? 'pseudonymous' : null,
              executed_at: t + Math.floor(v.rng() * Math.min(this.o.intervalMs, 1000)),
            },
            {
              position_hash: s.pos.position_hash,
              liquidity_hash: v.liquidity_hash,
              router_contest_id: s.pos.contest_id,
              router_market_id: s.pos.market_id,
              relation: 'same',
            },
          );
          if (r.ok) {
            sink.trade(r.print);
            rows++;
          }
        }
      }
    }
    return rows;
  }
}
