/**
 * Ingest: venue adapters → normalized quotes, trades and game state → Redis venue state, coalesced
 * per contest → one pending liquidity job per contest. Streaming venues push; polling venues are
 * fetched on their declared interval and only changed quotes go on (unchanged ones are re-confirmed
 * at most every REFRESH_MS so they do not read as stale). A streaming venue that can also answer a
 * snapshot is re-read every REFRESH_MS / 4: a venue sends nothing for a quote that did not change, and the
 * snapshot is what confirms it. Each stored quote carries when it stops counting as confirmed
 * (its venue's freshness bound), and a contest whose quote passes that instant unconfirmed is
 * recomputed then, so `is_stale` shows even when nothing else arrives.
 */
import { randomUUID } from 'node:crypto';
import { contestOfPositionHash, parsePositionHash } from '../../src/domain/hashes.js';
import { isClosedGameStatus } from '../../src/domain/lifecycle.js';
import { normalizeVenueTrade } from '../../src/domain/trades.js';
import type { Logger } from '../../src/log.js';
import type { HotState, VenueStateTexts } from '../../src/store/redis/hot.js';
import type { HistAppend } from '../../src/store/redis/eventlog.js';
import type { TickRow } from '../../src/domain/history.js';
import type { GameStateRecord, NormalizedQuote, NormalizedTrade, PriceLevel, StoredQuote, VenueAdapter } from '../../src/venues/types.js';
import { freshnessByVenue, QUOTE_RECONFIRM_MS, quoteStaleAfterMs } from '../../src/venues/freshness.js';
import { toContestState } from '../../src/venues/types.js';
import { DueBySecond } from './due-by-second.js';
import type { LiquidityProducer } from '../producers/liquidity.js';

/**
 * The compute role in this process (`flow all`; cli/roles/start.ts): a moved contest is computed at
 * once, without a queued job, when it has room. Durable all the same: the venue-state write marks
 * the contest taken in the same atomic step (the hot state's `fastp`), a stored computation clears
 * the mark, and a mark older than FAST_PATH_GRACE_MS (the process died, the computation failed) is
 * queued as a job then.
 */
export interface FastPath {
  /** Takes a computation if there is room; false leaves the change to the queue. */
  reserve(): boolean;
  /**
   * Whether the fast path, busy, has room to take a contest for later: the change is then written
   * marked taken (writeQuotesTakingLater) and handed over with later() once written. A contest
   * already waiting there counts as room.
   */
  roomLater(contestId: string): boolean;
  /** Computes the contest once the running computation is done, reading its venue state then; false (no room after all) leaves it to the queue. */
  later(contestId: string): boolean;
  /** Gives back a reservation whose venue-state write failed. */
  release(): void;
  /** The snapshot texts the computation holds for a contest (the write need not send back the one stored, if it is among them). */
  held(contestId: string): readonly string[];
  /** Computes the contest on its reservation, from the venue state the write answered. */
  compute(contestId: string, state: VenueStateTexts): void;
}

export interface IngesterDeps {
  adapters: VenueAdapter[];
  hot: HotState;
  producer: LiquidityProducer;
  log: Logger;
  now: () => number;
  /** Contest → league, for routing stream events by league. */
  leagueOf: (contestId: string) => string | null;
  partnerName: (partnerId: string) => string;
  /** Position → its market id (router_market_id on trade prints). */
  marketOf: (positionHash: string) => string | null;
  /** A contest closed (game_status final or cancelled). */
  onFinal?: (contestId: string) => void;
  /**
   * Flush on its own (default): at the end of the event-loop turn that accepted a change, and
   * again as soon as the running flush ends if changes arrived meanwhile. False: only when told
   * (tests that control every step).
   */
  autoFlush?: boolean;
  /** Most tick-history rows held while Redis cannot take them; beyond it the oldest are dropped and counted. */
  maxPendingTicks?: number;
  /** Upper bound on remembered quotes (the last-seen map); default MAX_SEEN. */
  maxSeen?: number;
  /** How long a fast-path computation may take before its contest is queued (default FAST_PATH_GRACE_MS). */
  fastPathGraceMs?: number;
  /** How often those are looked for (default FAST_PATH_SWEEP_MS; 0: never, tests call queueUnfinishedFastPaths). */
  fastPathSweepMs?: number;
}

