/**
 * The trade-signal consumer (compute role; docs/signals.md "Trade-derived types"): reads the trade
 * prints ingest appends to the durable event log (`trades` events on the feed, `evfeed`) through the
 * consumer group `trade-signals`, runs the detectors (src/compute/trade-signals.ts) on the compute
 * threads, upserts what they find into the contests' signal sets (SignalStore: one signal.update
 * per change), and keeps each position's recent print window in Redis.
 *
 * Crash-safe, in this order per batch:
 *  1. read (XREADGROUP: what is pending first, then new entries);
 *  2. detect against the windows as stored;
 *  3. upsert the signals;
 *  4. in one script fenced on the lease: store the windows and XACK the batch.
 * A crash before 4 leaves the batch pending and the windows as they were, so the successor
 * examines it again against the same windows and gets the same signals (same ids: every instant
 * comes from the print and its log id, never a clock); a crash after 4 has nothing left to do.
 * A print seen twice (a venue delivering it again) is counted once: windows key prints by venue and
 * venue_trade_id. Kill tests stop the process at each step (failpoints trade-signals.before-upsert,
 * trade-signals.before-commit; test/integration/faults/trade-signals-kill.test.ts).
 *
 * One consumer at a time per deployment (a Redis lease, as the history writer's), so a position's
 * prints are examined in log order; other processes running the compute role stand by. The backlog
 * is the feed itself, bounded by LOG_LIMITS.feedMax: a consumer stopped long enough for the feed to
 * be trimmed past its position loses those prints (counted in flow_trade_signal_feed_lost_total
 * and logged); the signals they could have made would mostly have expired by then.
 */
import { ContestCatalogCache } from '../contest-catalog.js';
import { Counter, Registry } from 'prom-client';
import type { PositionDefinition } from '../../src/domain/catalog.js';
import type { TradePrint, TradesEvent } from '../../src/domain/stream.js';
import { SIGNAL_DEFINITION, type Signal } from '../../src/domain/signals.js';
import type { PositionTradeTask, QuoteFact, TradeContestFacts } from '../../src/compute/trade-signals.js';
import { WINDOW_HORIZON_MS } from '../../src/compute/trade-signals.js';
import { failpoint } from '../../src/failpoints.js';
import type { Logger } from '../../src/log.js';
import type { Pool } from '../../src/store/pg/pool.js';
import { createRedis, type Keyspace, type Redis } from '../../src/store/redis/client.js';
import { compareStreamIds, logKeys } from '../../src/store/redis/eventlog.js';
import type { HotState } from '../../src/store/redis/hot.js';
import { luaScript, type ScriptCall } from '../../src/store/redis/script.js';
import type { SignalStore } from '../../src/store/redis/signals.js';
import type { StoredQuote } from '../../src/venues/types.js';
import type { ComputePool } from '../compute-pool.js';
import { ensureGroup, LeasedLoop, LeaseLost, readGroup, type RawEntry } from '../leased-loop.js';

export const TRADE_SIGNALS_GROUP = 'trade-signals';
/** Every process reads as the same consumer: only the lease holder reads, and a successor inherits the pending entries as they are. */
const CONSUMER = 'detector';

export const tradeSignalKeys = (ks: Keyspace) => ({
  feed: logKeys(ks).feed,
  lease: ks.k('tslease'),
  window: (positionHash: string) => ks.k('tsw', positionHash),
});

/** A window outlives its newest print by the horizon (then it holds nothing the detectors use) and a minute. */
export const WINDOW_TTL_MS = WINDOW_HORIZON_MS + 60_000;

export const TRADE_CONSUMER_DEFAULTS = {
  leaseMs: 5_000,
  blockMs: 250,
  /** Feed entries per read: the feed carries every channel, most of them skipped here. */
  readCount: 500,
  /** Catalog facts per contest are reloaded after this long ... */
  metaTtlMs: 60_000,
  /** ... a contest the catalog does not list (yet) is asked about again after this long ... */
  missingTtlMs: 5_000,
  /** ... and at most this many contests are remembered. */
  maxContests: 10_000,
  retryBaseMs: 250,
  retryMaxMs: 10_000,
} as const;

