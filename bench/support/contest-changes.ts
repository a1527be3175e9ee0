/**
 * A large contest and a stream of changes to it, for the compute bench: 200 positions (a moneyline,
 * a spread and a total ladder, and player-points ladders, every one a two-position group as the
 * simulator's catalog builds them) quoted by the five quoting simulator venues, each with its own
 * fee model, book depth, source and freshness bound (src/sim/personalities.ts). A few
 * listings are mispriced at any time: arbitrage episodes on the venues that have them (one side
 * priced under the other venues' best opposite ask), outlier episodes likewise, as the simulator's
 * market model does.
 *
 * Each change reprices one to three listings (a new book, a new ts_event and confirmation), the
 * way one venue message reaches a contest's venue state, and the contest's input is then what the
 * liquidity processor builds from that state (pipelines/processors/liquidity.ts). Seeded: the same
 * seed gives the same contest and the same changes, so two runs (direct and through the pool)
 * compute exactly the same jobs.
 */
import { positionInput } from '../../src/compute/contest.js';
import type { ContestInput, PositionInput, VenueQuote } from '../../src/compute/types.js';
import type { PositionDefinition } from '../../src/domain/catalog.js';
import { liquidityHash, positionHash } from '../../src/domain/hashes.js';
import type { PriceLevel } from '../../src/domain/quotes.js';
import { quoteStaleAfterMs } from '../../src/venues/freshness.js';
import { SIM_PERSONALITIES, type SimPartnerId, type SimPersonality } from '../../src/sim/personalities.js';
import { Rng, normalCdf } from '../../src/sim/rng.js';

/** The venues that quote (the practice venue is our own paper book and quotes nothing). */
export const BENCH_VENUES: readonly SimPartnerId[] = ['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'];

/** The contest's shape: 2 + 2×24 + 2×25 + 2×10×5 = 200 positions, 100 two-position groups. */
const SPREAD_LINES = 24;
const TOTAL_LINES = 25;
const PLAYERS = 10;
const PLAYER_LINES = 5;

export interface ContestChangesOptions {
  seed: number;
  contestId: string;
  /** Arbitrage and outlier episodes running at any time (each ends after a while and another starts). */
  arbitrages?: number;
  outliers?: number;
  /** Model time between two changes of this contest (ms). */
  stepMs?: number;
  /** The first change's clock (unix ms). */
  startMs?: number;
}

interface Venue {
  id: SimPartnerId;
  pers: SimPersonality;
  freshnessMs: number | null;
  tick: number;
}

interface Listing {
  venue: Venue;
  /** Index of its position and of the venue in the position's quotes. */
  pos: number;
  slot: number;
  bias: number;
  /** Offset from the venue's usual ask while an episode runs on it, else 0. */
  episode: 'arb' | 'outlier' | null;
  offset: number;
  /** The change after which its episode ends. */
  until: number;
  tsEvent: number;
}

/** The fair probability of each group's first position (the second's is its complement). */
interface Group {
  first: number;
  second: number;
  fair: number;
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

export class ContestChanges {
  readonly contestId: string;
  readonly definitions: PositionDefinition[] = [];
  private readonly rng: Rng;
  private readonly venues: Venue[];
  private readonly groups: Group[] = [];
  /** Group index of each position, and whether it is the group's first position. */
  private readonly groupOf: number[] = [];
  private readonly listings: Listing[] = [];
  /** The current quotes, one array per position in venue order (replaced, never mutated: inputs share them). */
  private readonly quotes: VenueQuote[][] = [];
  private readonly arbitrages: number;
  private readonly outliers: number;
  private readonly stepMs: number;
  private now: number;
  private change = 0;

  constructor(opts: ContestChangesOptions) {
    this.contestId = opts.contestId;
    this.rng = new Rng(opts.seed);
    this.arbitrages = opts.arbitrages ?? 4;
    this.outliers = opts.outliers ?? 6;
    this.stepMs = opts.stepMs ?? 2;
    this.now = opts.startMs ?? Date.parse('2026-03-01T12:00:00.000Z');
    this.venues = BENCH_VENUES.map((id) => {
      const pers = SIM_PERSONALITIES[id];
      return { id, pers, freshnessMs: pers.capabilities.quotes.freshness_ms, tick: pers.wire === 'exchange' || pers.wire === 'book01' ? 0.01 : 0.001 };
    });
    this.buildPositions();
    for (let i = 0; i < this.definitions.length; i++) {
      const row: VenueQuote[] = [];
      this.venues.forEach((venue, slot) => {
        const g = this.groups[this.groupOf[i]!]!;
        // One opinion per venue and group: what it adds to one side it takes off the other.
        const bias = (i === g.first ? 1 : -1) * this.rng.normal() * venue.pers.dynamics.bias_sd;
        // Confirmed at some point in the last 25 s: the oldest of them go stale during a long run.
        const l: Listing = { venue, pos: i, slot, bias, episode: null, offset: 0, until: Infinity, tsEvent: this.now - this.rng.int(0, 25_000) };
        this.listings.push(l);
        row.push(this.quoteOf(l));
      });
      this.quotes.push(row);
    }
    for (let k = 0; k < this.arbitrages; k++) this.startEpisode('arb');
    for (let k = 0; k < this.outliers; k++) this.startEpisode('outlier');
  }

