/**
 * SimMarket: one seeded market model driving every simulated venue.
 *
 * True probabilities come from each contest's latent state (expected margin and total, player
 * means, outright strengths), which random-walks and, once a game is live, follows the score.
 * Each venue derives its quotes from a lagged view of that truth with its own vig, bias, grid,
 * depth and update rate; episodes make one venue go stale, quote an outlier (> 0.15 off), or
 * misprice one side enough to open a real cross-venue arbitrage, and one venue lists some
 * participants on the opposite side. Contests move scheduled → live → final and settle.
 *
 * Time only moves through `tick(nowMs)` (or `start()`, which ticks on a timer), and every random
 * draw comes from the seed, so the same seed and the same tick times give the same quotes.
 * Control operations (the operator's /sim/v1 API) validate their input and throw non-retryable
 * VenueErrors with stable codes.
 */
import type { Contest } from '../domain/catalog.js';
import { liquidityHash, positionHash } from '../domain/hashes.js';
import { VenueError } from '../venues/errors.js';
import { americanToProb, probToAmerican, roundAskOnGrid, round6 } from '../domain/prices.js';
import type { GameState, PositionResult, PriceLevel, TakerAction } from '../venues/types.js';
import { buildSimWorld, type SimCatalog, type SimContestParams, type SimPosition, type SimWorld } from './catalog.js';
import { cancelOrder, deliverPending, forgetSettledOrders, matchResting, placeOrder, settleVenue, toAck, type EngineCtx } from './engine.js';
import { buildState, clamp, computeResults, fairOf, finalize, goLive, newEff, refreshEffective, stepContest } from './game.js';
import type { SimInstrument, SimWireBalance, SimWireBalanceEvent, SimWireOrderAck, SimWireOrderRequest } from './messages.js';
import { SIM_PARTNER_IDS, SIM_PERSONALITIES, isSimPartnerId, type SimPartnerId, type SimSituationRates } from './personalities.js';
import { Rng, hashSeed } from './rng.js';
import { deliverScheduled, forceSituation, recordTape, shiftNow, spontaneousSituations, tradePrice, type SituationCtx, type SituationResult } from './situations.js';
import type { AccountRt, ContestRt, Listing, OrderRt, PosRt, VenueRt } from './runtime.js';

// ---------------------------------------------------------------------------------------------
// Public shapes
// ---------------------------------------------------------------------------------------------

export interface SimMarketOptions {
  seed: number;
  /** The world's "now" (catalog times are relative to it). Defaults to the wall clock. */
  now?: number | Date;
  /** Multiplies quote-update and trade rates (1 = realistic pace). */
  activity?: number;
}

export interface SimQuoteEvent {
  partner_id: SimPartnerId;
  instrument: SimInstrument;
  /** Best first; empty when nothing is offered. Never mutated after emission. */
  levels: readonly PriceLevel[];
  /** Best price, or the last one when the book is empty. */
  last_price: number;
  ts_event: number;
}

export interface SimTradeEvent {
  partner_id: SimPartnerId;
  trade_id: string;
  instrument: SimInstrument;
  taker_action: TakerAction;
  price: number;
  size_contracts: number;
  is_block: boolean;
  trader_id: string | null;
  trader_id_kind: string | null;
  executed_at: number;
}

export interface SimStateEvent {
  contest_id: string;
  state: GameState;
  ts_event: number;
}

export interface SimSettleEvent {
  contest_id: string;
  winner_participant_id: string | null;
  results: { position_hash: string; result: PositionResult }[];
  ts_event: number;
}

export interface SimOrderEvent {
  partner_id: SimPartnerId;
  ack: SimWireOrderAck;
}

export interface SimBalanceEvent {
  partner_id: SimPartnerId;
  event: SimWireBalanceEvent;
}

export interface SetQuoteInput {
  partner_id: string;
  position_hash: string;
  price: number;
  available: number;
  levels?: PriceLevel[];
  /** The side the venue lists the position's participant on (home/away, over/under, yes/no);
   *  naming the opposite side makes this venue list it the wrong way round. Kept until changed. */
  listed_side?: string;
}

export interface EmitTradeInput {
  partner_id: string;
  position_hash: string;
  price: number;
  size_contracts: number;
  taker_action: TakerAction;
  is_block?: boolean;
  trader_id?: string | null;
  /** Unix ms or ISO 8601. Defaults to now. */
  executed_at?: number | string;
}

export interface SimChurnOptions {
  /** A new contest opens this often. */
  every_ms: number;
  /** It starts this long after opening (quoted pre-game meanwhile). */
  lead_ms: number;
  /** And finishes (then settles) this long after its start. */
  duration_ms: number;
}

/** A contest the market opened while running: the catalog rows it adds. */
export interface SimContestOpenedEvent {
  contest: Contest;
  contest_markets: { contest_id: string; market_id: string }[];
  contest_participants: { contest_id: string; participant_id: string; role: 'home' | 'away' | 'entrant' }[];
  positions: SimPosition[];
}

export type SettleInput = { winner_participant_id: string } | { results: Record<string, PositionResult> };

export type CredentialStatus = 'pending' | 'connected' | 'failed';

export interface ConnectAccountInput {
  partner_id: string;
  balance: number;
  credential_status?: CredentialStatus;
}

export interface SimAccountConnection {
  router_account_id: string;
  partner_id: string;
  balance: number;
  held: number;
  credential_status: CredentialStatus;
}

export interface SimVenueState {
  partner_id: string;
  name: string;
  orders_allowed: boolean;
  internal_book: boolean;
  quote_source: 'streaming' | 'polling' | null;
  poll_interval_ms: number | null;
  publishes_trades: boolean;
  listings: number;
  stale: boolean;
  accounts: number;
  /** Situations (signal types) the venue produced on its own since the market was made, by kind. */
  situations: SimSituationRates;
}

export interface SimMarketState {
  seed: number;
  frozen: boolean;
  now_ms: number;
  activity: number;
  running: boolean;
  venues: SimVenueState[];
  listener_errors: number;
}

type Listener<T> = (ev: T) => void;

const bad = (code: string, message: string, details?: Record<string, unknown>) =>
  new VenueError('non_retryable', code, message, details ? { details } : {});

const STATE_REFRESH_MS = 10_000;
const RESULTS: readonly PositionResult[] = ['win', 'lose', 'push'];
const CREDENTIAL_STATUSES: readonly CredentialStatus[] = ['pending', 'connected', 'failed'];
const OPPOSITE: Readonly<Record<string, string>> = { home: 'away', away: 'home', over: 'under', under: 'over', yes: 'no', no: 'yes' };

// ---------------------------------------------------------------------------------------------
// SimMarket
// ---------------------------------------------------------------------------------------------

export class SimMarket {
  readonly seed: number;
  readonly catalog: SimCatalog;
  private readonly world: SimWorld;
  private readonly rng: Rng;
  /** The spontaneous situations' own stream, so they leave the rest of the dynamics' sequence as it was. */
  private readonly srng: Rng;
  private readonly contests = new Map<string, ContestRt>();
  private readonly positions: PosRt[] = [];
  private readonly byHash = new Map<string, PosRt>();
  private readonly participantNames = new Map<string, string>();
  private readonly contestParticipants = new Map<string, Set<string>>();
  private readonly venues = new Map<SimPartnerId, VenueRt>();
  private readonly quoting: VenueRt[] = [];
  private readonly wallets: string[];
  private lastNow: number;
  private externalClock: (() => number) | null = null;
  private frozen = false;
  private activity: number;
  private timer: ReturnType<typeof setInterval> | null = null;
  private listenerErrors = 0;
  private churnOpts: SimChurnOptions | null = null;
  private nextChurnAt = 0;
  private churnSeq = 0;
  /** Runtime positions get increasing indexes (the world's are 0..n-1). */
  private positionSeq = 0;
  private openedListeners: Listener<SimContestOpenedEvent>[] = [];

