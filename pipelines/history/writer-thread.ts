/**
 * The history writer on a thread of its own. Reading the history log, parsing and validating its
 * entries and encoding batches cost the thread that runs them milliseconds at a time; on the
 * streaming process's event loop those were stalls every change in flight waited out (bench
 * stream-latency). The thread opens its own Redis connections; the lease, the plan and the dedup
 * tokens work exactly as with a writer in another process.
 *
 * Inserts come back to the owner's ClickHouse client as ready TabSeparated bodies: embedded chDB
 * wants one connection per process (a second one on the same directory, closed or ended with its
 * thread, left the first one hanging), and its queries already run on the engine's own threads,
 * so the owner's part is handing a string over.
 *
 * Its metrics stay in the process's registry: each one is mirrored by a stand-in whose value is
 * asked of the thread at scrape time. Should the thread die (an uncaught error), it is started again
 * after a pause that grows with repeated failures; what it had read and not acknowledged stays
 * pending with its plan and is re-sent by the next holder of the lease.
 */
import type { ClickHouseSettings } from '@clickhouse/client';
import { Worker } from 'node:worker_threads';
import { Readable } from 'node:stream';
import type { Registry, MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Logger } from '../../src/log.js';
import type { Inserter } from '../../src/store/clickhouse/writer.js';
import { threadFile } from '../thread-file.js';
import type { ConsumerStats, HistoryConsumerOptions } from './consumer.js';

/** What the thread needs to open its stores and its writer: plain data (it crosses the thread boundary). */
export interface WriterThreadData {
  redisUrl: string;
  redisPrefix: string;
  logLevel: string;
  consumer: Partial<Pick<HistoryConsumerOptions, 'leaseMs' | 'lingerMs' | 'maxBatchRows' | 'blockMs'>>;
}

/** Owner → thread: requests, and the answers to the thread's inserts. */
export type WriterThreadRequest =
  | { id: number; op: 'stats' | 'idle' | 'metrics' | 'stop' }
  | { id: number; op: 'drain'; timeoutMs: number }
  | { id: number; op: 'inserted'; error: InsertError | null };

/** Thread → owner. */
export type WriterThreadMessage =
  | { kind: 'ready'; metrics: MetricDescriptor[] }
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; error: string }
  | { kind: 'insert'; id: number; insert: InsertRequest };

/** One table's batch, encoded by the thread. */
export interface InsertRequest {
  table: string;
  columns: string[];
  format: 'TabSeparated';
  body: string;
  settings: ClickHouseSettings;
}

/** A failed insert as the thread's writer needs it: the code decides between retrying and dropping. */
export interface InsertError {
  message: string;
  code: string | null;
}

export interface MetricDescriptor {
  name: string;
  help: string;
  type: string;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type Snapshot = MetricObjectWithValues<MetricValue<string>>[];

const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;
/** Scrapes within this long share one snapshot from the thread (a scrape reads every stand-in). */
const SNAPSHOT_MS = 250;

export class HistoryWriterThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private stopping = false;
  private restartMs = RESTART_MIN_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  private snapshot: { at: number; value: Promise<Map<string, Snapshot[number]>> } | null = null;
  private readonly mirrored = new Set<string>();

  private constructor(
    private readonly data: WriterThreadData,
    private readonly clickhouse: Inserter,
    private readonly log: Pick<Logger, 'info' | 'warn' | 'error'>,
    private readonly metrics: Registry | null,
  ) {}

  /** Starts the thread; resolves once its writer runs (standing by or holding the lease). */
  static async start(data: WriterThreadData, opts: { clickhouse: Inserter; log: Pick<Logger, 'info' | 'warn' | 'error'>; metrics?: Registry }): Promise<HistoryWriterThread> {
    const t = new HistoryWriterThread(data, opts.clickhouse, opts.log, opts.metrics ?? null);
    await t.spawn();
    return t;
  }

  /** The writer's counters (throws while the thread is being restarted). */
  stats(): Promise<ConsumerStats> {
    return this.request({ op: 'stats' }) as Promise<ConsumerStats>;
  }

  /** True when every entry in the log has been written and acknowledged. */
  idle(): Promise<boolean> {
    return this.request({ op: 'idle' }) as Promise<boolean>;
  }

  /** Resolves once the log is drained (tests, benches); throws after timeoutMs. */
  async drain(timeoutMs = 30_000): Promise<void> {
    await this.request({ op: 'drain', timeoutMs });
  }