const REFRESH_MS = QUOTE_RECONFIRM_MS;
/**
 * Each quote is re-confirmed once it is between half of REFRESH_MS and REFRESH_MS old, at a point
 * fixed by its liquidity hash: quotes first seen together (a venue's first snapshot) then come up
 * for re-confirmation spread over several polls instead of all in one, which held Redis and the
 * event loop for tens of milliseconds every 20 s (bench stream-latency's p99).
 */
function refreshAfterMs(liquidityHash: string): number {
  let h = 2166136261;
  for (let i = 0; i < liquidityHash.length; i++) h = Math.imul(h ^ liquidityHash.charCodeAt(i), 16777619);
  return REFRESH_MS * (0.5 + ((h >>> 0) % 1024) / 2048);
}
/** How often due staleness checks run. */
const STALE_CHECK_MS = 1_000;
/**
 * A fast-path computation takes milliseconds; one not stored this long after its change was taken
 * (its process died, it failed) is queued as a job. Checked every FAST_PATH_SWEEP_MS, at most
 * FAST_PATH_SWEEP_MAX contests a check. A slow computation that does finish costs one extra job
 * that finds nothing to do.
 */
const FAST_PATH_GRACE_MS = 2_000;
const FAST_PATH_SWEEP_MS = 1_000;
const FAST_PATH_SWEEP_MAX = 500;
/**
 * Contests whose write held re-confirmations only (nothing moved) are recomputed at a trickle, not
 * all at once: every RECONFIRM_TICK_MS a 1/RECONFIRM_SPREAD_TICKS share of them (at least one) is
 * queued. A venue snapshot re-confirms every contest in the same instant, and a burst of
 * recomputations that change nothing must not hold up the one a real change needs (bench
 * stream-latency). Their venue state is written at once all the same (staleness reads it).
 */
const RECONFIRM_TICK_MS = 50;
const RECONFIRM_SPREAD_TICKS = 20;
/**
 * A contest is recomputed for re-confirmations at most once per RECONFIRM_RECOMPUTE_MS (counted from
 * its last recomputation for any cause): such a recomputation only moves `as_of` values in the REST
 * answer, and every quote re-confirms every 10-20 s, so without this bound a contest of fifty
 * quotes was recomputed about once a second at rest, about a fifth of a loaded service's work.
 * Staleness does not wait on it (the stored venue state is what the stale sweep reads), and a quote
 * re-confirmed after its venue's freshness bound ran out (it read stale) is recomputed at once.
 */
export const RECONFIRM_RECOMPUTE_MS = 10_000;
/** After a flush Redis refused, the next attempt (a changed quote also triggers one). */
const RETRY_FLUSH_MS = 100;
const MAX_PENDING_TICKS = 200_000;
/** How often the marker is checked (one SET of a few bytes), and its lifetime without a check. */
const MARKER_CHECK_MS = 250;
const MARKER_TTL_MS = 60_000;
/** Far above any real catalog's quote count: a safety net, not the normal way entries go. */
const MAX_SEEN = 500_000;

interface Seen {
  /** How old the quote may get before an unchanged copy is passed on again (refreshAfterMs). */
  refreshMs: number;
  partner: string;
  price: number;
  available: number;
  at: number;
  /** The book behind the best level (kept by reference: quotes are never changed once accepted). */
  levels: readonly PriceLevel[];
  side: string;
  /** The position_hash this process last wrote into the `lqp` index for the listing (null: none yet). */
  indexed: string | null;
}

/** Whether two books are the same past what price and available say: both one level or none, or level by level equal. */
function sameDepth(a: readonly PriceLevel[], b: readonly PriceLevel[]): boolean {
  if (a.length <= 1 && b.length <= 1) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.price !== b[i]!.price || a[i]!.available !== b[i]!.available) return false;
  return true;
}