  private readonly quoteListeners = new Map<string, Listener<SimQuoteEvent>[]>();
  private readonly tradeListeners = new Map<string, Listener<SimTradeEvent>[]>();
  private readonly orderListeners = new Map<string, Listener<SimOrderEvent>[]>();
  private readonly balanceListeners = new Map<string, Listener<SimBalanceEvent>[]>();
  private stateListeners: Listener<SimStateEvent>[] = [];
  private settleListeners: Listener<SimSettleEvent>[] = [];

  private readonly engine: EngineCtx;
  private readonly situations: SituationCtx;

  constructor(opts: SimMarketOptions) {
    if (!Number.isInteger(opts.seed)) throw bad('invalid_seed', `seed must be an integer: ${opts.seed}`);
    this.seed = opts.seed;
    const now = opts.now === undefined ? Date.now() : typeof opts.now === 'number' ? opts.now : opts.now.getTime();
    this.lastNow = now;
    this.activity = opts.activity ?? 1;
    this.world = buildSimWorld(opts.seed, now);
    this.catalog = this.world.catalog;
    this.rng = new Rng(hashSeed(opts.seed, 'dynamics'));
    this.srng = new Rng(hashSeed(opts.seed, 'situations'));
    this.engine = {
      now: () => this.currentTime(),
      bookChanged: (l) => this.emitQuote(l),
      orderChanged: (v, o) => this.emitOrder(v, o),
      balanceChanged: (v, a, reason, orderId) => this.emitBalance(v, a, reason, orderId),
      position: (h) => this.byHash.get(h),
      stamp: (l) => this.stamp(l, this.currentTime()),
      bestLivePrice: (h) => this.bestLivePrice(h),
    };
    this.situations = {
      now: () => this.currentTime(),
      quoting: this.quoting,
      venue: (id) => (isSimPartnerId(id) ? this.venues.get(id) : undefined),
      position: (h) => this.byHash.get(h),
      quantize: (l, p) => this.quantize(l, p),
      isStale: (v, now) => now < v.staleUntil,
      trader: (v, key) => (v.pers.wire === 'book01' ? this.wallets[hashSeed(this.seed, key) % this.wallets.length]! : null),
      print: (l, action, price, size, isBlock, traderId, at) => this.publishTrade(l.v, l, action, price, size, isBlock, traderId, at),
      publishBook: (l) => {
        this.stamp(l, this.currentTime());
        matchResting(this.engine, l);
        return this.emitQuote(l);
      },
    };
    const walletRng = new Rng(hashSeed(opts.seed, 'wallets'));
    this.wallets = Array.from({ length: 40 }, () => '0x' + Array.from({ length: 40 }, () => '0123456789abcdef'[walletRng.int(0, 15)]).join(''));
    this.init(now);
  }

  // ---- setup ---------------------------------------------------------------------------------

  private init(now: number): void {
    const cat = this.catalog;
    for (const p of cat.participants) this.participantNames.set(p.id, p.name);
    for (const cp of cat.contest_participants) {
      let s = this.contestParticipants.get(cp.contest_id);
      if (!s) this.contestParticipants.set(cp.contest_id, (s = new Set()));
      s.add(cp.participant_id);
    }
    const contestById = new Map(cat.contests.map((c) => [c.id, c]));
    for (const p of this.world.params) {
      const c = this.newContestRt(p, contestById.get(p.contest_id)!, now);
      this.contests.set(p.contest_id, c);
    }
    for (const c of this.contests.values()) {
      if (c.p.parent_contest_id) {
        const parent = this.contests.get(c.p.parent_contest_id);
        if (parent) {
          c.parent = parent;
          parent.children.push(c);
        }
      }
    }
    cat.positions.forEach((pos, i) => {
      const c = this.contests.get(pos.contest_id)!;
      const pr: PosRt = { i, pos, meta: this.world.meta[i]!, c, complement: null, listings: [], shift: 0, shiftAt: now };
      this.positions.push(pr);
      this.positionSeq = i;
      this.byHash.set(pos.position_hash, pr);
      c.positions.push(pr);
    });
    const groups = new Map<string, PosRt[]>();
    for (const pr of this.positions) {
      const g = groups.get(pr.pos.group_key);
      if (g) g.push(pr);
      else groups.set(pr.pos.group_key, [pr]);
    }
    for (const g of groups.values()) {
      if (g.length === 2) {
        g[0]!.complement = g[1]!;
        g[1]!.complement = g[0]!;
      }
    }

    // Contest phases at `now`: history is played out with its own stream so it does not shift
    // the dynamics' sequence.
    const history = new Rng(hashSeed(this.seed, 'history'));
    for (const c of this.contests.values()) {
      const end = c.p.start_ms + c.p.duration_ms;
      if (c.p.closed || now >= end) {
        goLive(c, Math.min(now, end), history);
        finalize(c, history);
        c.settled = true;
        c.results = computeResults(c);
      } else if (now >= c.p.start_ms) {
        goLive(c, now, history);
      }
      refreshEffective(c, now);
    }
    for (const c of this.contests.values()) c.state = buildState(c, now, this.nameOf);

    for (const id of SIM_PARTNER_IDS) {
      const pers = SIM_PERSONALITIES[id];
      const v: VenueRt = {
        id,
        pers,
        listings: [],
        byPosition: new Map(),
        byInstrument: new Map(),
        groupBias: new Map(),
        due: new Set(),
        pending: new Set(),
        staleUntil: 0,
        flipped: new Set(),
        accounts: new Map(),
        orders: new Map(),
        byClientId: new Map(),
        orderSeq: 0,
        tradeSeq: 0,
        instrumentSeq: 0,
        scheduled: [],
        situationsStarted: { price_move: 0, whale_trade: 0, block_trade: 0, flow_imbalance: 0, trade_through: 0, volume_spike: 0, trade_burst: 0 },
      };
      this.venues.set(id, v);
      if (pers.wire === 'internal') continue;
      this.quoting.push(v);
      const vr = new Rng(hashSeed(this.seed, `flip/${id}`));
      if (pers.dynamics.flip_contest_share > 0) {
        for (const c of this.contests.values()) if (c.p.kind !== 'outright' && vr.bool(pers.dynamics.flip_contest_share)) v.flipped.add(c.p.contest_id);
      }
      const cov = pers.dynamics.coverage;
      for (const pr of this.positions) {
        if (pr.c.settled) continue;
        if (!cov.markets.includes(pr.pos.market_key)) continue;
        if (pr.meta.line_offset > cov.max_line_offset) continue;
        const l = this.createListing(v, pr, now);
        this.reprice(l, now, true);
      }
    }
  }

  private readonly nameOf = (id: string): string => this.participantNames.get(id) ?? id;

  private newContestRt(p: SimContestParams, contest: Contest, now: number): ContestRt {
    return {
      p,
      contest,
      phase: 'scheduled',
      mu: p.mu0,
      tau: p.tau0,
      strengths: [...p.strengths],
      home: 0,
      away: 0,
      periodScores: [],
      playerFinal: [],
      eliminated: new Set(),
      manual: false,
      settled: false,
      winner: null,
      result: null,
      finishMethod: null,
      state: null as unknown as GameState,
      stateTs: now,
      lastStateEmit: now,
      situationSeed: hashSeed(this.seed, p.contest_id),
      eff: newEff(p),
      positions: [],
      children: [],
      parent: null,
      results: null,
    };
  }