export interface TradeSignalConsumerDeps {
  /** Shared command connection (reads, writes, the lease). */
  redis: Redis;
  /** The consumer opens a connection of its own from this for its blocking reads. */
  redisUrl: string;
  ks: Keyspace;
  pool: Pool;
  hot: HotState;
  signals: SignalStore;
  compute: ComputePool;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  metrics?: Registry;
  now: () => number;
  leaseMs?: number;
  blockMs?: number;
  readCount?: number;
  maxContests?: number;
}


// KEYS: lease, feed, then n window keys. ARGV: token, group, window TTL ms, n, n window JSONs, then
// the entry ids to acknowledge. -1 when the lease is not ours (nothing done), else the number acknowledged.
const COMMIT_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local n = tonumber(ARGV[4])
for i = 1, n do redis.call('SET', KEYS[2 + i], ARGV[4 + i], 'PX', ARGV[3]) end
local acked = 0
for s = 5 + n, #ARGV, 2000 do
  acked = acked + redis.call('XACK', KEYS[2], ARGV[2], unpack(ARGV, s, math.min(s + 1999, #ARGV)))
end
return acked
`;

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** A stored venue quote as the detectors read it. */
export function quoteFact(json: string): QuoteFact | null {
  try {
    const q = JSON.parse(json) as StoredQuote;
    const book = q.levels?.length ? q.levels.reduce((s, l) => s + l.available, 0) : q.available;
    return { partner_id: q.partner_id, position_hash: q.position_hash, price: q.price, available: q.available, book_usd: book, as_of_ms: q.ts_init, stale_after_ms: q.stale_after_ms ?? null };
  } catch {
    return null;
  }
}

export interface TradeConsumerStats {
  active: boolean;
  batches: number;
  prints: number;
  duplicates: number;
  tooOld: number;
  /** Upserted signals by type. */
  published: Record<string, number>;
  /** trade_burst detections (computed, never published). */
  computed: number;
  /** Feed entries trimmed before they were examined. */
  lost: number;
  /** trades events that could not be read. */
  malformed: number;
}

export class TradeSignalConsumer {
  private readonly o: { leaseMs: number; blockMs: number; readCount: number };
  private readonly keys: ReturnType<typeof tradeSignalKeys>;
  private readonly conn: Redis;
  private readonly commit: ScriptCall<number>;
  private readonly loop: LeasedLoop;
  private readonly meta: ContestCatalogCache;
  /** Reading what a previous holder (or a failed round) left pending, before new entries. */
  private pendingFirst = true;
  /** The last read came back full: the consumer is behind, and the feed may be trimmed past it before the next. */
  private behind = false;
  private readonly metricSet: Set<TradeSignalConsumer>;
  private readonly stat: TradeConsumerStats = { active: false, batches: 0, prints: 0, duplicates: 0, tooOld: 0, published: {}, computed: 0, lost: 0, malformed: 0 };

  constructor(private readonly d: TradeSignalConsumerDeps) {
    this.o = { leaseMs: d.leaseMs ?? TRADE_CONSUMER_DEFAULTS.leaseMs, blockMs: d.blockMs ?? TRADE_CONSUMER_DEFAULTS.blockMs, readCount: d.readCount ?? TRADE_CONSUMER_DEFAULTS.readCount };
    this.keys = tradeSignalKeys(d.ks);
    this.conn = createRedis(d.redisUrl, { name: 'flow-trade-signals' });
    // Swallowed here: every failing command is handled where it is sent.
    this.conn.on('error', () => undefined);
    this.commit = luaScript<number>(this.conn, COMMIT_LUA);
    this.meta = new ContestCatalogCache(d.pool, { now: d.now, max: d.maxContests ?? TRADE_CONSUMER_DEFAULTS.maxContests, ttlMs: TRADE_CONSUMER_DEFAULTS.metaTtlMs, missingTtlMs: TRADE_CONSUMER_DEFAULTS.missingTtlMs });
    this.metricSet = registerMetrics(d.metrics ?? new Registry(), this);
    this.loop = new LeasedLoop(
      d.redis,
      this.keys.lease,
      { leaseMs: this.o.leaseMs, retryBaseMs: TRADE_CONSUMER_DEFAULTS.retryBaseMs, retryMaxMs: TRADE_CONSUMER_DEFAULTS.retryMaxMs, log: d.log, fields: { component: 'trade_signals' }, what: 'trade-signal consumer' },
      {
        taken: () => d.log.info({ component: 'trade_signals' }, 'trade-signal lease taken: examining trade prints'),
        recover: async () => {
          await ensureGroup(this.conn, this.keys.feed, TRADE_SIGNALS_GROUP);
          await this.checkLost();
          this.pendingFirst = true;
        },
        round: () => this.step(),
      },
    );
  }

  private get lease() {
    return this.loop.lease;
  }

  /** Starts the loop: standby until the lease is ours, then consume. */
  start(): this {
    this.loop.start();
    return this;
  }

  isActive(): boolean {
    return this.loop.isActive();
  }

  stats(): TradeConsumerStats {
    return { ...this.stat, active: this.isActive(), published: { ...this.stat.published } };
  }

  /** Finishes the batch in hand, gives the lease up and closes the connection. */
  async stop(timeoutMs = 5_000): Promise<void> {
    await this.loop.stop(timeoutMs);
    this.metricSet.delete(this);
    this.conn.disconnect();
  }

  /** True when every feed entry has been delivered to the group and acknowledged (tests, clean hand-over). */
  async idle(): Promise<boolean> {
    const r = this.d.redis;
    const last = (await r.xrevrange(this.keys.feed, '+', '-', 'COUNT', 1))[0]?.[0];
    if (!last) return true;
    const g = await this.group();
    if (!g) return false;
    return g.pending === 0 && compareStreamIds(g.lastDelivered, last) >= 0;
  }

  /** Resolves once idle() holds; throws after timeoutMs. */
  async drain(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!(await this.idle())) {
      if (Date.now() > until) throw new Error(`the trade-signal consumer did not drain within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  // ---- the rounds ----

  private async group(): Promise<{ pending: number; lastDelivered: string; lag: number | null } | null> {
    const groups = (await this.d.redis.xinfo('GROUPS', this.keys.feed)) as (string | number | null)[][];
    for (const f of groups) {
      const g: Record<string, string | number | null> = {};
      for (let i = 0; i < f.length; i += 2) g[String(f[i])] = f[i + 1] ?? null;
      if (g.name === TRADE_SIGNALS_GROUP) return { pending: Number(g.pending), lastDelivered: String(g['last-delivered-id']), lag: g.lag === null || g.lag === undefined ? null : Number(g.lag) };
    }
    return null;
  }

  /**
   * Entries trimmed from the feed before the group read them: when the feed's first entry lies past
   * the group's position, every entry Redis counts as not yet delivered (the group's lag) beyond
   * those still in the feed is gone. Checked when the lease is taken and before each read that
   * follows a full one (only a consumer that far behind can be trimmed past; a read past the trim
   * skips the gap without a word).
   */
  private async checkLost(): Promise<void> {
    const [g, first, len] = await Promise.all([this.group(), this.d.redis.xrange(this.keys.feed, '-', '+', 'COUNT', 1), this.d.redis.xlen(this.keys.feed)]);
    const firstId = first[0]?.[0];
    if (!g || !firstId || g.lastDelivered === '0-0' || compareStreamIds(firstId, g.lastDelivered) <= 0) return;
    const lost = g.lag === null ? null : Math.max(0, g.lag - len);
    if (lost === 0) return;
    if (lost !== null) this.stat.lost += lost;
    this.d.log.warn({ component: 'trade_signals', lost, last_delivered: g.lastDelivered, feed_first: firstId }, 'the event feed was trimmed past the trade-signal consumer: prints in between were not examined');
  }

  private read(): Promise<RawEntry[]> {
    return readGroup(this.conn, this.keys.feed, TRADE_SIGNALS_GROUP, CONSUMER, this.pendingFirst ? '0' : '>', this.o.readCount, this.pendingFirst ? null : this.o.blockMs);
  }

  private async step(): Promise<void> {
    if (this.behind) await this.checkLost();
    const entries = await this.read();
    this.behind = entries.length >= this.o.readCount;
    if (this.pendingFirst && entries.length === 0) {
      this.pendingFirst = false;
      return;
    }
    if (entries.length === 0) return;
    await this.process(entries);
  }

  /** One batch: detect, upsert, then store the windows and acknowledge together. */
  private async process(entries: RawEntry[]): Promise<void> {
    const byPosition = new Map<string, { contestId: string; league: string | null; prints: { print: TradePrint; seen_ms: number }[] }>();
    for (const [, fields] of entries) {
      // A pending entry trimmed from the feed comes back without fields: nothing left to examine.
      if (!fields) {
        this.stat.lost++;
        continue;
      }
      if (field(fields, 'ch') !== 'trades') continue;
      const contestId = field(fields, 'c');
      const eventId = field(fields, 'i');
      let ev: TradesEvent;
      try {
        ev = JSON.parse(field(fields, 'e') ?? '') as TradesEvent;
      } catch {
        ev = null as unknown as TradesEvent;
      }
      if (!contestId || !eventId || !ev || !Array.isArray(ev.trades)) {
        this.stat.malformed++;
        continue;
      }
      // When the print reached the log: the id of its trades event (Redis time, ms).
      const seen = Number(eventId.split('-')[0]);
      for (const print of ev.trades) {
        if (!print || typeof print.position_hash !== 'string' || typeof print.venue_trade_id !== 'string') {
          this.stat.malformed++;
          continue;
        }
        let g = byPosition.get(print.position_hash);
        if (!g) byPosition.set(print.position_hash, (g = { contestId, league: field(fields, 'l') || null, prints: [] }));
        g.prints.push({ print, seen_ms: seen });
      }
    }
    const ids = entries.map((e) => e[0]);
    if (byPosition.size === 0) {
      await this.finish([], [], ids);
      return;
    }

    const positions = [...byPosition.keys()];
    const contests = [...new Set([...byPosition.values()].map((g) => g.contestId))];
    const [metas, windows, quotes] = await Promise.all([
      Promise.all(contests.map((c) => this.contestMeta(c))),
      this.d.redis.mget(...positions.map((h) => this.keys.window(h))),
      this.quotes(byPosition),
    ]);
    const metaOf = new Map(contests.map((c, i) => [c, metas[i]!]));
    const tasks: PositionTradeTask[] = positions.map((h, i) => {
      const g = byPosition.get(h)!;
      const m = metaOf.get(g.contestId)!;
      // Only the quotes of this position's prints: each task is copied to the thread.
      const own: Record<string, QuoteFact> = {};
      for (const { print } of g.prints) if (quotes[print.liquidity_hash]) own[print.liquidity_hash] = quotes[print.liquidity_hash]!;
      return { position_hash: h, position: m.positions.get(h) ?? null, contest: m.facts, window_json: windows[i] ?? null, prints: g.prints, quotes: own };
    });
    const { results } = await this.d.compute.tradeSignals({ positions: tasks });

    const byContest = new Map<string, { league: string | null; signals: Signal[] }>();
    const stored: [string, string][] = [];
    for (const r of results) {
      const g = byPosition.get(r.position_hash)!;
      this.stat.prints += r.counted;
      this.stat.duplicates += r.duplicates;
      this.stat.tooOld += r.tooOld;
      this.stat.computed += r.computed.length;
      for (const b of r.computed) this.d.log.debug({ component: 'trade_signals', signal_type: b.signal_type, position_hash: r.position_hash, evidence: b.evidence }, 'trade burst (computed, not published)');
      if (r.window_json !== null) stored.push([this.keys.window(r.position_hash), r.window_json]);
      if (r.signals.length === 0) continue;
      const league = metaOf.get(g.contestId)!.facts?.league_id ?? g.league;
      const c = byContest.get(g.contestId) ?? { league, signals: [] };
      c.signals.push(...r.signals);
      byContest.set(g.contestId, c);
    }
    if (!this.lease.held()) throw new LeaseLost();
    failpoint('trade-signals.before-upsert');
    const timestamp = new Date(this.d.now()).toISOString();
    for (const [contestId, c] of byContest) {
      await this.d.signals.write({ contestId, leagueId: c.league, upserts: c.signals, timestamp });
      for (const s of c.signals) {
        this.stat.published[s.signal_type] = (this.stat.published[s.signal_type] ?? 0) + 1;
        // A new detection at info; a continuing one's update (same id, life extended) at debug.
        const fresh = Date.parse(s.expires_at) - (SIGNAL_DEFINITION[s.signal_type].typical_ttl_seconds ?? 0) * 1000 <= Date.parse(s.detected_at);
        const fields = { component: 'trade_signals', signal_type: s.signal_type, signal_id: s.signal_id, dedupe_key: s.dedupe_key, contest_id: contestId, strength: s.strength, confidence: s.confidence };
        if (fresh) this.d.log.info(fields, s.headline);
        else this.d.log.debug(fields, s.headline);
      }
    }
    failpoint('trade-signals.before-commit');
    await this.finish(
      stored.map(([k]) => k),
      stored.map(([, v]) => v),
      ids,
    );
  }

  private async finish(windowKeys: string[], windowJsons: string[], ids: string[]): Promise<void> {
    const n = await this.commit([this.keys.lease, this.keys.feed, ...windowKeys], [this.lease.token, TRADE_SIGNALS_GROUP, WINDOW_TTL_MS, windowKeys.length, ...windowJsons, ...ids]);
    if (n === -1) throw new LeaseLost();
    this.stat.batches++;
  }

  /** The venues' cached quotes of the prints' listings (by liquidity_hash), one round trip per contest. */
  private async quotes(byPosition: Map<string, { contestId: string; prints: { print: TradePrint }[] }>): Promise<Record<string, QuoteFact>> {
    const hashes = new Map<string, Set<string>>();
    for (const g of byPosition.values()) {
      const s = hashes.get(g.contestId) ?? new Set<string>();
      for (const { print } of g.prints) if (typeof print.liquidity_hash === 'string') s.add(print.liquidity_hash);
      hashes.set(g.contestId, s);
    }
    const out: Record<string, QuoteFact> = {};
    await Promise.all(
      [...hashes].map(async ([contestId, set]) => {
        const list = [...set];
        const raw = await this.d.hot.venueQuotes(contestId, list);
        raw.forEach((json, i) => {
          const q = json === null ? null : quoteFact(json);
          if (q) out[list[i]!] = q;
        });
      }),
    );
    return out;
  }

  /** The contest's positions and facts from the catalog (cached: pipelines/contest-catalog.ts). */
  private async contestMeta(contestId: string): Promise<{ positions: ReadonlyMap<string, PositionDefinition>; facts: TradeContestFacts | null }> {
    const c = await this.meta.get(contestId);
    return { positions: c.byHash, facts: c.label !== null ? { label: c.label, league_id: c.leagueId, starts_at_ms: c.startsAtMs } : null };
  }
}

/** The consumers whose stats each registry's counters read at scrape time. */
const consumersByRegistry = new WeakMap<Registry, Set<TradeSignalConsumer>>();

function registerMetrics(registry: Registry, consumer: TradeSignalConsumer): Set<TradeSignalConsumer> {
  let set = consumersByRegistry.get(registry);
  if (set) return set.add(consumer);
  const all = (set = new Set([consumer]));
  consumersByRegistry.set(registry, all);
  const sum = (f: (s: TradeConsumerStats) => number) => [...all].reduce((n, c) => n + f(c.stats()), 0);
  new Counter({
    name: 'flow_trade_signal_prints_total',
    help: 'Trade prints the trade-signal consumer read, by outcome: examined, duplicate (counted before), too_old (before the window horizon)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'examined' }, sum((s) => s.prints));
      this.inc({ outcome: 'duplicate' }, sum((s) => s.duplicates));
      this.inc({ outcome: 'too_old' }, sum((s) => s.tooOld));
    },
  });
  new Counter({
    name: 'flow_trade_signal_upserts_total',
    help: 'Trade-derived signals upserted into the signal sets, by type',
    labelNames: ['signal_type'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const c of all) for (const [t, n] of Object.entries(c.stats().published)) this.inc({ signal_type: t }, n);
    },
  });
  new Counter({
    name: 'flow_trade_signal_feed_lost_total',
    help: 'Event-feed entries trimmed before the trade-signal consumer examined them',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sum((s) => s.lost));
    },
  });
  return all;
}
