/**
 * The baseline of bench/orders.ts: raw BullMQ add-and-process round trips, each job doing a paper
 * buy's PostgreSQL writes as one raw transaction (bench/support/raw-buy.ts). A round trip is
 * queue.add → a Worker runs the job → the caller learns it completed, as the architecture's
 * execute path would go (POST buy → per-account queue → execute worker → PostgreSQL), with nothing
 * else: no HTTP, no authentication, no planning, no per-account queues.
 *
 * Its settings (QueueSettings) are swept in the run and the fastest is the baseline:
 * - the worker in this process, completion taken from the Worker's own 'completed' event (no
 *   event stream read), or in a process of its own (as an api and an execute worker would be),
 *   completion taken from QueueEvents; either way one listener settles every job by its id, so no
 *   per-job subscription or state poll (Job.waitUntilFinished does both) is paid;
 * - the Worker's concurrency: as many jobs as the loops (every job in flight is fetched at once
 *   and waits for a pool connection), or as many as the pool has connections;
 * - statements unnamed, or named (prepared once per connection).
 * Jobs are removed once done (removeOnComplete/removeOnFail): nothing reads them afterwards. The
 * pool has as many connections as the service's.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents, Worker } from 'bullmq';
import pg from 'pg';
import { bullConnection } from '../../pipelines/queues.js';
import { ClientProcess } from './client-process.js';
import type { Outcome } from './closed-loop.js';
import { isMain } from './main.js';
import { rawBuyer, type BuyCapture, type RawBuySettings } from './raw-buy.js';

export interface QueueSettings extends RawBuySettings {
  /** The Worker in this process (else in a child process of its own). */
  inProcess: boolean;
  concurrency: number;
}

/** The sweep: which settings the bench tries, for `loops` round-trip loops and a pool of `poolMax`. */
export function queueSettings(loops: number, poolMax: number): QueueSettings[] {
  const at = (inProcess: boolean, concurrency: number, prepared: boolean): QueueSettings => ({
    name: `worker ${inProcess ? 'here' : 'process'}, c=${concurrency}, ${prepared ? 'prepared' : 'unnamed'}`,
    inProcess,
    concurrency,
    prepared,
  });
  return [at(true, loops, false), at(true, loops, true), at(true, poolMax, true), at(false, loops, true), at(false, poolMax, true)];
}

export interface QueueDeps {
  redisUrl: string;
  /** BullMQ's key prefix: the bench server's Redis prefix, so its cleanup removes the queues too. */
  prefix: string;
  databaseUrl: string;
  poolMax: number;
  capture: BuyCapture;
}

const JOB = 'buy';
const connectionOf = (d: QueueDeps) => ({ connection: bullConnection(d.redisUrl), prefix: d.prefix });

/** The Worker doing the buys' writes, and its pool; close() stops both. */
function startWorker(d: QueueDeps, s: QueueSettings, queue: string): { worker: Worker<{ account: string }, Outcome>; close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: d.databaseUrl, max: d.poolMax });
  pool.on('error', () => undefined);
  const buy = rawBuyer(pool, d.capture, s);
  const worker = new Worker<{ account: string }, Outcome>(queue, (job) => buy(job.data.account), { ...connectionOf(d), concurrency: s.concurrency });
  return {
    worker,
    async close() {
      await worker.close();
      await pool.end();
    },
  };
}

type Settle = { resolve(o: Outcome): void; reject(e: Error): void };

/** One setting of the baseline, ready to take round trips. */
export class RawQueue {
  private readonly waiting = new Map<string, Settle>();
  private seq = 0;

  private constructor(
    private readonly queue: Queue<{ account: string }, Outcome>,
    private readonly closers: (() => Promise<void>)[],
    /** The worker's process when it has one of its own. */
    readonly workerPid: number | null,
  ) {}

  static async start(d: QueueDeps, s: QueueSettings, queueName: string): Promise<RawQueue> {
    const queue = new Queue<{ account: string }, Outcome>(queueName, connectionOf(d));
    await queue.waitUntilReady();
    if (s.inProcess) {
      const w = startWorker(d, s, queueName);
      const q = new RawQueue(queue, [() => w.close()], null);
      w.worker.on('completed', (job, result) => q.settle(job.id!, result));
      w.worker.on('failed', (job, err) => job && q.fail(job.id!, err.message));
      await w.worker.waitUntilReady();
      return q;
    }
    const events = new QueueEvents(queueName, connectionOf(d));
    const child = new ClientProcess<WorkerCommand, WorkerMessage>(
      spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    const q = new RawQueue(
      queue,
      [
        async () => {
          await child.request({ cmd: 'stop' }).catch(() => undefined);
          child.child.kill('SIGTERM');
        },
        () => events.close(),
      ],
      child.child.pid ?? null,
    );
    events.on('completed', ({ jobId, returnvalue }) => q.settle(jobId, returnvalue as unknown as Outcome));
    events.on('failed', ({ jobId, failedReason }) => q.fail(jobId, failedReason));
    // Listening before the first add: QueueEvents reads only events that come after it is ready.
    await events.waitUntilReady();
    await child.request({ cmd: 'start', deps: d, settings: s, queue: queueName });
    return q;
  }

  /** One round trip: add the job for `account`, resolve once the worker has done it. */
  roundTrip(account: string): Promise<Outcome> {
    const jobId = `j${++this.seq}`;
    return new Promise<Outcome>((resolve, reject) => {
      this.waiting.set(jobId, { resolve, reject });
      this.queue.add(JOB, { account }, { jobId, removeOnComplete: true, removeOnFail: true }).catch((err: Error) => this.fail(jobId, err.message));
    });
  }

  private settle(jobId: string, o: Outcome): void {
    this.waiting.get(jobId)?.resolve(o);
    this.waiting.delete(jobId);
  }

  private fail(jobId: string, why: string): void {
    this.waiting.get(jobId)?.reject(new Error(why));
    this.waiting.delete(jobId);
  }

  async close(): Promise<void> {
    for (const c of this.closers) await c();
    await this.queue.obliterate({ force: true }).catch(() => undefined);
    await this.queue.close();
  }
}

type WorkerCommand = { cmd: 'start'; deps: QueueDeps; settings: QueueSettings; queue: string } | { cmd: 'stop' };
type WorkerMessage = { ev: 'started' } | { ev: 'stopped' } | { ev: 'error'; message: string };

/** The worker process: starts one Worker on 'start', closes it on 'stop'. */
function serveWorker(): void {
  let running: { close(): Promise<void> } | null = null;
  const reply = (m: WorkerMessage) => process.send!(m);
  process.on('message', (m: WorkerCommand) => {
    if (m.cmd === 'start') {
      const w = startWorker(m.deps, m.settings, m.queue);
      running = w;
      w.worker.waitUntilReady().then(
        () => reply({ ev: 'started' }),
        (err: unknown) => reply({ ev: 'error', message: String(err) }),
      );
    } else {
      void (running?.close() ?? Promise.resolve()).then(
        () => {
          reply({ ev: 'stopped' });
          process.exit(0);
        },
        (err: unknown) => reply({ ev: 'error', message: String(err) }),
      );
    }
  });
  process.on('SIGTERM', () => process.exit(0));
}

if (isMain(import.meta.url)) serveWorker();