export class Ingester {
  private readonly pending = new Map<string, Map<string, StoredQuote>>();
  /** partner_id → freshness bound (ms) of the venues that quote. */
  private readonly freshness: Map<string, number>;
  /** The adapters being read, by id (attach). */
  private readonly attached = new Map<string, VenueAdapter>();
  /** Contests with a quote that stops counting as confirmed in a second (unix s), by that second. */
  private readonly staleDue = new DueBySecond();
  /** Every price or size change per contest since the last flush: tick history keeps each one. */
  private readonly pendingTicks = new Map<string, TickRow[]>();
  private pendingTickCount = 0;
  private flushScheduled = false;
  /** Contests with a pending change beyond re-confirmations (recomputed at once). */
  private readonly moved = new Set<string>();
  /** Contests whose venue state holds re-confirmations not yet recomputed (see RECONFIRM_TICK_MS). */
  private readonly reconfirmed = new Set<string>();
  /** When each contest's recomputation was last queued or taken (oldest first; pruned past RECONFIRM_RECOMPUTE_MS). */
  private readonly recomputedAt = new Map<string, number>();
  /** Re-confirmed contests waiting out RECONFIRM_RECOMPUTE_MS, by the second they are due, and each one's second. */
  private readonly reconfirmDue = new DueBySecond();
  private readonly reconfirmDueOf = new Map<string, number>();
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /**
   * The last quote passed on per contest and liquidity_hash, to pass on only changes. Dropped when
   * the contest closes; capped (oldest contest first) should contests never close.
   */
  private readonly lastSeen = new Map<string, Map<string, Seen>>();
  private seenCount = 0;
  /** Contests that closed → until when to remember it (late quotes are not remembered then). */
  private readonly closed = new Map<string, number>();
  private readonly unsubs: (() => void)[] = [];
  /** The last snapshot of each polled venue, to notice offers it stopped listing. */
  private readonly polled = new Map<string, Map<string, NormalizedQuote>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private flushing: Promise<boolean> | null = null;
  /** This process's marker in Redis (see watchForDataLoss). */
  private readonly marker = randomUUID();
  private watching = false;
  quotesIn = 0;
  quotesFlushed = 0;
  /** The co-located compute, when this process runs one (see FastPath). */
  fastPath: FastPath | null = null;
  /** Changes handed to the fast path without a job. */
  fastPathTaken = 0;
  /** Changes the fast path took for when its running computation was done (metrics, tests). */
  fastPathLater = 0;
  private sweepingTaken = false;
  /** Tick-history rows dropped because Redis stayed out of reach past maxPendingTicks. */
  ticksDropped = 0;

  constructor(private readonly d: IngesterDeps) {
    this.freshness = freshnessByVenue(d.adapters.map((a) => a.describe()));
  }

  async start(): Promise<void> {
    // The marker first: what is written from here on is what a data loss would take away.
    await this.d.hot.confirmMarker(this.marker, MARKER_TTL_MS);
    for (const a of this.d.adapters) {
      await a.connect();
      await this.attach(a);
    }
    const watch = setInterval(() => void this.watchForDataLoss(), MARKER_CHECK_MS);
    watch.unref();
    this.timers.push(watch);
    const stale = setInterval(() => void this.recomputeStale(), STALE_CHECK_MS);
    stale.unref();
    this.timers.push(stale);
    const trickle = setInterval(() => void this.recomputeReconfirmed(), RECONFIRM_TICK_MS);
    trickle.unref();
    this.timers.push(trickle);
    // Also what a fast path of an earlier life of this process took and never stored (it died).
    const sweepMs = this.d.fastPathSweepMs ?? FAST_PATH_SWEEP_MS;
    if (sweepMs > 0) {
      const taken = setInterval(() => void this.queueUnfinishedFastPaths(), sweepMs);
      taken.unref();
      this.timers.push(taken);
    }
  }

  /** Queues the contests whose fast-path computation was taken too long ago and is not stored. */
  async queueUnfinishedFastPaths(): Promise<number> {
    if (this.sweepingTaken) return 0;
    this.sweepingTaken = true;
    try {
      const taken = await this.d.hot.takenBefore(this.d.fastPathGraceMs ?? FAST_PATH_GRACE_MS, FAST_PATH_SWEEP_MAX);
      // Queued first, unmarked after: a crash in between leaves the mark, and one more job.
      for (const t of taken) {
        await this.d.producer.enqueue(t.contestId);
        await this.d.hot.dropTaken(t.contestId, t.at);
      }
      if (taken.length) this.d.log.warn({ contests: taken.length }, 'queued contests whose fast-path computation did not finish');
      return taken.length;
    } catch (err) {
      this.d.log.warn({ err }, 'checking for unfinished fast-path computations failed; will retry');
      return 0;
    } finally {
      this.sweepingTaken = false;
    }
  }

