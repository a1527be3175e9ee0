/**
 * Ingest: venue adapters → normalized quotes, trades and game state → Redis venue state, coalesced
 * per contest → one pending liquidity job per contest. Streaming venues push; polling venues are
 * fetched on their declared interval and only changed quotes go on (unchanged ones are re-confirmed
 * every REFRESH_MS so they do not read as stale).
 */
import { randomUUID } from 'node:crypto';
import { parsePositionHash } from '../../src/domain/hashes.js';
import { isClosedGameStatus } from '../../src/domain/lifecycle.js';
import type { TradePrint } from '../../src/domain/stream.js';
import { normalizeVenueTrade } from '../../src/domain/trades.js';
import type { Logger } from '../../src/log.js';
import type { BusPublisher } from '../../src/store/redis/bus.js';
import type { HotState } from '../../src/store/redis/hot.js';
import type { GameStateRecord, NormalizedQuote, NormalizedTrade, VenueAdapter } from '../../src/venues/types.js';
import { toContestState } from '../../src/venues/types.js';
import type { LiquidityProducer } from '../producers/liquidity.js';

export interface TradeSink {
  trades(prints: TradePrint[]): void;
}

export interface IngesterDeps {
  adapters: VenueAdapter[];
  hot: HotState;
  producer: LiquidityProducer;
  bus: BusPublisher;
  log: Logger;
  now: () => number;
  /** Contest → league, for routing stream events by league. */
  leagueOf: (contestId: string) => string | null;
  partnerName: (partnerId: string) => string;
  /** Position → its market id (router_market_id on trade prints). */
  marketOf: (positionHash: string) => string | null;
  trades?: TradeSink;
  /** A contest closed (game_status final or cancelled). */
  onFinal?: (contestId: string) => void;
  flushMs?: number;
  /** Upper bound on remembered quotes (the last-seen map); default MAX_SEEN. */
  maxSeen?: number;
}

const REFRESH_MS = 20_000;
/** How often the marker is checked (one SET of a few bytes), and its lifetime without a check. */
const MARKER_CHECK_MS = 250;
const MARKER_TTL_MS = 60_000;
/** Far above any real catalog's quote count: a safety net, not the normal way entries go. */
const MAX_SEEN = 500_000;

interface Seen {
  price: number;
  available: number;
  at: number;
  levels: string;
  side: string;
}

export class Ingester {
  private readonly pending = new Map<string, Map<string, NormalizedQuote>>();
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

  constructor(private readonly d: IngesterDeps) {}

