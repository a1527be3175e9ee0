/**
 * One worker per deployment over a Redis stream, held by a lease (./lease.ts): the loop the history
 * writer and the trade-signal consumer share. It stands by until the lease is its own, recovers
 * (what a previous holder, or a failed round, left in Redis) once each time it takes the lease or a
 * round failed, then runs rounds; a round that fails is retried with exponential backoff, starting
 * again from recovery. A fenced write that finds another holder throws LeaseLost: the lease is
 * forgotten at once and the loop stands by. The lease is renewed on a timer, well within its life.
 */
import type { Redis } from '../src/store/redis/client.js';
import { Lease } from './lease.js';

/** Thrown by a round whose fenced write found the lease in another holder's hands. */
export class LeaseLost extends Error {}

export interface LeasedWork {
  /** Once per lease taken and after each failed round, before the next round. */
  recover(): Promise<void>;
  /** One round of work (it blocks on its read when there is nothing to do). */
  round(): Promise<void>;
  /** Called when the lease is taken (e.g. to log what waits). */
  taken(): Promise<void> | void;
}

export interface LeasedLoopOptions {
  leaseMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
  /** Log fields every line carries, and what the work is called in them. */
  fields: Record<string, unknown>;
  what: string;
}

export class LeasedLoop {
  readonly lease: Lease;
  private readonly renewTimer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private stopping = false;
  private active = false;
  private recovered = false;
  private wake: (() => void) | null = null;

  constructor(
    redis: Redis,
    leaseKey: string,
    private readonly o: LeasedLoopOptions,
    private readonly work: LeasedWork,
  ) {
    this.lease = new Lease(redis, leaseKey, o.leaseMs);
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, o.leaseMs / 4));
    this.renewTimer.unref();
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** True while this process holds the lease and works. */
  isActive(): boolean {
    return this.active && this.lease.held();
  }

  /** True once stop() was called: a round in hand should finish what it has, not start more. */
  isStopping(): boolean {
    return this.stopping;
  }

  /** Lets the round in hand finish (at most timeoutMs), then gives the lease up. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.wake?.();
    clearInterval(this.renewTimer);
    if (this.running) await Promise.race([this.running, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    if (this.active) await this.lease.release().catch(() => undefined);
    this.active = false;
  }

  private async renew(): Promise<void> {
    if (!this.active || this.stopping) return;
    try {
      if (!(await this.lease.acquire())) this.o.log.warn(this.o.fields, `${this.o.what} lease taken by another process; standing by`);
    } catch {
      // Unreachable Redis: the lease runs out locally (held() turns false) and the loop stands by.
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        if (!this.lease.held()) {
          if (this.active) {
            this.active = false;
            this.o.log.warn(this.o.fields, `${this.o.what} lease lost; standing by`);
          }
          if (!(await this.lease.acquire())) {
            await this.pause(this.o.leaseMs / 4);
            continue;
          }
          this.active = true;
          this.recovered = false;
          await this.work.taken();
        }
        if (!this.recovered) {
          await this.work.recover();
          this.recovered = true;
        }
        await this.work.round();
        failures = 0;
      } catch (err) {
        if (err instanceof LeaseLost) {
          this.lease.lost();
          continue;
        }
        failures++;
        // Whatever failed, the next round starts from what Redis holds.
        this.recovered = false;
        if (failures === 1 || failures % 20 === 0) this.o.log.warn({ ...this.o.fields, err: (err as Error).message, failures }, `${this.o.what} failed; retrying`);
        await this.pause(Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** Math.min(20, failures - 1)));
      }
    }
  }

  private pause(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }
}

/** Creates a stream's consumer group reading from its start (entries written before any consumer ran count too); one that exists is kept. */
export async function ensureGroup(conn: Redis, stream: string, group: string): Promise<void> {
  try {
    await conn.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
  } catch (err) {
    if (!String((err as Error).message).startsWith('BUSYGROUP')) throw err;
  }
}

export type RawEntry = [id: string, fields: string[] | null];

/** XREADGROUP of one stream: up to `count` entries after `id` ('>' for new ones), blocking blockMs when given. */
export async function readGroup(conn: Redis, stream: string, group: string, consumer: string, id: string, count: number, blockMs: number | null): Promise<RawEntry[]> {
  const args: (string | number)[] = ['GROUP', group, consumer, 'COUNT', count];
  if (blockMs !== null) args.push('BLOCK', Math.max(1, Math.ceil(blockMs)));
  args.push('STREAMS', stream, id);
  // The typed method: a raw call('XREADGROUP') comes back in another shape.
  const res = (await (conn as unknown as { xreadgroup(...a: (string | number)[]): Promise<unknown> }).xreadgroup(...args)) as [string, RawEntry[]][] | null;
  return res?.[0]?.[1] ?? [];
}