  /** Finishes the batch in hand, gives the lease up, closes the thread's stores, ends the thread. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const w = this.worker;
    if (!w) return;
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    await Promise.race([this.request({ op: 'stop' }).catch(() => undefined), exited]);
    // The thread ends by itself once its connections are closed; a stuck one is ended for it.
    const timer = setTimeout(() => void w.terminate(), 2_000);
    await exited;
    clearTimeout(timer);
  }

  // ---- the thread ----

  private spawn(): Promise<void> {
    const w = new Worker(threadFile(import.meta.url, './writer-thread-main'), { workerData: this.data, name: 'flow-history-writer' });
    this.worker = w;
    return new Promise((resolve, reject) => {
      let ready = false;
      w.on('message', (m: WriterThreadMessage) => {
        if (m.kind === 'ready') {
          ready = true;
          this.restartMs = RESTART_MIN_MS;
          this.mirror(m.metrics);
          resolve();
          return;
        }
        if (m.kind === 'insert') return this.insert(w, m.id, m.insert);
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.ok) p.resolve(m.value);
        else p.reject(new Error(m.error));
      });
      w.on('error', (err) => {
        if (!ready) reject(err);
        else this.log.error({ err }, 'the history writer thread failed');
      });
      w.on('exit', (code) => {
        if (this.worker === w) this.worker = null;
        for (const p of this.pending.values()) p.reject(new Error('the history writer thread ended'));
        this.pending.clear();
        if (!ready) reject(new Error(`the history writer thread ended while starting (exit code ${code})`));
        else if (!this.stopping) this.scheduleRestart(code);
      });
    });
  }

  private insert(w: Worker, id: number, r: InsertRequest): void {
    const answer = (error: InsertError | null) => w.postMessage({ op: 'inserted', id, error } satisfies WriterThreadRequest);
    this.clickhouse
      .insert({
        table: r.table,
        columns: r.columns as [string, ...string[]],
        format: r.format,
        values: Readable.from([r.body], { objectMode: false }),
        clickhouse_settings: r.settings,
      })
      .then(
        () => answer(null),
        (err: unknown) => {
          const code = (err as { code?: unknown }).code;
          answer({ message: err instanceof Error ? err.message : String(err), code: typeof code === 'string' ? code : null });
        },
      );
  }

  private scheduleRestart(code: number): void {
    const wait = this.restartMs;
    this.restartMs = Math.min(RESTART_MAX_MS, this.restartMs * 2);
    this.log.error({ exit_code: code, restart_in_ms: wait }, 'the history writer thread ended unexpectedly; history waits in the Redis log until it is back');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.spawn().catch((err: unknown) => {
        this.log.error({ err }, 'restarting the history writer thread failed');
        if (!this.stopping) this.scheduleRestart(-1);
      });
    }, wait);
    this.restartTimer.unref();
  }

  private request(req: DistributiveOmit<WriterThreadRequest, 'id'>): Promise<unknown> {
    const w = this.worker;
    if (!w) return Promise.reject(new Error('the history writer thread is not running'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ ...req, id } as WriterThreadRequest);
    });
  }

  // ---- metrics ----

  /** One stand-in per metric of the thread, registered once (a restarted thread has the same set). */
  private mirror(descriptors: MetricDescriptor[]): void {
    const registry = this.metrics;
    if (!registry) return;
    for (const d of descriptors) {
      if (this.mirrored.has(d.name) || registry.getSingleMetric(d.name)) continue;
      this.mirrored.add(d.name);
      const standIn = {
        name: d.name,
        help: d.help,
        type: d.type,
        aggregator: 'sum',
        get: async () => (await this.read()).get(d.name) ?? { name: d.name, help: d.help, type: d.type, aggregator: 'sum', values: [] },
        reset: () => undefined,
      };
      registry.registerMetric(standIn as unknown as Parameters<Registry['registerMetric']>[0]);
    }
  }

  private read(): Promise<Map<string, Snapshot[number]>> {
    const now = Date.now();
    if (!this.snapshot || now - this.snapshot.at > SNAPSHOT_MS) {
      const value = (this.request({ op: 'metrics' }) as Promise<Snapshot>).then((list) => new Map(list.map((m) => [m.name, m])), () => new Map<string, Snapshot[number]>());
      this.snapshot = { at: now, value };
    }
    return this.snapshot.value;
  }
}