  // ---- churn: contests that keep opening and settling (soak runs) ----------------------------------

  /**
   * Keeps opening short contests (copies of one of the world's team games under new ids) every
   * `every_ms`, each starting `lead_ms` later and lasting `duration_ms`; they go live, finish and
   * settle like any other, and the model forgets them once settled. null stops opening new ones.
   * Off by default: the world is otherwise a fixed catalog.
   */
  churn(opts: SimChurnOptions | null): void {
    if (opts !== null) {
      for (const k of ['every_ms', 'lead_ms', 'duration_ms'] as const) {
        if (!(Number.isFinite(opts[k]) && opts[k] > 0)) throw bad('invalid_request', `churn ${k} must be a positive number`);
      }
    }
    this.churnOpts = opts;
    this.nextChurnAt = this.currentTime();
  }

  /** Listens for contests the market opens while running (churn); the catalog must learn them. */
  onContestOpened(fn: Listener<SimContestOpenedEvent>): () => void {
    this.openedListeners = [...this.openedListeners, fn];
    return () => {
      this.openedListeners = this.openedListeners.filter((x) => x !== fn);
    };
  }

  /** How many contests the model holds (the world's, plus churned ones not yet settled). */
  contestCount(): number {
    return this.contests.size;
  }

  private openChurnContest(now: number, o: SimChurnOptions): void {
    const template = this.world.params.find((p) => p.kind === 'team_h2h' && !p.closed)!;
    const tc = this.contests.get(template.contest_id)!;
    const id = `ct_churn_${String(++this.churnSeq).padStart(6, '0')}`;
    const start = now + o.lead_ms;
    const p: SimContestParams = { ...template, contest_id: id, start_ms: start, duration_ms: o.duration_ms, closed: false, players: template.players.map((x) => ({ ...x })) };
    const contest: Contest = { ...tc.contest, id, title: `${tc.contest.title} (${this.churnSeq})`, starts_at: new Date(start).toISOString(), status: 'open' };
    const c = this.newContestRt(p, contest, now);
    const participants = [...(this.contestParticipants.get(template.contest_id) ?? [])];
    this.contestParticipants.set(id, new Set(participants));
    const positions: SimPosition[] = [];
    const rekey = (k: string | null) => (k === null ? null : id + k.slice(template.contest_id.length));
    const byGroup = new Map<string, PosRt>();
    for (const tpr of tc.positions) {
      const src = tpr.pos;
      const pos: SimPosition = {
        ...src,
        contest_id: id,
        group_key: rekey(src.group_key)!,
        ladder_key: rekey(src.ladder_key),
        position_hash: positionHash({ contest_id: id, market_id: src.market_id, side_key: src.side_key, variable: src.variable, participant_id: src.participant_id, timeframe: src.timeframe }),
      };
      const pr: PosRt = { i: ++this.positionSeq, pos, meta: tpr.meta, c, complement: null, listings: [], shift: 0, shiftAt: now };
      const other = byGroup.get(pos.group_key);
      if (other) {
        pr.complement = other;
        other.complement = pr;
      } else byGroup.set(pos.group_key, pr);
      c.positions.push(pr);
      this.byHash.set(pos.position_hash, pr);
      positions.push(pos);
    }
    refreshEffective(c, now);
    c.state = buildState(c, now, this.nameOf);
    this.contests.set(id, c);
    const ev: SimContestOpenedEvent = {
      contest,
      contest_markets: [...new Set(positions.map((x) => x.market_id))].map((market_id) => ({ contest_id: id, market_id })),
      contest_participants: participants.map((participant_id) => ({ contest_id: id, participant_id, role: participant_id === p.home_id ? 'home' : participant_id === p.away_id ? 'away' : 'entrant' })),
      positions,
    };
    for (const fn of this.openedListeners) this.safe(fn, ev);
    for (const v of this.quoting) {
      const cov = v.pers.dynamics.coverage;
      for (const pr of c.positions) {
        if (!cov.markets.includes(pr.pos.market_key) || pr.meta.line_offset > cov.max_line_offset) continue;
        const l = this.createListing(v, pr, now);
        this.reprice(l, now, true);
        this.emitQuote(l);
      }
    }
    this.publishState(c, now, true);
  }

  /** A settled churned contest leaves the model entirely (the world's own contests stay queryable). */
  private forgetChurned(c: ContestRt): void {
    if (!c.p.contest_id.startsWith('ct_churn_')) return;
    this.contests.delete(c.p.contest_id);
    this.contestParticipants.delete(c.p.contest_id);
    for (const pr of c.positions) this.byHash.delete(pr.pos.position_hash);
  }

  private detachedListing(v: VenueRt, pr: PosRt): Listing {
    const l = this.createListing(v, pr, this.currentTime());
    l.closed = true;
    l.levels = [];
    this.delist(v, pr.c);
    return l;
  }

  private createListing(v: VenueRt, pr: PosRt, now: number): Listing {
    const seq = ++v.instrumentSeq;
    let instrumentId: string;
    switch (v.pers.wire) {
      case 'exchange':
        instrumentId = `SX-${String(seq).padStart(6, '0')}`;
        break;
      case 'book01':
        instrumentId = `${(hashSeed(this.seed, pr.pos.position_hash) % 900_000_000) + 100_000_000}${String(seq).padStart(5, '0')}`;
        break;
      case 'sportsbook':
        instrumentId = `SB${100_000 + seq}`;
        break;
      case 'p2p':
        instrumentId = `line-${seq}`;
        break;
      default:
        instrumentId = `q${seq}`;
    }
    const flip = v.flipped.has(pr.c.p.contest_id) && (pr.pos.market_key === 'moneyline' || pr.pos.market_key === 'spread');
    const side = flip ? (OPPOSITE[pr.pos.side_key] ?? pr.pos.side_key) : pr.pos.side_key;
    const fair = this.fairNow(pr, now);
    const l: Listing = {
      v,
      pr,
      inst: {
        instrument_id: instrumentId,
        position_hash: pr.pos.position_hash,
        contest_id: pr.pos.contest_id,
        liquidity_hash: liquidityHash(v.id, instrumentId),
        venue_side_key: side,
      },
      levels: [],
      ts_event: now,
      lag: fair,
      lagTs: now,
      outlierOff: 0,
      outlierUntil: 0,
      arbOff: 0,
      arbUntil: 0,
      dueAt: Infinity,
      pinned: false,
      closed: false,
      resting: [],
      tape: [],
      tapeHeldUntil: 0,
    };
    v.listings.push(l);
    v.byPosition.set(pr.pos.position_hash, l);
    v.byInstrument.set(instrumentId, l);
    pr.listings.push(l);
    return l;
  }

  // ---- pricing ---------------------------------------------------------------------------------