  get positionCount(): number {
    return this.definitions.length;
  }

  get quoteCount(): number {
    return this.listings.length;
  }

  /** The contest as the processor hands it to compute now. */
  input(): ContestInput {
    const positions: PositionInput[] = this.definitions.map((d, i) => positionInput(d, this.quotes[i]!));
    return { contest_id: this.contestId, positions, now_ms: this.now, label: 'Bench Away @ Bench Home', league_id: 'bench_league' };
  }

  /** Applies the next change (one to three listings repriced, episodes ending and starting) and returns the input after it. */
  next(): ContestInput {
    this.change++;
    this.now += this.stepMs;
    for (const l of this.listings) {
      if (l.episode !== null && l.until <= this.change) {
        const kind = l.episode;
        l.episode = null;
        l.offset = 0;
        this.reprice(l);
        this.startEpisode(kind);
      }
    }
    const n = this.rng.bool(0.7) ? 1 : this.rng.int(2, 3);
    for (let k = 0; k < n; k++) {
      const l = this.listings[this.rng.int(0, this.listings.length - 1)]!;
      const g = this.groups[this.groupOf[l.pos]!]!;
      // The market moves a little, and the venue's opinion with it.
      g.fair = clamp(g.fair + this.rng.normal() * 0.002, 0.03, 0.97);
      l.bias = l.bias * 0.97 + this.rng.normal() * l.venue.pers.dynamics.bias_sd * 0.25;
      this.reprice(l);
    }
    return this.input();
  }

  private reprice(l: Listing): void {
    l.tsEvent = Math.max(this.now - l.venue.pers.dynamics.net_delay_ms, l.tsEvent + 1);
    const row = this.quotes[l.pos]!.slice();
    row[l.slot] = this.quoteOf(l);
    this.quotes[l.pos] = row;
  }

  /** Starts an episode of `kind` on a listing of a venue that has such episodes and no episode running. */
  private startEpisode(kind: 'arb' | 'outlier'): void {
    for (let attempt = 0; attempt < 50; attempt++) {
      const l = this.listings[this.rng.int(0, this.listings.length - 1)]!;
      const d = l.venue.pers.dynamics;
      if (l.episode !== null) continue;
      const fair = this.fairOf(l.pos);
      if (kind === 'outlier') {
        if (!d.outlier) continue;
        const mag = this.rng.float(d.outlier.min_offset, d.outlier.max_offset);
        // Overpriced where there is room: an underpriced outlier would also read as an arbitrage.
        l.offset = fair + mag <= 0.98 ? mag : -mag;
      } else {
        if (!d.arb) continue;
        // Under the best opposite ask of the other real books by the episode's edge.
        const other = this.bestOpposite(l);
        if (other === null) continue;
        const target = 1 - other - this.rng.float(d.arb.min_edge, d.arb.max_edge) - l.venue.tick;
        if (target < 0.03) continue;
        l.offset = target - fair;
      }
      l.episode = kind;
      l.until = this.change + this.rng.int(200, 800);
      this.reprice(l);
      return;
    }
  }

  private bestOpposite(l: Listing): number | null {
    const g = this.groups[this.groupOf[l.pos]!]!;
    const other = l.pos === g.first ? g.second : g.first;
    let best: number | null = null;
    for (const q of this.quotes[other] ?? []) {
      if (q.partner_id !== l.venue.id && q.real_book && q.available > 0 && (best === null || q.price < best)) best = q.price;
    }
    return best;
  }

  private fairOf(pos: number): number {
    const g = this.groups[this.groupOf[pos]!]!;
    return pos === g.first ? g.fair : 1 - g.fair;
  }