  /**
   * Starts reading a connected adapter: its quote stream, a first snapshot and polling, its trades
   * and game state. start() does this for the adapters it connects; a venue connected later (in
   * the background, once its host answers: cli/roles/venues.ts) is attached here then. Once per
   * adapter; stop() closes every attached adapter.
   */
  async attach(a: VenueAdapter): Promise<void> {
    if (this.stopped || this.attached.has(a.id)) return;
    const desc = a.describe();
    for (const [id, ms] of freshnessByVenue([desc])) this.freshness.set(id, ms);
    const caps = desc.capabilities;
    // All subscriptions or none: a venue that refuses one (it dropped meanwhile) can be attached again.
    const subs: (() => void)[] = [];
    try {
      if (caps.quotes.streaming) subs.push(a.subscribeQuotes((q) => this.accept(q)));
      if (caps.trades) subs.push(a.subscribeTrades((t) => this.acceptTrade(t)));
      if (caps.game_state) subs.push(a.subscribeGameState((s) => void this.acceptState(s)));
    } catch (err) {
      for (const u of subs) u();
      throw err;
    }
    this.unsubs.push(...subs);
    this.attached.set(a.id, a);
    if (caps.quotes.snapshot) {
      // A first snapshot for every venue, then polling where the venue does not stream.
      await this.poll(a);
      const every = caps.quotes.streaming ? REFRESH_MS / 4 : caps.quotes.poll_interval_ms;
      // stop() may have run during the snapshot: then no timer outlives it.
      if (every && !this.stopped) {
        const t = setInterval(() => void this.poll(a), every);
        t.unref();
        this.timers.push(t);
      }
    }
  }

  /**
   * Redis may come back empty (restarted without persistence, flushed): the venue state, computed
   * liquidity and job keys are gone, and a quote no venue changes again would stay missing. This
   * process keeps a marker key there; when it is gone, hot state is rebuilt at once from every
   * venue's current book through the normal pipeline, as if each quote had just changed.
   */
  private async watchForDataLoss(): Promise<void> {
    if (this.watching || !this.d.hot.available) return;
    this.watching = true;
    try {
      if ((await this.d.hot.confirmMarker(this.marker, MARKER_TTL_MS)) === 'lost') await this.rebuild();
    } catch {
      // Redis went away again: the next check tries again.
    } finally {
      this.watching = false;
    }
  }

  private async rebuild(): Promise<void> {
    const venues = [...this.attached.values()].filter((a) => a.describe().capabilities.quotes.snapshot);
    this.d.log.warn({ venues: venues.map((a) => a.id) }, "Redis lost its data: rebuilding venue state from the venues' current books");
    // What was passed on is gone from Redis: forget it, so every current quote counts as a change.
    this.lastSeen.clear();
    this.seenCount = 0;
    await Promise.all(venues.map((a) => this.poll(a)));
    await this.flush();
  }

  /** Reads a polled venue now (after an operator changed it) instead of at its next interval. */
  pollNow(a: VenueAdapter): Promise<void> {
    return this.poll(a);
  }

  private async poll(a: VenueAdapter): Promise<void> {
    try {
      const quotes = await a.fetchQuotes();
      const now = new Map<string, NormalizedQuote>();
      for (const q of quotes) {
        now.set(q.liquidity_hash, q);
        this.accept(q);
      }
      // A polled venue withdraws an offer by no longer listing it: that is a quote gone empty.
      const before = this.polled.get(a.id);
      if (before) {
        const tsInit = this.d.now();
        for (const [h, q] of before) {
          if (!now.has(h) && q.available > 0) this.accept({ ...q, available: 0, levels: [], ts_init: tsInit, ts_event: tsInit });
        }
      }
      this.polled.set(a.id, now);
    } catch (err) {
      this.d.log.warn({ err, partner_id: a.id }, 'poll failed; retrying on the next interval');
    }
  }

