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
 * Hosted like every role thread (pipelines/thread-host.ts: metrics mirrored, restarted after a
 * growing pause should it die); what it had read and not acknowledged stays pending with its plan
 * and is re-sent by the next holder of the lease.
 */
import type { ClickHouseSettings } from '@clickhouse/client';
import type { Worker } from 'node:worker_threads';
import { Readable } from 'node:stream';
import type { Registry } from 'prom-client';
import type { Logger } from '../../src/log.js';
import type { Inserter } from '../../src/store/clickhouse/writer.js';
import { threadFile } from '../thread-file.js';
import { ThreadHost } from '../thread-host.js';
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

/** Thread → owner, besides ready and reply (pipelines/thread-host.ts). */
export type WriterThreadMessage = { kind: 'insert'; id: number; insert: InsertRequest };

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

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export class HistoryWriterThread {
  private constructor(
    private readonly host: ThreadHost,
    private readonly clickhouse: Inserter,
  ) {}

  /** Starts the thread; resolves once its writer runs (standing by or holding the lease). */
  static async start(data: WriterThreadData, opts: { clickhouse: Inserter; log: Pick<Logger, 'info' | 'warn' | 'error'>; metrics?: Registry }): Promise<HistoryWriterThread> {
    let t: HistoryWriterThread | null = null;
    const host = new ThreadHost({
      file: threadFile(import.meta.url, './writer-thread-main'),
      name: 'flow-history-writer',
      what: 'the history writer thread',
      whileAway: 'history waits in the Redis log until it is back',
      log: opts.log,
      metrics: opts.metrics ?? null,
      data: () => data,
      onMessage: (w, m) => {
        if (m.kind === 'insert') t?.insert(w, m.id as number, m.insert as InsertRequest);
      },
    });
    t = new HistoryWriterThread(host, opts.clickhouse);
    await host.start();
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
  stop(): Promise<void> {
    return this.host.stop();
  }

  private request(req: DistributiveOmit<WriterThreadRequest, 'id'>): Promise<unknown> {
    return this.host.request(req);
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
}