  /** The listing's quote as the processor builds it from the venue state: its book, fee, source and freshness. */
  private quoteOf(l: Listing): VenueQuote {
    const v = l.venue;
    const d = v.pers.dynamics;
    const ask = l.episode !== null ? this.fairOf(l.pos) + l.offset : this.fairOf(l.pos) + d.vig / 2 + l.bias;
    const levels: PriceLevel[] = [];
    let price = clamp(Math.ceil(ask / v.tick - 1e-9) * v.tick, 0.01, 0.99);
    for (let k = 0; k < Math.max(1, d.levels); k++) {
      if (k > 0) price = price + Math.max(d.level_step, v.tick);
      if (price > 0.99) break;
      const usd = this.rng.float(d.level_usd[0], d.level_usd[1]) * (1 + 0.5 * k);
      levels.push({ price: round6(price), available: round6(usd) });
    }
    const tsInit = l.tsEvent + d.net_delay_ms;
    const def = this.definitions[l.pos]!;
    return {
      partner_id: v.id,
      partner_name: v.pers.partner.name,
      liquidity_hash: liquidityHash(v.id, `${def.market_id}-${l.pos}`),
      price: levels[0]!.price,
      available: levels[0]!.available,
      levels,
      // A copy per quote, as parsing each stored quote gives (one shared object would clone once per job).
      fee: { ...v.pers.fee },
      venue_side_key: def.side_key,
      source: v.pers.capabilities.quotes.streaming ? 'streaming' : 'polling',
      as_of: new Date(tsInit).toISOString(),
      ts_event: l.tsEvent,
      real_book: v.pers.real_book,
      stale_after_ms: quoteStaleAfterMs(tsInit, v.freshnessMs),
    };
  }

  private buildPositions(): void {
    const cid = this.contestId;
    const add = (market: string, side: string, variable: number, participant: string, name: string, group: string, ladder: string | null): number => {
      this.definitions.push({
        position_hash: positionHash({ contest_id: cid, market_id: market, side_key: side, variable, participant_id: participant, timeframe: 'ft' }),
        contest_id: cid,
        title: `${name} ${market} ${side} ${variable}`,
        market_id: market,
        market_key: market,
        side_key: side,
        variable,
        participant_id: participant,
        participant_name: name,
        participant_image_url: null,
        timeframe: 'ft',
        group_key: group,
        ladder_key: ladder,
      });
      return this.definitions.length - 1;
    };
    const pair = (fair: number, a: number, b: number): void => {
      this.groups.push({ first: a, second: b, fair });
      this.groupOf[a] = this.groupOf[b] = this.groups.length - 1;
    };
    // Expected home margin 3.5 (SD 13), total 44.5 (SD 10), as a football game in the simulator.
    const mu = 3.5;
    const tau = 44.5;
    pair(normalCdf(mu / 13), add('moneyline', 'home', 0, 'bench_home', 'Home', `${cid}/moneyline`, null), add('moneyline', 'away', 0, 'bench_away', 'Away', `${cid}/moneyline`, null));
    for (let k = 0; k < SPREAD_LINES; k++) {
      const h = -mu + (k - SPREAD_LINES / 2);
      const g = `${cid}/spread/${h}`;
      pair(normalCdf((mu + h) / 13), add('spread', 'home', h, 'bench_home', 'Home', g, `${cid}/spread`), add('spread', 'away', -h, 'bench_away', 'Away', g, `${cid}/spread`));
    }
    for (let k = 0; k < TOTAL_LINES; k++) {
      const line = tau + (k - Math.floor(TOTAL_LINES / 2));
      const g = `${cid}/total/${line}`;
      pair(1 - normalCdf((line - tau) / 10), add('total', 'over', line, 'bench_over', 'Over', g, `${cid}/total`), add('total', 'under', line, 'bench_under', 'Under', g, `${cid}/total`));
    }
    for (let p = 0; p < PLAYERS; p++) {
      const id = `bench_player_${p + 1}`;
      const mean = 8.5 + 2 * p;
      for (let k = 0; k < PLAYER_LINES; k++) {
        const line = mean + (k - Math.floor(PLAYER_LINES / 2)) * 2;
        const g = `${cid}/player_points/${id}/${line}`;
        const ladder = `${cid}/player_points/${id}`;
        pair(1 - normalCdf((line - mean) / 4), add('player_points', 'over', line, id, `Player ${p + 1}`, g, ladder), add('player_points', 'under', line, id, `Player ${p + 1}`, g, ladder));
      }
    }
  }
}