  /** Takes one quote; only a change (or a due re-confirmation) is passed on. */
  accept(q: NormalizedQuote): void {
    this.quotesIn++;
    const contestId = contestOfPositionHash(q.position_hash);
    if (contestId === null) return;
    let bySeen = this.lastSeen.get(contestId);
    const seen = bySeen?.get(q.liquidity_hash);
    const moved = !seen || seen.price !== q.price || seen.available !== q.available;
    const reconfirmOnly = !moved && sameDepth(seen.levels, q.levels) && seen.side === q.venue_side_key;
    if (reconfirmOnly && q.ts_init - seen.at < seen.refreshMs) return;
    if (moved) this.addTick(contestId, q);
    // A re-confirmation after the venue's freshness bound ran out brings a stale quote back: shown at once.
    const bound = this.freshness.get(q.partner_id);
    const revived = reconfirmOnly && bound != null && q.ts_init - seen.at >= bound;
    if (!reconfirmOnly || revived) this.moved.add(contestId);
    // A closed contest's straggling quotes still reach its (expiring) hot state, but are not remembered.
    if (!this.closed.has(contestId)) {
      if (seen) {
        // Updated in place: one long-lived object per listing rather than a new one per quote.
        seen.partner = q.partner_id;
        seen.price = q.price;
        seen.available = q.available;
        seen.at = q.ts_init;
        seen.levels = q.levels;
        seen.side = q.venue_side_key;
      } else {
        if (!bySeen) this.lastSeen.set(contestId, (bySeen = new Map()));
        this.seenCount++;
        bySeen.set(q.liquidity_hash, { refreshMs: refreshAfterMs(q.liquidity_hash), partner: q.partner_id, price: q.price, available: q.available, at: q.ts_init, levels: q.levels, side: q.venue_side_key, indexed: null });
        if (this.seenCount > (this.d.maxSeen ?? MAX_SEEN)) this.evictOldestSeen(contestId);
      }
    }
    let m = this.pending.get(contestId);
    if (!m) this.pending.set(contestId, (m = new Map()));
    m.set(q.liquidity_hash, bound === undefined ? q : { ...q, stale_after_ms: quoteStaleAfterMs(q.ts_init, bound) });
    this.scheduleFlush();
  }

  /** A price or size change becomes one tick-history row, written with the venue state (one atomic step). */
  private addTick(contestId: string, q: NormalizedQuote): void {
    let rows = this.pendingTicks.get(contestId);
    if (!rows) this.pendingTicks.set(contestId, (rows = []));
    rows.push({ ts: q.ts_init, contest_id: contestId, position_hash: q.position_hash, partner_id: q.partner_id, price: q.price, available: q.available, liquidity_hash: q.liquidity_hash, source: q.source });
    if (++this.pendingTickCount > (this.d.maxPendingTicks ?? MAX_PENDING_TICKS)) this.dropOldestTicks();
  }

  private dropOldestTicks(): void {
    // The contest that has waited longest loses its oldest rows first (Map order is insertion order).
    for (const [contestId, rows] of this.pendingTicks) {
      const excess = this.pendingTickCount - (this.d.maxPendingTicks ?? MAX_PENDING_TICKS);
      if (excess <= 0) return;
      const n = Math.min(excess, rows.length);
      rows.splice(0, n);
      this.pendingTickCount -= n;
      this.ticksDropped += n;
      if (rows.length === 0) this.pendingTicks.delete(contestId);
    }
  }

  /**
   * Group commit: a change is written at the end of the event-loop turn that brought it (no fixed
   * delay when idle); changes that arrive while a flush runs wait for it and go in the next one,
   * so under load each contest's quotes coalesce into one write per round trip.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled || this.stopped || this.d.autoFlush === false) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  /** Tick-history rows waiting to be written (bounded by maxPendingTicks). */
  pendingTickRows(): number {
    return this.pendingTickCount;
  }

  /** Quotes remembered in the last-seen map (for tests and metrics). */
  seenSize(): number {
    return this.seenCount;
  }

  /** Contests with remembered quotes. */
  seenContests(): number {
    return this.lastSeen.size;
  }

  private evictOldestSeen(keep: string): void {
    for (const [contestId, m] of this.lastSeen) {
      if (this.seenCount <= (this.d.maxSeen ?? MAX_SEEN)) return;
      if (contestId === keep) continue;
      this.lastSeen.delete(contestId);
      this.seenCount -= m.size;
    }
  }

  /** A contest closed: forget its quotes here and start the expiry of its hot state. */
  private async closeContest(contestId: string): Promise<void> {
    const now = this.d.now();
    for (const [c, until] of this.closed) if (until <= now) this.closed.delete(c);
    this.closed.set(contestId, now + 2 * this.d.hot.closedRetentionMs);
    const m = this.lastSeen.get(contestId);
    if (m) {
      this.lastSeen.delete(contestId);
      this.seenCount -= m.size;
    }
    await this.d.hot.closeContest(contestId);
  }

