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
 *
 * This class is the market's one entrance; the work is done by a module per concern over its
 * shared state (core.ts): setup.ts (the world laid out), pricing.ts (a venue's books), dynamics.ts
 * (time), churn.ts (contests opening while running), settlement.ts (a contest's end), operator.ts
 * (the operator's controls), situations.ts (market situations), engine.ts (orders and money),
 * publish.ts and feeds.ts (the events and who hears them), listings.ts (what a venue lists).
 */
import type { GameState } from '../venues/types.js';
import { buildSimWorld, type SimCatalog } from './catalog.js';
import { bad, currentTime, type MarketCore } from './core.js';
import { advance, burst } from './dynamics.js';
import { cancelOrder, matchResting, placeOrder, toAck } from './engine.js';
import type {
  ConnectAccountInput,
  EmitTradeInput,
  Listener,
  SetQuoteInput,
  SettleInput,
  SimAccountConnection,
  SimBalanceEvent,
  SimChurnOptions,
  SimContestOpenedEvent,
  SimMarketOptions,
  SimMarketState,
  SimOrderEvent,
  SimQuoteEvent,
  SimSettleEvent,
  SimStateEvent,
  SimTradeEvent,
} from './events.js';
import { Feeds } from './feeds.js';
import type { SimInstrument, SimWireBalance, SimWireOrderAck, SimWireOrderRequest } from './messages.js';
import * as operator from './operator.js';
import { isSimPartnerId, type SimPartnerId } from './personalities.js';
import { bestLivePrice, quantize, stamp } from './pricing.js';
import { emitBalance, emitOrder, emitQuote, publishTrade, quoteEvent } from './publish.js';
import { Rng, hashSeed } from './rng.js';
import type { VenueRt } from './runtime.js';
import { initWorld } from './setup.js';
import { forceSituation, type SituationCtx, type SituationResult } from './situations.js';

export type * from './events.js';

export class SimMarket {
  readonly seed: number;
  readonly catalog: SimCatalog;
  private readonly core: MarketCore;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(opts: SimMarketOptions) {
    if (!Number.isInteger(opts.seed)) throw bad('invalid_seed', `seed must be an integer: ${opts.seed}`);
    this.seed = opts.seed;
    const now = opts.now === undefined ? Date.now() : typeof opts.now === 'number' ? opts.now : opts.now.getTime();
    const world = buildSimWorld(opts.seed, now);
    this.catalog = world.catalog;
    const walletRng = new Rng(hashSeed(opts.seed, 'wallets'));
    const core: MarketCore = {
      seed: opts.seed,
      world,
      catalog: world.catalog,
      rng: new Rng(hashSeed(opts.seed, 'dynamics')),
      srng: new Rng(hashSeed(opts.seed, 'situations')),
      contests: new Map(),
      positions: [],
      byHash: new Map(),
      participantNames: new Map(),
      contestParticipants: new Map(),
      venues: new Map(),
      quoting: [],
      wallets: Array.from({ length: 40 }, () => '0x' + Array.from({ length: 40 }, () => '0123456789abcdef'[walletRng.int(0, 15)]).join('')),
      feeds: new Feeds(),
      lastNow: now,
      externalClock: null,
      frozen: false,
      activity: opts.activity ?? 1,
      positionSeq: 0,
      churn: { opts: null, nextAt: 0, seq: 0 },
      engine: null as never,
      situations: null as never,
    };
    core.engine = {
      now: () => currentTime(core),
      bookChanged: (l) => emitQuote(core, l),
      orderChanged: (v, o) => emitOrder(core, v, o),
      balanceChanged: (v, a, reason, orderId) => emitBalance(core, v, a, reason, orderId),
      position: (h) => core.byHash.get(h),
      stamp: (l) => stamp(core, l, currentTime(core)),
      bestLivePrice: (h) => bestLivePrice(core, h),
    };
    core.situations = {
      now: () => currentTime(core),
      quoting: core.quoting,
      venue: (id) => (isSimPartnerId(id) ? core.venues.get(id) : undefined),
      position: (h) => core.byHash.get(h),
      quantize: (l, p) => quantize(l, p),
      isStale: (v, t) => t < v.staleUntil,
      trader: (v, key) => (v.pers.wire === 'book01' ? core.wallets[hashSeed(core.seed, key) % core.wallets.length]! : null),
      print: (l, action, price, size, isBlock, traderId, at) => publishTrade(core, l.v, l, action, price, size, isBlock, traderId, at),
      publishBook: (l) => {
        stamp(core, l, currentTime(core));
        matchResting(core.engine, l);
        return emitQuote(core, l);
      },
    };
    this.core = core;
    initWorld(core, now);
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
    this.core.churn.opts = opts;
    this.core.churn.nextAt = currentTime(this.core);
  }

  /** Listens for contests the market opens while running (churn); the catalog must learn them. */
  onContestOpened(fn: Listener<SimContestOpenedEvent>): () => void {
    return this.core.feeds.opened.add(fn);
  }

  /** How many contests the model holds (the world's, plus churned ones not yet settled). */
  contestCount(): number {
    return this.core.contests.size;
  }

  // ---- time ------------------------------------------------------------------------------------

  /** The model's current time: the last tick, or the attached clock when running. */
  nowMs(): number {
    return currentTime(this.core);
  }

  /**
   * Advances the world to `nowMs`: contests and latent prices move, venues reprice, trade, go
   * stale or misprice, due async fills land. When frozen only order mechanics (async fills)
   * progress. Times before the last tick are treated as the last tick.
   */
  tick(nowMs: number): void {
    advance(this.core, nowMs);
  }

  /**
   * Produces `n` quote changes at once, as fast as possible (for benchmarks and load): random
   * listings of the quoting venues reprice and publish. Returns how many changes went out
   * (0 while frozen: frozen quotes only change through setQuote).
   */
  burst(n: number): number {
    return burst(this.core, n);
  }

  /** Runs `tick(clock())` every `interval_ms` (default 250) until stop(). */
  start(opts: { interval_ms?: number; clock?: () => number } = {}): void {
    if (this.timer) return;
    const clock = opts.clock ?? Date.now;
    this.core.externalClock = clock;
    this.timer = setInterval(() => this.tick(clock()), opts.interval_ms ?? 250);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  setActivity(multiplier: number): void {
    if (!(Number.isFinite(multiplier) && multiplier >= 0)) throw bad('invalid_request', `activity must be a non-negative number: ${multiplier}`);
    this.core.activity = multiplier;
  }

  // ---- control operations (operator interface; operator.ts) --------------------------------------

  /** Stops (true) or restarts (false) the random dynamics. Restarting releases setQuote pins. */
  freeze(frozen: boolean): void {
    operator.freeze(this.core, frozen);
  }

  isFrozen(): boolean {
    return this.core.frozen;
  }

  /**
   * Sets one venue's quote and book for a position and publishes it. The listing is pinned:
   * dynamics leave it alone until `freeze(false)`. `levels` is the whole book (best first); it
   * may start with the {price, available} level or hold only deeper levels.
   */
  setQuote(input: SetQuoteInput): SimQuoteEvent {
    return operator.setQuote(this.core, input);
  }

  /** Publishes a trade print on a venue that publishes trades. */
  emitTrade(input: EmitTradeInput): SimTradeEvent {
    return operator.emitTrade(this.core, input);
  }

  /**
   * Makes a market situation (a signal type of the spec) happen now, exactly: on the venue and
   * position given, or the first that can carry it. Prints go out on the venue's trade feed and
   * books on its quote feed. See situations.ts for the request and what each type does.
   */
  forceSituation(input: unknown): SituationResult {
    return forceSituation(this.core.situations, input);
  }

  /** Sets live game state fields; the contest then leaves automatic lifecycle (until settled). */
  setState(contestId: string, fields: Partial<GameState>): GameState {
    return operator.setState(this.core, contestId, fields);
  }

  /**
   * Settles a contest: `{winner_participant_id}` (the rest follows from the final score) or
   * `{results: {position_hash: win|lose|push}}` (listed positions; the others of a group a
   * listed winner decides lose, anything still undecided pushes).
   */
  settle(contestId: string, input: SettleInput): SimSettleEvent {
    return operator.settle(this.core, contestId, input);
  }

  /** Connects a sim venue to an account as the hosted flow would, with a venue balance. */
  connectAccount(routerAccountId: string, input: ConnectAccountInput): SimAccountConnection {
    return operator.connectAccount(this.core, routerAccountId, input);
  }

  /** Seed, frozen flag and the venues. */
  state(): SimMarketState {
    return operator.marketState(this.core, this.timer !== null);
  }

  // ---- venue-side API (used by the simulated venue servers) -----------------------------------

  /** @internal */
  _venue(partnerId: SimPartnerId): VenueRt {
    return this.core.venues.get(partnerId)!;
  }

  /** @internal What the situations work on (tests start one spontaneous situation on purpose). */
  _situations(): SituationCtx {
    return this.core.situations;
  }

  instruments(partnerId: SimPartnerId): SimInstrument[] {
    return this._venue(partnerId).listings.map((l) => l.inst);
  }

  instrument(partnerId: SimPartnerId, instrumentId: string): SimInstrument | undefined {
    return this._venue(partnerId).byInstrument.get(instrumentId)?.inst;
  }

  instrumentForPosition(partnerId: SimPartnerId, positionHash: string): SimInstrument | undefined {
    return this._venue(partnerId).byPosition.get(positionHash)?.inst;
  }

  /** The book a venue offers on an instrument now. */
  book(partnerId: SimPartnerId, instrumentId: string): SimQuoteEvent | undefined {
    const l = this._venue(partnerId).byInstrument.get(instrumentId);
    return l ? quoteEvent(l) : undefined;
  }

  /** Every listing of a venue as it stands (for polled snapshots). */
  books(partnerId: SimPartnerId): SimQuoteEvent[] {
    return this._venue(partnerId).listings.map((l) => quoteEvent(l));
  }

  isPosition(hash: string): boolean {
    return this.core.byHash.has(hash);
  }

  /** The position a liquidity_hash of any sim venue prices, or undefined. */
  positionOfLiquidityHash(hash: string): string | undefined {
    for (const v of this.core.quoting) {
      const prefix = v.id + ':';
      if (hash.startsWith(prefix)) return v.byInstrument.get(hash.slice(prefix.length))?.pr.pos.position_hash;
    }
    return undefined;
  }

  contestIds(): string[] {
    return [...this.core.contests.keys()];
  }

  gameState(contestId: string): SimStateEvent | undefined {
    const c = this.core.contests.get(contestId);
    if (!c) return undefined;
    return { contest_id: contestId, state: structuredClone(c.state), ts_event: c.stateTs };
  }

  /** Results of a settled contest, or undefined. */
  results(contestId: string): SimSettleEvent | undefined {
    const c = this.core.contests.get(contestId);
    if (!c || !c.results) return undefined;
    return { contest_id: contestId, winner_participant_id: c.winner, results: [...c.results].map(([position_hash, result]) => ({ position_hash, result })), ts_event: c.stateTs };
  }

  submitOrder(partnerId: SimPartnerId, req: SimWireOrderRequest): SimWireOrderAck {
    const v = this._venue(partnerId);
    return toAck(v, placeOrder(this.core.engine, v, req));
  }

  cancelOrder(partnerId: SimPartnerId, accountId: string, orderId: string): SimWireOrderAck {
    const v = this._venue(partnerId);
    return toAck(v, cancelOrder(this.core.engine, v, accountId, orderId));
  }

  order(partnerId: SimPartnerId, accountId: string, orderId: string): SimWireOrderAck | undefined {
    const v = this._venue(partnerId);
    const o = v.orders.get(orderId);
    return o && o.account_id === accountId ? toAck(v, o) : undefined;
  }

  balance(partnerId: SimPartnerId, accountId: string): SimWireBalance | undefined {
    const a = this._venue(partnerId).accounts.get(accountId);
    if (!a) return undefined;
    return { account_id: accountId, available_usd: a.balance, held_usd: a.held, credential_status: a.credential_status, ts: currentTime(this.core) };
  }

  // ---- listeners (feeds.ts) ----------------------------------------------------------------------

  onQuote(fn: Listener<SimQuoteEvent>, partnerId?: string): () => void {
    return this.core.feeds.quotes.add(partnerId ?? '*', fn);
  }

  onTrade(fn: Listener<SimTradeEvent>, partnerId?: string): () => void {
    return this.core.feeds.trades.add(partnerId ?? '*', fn);
  }

  onOrder(fn: Listener<SimOrderEvent>, partnerId?: string): () => void {
    return this.core.feeds.orders.add(partnerId ?? '*', fn);
  }

  onBalance(fn: Listener<SimBalanceEvent>, partnerId?: string): () => void {
    return this.core.feeds.balances.add(partnerId ?? '*', fn);
  }

  onState(fn: Listener<SimStateEvent>): () => void {
    return this.core.feeds.states.add(fn);
  }

  onSettle(fn: Listener<SimSettleEvent>): () => void {
    return this.core.feeds.settlements.add(fn);
  }
}