  /** Re-derives a listing's book from the (lagged) truth. */
  private reprice(l: Listing, now: number, initial = false): void {
    const d = l.v.pers.dynamics;
    const fair = this.fairNow(l.pr, now);
    // A venue's opinion is one number per market: what it adds to one side of a two-way group
    // it takes off the other, so its own two sides always sum to 1 + vig.
    const g = l.pr.pos.group_key;
    let bias = l.v.groupBias.get(g);
    if (bias === undefined) l.v.groupBias.set(g, (bias = this.rng.normal() * d.bias_sd));
    if (!initial) {
      // In-play every venue follows the game closely (or suspends): a quarter of its lag.
      const lag = l.pr.c.phase === 'live' ? d.lag_ms / 4 : d.lag_ms;
      const a = lag > 0 ? 1 - Math.exp(-(now - l.lagTs) / lag) : 1;
      l.lag += (fair - l.lag) * a;
      bias = bias * 0.97 + this.rng.normal() * d.bias_sd * 0.25;
      l.v.groupBias.set(g, bias);
    }
    l.lagTs = now;
    const sign = l.pr.complement && l.pr.complement.i < l.pr.i ? -1 : 1;
    let ask = l.pr.meta.kind === 'winner' ? l.lag * (1 + d.vig) + bias * 0.5 : l.lag + d.vig / 2 + sign * bias;
    if (now < l.outlierUntil) ask = l.lag + l.outlierOff;
    if (now < l.arbUntil) ask = l.lag + l.arbOff;
    ask = clamp(ask, 0.01, 0.99);
    l.levels = this.buildBook(l, ask);
    this.stamp(l, now - d.net_delay_ms);
  }

  /** The truth a venue follows: the model's fair value, moved by any price move still fading out. */
  private fairNow(pr: PosRt, now: number): number {
    const shift = shiftNow(pr, now);
    return shift === 0 ? fairOf(pr) : clamp(fairOf(pr) + shift, 0.01, 0.99);
  }

  /**
   * Versions a listing's book: ts_event strictly increases per listing (a quote version is keyed
   * by liquidity_hash and ts_event downstream), moving model time on by a millisecond when a
   * burst changes one listing several times within the same millisecond.
   */
  private stamp(l: Listing, t: number): void {
    const ts = t > l.ts_event ? t : l.ts_event + 1;
    l.ts_event = ts;
    if (ts > this.lastNow) this.lastNow = ts;
  }