  /**
   * A contest the catalog no longer holds (the cross-venue merge absorbed it into a merged
   * contest): forgotten here and its hot state left to expire, as a finished contest's.
   */
  retireContest(contestId: string): Promise<void> {
    return this.closeContest(contestId);
  }

  /**
   * Writes each dirty contest's quotes in one round trip and enqueues its job. Resolves false when
   * some could not be written (Redis unreachable): they stay pending and the next flush retries, so
   * a caller waiting on the write (the simulator control API) can answer 503 instead of hanging.
   */
  flush(): Promise<boolean> {
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0 && this.pendingTicks.size === 0) return Promise.resolve(true);
    // While Redis is away every write would fail: keep the quotes (latest per hash) and wait.
    if (!this.d.hot.available) {
      this.retryLater();
      return Promise.resolve(false);
    }
    const contests = new Set([...this.pending.keys(), ...this.pendingTicks.keys()]);
    const batch = [...contests].map((c) => ({ contestId: c, quotes: this.pending.get(c) ?? new Map<string, StoredQuote>(), ticks: this.pendingTicks.get(c) ?? [], moved: this.moved.has(c) }));
    this.pending.clear();
    this.pendingTicks.clear();
    this.moved.clear();
    this.pendingTickCount = 0;
    this.flushing = (async () => {
      let ok = true;
      await Promise.all(
        batch.map(async ({ contestId, quotes, ticks, moved }) => {
          let fast = false;
          let later = false;
          let taken: VenueStateTexts | null = null;
          try {
            const hist: HistAppend[] = ticks.length ? [{ table: 'ticks', rows: JSON.stringify(ticks), hashes: ticks.map((t) => t.liquidity_hash) }] : [];
            // A change beyond re-confirmations is computed at once when the co-located compute has
            // room, the write marking it taken (FastPath); else taken for later, or queued below.
            const wanted = quotes.size > 0 && (moved || this.d.autoFlush === false);
            // The lqp index pair of a listing goes with its first write (and again after Redis lost
            // its data: rebuild() forgets every Seen); marked only once the write has landed.
            const seenHere = this.lastSeen.get(contestId);
            const indexing: [Seen, string][] = [];
            const indexed = (hash: string, positionHash: string): boolean => {
              const seen = seenHere?.get(hash);
              if (seen?.indexed === positionHash) return true;
              if (seen) indexing.push([seen, positionHash]);
              return false;
            };
            fast = wanted && this.fastPath?.reserve() === true;
            // Busy: taken for when the running computation is done, rather than through the queue
            // (its add, wake-up, moveToActive and completion for one change), while it has room.
            later = wanted && !fast && this.fastPath?.roomLater(contestId) === true;
            // Taken: the write also answers the venue state to compute from (no read of its own).
            if (fast) taken = await this.d.hot.writeQuotesTaking(contestId, [...quotes.values()], hist, this.fastPath!.held(contestId), indexed);
            else if (later) await this.d.hot.writeQuotesTakingLater(contestId, [...quotes.values()], hist, indexed);
            else await this.d.hot.writeQuotes(contestId, [...quotes.values()], hist, indexed);
            for (const [seen, positionHash] of indexing) seen.indexed = positionHash;
            this.quotesFlushed += quotes.size;
            this.noteStaleDue(contestId, quotes.values());
          } catch (err) {
            ok = false;
            if (fast) this.fastPath?.release();
            if (moved) this.moved.add(contestId);
            this.putBack(contestId, quotes, ticks);
            this.d.log.warn({ err, contest_id: contestId }, 'writing venue state failed; will retry');
            return;
          }
          // The venue state is stored: a failed enqueue only delays the recomputation (the next
          // change, or the retry of this one, queues it; a lost job is recomputed by the next).
          if (quotes.size && !moved && this.d.autoFlush !== false) {
            this.noteReconfirmed(contestId);
            return;
          }
          if (quotes.size) this.noteRecomputed(contestId);
          if (fast) {
            this.fastPathTaken++;
            this.fastPath!.compute(contestId, taken!);
            return;
          }
          // Marked taken: should the fast path have no room after all, the queue computes it (the
          // computation clears the mark; failing that, the mark's grace queues it again).
          if (later && this.fastPath!.later(contestId)) {
            this.fastPathLater++;
            return;
          }
          try {
            if (quotes.size) await this.d.producer.enqueue(contestId);
          } catch (err) {
            ok = false;
            this.requeue.add(contestId);
            this.d.log.warn({ err, contest_id: contestId }, 'queueing the recomputation failed; will retry');
          }
        }),
      );
      return ok;
    })().finally(() => {
      this.flushing = null;
      if (this.pending.size || this.pendingTicks.size) this.scheduleFlush();
    });
    void this.flushing.then((ok) => {
      if (!ok) this.retryLater();
    });
    return this.flushing;
  }

  private noteStaleDue(contestId: string, quotes: Iterable<StoredQuote>): void {
    for (const q of quotes) {
      if (q.stale_after_ms === undefined) continue;
      this.staleDue.add(contestId, Math.floor(q.stale_after_ms / 1000) + 1);
    }
  }

  /**
   * Contests with a quote due to go stale: those where one really was not re-confirmed in time get
   * a new venue-state version (so the recomputation may store its result) and a job, which marks
   * the quote `is_stale` in REST and sends the flip to stream clients.
   */
  private async recomputeStale(): Promise<void> {
    const due = this.staleDue.takeDue(Math.floor(this.d.now() / 1000));
    const now = this.d.now();
    for (const contestId of due) {
      const seen = this.lastSeen.get(contestId);
      if (!seen) continue;
      let stale = false;
      for (const q of seen.values()) {
        const bound = this.freshness.get(q.partner);
        if (bound !== undefined && q.at + bound <= now) {
          stale = true;
          break;
        }
      }
      if (!stale) continue;
      try {
        await this.d.hot.writeQuotes(contestId, []);
        await this.d.producer.enqueue(contestId);
      } catch (err) {
        this.d.log.warn({ err, contest_id: contestId }, 'recomputing a contest with stale quotes failed; its next change will');
      }
    }
  }

  /** A contest whose write held re-confirmations only: recomputed at the trickle once RECONFIRM_RECOMPUTE_MS passed since its last recomputation. */
  private noteReconfirmed(contestId: string): void {
    if (this.reconfirmed.has(contestId) || this.reconfirmDueOf.has(contestId)) return;
    const last = this.recomputedAt.get(contestId);
    if (last === undefined || this.d.now() - last >= RECONFIRM_RECOMPUTE_MS) {
      this.reconfirmed.add(contestId);
      return;
    }
    const second = Math.ceil((last + RECONFIRM_RECOMPUTE_MS) / 1000);
    this.reconfirmDue.add(contestId, second);
    this.reconfirmDueOf.set(contestId, second);
  }

  /** A contest's recomputation is queued or taken now: it covers every re-confirmation stored so far. */
  private noteRecomputed(contestId: string): void {
    const now = this.d.now();
    this.reconfirmed.delete(contestId);
    const second = this.reconfirmDueOf.get(contestId);
    if (second !== undefined) {
      this.reconfirmDueOf.delete(contestId);
      this.reconfirmDue.remove(contestId, second);
    }
    this.recomputedAt.delete(contestId);
    this.recomputedAt.set(contestId, now);
    for (const [c, at] of this.recomputedAt) {
      if (now - at < RECONFIRM_RECOMPUTE_MS) break;
      this.recomputedAt.delete(c);
    }
  }

  /** Queues the recomputation of a share of the re-confirmed contests (all within RECONFIRM_SPREAD_TICKS ticks). */
  private async recomputeReconfirmed(): Promise<void> {
    for (const c of this.reconfirmDue.takeDue(Math.floor(this.d.now() / 1000))) {
      this.reconfirmDueOf.delete(c);
      this.reconfirmed.add(c);
    }
    if (this.reconfirmed.size === 0) return;
    const n = Math.max(1, Math.ceil(this.reconfirmed.size / RECONFIRM_SPREAD_TICKS));
    const take = [...this.reconfirmed].slice(0, n);
    for (const contestId of take) {
      this.noteRecomputed(contestId);
      try {
        await this.d.producer.enqueue(contestId);
      } catch {
        this.requeue.add(contestId);
        this.retryLater();
      }
    }
  }

  /** Contests whose venue state is stored but whose recomputation could not be queued yet. */
  private readonly requeue = new Set<string>();

  private putBack(contestId: string, quotes: Map<string, StoredQuote>, ticks: TickRow[]): void {
    // Newer quotes for a hash win; older tick rows go before the newer ones.
    const m = this.pending.get(contestId) ?? new Map<string, StoredQuote>();
    for (const [h, q] of quotes) if (!m.has(h)) m.set(h, q);
    if (m.size) this.pending.set(contestId, m);
    if (ticks.length) {
      this.pendingTicks.set(contestId, [...ticks, ...(this.pendingTicks.get(contestId) ?? [])]);
      this.pendingTickCount += ticks.length;
      if (this.pendingTickCount > (this.d.maxPendingTicks ?? MAX_PENDING_TICKS)) this.dropOldestTicks();
    }
  }

  private retryLater(): void {
    if (this.retryTimer || this.stopped || this.d.autoFlush === false) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.retryRequeue().then(() => this.flush());
    }, RETRY_FLUSH_MS);
    this.retryTimer.unref();
  }

  private async retryRequeue(): Promise<void> {
    for (const c of [...this.requeue]) {
      try {
        await this.d.producer.enqueue(c);
        this.requeue.delete(c);
      } catch {
        return this.retryLater();
      }
    }
  }

  /** Takes one trade print: normalized and appended to the event log (with its history row) in one step. */
  acceptTrade(t: NormalizedTrade): void {
    const key = parsePositionHash(t.position_hash);
    if (!key) return;
    const r = normalizeVenueTrade(
      { ...t, partner_name: this.d.partnerName(t.partner_id) },
      {
        position_hash: t.position_hash,
        liquidity_hash: t.liquidity_hash,
        router_contest_id: key.contest_id,
        router_market_id: this.d.marketOf(t.position_hash) ?? key.market_id,
        relation: t.relation ?? 'same',
      },
    );
    if (!r.ok) {
      this.d.log.warn({ partner_id: t.partner_id, venue_trade_id: t.venue_trade_id, reason: r.reason }, 'trade print dropped');
      return;
    }
    const event = JSON.stringify({ type: 'trades', contest_id: key.contest_id, trades: [r.print], timestamp: new Date(this.d.now()).toISOString() });
    const leagueId = this.d.leagueOf(key.contest_id);
    // The print and its history row go into the log in one step.
    this.d.hot
      .append(key.contest_id, [{ channel: 'trades', league_id: leagueId, event }], [{ table: 'trades', rows: JSON.stringify([r.print]) }])
      .catch((err) => this.d.log.warn({ err, contest_id: key.contest_id, venue_trade_id: t.venue_trade_id }, 'recording a trade print failed'));
  }

  private async acceptState(rec: GameStateRecord): Promise<void> {
    const now = this.d.now();
    const obj = toContestState(rec, now);
    try {
      const event = JSON.stringify({ type: 'contest_state.update', contest_id: rec.contest_id, state: obj.state, refreshed_at: obj.refreshed_at, timestamp: new Date(now).toISOString() });
      const leagueId = this.d.leagueOf(rec.contest_id);
      await this.d.hot.setContestState(rec.contest_id, JSON.stringify(obj), [{ channel: 'contest_state', league_id: leagueId, event }]);
      if (isClosedGameStatus(rec.state.game_status)) {
        await this.closeContest(rec.contest_id);
        this.d.onFinal?.(rec.contest_id);
      }
    } catch (err) {
      this.d.log.warn({ err, contest_id: rec.contest_id }, 'storing game state failed');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const t of this.timers) clearInterval(t);
    for (const u of this.unsubs) u();
    // A flush already under way answers for itself only: quotes that arrived during it wait for the
    // next one. Flush until nothing is pending, or until Redis refuses (they cannot be written now).
    while ((await this.flush()) && (this.pending.size > 0 || this.pendingTicks.size > 0));
    // What the trickle has not queued yet is queued now: a stopped ingester leaves no contest behind its venue state.
    for (const contestId of new Set([...this.reconfirmed, ...this.reconfirmDueOf.keys()])) {
      this.reconfirmed.delete(contestId);
      await this.d.producer.enqueue(contestId).catch(() => undefined);
    }
    this.reconfirmDue.clear();
    this.reconfirmDueOf.clear();
    const all = new Set([...this.d.adapters, ...this.attached.values()]);
    await Promise.all([...all].map((a) => a.close().catch(() => undefined)));
  }
}
