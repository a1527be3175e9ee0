/**
 * The history writer: reads the history log (the `hist` Redis Stream, src/store/redis/eventlog.ts)
 * through the consumer group `history` and inserts its rows into ClickHouse, acknowledging entries
 * only after their insert landed. A crash of either side loses nothing and doubles nothing:
 *
 *  1. read a batch (XREADGROUP: what is pending first, then new entries, up to maxBatchRows rows or
 *     what arrives within lingerMs);
 *  2. record its plan (first id, last id) in Redis: the insert tokens derive from it;
 *  3. one insert per table, with insert_deduplication_token `<prefix>:<first>:<last>:<table>` (the
 *     tables keep a deduplication window, ClickHouse migration 4, so a repeated token is a no-op,
 *     rollups included);
 *  4. in one script: XACK, delete the plan, trim what is acknowledged from the stream.
 * A writer that takes over (after a crash, or on start) first re-sends the plan it finds, with the
 * same tokens, then the entries pending without a plan (read, never inserted), then new ones.
 *
 * One writer at a time per deployment: a Redis lease (SET NX PX, renewed every quarter lifetime).
 * Other processes running the compute role stand by and take over when the lease lapses (a dead
 * holder) or is released (a clean stop). The plan write and the acknowledgement are fenced on the
 * lease in Redis, so a former holder that stalled past its lease can neither plan nor acknowledge;
 * an insert it still sends repeats a planned token and is deduplicated.
 *
 * ClickHouse unreachable: the batch stays pending with its plan and is re-sent with backoff; the
 * stream holds everything meanwhile (bounded by LOG_LIMITS.histMax entries). A batch ClickHouse
 * refuses for good, and rows that fail validation, are dropped and counted, never holding the log up.
 */
import { Readable } from 'node:stream';
import type { ClickHouseSettings } from '@clickhouse/client';
import { Counter, Gauge, Registry } from 'prom-client';
import { failpoint } from '../../src/failpoints.js';
import type { Logger } from '../../src/log.js';
import { isRetryable, writerMetrics, type Inserter, type WriterMetrics } from '../../src/store/clickhouse/writer.js';
import { createRedis, type Keyspace, type Redis } from '../../src/store/redis/client.js';
import { compareStreamIds, LOG_LIMITS, logKeys, toHistEntries } from '../../src/store/redis/eventlog.js';
import { encodeEntries, HIST_TABLES, type TableBody } from './encode.js';
import { ensureGroup, LeasedLoop, LeaseLost, readGroup, type RawEntry } from '../leased-loop.js';
import { luaCommands } from '../../src/store/redis/script.js';

export const HISTORY_GROUP = 'history';
/** Every writer reads as the same consumer: only the lease holder reads, and a successor inherits the pending entries as they are. */
const CONSUMER = 'writer';

export const historyKeys = (ks: Keyspace) => ({
  hist: logKeys(ks).hist,
  lease: ks.k('histlease'),
  plan: ks.k('histplan'),
});

export interface HistoryConsumerOptions {
  /** Shared command connection: lease renewals and metrics (never blocked). */
  redis: Redis;
  /** The consumer opens a connection of its own from this for its blocking reads and batch steps. */
  redisUrl: string;
  ks: Keyspace;
  clickhouse: Inserter;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  metrics?: Registry;
  /** Lease lifetime; a dead writer's successor starts within about this long. */
  leaseMs?: number;
  /** Most rows per insert (a batch takes whole entries, so it may pass this by one entry). */
  maxBatchRows?: number;
  /** After the first entry of a batch, how long more entries may join it. */
  lingerMs?: number;
  /** Longest blocking read while idle. */
  blockMs?: number;
  /** Entries per read. */
  readCount?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
}

/**
 * Embedded chDB runs an insert on threads of this process, next to the event loop that streams
 * quotes: one thread per insert and the lowest OS priority (nice 19) for them, so on a small machine
 * the stream's thread wins the CPU and history, which has a second to spare, waits.
 */
const INSERT_PRIORITY: ClickHouseSettings = { max_threads: 1, max_insert_threads: '1', os_thread_priority: '19' };