  private quantize(l: Listing, p: number): number {
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

  private buildBook(l: Listing, ask: number): PriceLevel[] {
    const d = l.v.pers.dynamics;
    const out: PriceLevel[] = [];
    const [lo, hi] = d.level_usd;
    for (let k = 0; k < d.levels; k++) {
      let p = this.quantize(l, ask + k * d.level_step);
      const prev = out.length > 0 ? out[out.length - 1]!.price : 0;
      if (p <= prev) p = this.quantize(l, prev + 0.0011);
      if (p > 0.99 || p <= 0) break;
      const usd = this.rng.float(lo, hi) * (1 + 0.5 * k);
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
  private bestLivePrice(hash: string): number | null {
    const pr = this.byHash.get(hash);
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

  // ---- time ------------------------------------------------------------------------------------

  /** The model's current time: the last tick, or the attached clock when running. */
  nowMs(): number {
    return this.currentTime();
  }

  private currentTime(): number {
    if (this.externalClock) {
      const t = this.externalClock();
      if (t > this.lastNow) return t;
    }
    return this.lastNow;
  }

  /**
   * Advances the world to `nowMs`: contests and latent prices move, venues reprice, trade, go
   * stale or misprice, due async fills land. When frozen only order mechanics (async fills)
   * progress. Times before the last tick are treated as the last tick.
   */
  tick(nowMs: number): void {
    if (!Number.isFinite(nowMs)) throw bad('invalid_time', `tick time must be a number: ${nowMs}`);
    const now = Math.max(nowMs, this.lastNow);
    const dt = now - this.lastNow;
    this.lastNow = now;
    if (!this.frozen && dt > 0) {
      const o = this.churnOpts;
      if (o && now >= this.nextChurnAt) {
        this.nextChurnAt = now + o.every_ms;
        this.openChurnContest(now, o);
      }
      for (const c of this.contests.values()) {
        const before = c.phase;
        const r = stepContest(c, now, dt, this.rng);
        if (!c.settled) refreshEffective(c, now);
        if (r.finalized) {
          this.settleInternal(c, now);
          if (c.parent && c.parent.p.kind === 'outright') {
            const loser = c.winner === c.p.home_id ? c.p.away_id : c.p.home_id;
            if (loser && c.parent.p.entrant_ids.includes(loser) && !c.parent.settled) {
              c.parent.eliminated.add(loser);
              refreshEffective(c.parent, now);
              this.publishState(c.parent, now);
            }
          }
        } else if (r.stateChanged || (c.phase === 'live' && now - c.lastStateEmit >= STATE_REFRESH_MS) || before !== c.phase) {
          this.publishState(c, now);
        }
        // In play the price moves with the clock as well as the score: venues keep repricing,
        // each at its own reaction speed.
        if (!c.settled && (r.stateChanged || c.phase === 'live')) this.scheduleReaction(c, now, !r.stateChanged);
      }
      const dtS = dt / 1000;
      const dtH = dt / 3_600_000;
      for (const v of this.quoting) {
        const d = v.pers.dynamics;
        if (now >= v.staleUntil && d.stale.rate_per_hour > 0 && this.rng.bool(1 - Math.exp(-d.stale.rate_per_hour * dtH))) {
          v.staleUntil = now + this.rng.float(d.stale.min_ms, d.stale.max_ms);
        }
        if (v.scheduled.length > 0) deliverScheduled(this.situations, v, now);
        if (now < v.staleUntil || v.listings.length === 0) continue;
        this.episodes(v, now, dtH);
        spontaneousSituations(this.situations, v, now, dtH, this.srng);
        if (v.due.size > 0) {
          for (const l of [...v.due]) {
            if (l.dueAt > now) continue;
            v.due.delete(l);
            l.dueAt = Infinity;
            if (l.pinned || l.closed) continue;
            this.reprice(l, now);
            matchResting(this.engine, l);
            this.emitQuote(l);
          }
        }
        const n = this.rng.poisson(v.listings.length * d.update_rate * dtS * this.activity);
        for (let j = 0; j < n; j++) this.updateRandom(v, now);
        if (d.trades_per_second > 0) {
          const nt = this.rng.poisson(d.trades_per_second * dtS * this.activity);
          for (let j = 0; j < nt; j++) this.randomTrade(v, now);
        }
      }
    }
    for (const v of this.venues.values()) if (v.pending.size > 0) deliverPending(this.engine, v, now);
  }

  /** After a game event each venue reprices the contest's listings once it has reacted. */
  private scheduleReaction(c: ContestRt, now: number, onlyIdle = false): void {
    for (const pr of c.positions) {
      for (const l of pr.listings) {
        if (l.pinned || l.closed || (onlyIdle && l.dueAt !== Infinity)) continue;
        const at = now + Math.max(500, (l.v.pers.dynamics.lag_ms / 4) * this.rng.float(0.5, 1.5));
        if (at < l.dueAt) {
          l.dueAt = at;
          l.v.due.add(l);
        }
      }
    }
  }

  private updateRandom(v: VenueRt, now: number): boolean {
    const l = v.listings[Math.floor(this.rng.next() * v.listings.length)]!;
    if (l.pinned || l.closed) return false;
    this.reprice(l, now);
    matchResting(this.engine, l);
    this.emitQuote(l);
    return true;
  }

  private episodes(v: VenueRt, now: number, dtH: number): void {
    const d = v.pers.dynamics;
    if (d.outlier && d.outlier.rate_per_hour > 0) {
      const n = this.rng.poisson(d.outlier.rate_per_hour * dtH);
      for (let i = 0; i < n; i++) {
        const l = v.listings[Math.floor(this.rng.next() * v.listings.length)]!;
        if (l.pinned || l.closed) continue;
        const mag = this.rng.float(d.outlier.min_offset, d.outlier.max_offset);
        // Overpriced where there is room (an underpriced outlier would also read as an arbitrage
        // against every other venue); underpriced only near certainty.
        l.outlierOff = l.lag + mag <= 0.98 ? mag : -mag;
        l.outlierUntil = now + this.rng.float(d.outlier.min_ms, d.outlier.max_ms);
        this.reprice(l, now);
        this.emitQuote(l);
      }
    }
    if (d.arb && d.arb.rate_per_hour > 0) {
      const n = this.rng.poisson(d.arb.rate_per_hour * dtH);
      for (let i = 0; i < n; i++) {
        const l = v.listings[Math.floor(this.rng.next() * v.listings.length)]!;
        const edge = this.rng.float(d.arb.min_edge, d.arb.max_edge);
        const dur = this.rng.float(d.arb.min_ms, d.arb.max_ms);
        if (l.pinned || l.closed || !l.pr.complement) continue;
        let other: number | null = null;
        for (const o of l.pr.complement.listings) {
          if (o.v === v || o.closed || !o.v.pers.real_book) continue;
          const top = o.levels[0];
          if (top && top.available > 0 && (other === null || top.price < other)) other = top.price;
        }
        if (other === null) continue;
        // The grid rounds asks up by at most one tick: aim one tick lower so the edge survives it.
        const target = 1 - other - edge - v.pers.partner.order_config.price_tick * (v.pers.wire === 'exchange' ? 0.01 : 1);
        if (target < 0.03) continue;
        l.arbOff = target - l.lag;
        l.arbUntil = now + dur;
        this.reprice(l, now);
        matchResting(this.engine, l);
        this.emitQuote(l);
      }
    }
  }

  private randomTrade(v: VenueRt, now: number): void {
    const l = v.listings[Math.floor(this.rng.next() * v.listings.length)]!;
    const top = l.levels[0];
    // A one-way flow situation owns the listing's tape for its window.
    if (l.closed || !top || now < l.tapeHeldUntil) return;
    const buy = this.rng.bool(0.7);
    const price = tradePrice(l, buy ? 'buy' : 'sell')!;
    let size = Math.exp(Math.log(40) + this.rng.normal());
    let isBlock = false;
    if (this.rng.bool(0.02)) size *= 25;
    if (v.pers.wire === 'exchange' && this.rng.bool(0.01)) {
      size *= 60;
      isBlock = true;
    }
    size = v.pers.wire === 'exchange' ? Math.max(1, Math.round(size)) : Math.max(0.01, Math.round(size * 100) / 100);
    const trader = v.pers.wire === 'book01' ? this.wallets[Math.floor(this.rng.next() * this.wallets.length)]! : null;
    this.publishTrade(v, l, buy ? 'buy' : 'sell', price, size, isBlock, trader, now - v.pers.dynamics.net_delay_ms);
  }

  /**
   * Produces `n` quote changes at once, as fast as possible (for benchmarks and load): random
   * listings of the quoting venues reprice and publish. Returns how many changes went out
   * (0 while frozen: frozen quotes only change through setQuote).
   */
  burst(n: number): number {
    if (this.frozen || !(n > 0)) return 0;
    const now = this.currentTime();
    const total = this.quoting.reduce((s, v) => s + v.listings.length, 0);
    if (total === 0) return 0;
    let emitted = 0;
    let attempts = 0;
    while (emitted < n && attempts < n * 4) {
      attempts++;
      let k = Math.floor(this.rng.next() * total);
      let v = this.quoting[0]!;
      for (const q of this.quoting) {
        if (k < q.listings.length) {
          v = q;
          break;
        }
        k -= q.listings.length;
      }
      const l = v.listings[k]!;
      if (l.pinned || l.closed) continue;
      this.reprice(l, now);
      matchResting(this.engine, l);
      this.emitQuote(l);
      emitted++;
    }
    return emitted;
  }

  /** Runs `tick(clock())` every `interval_ms` (default 250) until stop(). */
  start(opts: { interval_ms?: number; clock?: () => number } = {}): void {
    if (this.timer) return;
    const clock = opts.clock ?? Date.now;
    this.externalClock = clock;
    this.timer = setInterval(() => this.tick(clock()), opts.interval_ms ?? 250);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  setActivity(multiplier: number): void {
    if (!(Number.isFinite(multiplier) && multiplier >= 0)) throw bad('invalid_request', `activity must be a non-negative number: ${multiplier}`);
    this.activity = multiplier;
  }

  // ---- control operations (operator interface) --------------------------------------------------

  /** Stops (true) or restarts (false) the random dynamics. Restarting releases setQuote pins. */
  freeze(frozen: boolean): void {
    if (typeof frozen !== 'boolean') throw bad('invalid_request', 'frozen must be a boolean');
    if (!frozen && this.frozen) {
      for (const v of this.quoting) for (const l of v.listings) l.pinned = false;
    }
    // A frozen market makes no prints of its own: situations under way stop where they are.
    if (frozen) for (const v of this.quoting) v.scheduled = [];
    this.frozen = frozen;
  }

  isFrozen(): boolean {
    return this.frozen;
  }

  /**
   * Sets one venue's quote and book for a position and publishes it. The listing is pinned:
   * dynamics leave it alone until `freeze(false)`. `levels` is the whole book (best first); it
   * may start with the {price, available} level or hold only deeper levels.
   */
  setQuote(input: SetQuoteInput): SimQuoteEvent {
    const v = this.venueFor(input?.partner_id);
    if (v.pers.wire === 'internal') throw bad('quotes_not_supported', `${v.id} publishes no quotes`);
    const pr = this.positionFor(input.position_hash);
    if (pr.c.settled) throw bad('contest_settled', `contest ${pr.c.p.contest_id} is settled`);
    checkPrice(input.price);
    checkAvailable(input.available);
    let levels: PriceLevel[];
    if (input.levels !== undefined) {
      if (!Array.isArray(input.levels)) throw bad('invalid_levels', 'levels must be an array');
      const given = input.levels.map((x, i) => {
        if (typeof x !== 'object' || x === null) throw bad('invalid_levels', `level ${i} is not an object`);
        checkPrice(x.price);
        checkAvailable(x.available);
        return { price: x.price, available: x.available };
      });
      for (let i = 1; i < given.length; i++) {
        if (!(given[i]!.price > given[i - 1]!.price)) throw bad('invalid_levels', 'levels must be strictly ascending by price (best first)');
      }
      const first = given[0];
      if (first && Math.abs(first.price - input.price) < 1e-12) {
        if (Math.abs(first.available - input.available) > 1e-9) throw bad('invalid_levels', 'first level disagrees with available');
        levels = given;
      } else if (!first || first.price > input.price) {
        levels = [{ price: input.price, available: input.available }, ...given];
      } else {
        throw bad('invalid_levels', 'levels must not be priced better than price');
      }
    } else {
      levels = [{ price: input.price, available: input.available }];
    }
    levels = levels.filter((x) => x.available > 0);
    const now = this.currentTime();
    const l = v.byPosition.get(pr.pos.position_hash) ?? this.createListing(v, pr, now);
    if (input.listed_side !== undefined) {
      if (typeof input.listed_side !== 'string' || !/^[a-z_]{1,32}$/.test(input.listed_side)) {
        throw bad('invalid_listed_side', 'listed_side must be a side key such as home, away, over, under, yes or no');
      }
      l.inst = { ...l.inst, venue_side_key: input.listed_side };
    }
    l.pinned = true;
    l.outlierUntil = 0;
    l.arbUntil = 0;
    l.levels = levels;
    // Keep the last price visible on an emptied book via lag (the wire carries it).
    l.lag = input.price;
    this.stamp(l, now);
    matchResting(this.engine, l);
    return this.emitQuote(l);
  }

  /** Publishes a trade print on a venue that publishes trades. */
  emitTrade(input: EmitTradeInput): SimTradeEvent {
    const v = this.venueFor(input?.partner_id);
    if (!v.pers.capabilities.trades) throw bad('trades_not_supported', `${v.id} publishes no trades`);
    const pr = this.positionFor(input.position_hash);
    checkPrice(input.price);
    if (!(typeof input.size_contracts === 'number' && Number.isFinite(input.size_contracts) && input.size_contracts > 0)) {
      throw bad('invalid_size', `size_contracts must be a positive number: ${String(input.size_contracts)}`);
    }
    if (input.taker_action !== 'buy' && input.taker_action !== 'sell') throw bad('invalid_taker_action', `taker_action must be buy or sell`);
    if (input.is_block !== undefined && typeof input.is_block !== 'boolean') throw bad('invalid_request', 'is_block must be a boolean');
    if (input.trader_id !== undefined && input.trader_id !== null && typeof input.trader_id !== 'string') throw bad('invalid_request', 'trader_id must be a string');
    let at = this.currentTime();
    if (input.executed_at !== undefined) {
      const t = typeof input.executed_at === 'number' ? input.executed_at : typeof input.executed_at === 'string' ? Date.parse(input.executed_at) : NaN;
      if (!Number.isFinite(t)) throw bad('invalid_executed_at', `executed_at must be unix ms or ISO 8601: ${String(input.executed_at)}`);
      at = t;
    }
    // A settled contest is no longer listed: its late print goes out on a listing that is not kept.
    const l = v.byPosition.get(pr.pos.position_hash) ?? (pr.c.settled ? this.detachedListing(v, pr) : this.createListing(v, pr, this.currentTime()));
    const traderId = input.trader_id ?? null;
    return this.publishTrade(v, l, input.taker_action, input.price, input.size_contracts, input.is_block ?? false, traderId, at);
  }

  /**
   * Makes a market situation (a signal type of the spec) happen now, exactly: on the venue and
   * position given, or the first that can carry it. Prints go out on the venue's trade feed and
   * books on its quote feed. See situations.ts for the request and what each type does.
   */
  forceSituation(input: unknown): SituationResult {
    return forceSituation(this.situations, input);
  }

  /** Sets live game state fields; the contest then leaves automatic lifecycle (until settled). */
  setState(contestId: string, fields: Partial<GameState>): GameState {
    const c = this.contestFor(contestId);
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw bad('invalid_state', 'state must be an object');
    const allowed = new Set(['game_status', 'clock', 'period', 'contest_result', 'winner_participant_id', 'scores', 'situation', 'leaderboard']);
    for (const k of Object.keys(fields)) if (!allowed.has(k)) throw bad('unknown_field', `unknown state field ${k}`, { field: k });
    const f = fields as Record<string, unknown>;
    const isObj = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);
    if ('game_status' in f && (typeof f.game_status !== 'string' || f.game_status.length === 0)) throw bad('invalid_state', 'game_status must be a string');
    if ('clock' in f && f.clock !== null) {
      const ck = f.clock as Record<string, unknown>;
      if (!isObj(ck) || typeof ck.display !== 'string' || typeof ck.remaining_seconds !== 'number' || typeof ck.is_running !== 'boolean') {
        throw bad('invalid_state', 'clock must be {display, remaining_seconds, is_running}');
      }
    }
    if ('period' in f && f.period !== null) {
      const pd = f.period as Record<string, unknown>;
      if (!isObj(pd) || typeof pd.number !== 'number' || typeof pd.label !== 'string' || typeof pd.type !== 'string') {
        throw bad('invalid_state', 'period must be {number, label, type}');
      }
    }
    if ('scores' in f && f.scores !== null) {
      const sc = f.scores as Record<string, unknown>;
      if (!isObj(sc) || typeof sc.home_score !== 'number' || typeof sc.away_score !== 'number') throw bad('invalid_state', 'scores must be {home_score, away_score, period_scores}');
      if (sc.period_scores !== undefined && !Array.isArray(sc.period_scores)) throw bad('invalid_state', 'period_scores must be an array');
    }
    if ('situation' in f && f.situation !== null && !isObj(f.situation)) throw bad('invalid_state', 'situation must be an object or null');
    if ('leaderboard' in f && f.leaderboard !== null && !Array.isArray(f.leaderboard)) throw bad('invalid_state', 'leaderboard must be an array or null');
    if ('contest_result' in f && f.contest_result !== null && typeof f.contest_result !== 'string') throw bad('invalid_state', 'contest_result must be a string or null');
    if ('winner_participant_id' in f && f.winner_participant_id !== null) {
      if (typeof f.winner_participant_id !== 'string' || !this.contestParticipants.get(contestId)?.has(f.winner_participant_id)) {
        throw bad('unknown_participant', `${String(f.winner_participant_id)} does not take part in ${contestId}`);
      }
    }
    const now = this.currentTime();
    c.manual = true;
    const next: GameState = { ...c.state, ...(structuredClone(fields) as Partial<GameState>) };
    if (next.scores && !('period_scores' in (next.scores as object))) next.scores = { ...next.scores, period_scores: [] };
    if (f.scores && c.p.kind === 'team_h2h') {
      const sc = next.scores!;
      c.home = sc.home_score;
      c.away = sc.away_score;
      c.periodScores = (sc.period_scores ?? []).map((x) => ({ home_score: Number(x.home_score) || 0, away_score: Number(x.away_score) || 0 }));
    }
    if (!c.settled && (next.game_status === 'scheduled' || next.game_status === 'live')) c.phase = next.game_status;
    c.state = next;
    if (!c.settled) {
      refreshEffective(c, now);
      if (!this.frozen) this.scheduleReaction(c, now);
    }
    this.publishState(c, now, true);
    return structuredClone(next);
  }

  /**
   * Settles a contest: `{winner_participant_id}` (the rest follows from the final score) or
   * `{results: {position_hash: win|lose|push}}` (listed positions; the others of a group a
   * listed winner decides lose, anything still undecided pushes).
   */
  settle(contestId: string, input: SettleInput): SimSettleEvent {
    const c = this.contestFor(contestId);
    if (c.settled) throw bad('already_settled', `contest ${contestId} is already settled`);
    if (typeof input !== 'object' || input === null) throw bad('invalid_request', 'settle needs {winner_participant_id} or {results}');
    const now = this.currentTime();
    if ('winner_participant_id' in input && input.winner_participant_id !== undefined) {
      const w = input.winner_participant_id;
      if (typeof w !== 'string' || !this.contestParticipants.get(contestId)?.has(w)) throw bad('unknown_participant', `${String(w)} does not take part in ${contestId}`);
      finalize(c, this.rng, w);
      c.results = computeResults(c);
    } else if ('results' in input && typeof input.results === 'object' && input.results !== null && !Array.isArray(input.results)) {
      const given = input.results;
      const keys = Object.keys(given);
      if (keys.length === 0) throw bad('invalid_request', 'results must name at least one position');
      const own = new Map(c.positions.map((pr) => [pr.pos.position_hash, pr]));
      for (const k of keys) {
        if (!own.has(k)) throw bad('unknown_position', `${k} is not a position of ${contestId}`, { position_hash: k });
        if (!RESULTS.includes(given[k]!)) throw bad('invalid_result', `result of ${k} must be win, lose or push`, { position_hash: k });
      }
      const results = new Map<string, PositionResult>();
      const decided = new Set<string>();
      for (const k of keys) {
        results.set(k, given[k]!);
        if (given[k] === 'win') decided.add(own.get(k)!.pos.group_key);
      }
      for (const pr of c.positions) {
        if (results.has(pr.pos.position_hash)) continue;
        results.set(pr.pos.position_hash, decided.has(pr.pos.group_key) ? 'lose' : 'push');
      }
      let winner: string | null = null;
      for (const pr of c.positions) {
        if ((pr.pos.market_key === 'moneyline' || pr.pos.market_key === 'tournament_winner') && results.get(pr.pos.position_hash) === 'win') {
          winner = pr.pos.participant_id;
          break;
        }
      }
      c.winner = winner;
      c.result = winner === null ? null : c.p.kind === 'outright' ? 'decided' : winner === c.p.home_id ? 'home_win' : 'away_win';
      c.phase = 'final';
      c.results = results;
    } else {
      throw bad('invalid_request', 'settle needs {winner_participant_id} or {results}');
    }
    return this.settleInternal(c, now);
  }

  /** Connects a sim venue to an account as the hosted flow would, with a venue balance. */
  connectAccount(routerAccountId: string, input: ConnectAccountInput): SimAccountConnection {
    if (typeof routerAccountId !== 'string' || routerAccountId.length === 0) throw bad('invalid_request', 'router_account_id must be a non-empty string');
    const v = this.venueFor(input?.partner_id);
    if (!v.pers.partner.connectable) throw bad('not_connectable', `${v.id} cannot be connected to an account`);
    if (!(typeof input.balance === 'number' && Number.isFinite(input.balance) && input.balance >= 0)) {
      throw bad('invalid_balance', `balance must be a non-negative number: ${String(input.balance)}`);
    }
    const status = input.credential_status ?? 'connected';
    if (!CREDENTIAL_STATUSES.includes(status)) throw bad('invalid_credential_status', `credential_status must be pending, connected or failed`);
    let a = v.accounts.get(routerAccountId);
    if (a) {
      a.balance = round6(input.balance);
      a.credential_status = status;
    } else {
      a = { account_id: routerAccountId, balance: round6(input.balance), held: 0, credential_status: status, holdings: new Map() };
      v.accounts.set(routerAccountId, a);
    }
    this.emitBalance(v, a, 'REFRESH', null);
    return { router_account_id: routerAccountId, partner_id: v.id, balance: a.balance, held: a.held, credential_status: a.credential_status };
  }

  /** Seed, frozen flag and the venues. */
  state(): SimMarketState {
    const now = this.currentTime();
    return {
      seed: this.seed,
      frozen: this.frozen,
      now_ms: now,
      activity: this.activity,
      running: this.timer !== null,
      listener_errors: this.listenerErrors,
      venues: SIM_PARTNER_IDS.map((id) => {
        const v = this.venues.get(id)!;
        const caps = v.pers.capabilities;
        return {
          partner_id: id,
          name: v.pers.partner.name,
          orders_allowed: v.pers.partner.orders_allowed,
          internal_book: v.pers.partner.internal_book,
          quote_source: caps.quotes.streaming ? 'streaming' : caps.quotes.snapshot ? 'polling' : null,
          poll_interval_ms: caps.quotes.poll_interval_ms,
          publishes_trades: caps.trades,
          listings: v.listings.length,
          stale: now < v.staleUntil,
          accounts: v.accounts.size,
          situations: { ...v.situationsStarted },
        };
      }),
    };
  }

  // ---- venue-side API (used by the simulated venue servers) -----------------------------------

  /** @internal */
  _venue(partnerId: SimPartnerId): VenueRt {
    return this.venues.get(partnerId)!;
  }

  /** @internal What the situations work on (tests start one spontaneous situation on purpose). */
  _situations(): SituationCtx {
    return this.situations;
  }

  instruments(partnerId: SimPartnerId): SimInstrument[] {
    return this.venues.get(partnerId)!.listings.map((l) => l.inst);
  }

  instrument(partnerId: SimPartnerId, instrumentId: string): SimInstrument | undefined {
    return this.venues.get(partnerId)!.byInstrument.get(instrumentId)?.inst;
  }

  instrumentForPosition(partnerId: SimPartnerId, positionHash: string): SimInstrument | undefined {
    return this.venues.get(partnerId)!.byPosition.get(positionHash)?.inst;
  }

  /** The book a venue offers on an instrument now. */
  book(partnerId: SimPartnerId, instrumentId: string): SimQuoteEvent | undefined {
    const l = this.venues.get(partnerId)!.byInstrument.get(instrumentId);
    return l ? this.quoteEvent(l) : undefined;
  }

  /** Every listing of a venue as it stands (for polled snapshots). */
  books(partnerId: SimPartnerId): SimQuoteEvent[] {
    return this.venues.get(partnerId)!.listings.map((l) => this.quoteEvent(l));
  }

  isPosition(hash: string): boolean {
    return this.byHash.has(hash);
  }

  /** The position a liquidity_hash of any sim venue prices, or undefined. */
  positionOfLiquidityHash(hash: string): string | undefined {
    for (const v of this.quoting) {
      const prefix = v.id + ':';
      if (hash.startsWith(prefix)) return v.byInstrument.get(hash.slice(prefix.length))?.pr.pos.position_hash;
    }
    return undefined;
  }

  contestIds(): string[] {
    return [...this.contests.keys()];
  }

  gameState(contestId: string): SimStateEvent | undefined {
    const c = this.contests.get(contestId);
    if (!c) return undefined;
    return { contest_id: contestId, state: structuredClone(c.state), ts_event: c.stateTs };
  }

  /** Results of a settled contest, or undefined. */
  results(contestId: string): SimSettleEvent | undefined {
    const c = this.contests.get(contestId);
    if (!c || !c.results) return undefined;
    return { contest_id: contestId, winner_participant_id: c.winner, results: [...c.results].map(([position_hash, result]) => ({ position_hash, result })), ts_event: c.stateTs };
  }

  submitOrder(partnerId: SimPartnerId, req: SimWireOrderRequest): SimWireOrderAck {
    const v = this.venues.get(partnerId)!;
    return toAck(v, placeOrder(this.engine, v, req));
  }

  cancelOrder(partnerId: SimPartnerId, accountId: string, orderId: string): SimWireOrderAck {
    const v = this.venues.get(partnerId)!;
    return toAck(v, cancelOrder(this.engine, v, accountId, orderId));
  }

  order(partnerId: SimPartnerId, accountId: string, orderId: string): SimWireOrderAck | undefined {
    const v = this.venues.get(partnerId)!;
    const o = v.orders.get(orderId);
    return o && o.account_id === accountId ? toAck(v, o) : undefined;
  }

  balance(partnerId: SimPartnerId, accountId: string): SimWireBalance | undefined {
    const a = this.venues.get(partnerId)!.accounts.get(accountId);
    if (!a) return undefined;
    return { account_id: accountId, available_usd: a.balance, held_usd: a.held, credential_status: a.credential_status, ts: this.currentTime() };
  }

  // ---- listeners ---------------------------------------------------------------------------------

  onQuote(fn: Listener<SimQuoteEvent>, partnerId?: string): () => void {
    return addKeyed(this.quoteListeners, partnerId ?? '*', fn);
  }

  onTrade(fn: Listener<SimTradeEvent>, partnerId?: string): () => void {
    return addKeyed(this.tradeListeners, partnerId ?? '*', fn);
  }

  onOrder(fn: Listener<SimOrderEvent>, partnerId?: string): () => void {
    return addKeyed(this.orderListeners, partnerId ?? '*', fn);
  }

  onBalance(fn: Listener<SimBalanceEvent>, partnerId?: string): () => void {
    return addKeyed(this.balanceListeners, partnerId ?? '*', fn);
  }

  onState(fn: Listener<SimStateEvent>): () => void {
    this.stateListeners = [...this.stateListeners, fn];
    return () => {
      this.stateListeners = this.stateListeners.filter((x) => x !== fn);
    };
  }

  onSettle(fn: Listener<SimSettleEvent>): () => void {
    this.settleListeners = [...this.settleListeners, fn];
    return () => {
      this.settleListeners = this.settleListeners.filter((x) => x !== fn);
    };
  }

  // ---- internals ---------------------------------------------------------------------------------

  private venueFor(id: unknown): VenueRt {
    if (typeof id !== 'string' || !isSimPartnerId(id)) throw bad('unknown_partner', `unknown partner ${String(id)}`, { partner_id: id });
    return this.venues.get(id)!;
  }

  private positionFor(hash: unknown): PosRt {
    const pr = typeof hash === 'string' ? this.byHash.get(hash) : undefined;
    if (!pr) throw bad('unknown_position', `unknown position ${String(hash)}`, { position_hash: hash });
    return pr;
  }

  private contestFor(id: unknown): ContestRt {
    const c = typeof id === 'string' ? this.contests.get(id) : undefined;
    if (!c) throw bad('unknown_contest', `unknown contest ${String(id)}`, { contest_id: id });
    return c;
  }

  private settleInternal(c: ContestRt, now: number): SimSettleEvent {
    c.settled = true;
    c.phase = 'final';
    c.results ??= computeResults(c);
    c.stateTs = now;
    const built = buildState(c, now, this.nameOf);
    c.state = c.manual ? { ...c.state, game_status: 'final', contest_result: built.contest_result, winner_participant_id: built.winner_participant_id } : built;
    for (const v of this.venues.values()) {
      if (v.pers.capabilities.orders.place) {
        settleVenue(this.engine, v, c.p.contest_id, c.results);
        forgetSettledOrders(this.engine, v, c.p.contest_id);
      }
      for (const l of v.listings) {
        if (l.pr.c !== c || l.closed) continue;
        l.closed = true;
        l.levels = [];
        this.stamp(l, now);
        this.emitQuote(l);
      }
    }
    this.publishState(c, now, true);
    const ev: SimSettleEvent = {
      contest_id: c.p.contest_id,
      winner_participant_id: c.winner,
      results: [...c.results].map(([position_hash, result]) => ({ position_hash, result })),
      ts_event: now,
    };
    for (const fn of this.settleListeners) this.safe(fn, ev);
    // Settlement feeds name the venues' instruments: delist only once they have gone out.
    for (const v of this.venues.values()) this.delist(v, c);
    this.forgetChurned(c);
    return ev;
  }

  /**
   * A venue stops listing a settled contest (its emptied books went out first): the venue's maps
   * drop its listings, so a market that keeps opening and settling contests does not grow.
   */
  private delist(v: VenueRt, c: ContestRt): void {
    if (!v.listings.some((l) => l.pr.c === c)) return;
    v.listings = v.listings.filter((l) => l.pr.c !== c);
    for (const pr of c.positions) {
      const l = v.byPosition.get(pr.pos.position_hash);
      if (!l) continue;
      v.byPosition.delete(pr.pos.position_hash);
      v.byInstrument.delete(l.inst.instrument_id);
      v.due.delete(l);
      v.groupBias.delete(pr.pos.group_key);
      pr.listings = pr.listings.filter((x) => x !== l);
    }
    v.flipped.delete(c.p.contest_id);
  }

  private publishState(c: ContestRt, now: number, keep = false): void {
    if (!keep && !c.manual) c.state = buildState(c, now, this.nameOf);
    c.stateTs = now;
    c.lastStateEmit = now;
    if (this.stateListeners.length === 0) return;
    const ev: SimStateEvent = { contest_id: c.p.contest_id, state: structuredClone(c.state), ts_event: now };
    for (const fn of this.stateListeners) this.safe(fn, ev);
  }

  private quoteEvent(l: Listing): SimQuoteEvent {
    const top = l.levels[0];
    return { partner_id: l.v.id, instrument: l.inst, levels: l.levels, last_price: top ? top.price : round6(clamp(l.lag, 0.01, 0.99)), ts_event: l.ts_event };
  }

  private emitQuote(l: Listing): SimQuoteEvent {
    const ev = this.quoteEvent(l);
    const a = this.quoteListeners.get(l.v.id);
    const b = this.quoteListeners.get('*');
    if (a) for (const fn of a) this.safe(fn, ev);
    if (b) for (const fn of b) this.safe(fn, ev);
    return ev;
  }

  private publishTrade(v: VenueRt, l: Listing, action: TakerAction, price: number, size: number, isBlock: boolean, traderId: string | null, at: number): SimTradeEvent {
    const ev: SimTradeEvent = {
      partner_id: v.id,
      trade_id: `${v.id}-t${++v.tradeSeq}`,
      instrument: l.inst,
      taker_action: action,
      price,
      size_contracts: size,
      is_block: isBlock,
      trader_id: traderId,
      trader_id_kind: traderId === null ? null : v.pers.wire === 'book01' ? 'wallet' : 'account',
      executed_at: at,
    };
    recordTape(l, at, price * size, action === 'buy');
    const a = this.tradeListeners.get(v.id);
    const b = this.tradeListeners.get('*');
    if (a) for (const fn of a) this.safe(fn, ev);
    if (b) for (const fn of b) this.safe(fn, ev);
    return ev;
  }

  private emitOrder(v: VenueRt, o: OrderRt): void {
    const a = this.orderListeners.get(v.id);
    const b = this.orderListeners.get('*');
    if (!a && !b) return;
    const ev: SimOrderEvent = { partner_id: v.id, ack: toAck(v, o) };
    if (a) for (const fn of a) this.safe(fn, ev);
    if (b) for (const fn of b) this.safe(fn, ev);
  }

  private emitBalance(v: VenueRt, acc: AccountRt, reason: SimWireBalanceEvent['reason'], orderId: string | null): void {
    const a = this.balanceListeners.get(v.id);
    const b = this.balanceListeners.get('*');
    if (!a && !b) return;
    const ev: SimBalanceEvent = {
      partner_id: v.id,
      event: { account_id: acc.account_id, available_usd: acc.balance, held_usd: acc.held, credential_status: acc.credential_status, ts: this.currentTime(), reason, order_id: orderId },
    };
    if (a) for (const fn of a) this.safe(fn, ev);
    if (b) for (const fn of b) this.safe(fn, ev);
  }

  /** A throwing subscriber must not stop the market; it is counted in state().listener_errors. */
  private safe<T>(fn: Listener<T>, ev: T): void {
    try {
      fn(ev);
    } catch {
      this.listenerErrors++;
    }
  }
}

function addKeyed<T>(map: Map<string, Listener<T>[]>, key: string, fn: Listener<T>): () => void {
  // Copy-on-write so an unsubscribe during dispatch does not skip a neighbour.
  map.set(key, [...(map.get(key) ?? []), fn]);
  return () => {
    const next = (map.get(key) ?? []).filter((x) => x !== fn);
    if (next.length === 0) map.delete(key);
    else map.set(key, next);
  };
}

function checkPrice(p: unknown): void {
  if (!(typeof p === 'number' && Number.isFinite(p) && p > 0 && p < 1)) throw bad('invalid_price', `price must be strictly between 0 and 1: ${String(p)}`);
}

function checkAvailable(a: unknown): void {
  if (!(typeof a === 'number' && Number.isFinite(a) && a >= 0)) throw bad('invalid_available', `available must be a non-negative number: ${String(a)}`);
}