  async start(): Promise<void> {
    // The marker first: what is written from here on is what a data loss would take away.
    await this.d.hot.confirmMarker(this.marker, MARKER_TTL_MS);
    for (const a of this.d.adapters) {
      await a.connect();
      const caps = a.describe().capabilities;
      if (caps.quotes.streaming) {
        this.unsubs.push(a.subscribeQuotes((q) => this.accept(q)));
      }
      if (caps.quotes.snapshot) {
        // A first snapshot for every venue, then polling where the venue does not stream.
        await this.poll(a);
        if (!caps.quotes.streaming && caps.quotes.poll_interval_ms) {
          const t = setInterval(() => void this.poll(a), caps.quotes.poll_interval_ms);
          t.unref();
          this.timers.push(t);
        }
      }
      if (caps.trades) this.unsubs.push(a.subscribeTrades((t) => this.acceptTrade(t)));
      if (caps.game_state) this.unsubs.push(a.subscribeGameState((s) => void this.acceptState(s)));
    }
    const flush = setInterval(() => void this.flush(), this.d.flushMs ?? 20);
    flush.unref();
    this.timers.push(flush);
    const watch = setInterval(() => void this.watchForDataLoss(), MARKER_CHECK_MS);
    watch.unref();
    this.timers.push(watch);
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
    const venues = this.d.adapters.filter((a) => a.describe().capabilities.quotes.snapshot);
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
    const key = parsePositionHash(q.position_hash);
    if (!key) return;
    const levels = q.levels.length > 1 ? JSON.stringify(q.levels) : '';
    let bySeen = this.lastSeen.get(key.contest_id);
    const seen = bySeen?.get(q.liquidity_hash);
    if (seen && seen.price === q.price && seen.available === q.available && seen.levels === levels && seen.side === q.venue_side_key && q.ts_init - seen.at < REFRESH_MS) return;
    // A closed contest's straggling quotes still reach its (expiring) hot state, but are not remembered.
    if (!this.closed.has(key.contest_id)) {
      if (!bySeen) this.lastSeen.set(key.contest_id, (bySeen = new Map()));
      if (!seen) this.seenCount++;
      bySeen.set(q.liquidity_hash, { price: q.price, available: q.available, at: q.ts_init, levels, side: q.venue_side_key });
      if (this.seenCount > (this.d.maxSeen ?? MAX_SEEN)) this.evictOldestSeen(key.contest_id);
    }
    let m = this.pending.get(key.contest_id);
    if (!m) this.pending.set(key.contest_id, (m = new Map()));
    m.set(q.liquidity_hash, q);
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
   * Writes each dirty contest's quotes in one round trip and enqueues its job. Resolves false when
   * some could not be written (Redis unreachable): they stay pending and the next flush retries, so
   * a caller waiting on the write (the simulator control API) can answer 503 instead of hanging.
   */
  flush(): Promise<boolean> {
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0) return Promise.resolve(true);
    // While Redis is away every write would fail: keep the quotes (latest per hash) and wait.
    if (!this.d.hot.available) return Promise.resolve(false);
    const batch = [...this.pending];
    this.pending.clear();
    this.flushing = (async () => {
      let ok = true;
      await Promise.all(
        batch.map(async ([contestId, quotes]) => {
          try {
            await this.d.hot.writeQuotes(contestId, [...quotes.values()]);
            await this.d.producer.enqueue(contestId);
            this.quotesFlushed += quotes.size;
          } catch (err) {
            ok = false;
            // Put them back: the next flush retries (newer quotes for a hash win).
            const m = this.pending.get(contestId) ?? new Map<string, NormalizedQuote>();
            for (const [h, q] of quotes) if (!m.has(h)) m.set(h, q);
            this.pending.set(contestId, m);
            this.d.log.warn({ err, contest_id: contestId }, 'writing venue state failed; will retry');
          }
        }),
      );
      return ok;
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private acceptTrade(t: NormalizedTrade): void {
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
    this.d.trades?.trades([r.print]);
    const event = JSON.stringify({ type: 'trades', contest_id: key.contest_id, trades: [r.print], timestamp: new Date(this.d.now()).toISOString() });
    void this.d.bus.publish({ channel: 'trades', contest_id: key.contest_id, league_id: this.d.leagueOf(key.contest_id), event }).catch(() => undefined);
  }

  private async acceptState(rec: GameStateRecord): Promise<void> {
    const now = this.d.now();
    const obj = toContestState(rec, now);
    try {
      await this.d.hot.setContestState(rec.contest_id, JSON.stringify(obj));
      const event = JSON.stringify({ type: 'contest_state.update', contest_id: rec.contest_id, state: obj.state, refreshed_at: obj.refreshed_at, timestamp: new Date(now).toISOString() });
      await this.d.bus.publish({ channel: 'contest_state', contest_id: rec.contest_id, league_id: this.d.leagueOf(rec.contest_id), event });
      if (isClosedGameStatus(rec.state.game_status)) {
        await this.closeContest(rec.contest_id);
        this.d.onFinal?.(rec.contest_id);
      }
    } catch (err) {
      this.d.log.warn({ err, contest_id: rec.contest_id }, 'storing game state failed');
    }
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    for (const u of this.unsubs) u();
    // A flush already under way answers for itself only: quotes that arrived during it wait for the
    // next one. Flush until nothing is pending, or until Redis refuses (they cannot be written now).
    while ((await this.flush()) && this.pending.size > 0);
    await Promise.all(this.d.adapters.map((a) => a.close().catch(() => undefined)));
  }
}
