/**
 * A part of a role on a worker thread of its own, owned by the main thread: the history writer
 * (pipelines/history/writer-thread.ts) and, in a process that runs other roles too, the stream
 * gateway (cli/roles/gateway-thread.ts). Each thread opens its own stores and runs its own event
 * loop and heap, so the work of one (a batch encoded, a garbage collection, a computation's
 * writes) is never a stall the other's events wait out.
 *
 * What the two sides share:
 * - start: the thread says `ready` (with its metric names and what the owner needs to know, such
 *   as a bound port) once it runs; an error or an exit before that fails the start;
 * - requests: owner → thread `{id, op, ...}`, answered `{kind: 'reply', id, ok, value | error}`;
 *   `stop` ends the thread (serveThread closes its port once answered);
 * - metrics stay in the process's registry: each metric of the thread is mirrored by a stand-in
 *   whose value is asked of the thread at scrape time;
 * - a thread that ends unexpectedly is started again after a pause that grows with repeated
 *   failures (what it held must be safe to lose: both threads' work is in the durable event log).
 * Other message kinds go to the owner's `onMessage` (the history writer's inserts).
 */
import { Worker, type MessagePort } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import type { Logger } from '../src/log.js';

export interface MetricDescriptor {
  name: string;
  help: string;
  type: string;
}

/** Thread → owner, besides the kinds a host handles itself. */
export type HostedMessage =
  | { kind: 'ready'; metrics: MetricDescriptor[]; info?: unknown }
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; error: string }
  | { kind: string; [k: string]: unknown };

type Snapshot = MetricObjectWithValues<MetricValue<string>>[];

const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;
/** Scrapes within this long share one snapshot from the thread (a scrape reads every stand-in). */
const SNAPSHOT_MS = 250;

export interface ThreadHostOptions {
  /** The thread's entry module (pipelines/thread-file.ts threadFile). */
  file: string;
  /** The thread's name, and what log lines call it ("the history writer thread"). */
  name: string;
  what: string;
  /** What the thread logs when it restarts ("history waits in the Redis log until it is back"). */
  whileAway: string;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  metrics: Registry | null;
  /** workerData for each start (asked again at a restart: it may depend on the first start's info). */
  data: () => unknown;
  /**
   * A thread that does not end within 2 s of its stop is terminated; with `abandonStuck` it is left
   * to the process's exit instead (a thread holding native handles, such as uWS sockets, aborts the
   * whole process when terminated).
   */
  abandonStuck?: boolean;
  /** Messages of other kinds than ready and reply. */
  onMessage?: (w: Worker, m: { kind: string; [k: string]: unknown }) => void;
}

export class ThreadHost {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private stopping = false;
  private restartMs = RESTART_MIN_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  private snapshot: { at: number; value: Promise<Map<string, Snapshot[number]>> } | null = null;
  private readonly mirrored = new Set<string>();

  constructor(private readonly o: ThreadHostOptions) {}

  /** The running thread (null while it is being restarted); fault tests end it as a crash would. */
  get thread(): Worker | null {
    return this.worker;
  }

  /** Starts the thread; resolves with the `info` of its ready message. */
  start(): Promise<unknown> {
    return this.spawn();
  }

  /** Asks the running thread; rejects while it is being restarted, or when it ends before answering. */
  request(req: { op: string; [k: string]: unknown }): Promise<unknown> {
    const w = this.worker;
    if (!w) return Promise.reject(new Error(`${this.o.what} is not running`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ ...req, id });
    });
  }

  /** Asks the thread to stop and waits for it to end (ending it after 2 s if it does not). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const w = this.worker;
    if (!w) return;
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    await Promise.race([this.request({ op: 'stop' }).catch(() => undefined), exited]);
    // The thread ends by itself once its connections are closed; a stuck one is ended for it, or
    // left behind (abandonStuck).
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<void>((r) => {
      timer = setTimeout(() => {
        this.o.log.warn(`${this.o.what} did not end within 2 s of its stop`);
        if (this.o.abandonStuck) r();
        else void w.terminate();
      }, 2_000);
    });
    await Promise.race([exited, stuck]);
    clearTimeout(timer);
  }

  private spawn(): Promise<unknown> {
    const w = new Worker(this.o.file, { workerData: this.o.data(), name: this.o.name });
    this.worker = w;
    return new Promise((resolve, reject) => {
      let ready = false;
      w.on('message', (m: HostedMessage) => {
        if (m.kind === 'ready') {
          const r = m as Extract<HostedMessage, { kind: 'ready' }>;
          ready = true;
          this.restartMs = RESTART_MIN_MS;
          this.mirror(r.metrics);
          resolve(r.info);
          return;
        }
        if (m.kind === 'reply') {
          const r = m as Extract<HostedMessage, { kind: 'reply' }>;
          const p = this.pending.get(r.id);
          if (!p) return;
          this.pending.delete(r.id);
          if (r.ok) p.resolve(r.value);
          else p.reject(new Error(r.error));
          return;
        }
        this.o.onMessage?.(w, m);
      });
      w.on('error', (err) => {
        if (!ready) reject(err);
        else this.o.log.error({ err }, `${this.o.what} failed`);
      });
      w.on('exit', (code) => {
        if (this.worker === w) this.worker = null;
        for (const p of this.pending.values()) p.reject(new Error(`${this.o.what} ended`));
        this.pending.clear();
        if (!ready) reject(new Error(`${this.o.what} ended while starting (exit code ${code})`));
        else if (!this.stopping) this.scheduleRestart(code);
      });
    });
  }

  private scheduleRestart(code: number): void {
    const wait = this.restartMs;
    this.restartMs = Math.min(RESTART_MAX_MS, this.restartMs * 2);
    this.o.log.error({ exit_code: code, restart_in_ms: wait }, `${this.o.what} ended unexpectedly; ${this.o.whileAway}`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.spawn().catch((err: unknown) => {
        this.o.log.error({ err }, `restarting ${this.o.what} failed`);
        if (!this.stopping) this.scheduleRestart(-1);
      });
    }, wait);
    this.restartTimer.unref();
  }

  /** One stand-in per metric of the thread, registered once (a restarted thread has the same set). */
  private mirror(descriptors: MetricDescriptor[]): void {
    const registry = this.o.metrics;
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

/**
 * The thread's side: answers the owner's requests with `answer` (`metrics` is answered from
 * `metrics` here; `stop` closes the port once answered, which ends a thread with nothing else
 * open), hands other messages to `other`, and says ready.
 */
export async function serveThread(
  port: MessagePort,
  o: { metrics: Registry; info?: unknown; answer: (req: { id: number; op: string; [k: string]: unknown }) => Promise<unknown>; other?: (req: { op: string; [k: string]: unknown }) => boolean },
): Promise<void> {
  const send = (m: HostedMessage) => port.postMessage(m);
  port.on('message', (req: { id: number; op: string; [k: string]: unknown }) => {
    if (o.other?.(req)) return;
    (req.op === 'metrics' ? o.metrics.getMetricsAsJSON() : o.answer(req))
      .then(
        (value) => send({ kind: 'reply', id: req.id, ok: true, value }),
        (err: unknown) => send({ kind: 'reply', id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
      )
      // Once stopped nothing else keeps the thread alive: closing the port ends it.
      .finally(() => req.op === 'stop' && port.close());
  });
  send({ kind: 'ready', metrics: (await o.metrics.getMetricsAsJSON()).map((m) => ({ name: m.name, help: m.help, type: String(m.type) })), info: o.info });
}