export const CONSUMER_DEFAULTS = {
  leaseMs: 5_000,
  maxBatchRows: 50_000,
  // Fewer, larger inserts: an embedded chDB insert runs on the event loop for a few ms; at 200 ms
  // they showed in bench stream-latency's p99 (16.2 → 12.4 ms at 200 clients; CPU 36 → 27 %).
  lingerMs: 1_000,
  blockMs: 250,
  // Small enough that one read cannot bring many times maxBatchRows (an entry holds a whole flush).
  readCount: 250,
  retryBaseMs: 250,
  retryMaxMs: 10_000,
} as const;

/** What a batch's tokens derive from; stored in Redis before its insert. */
interface Plan {
  first: string;
  last: string;
  entries: number;
}

export interface ConsumerStats {
  active: boolean;
  batches: number;
  written: Record<string, number>;
  invalid: number;
  rejected: number;
  lostEntries: number;
  insertErrors: number;
}

// KEYS: lease, plan. ARGV: token, plan JSON. 0 when the lease is not ours.
const PLAN_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
`;

// KEYS: lease, plan, hist. ARGV: token, group, trim floor (the id after the batch), ids to ack...
// -1 when the lease is not ours (nothing done), else the number acknowledged.
const ACK_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local function older(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if tonumber(am) ~= tonumber(bm) then return tonumber(am) < tonumber(bm) end
  return tonumber(as) < tonumber(bs)
end
local n = 0
for s = 4, #ARGV, 2000 do
  n = n + redis.call('XACK', KEYS[3], ARGV[2], unpack(ARGV, s, math.min(s + 1999, #ARGV)))
end
redis.call('DEL', KEYS[2])
-- Everything before the oldest entry still pending (or else before the first this batch did not
-- cover) is acknowledged: the stream keeps only what is still to be written.
local floor = ARGV[3]
local ok, p = pcall(redis.call, 'XPENDING', KEYS[3], ARGV[2])
if ok and p[1] > 0 and older(p[2], floor) then floor = p[2] end
if ok then redis.call('XTRIM', KEYS[3], 'MINID', floor) end
return n
`;

/** The writer's two scripts, keys first (the lease fences both). */
interface ConsumerScripts {
  flowHistPlan(lease: string, plan: string, token: string, json: string): Promise<number>;
  flowHistAck(lease: string, plan: string, hist: string, ...args: string[]): Promise<number>;
}

/** The id right after `id` (stream ids are ms-seq). */
export function nextStreamId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${BigInt(seq!) + 1n}`;
}

/** The id right before `id`: reading after it starts at `id`. */
export function prevStreamId(id: string): string {
  const [ms, seq] = id.split('-').map((x) => BigInt(x));
  if (seq! > 0n) return `${ms}-${seq! - 1n}`;
  return ms! > 0n ? `${ms! - 1n}-18446744073709551615` : '0-0';
}

// ---- metrics: one set per registry ---------------------------------------------------------------

interface ConsumerMetrics {
  writer: WriterMetrics;
  lost: Counter;
  consumers: Set<HistoryConsumer>;
}

const metricsByRegistry = new WeakMap<Registry, ConsumerMetrics>();

function consumerMetrics(registry: Registry): ConsumerMetrics {
  let m = metricsByRegistry.get(registry);
  if (m) return m;
  const consumers = new Set<HistoryConsumer>();
  const any = () => consumers.values().next().value as HistoryConsumer | undefined;
  m = {
    writer: writerMetrics(registry),
    consumers,
    lost: new Counter({
      name: 'flow_history_log_entries_lost_total',
      help: 'History log entries trimmed from the stream (LOG_LIMITS.histMax) after a writer had read them and before their insert was acknowledged',
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'flow_history_writer_active',
    help: '1 while this process holds the history writer lease',
    registers: [registry],
    collect() {
      this.set([...consumers].some((c) => c.isActive()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'flow_history_log_backlog_entries',
    help: 'History log entries not yet written to ClickHouse (pending or unread)',
    registers: [registry],
    async collect() {
      const c = any();
      if (c) this.set((await c.backlog().catch(() => null))?.entries ?? 0);
    },
  });
  new Gauge({
    name: 'flow_history_log_lag_seconds',
    help: 'Age of the oldest history log entry not yet written to ClickHouse (0 when none)',
    registers: [registry],
    async collect() {
      const c = any();
      if (c) this.set((await c.backlog().catch(() => null))?.lagSeconds ?? 0);
    },
  });
  metricsByRegistry.set(registry, m);
  return m;
}

// ---- the consumer --------------------------------------------------------------------------------

export class HistoryConsumer {
  private readonly o: Required<Omit<HistoryConsumerOptions, 'metrics' | 'redis' | 'redisUrl' | 'ks' | 'clickhouse' | 'log'>>;
  private readonly keys: ReturnType<typeof historyKeys>;
  private readonly conn: Redis;
  private readonly scripts: ConsumerScripts;
  private readonly loop: LeasedLoop;
  private readonly metrics: ConsumerMetrics;
  private readonly tokenPrefix: string;
  private lastCapWarning = 0;
  /** The plan this writer recorded and has not acknowledged yet: re-sending it after a failed insert is routine. */
  private ownPlan: string | null = null;
  private readonly stat: ConsumerStats = { active: false, batches: 0, written: {}, invalid: 0, rejected: 0, lostEntries: 0, insertErrors: 0 };

  constructor(private readonly d: HistoryConsumerOptions) {
    this.o = {
      leaseMs: d.leaseMs ?? CONSUMER_DEFAULTS.leaseMs,
      maxBatchRows: d.maxBatchRows ?? CONSUMER_DEFAULTS.maxBatchRows,
      lingerMs: d.lingerMs ?? CONSUMER_DEFAULTS.lingerMs,
      blockMs: d.blockMs ?? CONSUMER_DEFAULTS.blockMs,
      readCount: d.readCount ?? CONSUMER_DEFAULTS.readCount,
      retryBaseMs: d.retryBaseMs ?? CONSUMER_DEFAULTS.retryBaseMs,
      retryMaxMs: d.retryMaxMs ?? CONSUMER_DEFAULTS.retryMaxMs,
    };
    this.keys = historyKeys(d.ks);
    this.tokenPrefix = d.ks.prefix;
    this.conn = createRedis(d.redisUrl, { name: 'flow-history' });
    this.scripts = luaCommands(this.conn, { flowHistPlan: { numberOfKeys: 2, lua: PLAN_LUA }, flowHistAck: { numberOfKeys: 3, lua: ACK_LUA } }) as unknown as ConsumerScripts;
    // Swallowed here: every failing command is handled where it is sent.
    this.conn.on('error', () => undefined);
    this.metrics = consumerMetrics(d.metrics ?? new Registry());
    this.metrics.consumers.add(this);
    this.loop = new LeasedLoop(
      d.redis,
      this.keys.lease,
      { leaseMs: this.o.leaseMs, retryBaseMs: this.o.retryBaseMs, retryMaxMs: this.o.retryMaxMs, log: d.log, fields: {}, what: 'history writer' },
      {
        taken: async () => d.log.info({ backlog: await this.backlog().catch(() => null) }, 'history writer lease taken: writing the history log to ClickHouse'),
        // What a previous holder (or a failed round) left: the plan it recorded, then the pending entries.
        recover: async () => {
          await ensureGroup(this.conn, this.keys.hist, HISTORY_GROUP);
          await this.replayPlan();
        },
        round: () => this.step(),
      },
    );
  }

  private get lease() {
    return this.loop.lease;
  }

  /** Starts the loop: standby until the lease is ours, then write. */
  start(): this {
    this.loop.start();
    return this;
  }

  /** True while this process holds the lease and writes. */
  isActive(): boolean {
    return this.loop.isActive();
  }

  stats(): ConsumerStats {
    return { ...this.stat, active: this.isActive(), written: { ...this.stat.written } };
  }

  /**
   * Finishes the batch in hand (an insert that cannot land in `timeoutMs` is left to the next holder,
   * its entries pending with their plan), gives the lease up and closes the connection.
   */
  async stop(timeoutMs = 5_000): Promise<void> {
    await this.loop.stop(timeoutMs);
    this.metrics.consumers.delete(this);
    this.conn.disconnect();
  }

  /** Entries not yet written (pending or unread) and the age of the oldest, in seconds. */
  async backlog(): Promise<{ entries: number; lagSeconds: number }> {
    const [len, first] = await Promise.all([this.d.redis.xlen(this.keys.hist), this.d.redis.xrange(this.keys.hist, '-', '+', 'COUNT', 1)]);
    const oldest = first[0]?.[0];
    return { entries: len, lagSeconds: oldest ? Math.max(0, (Date.now() - Number(oldest.split('-')[0])) / 1000) : 0 };
  }

  /** True when every entry in the stream has been written and acknowledged (by any writer). */
  async idle(): Promise<boolean> {
    const r = this.d.redis;
    const [plan, last] = await Promise.all([r.exists(this.keys.plan), r.xrevrange(this.keys.hist, '+', '-', 'COUNT', 1)]);
    if (plan) return false;
    const lastId = last[0]?.[0];
    if (!lastId) return true;
    const groups = (await r.xinfo('GROUPS', this.keys.hist)) as (string | number | null)[][];
    const g = groups.map((f) => Object.fromEntries(f.flatMap((v, i, a) => (i % 2 ? [] : [[String(v), a[i + 1]]])))).find((x) => x.name === HISTORY_GROUP);
    if (!g) return false;
    return Number(g.pending) === 0 && compareStreamIds(String(g['last-delivered-id']), lastId) >= 0;
  }

  /** Resolves once idle() holds (tests, benches, clean hand-over); throws after timeoutMs. */
  async drain(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!(await this.idle())) {
      if (Date.now() > until) throw new Error(`the history log did not drain within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  // ---- the rounds ----

  private read(id: string, blockMs: number | null): Promise<RawEntry[]> {
    return readGroup(this.conn, this.keys.hist, HISTORY_GROUP, CONSUMER, id, this.o.readCount, blockMs);
  }

  /** Re-sends the batch a previous holder planned (its insert may or may not have landed). */
  private async replayPlan(): Promise<void> {
    const json = await this.conn.get(this.keys.plan);
    if (!json) return;
    let plan: Plan;
    try {
      plan = JSON.parse(json) as Plan;
      if (!plan.first || !plan.last) throw new Error('no range');
    } catch {
      this.d.log.error({ plan: json.slice(0, 200) }, 'unreadable history batch plan dropped');
      await this.conn.del(this.keys.plan);
      return;
    }
    // Its entries are still pending: the acknowledgement removes them and the plan in one step.
    const raw: RawEntry[] = [];
    let after = prevStreamId(plan.first);
    for (;;) {
      const page = await this.read(after, null);
      const mine = page.filter(([id]) => compareStreamIds(id, plan.last) <= 0);
      raw.push(...mine);
      if (mine.length < page.length || page.length < this.o.readCount) break;
      after = page[page.length - 1]![0];
    }
    if (json !== this.ownPlan) this.d.log.warn({ first: plan.first, last: plan.last, entries: raw.length }, 'history batch planned by a previous writer re-sent (deduplicated if it had landed)');
    await this.process(raw, plan);
  }

  /** One batch: entries pending without a plan first, else new ones. */
  private async step(): Promise<void> {
    let batch = await this.read('0', null);
    let rows = 0;
    if (batch.length > 0) {
      // Read but never planned (a writer stopped in between): they form a batch of their own.
      rows = batch.reduce((n, e) => n + rowsOf(e), 0);
      while (rows < this.o.maxBatchRows && batch.length % this.o.readCount === 0) {
        const more = await this.read(batch[batch.length - 1]![0], null);
        if (more.length === 0) break;
        batch.push(...more);
        rows += more.reduce((n, e) => n + rowsOf(e), 0);
      }
      await this.process(batch, null);
      return;
    }
    batch = await this.read('>', this.o.blockMs);
    if (batch.length === 0) return;
    rows = batch.reduce((n, e) => n + rowsOf(e), 0);
    const started = Date.now();
    while (rows < this.o.maxBatchRows && !this.loop.isStopping()) {
      const left = this.o.lingerMs - (Date.now() - started);
      if (left <= 0) break;
      const more = await this.read('>', left);
      if (more.length === 0) break;
      batch.push(...more);
      rows += more.reduce((n, e) => n + rowsOf(e), 0);
    }
    if (rows >= this.o.maxBatchRows) await this.warnNearCap();
    await this.process(batch, null);
  }

  private async process(raw: RawEntry[], planned: Plan | null): Promise<void> {
    const ids = raw.map((e) => e[0]);
    const lostEntries = raw.reduce((n, e) => n + (e[1] ? 0 : 1), 0);
    const plan: Plan = planned ?? { first: ids[0]!, last: ids[ids.length - 1]!, entries: ids.length };
    const encoded = encodeEntries(toHistEntries(raw as [string, string[]][]));
    if (!planned) {
      const json = JSON.stringify(plan);
      if ((await this.scripts.flowHistPlan(this.keys.lease, this.keys.plan, this.lease.token, json)) !== 1) throw new LeaseLost();
      this.ownPlan = json;
    }
    failpoint('history.before-insert');
    const results = await Promise.all(encoded.bodies.map((b) => this.insert(b, plan)));
    failpoint('history.after-insert');
    const acked = await this.scripts.flowHistAck(this.keys.lease, this.keys.plan, this.keys.hist, this.lease.token, HISTORY_GROUP, nextStreamId(plan.last), ...ids);
    if (acked === -1) throw new LeaseLost();
    this.ownPlan = null;

    // Counted once acknowledged, so a re-sent batch is not counted twice.
    this.stat.batches++;
    results.forEach((ok, i) => {
      const b = encoded.bodies[i]!;
      const table = HIST_TABLES[b.kind].table;
      if (ok) {
        this.stat.written[table] = (this.stat.written[table] ?? 0) + b.rows;
        this.metrics.writer.written.inc({ table }, b.rows);
      } else {
        this.stat.rejected += b.rows;
        this.metrics.writer.dropped.inc({ table, reason: 'rejected' }, b.rows);
      }
    });
    for (const [table, n] of encoded.invalid) {
      this.stat.invalid += n;
      this.metrics.writer.dropped.inc({ table, reason: 'invalid' }, n);
    }
    if (encoded.invalid.size > 0) this.d.log.warn({ invalid: Object.fromEntries(encoded.invalid), err: encoded.firstError }, 'history rows failed validation; dropped');
    if (lostEntries > 0) {
      this.stat.lostEntries += lostEntries;
      this.metrics.lost.inc(lostEntries);
      this.d.log.error({ entries: lostEntries, first: plan.first, last: plan.last }, 'history log entries were trimmed before their insert was acknowledged (the writer was behind by LOG_LIMITS.histMax entries); their rows may be missing');
    }
  }

  /** True when the rows landed (or had landed: a repeated token), false when refused for good; throws to retry. */
  private async insert(b: TableBody, plan: Plan): Promise<boolean> {
    const spec = HIST_TABLES[b.kind];
    const started = performance.now();
    try {
      await this.d.clickhouse.insert({
        table: spec.table,
        columns: spec.columns as [string, ...string[]],
        format: 'TabSeparated',
        values: Readable.from([b.body], { objectMode: false }),
        clickhouse_settings: {
          insert_deduplicate: 1,
          insert_deduplication_token: `${this.tokenPrefix}:${plan.first}:${plan.last}:${b.kind}`,
          deduplicate_blocks_in_dependent_materialized_views: 1,
          ...INSERT_PRIORITY,
        },
      });
    } catch (err) {
      this.stat.insertErrors++;
      this.metrics.writer.errors.inc({ table: spec.table });
      if (isRetryable(err)) throw err;
      this.d.log.error({ table: spec.table, rows: b.rows, err: (err as Error).message?.slice(0, 500) }, 'ClickHouse refused a history batch; dropped');
      return false;
    }
    this.metrics.writer.seconds.observe({ table: spec.table }, (performance.now() - started) / 1000);
    return true;
  }

  /** The writer is behind: say so before the stream's cap starts trimming unwritten entries. */
  private async warnNearCap(): Promise<void> {
    if (Date.now() - this.lastCapWarning < 10_000) return;
    this.lastCapWarning = Date.now();
    const len = await this.conn.xlen(this.keys.hist);
    if (len >= LOG_LIMITS.histMax * 0.8) {
      this.d.log.error({ entries: len, cap: LOG_LIMITS.histMax }, 'history log close to its cap: ClickHouse writes are falling behind, the oldest entries will be trimmed unwritten');
    }
  }
}

/** Rows in an entry, estimated without parsing (batch sizing only): rows are flat JSON objects. */
function rowsOf(e: RawEntry): number {
  const f = e[1];
  if (!f) return 0;
  for (let i = 0; i < f.length; i += 2) {
    if (f[i] !== 'r') continue;
    const r = f[i + 1]!;
    if (r.length <= 2) return 0;
    let n = 1;
    for (let j = r.indexOf('},{'); j >= 0; j = r.indexOf('},{', j + 3)) n++;
    return n;
  }
  return 0;
}
