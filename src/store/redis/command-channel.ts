/**
 * A request/reply channel between processes over Redis lists, for commands that one process
 * serves (the simulator's control, docs/simulator.md): a caller pushes a command and waits for its
 * answer; the serving process takes commands one at a time, in order, and pushes each answer back.
 * Payloads are opaque strings here (the callers own their shapes).
 *
 *   <prefix>:cmd:<name>              list of waiting commands (newest first), at most maxQueued,
 *                                    expiring when nobody pushes for a while
 *   <prefix>:cmd:<name>:reply:<id>   one command's answer, kept REPLY_TTL_MS for the caller to take
 *   <prefix>:cmd:<name>:server       the serving process is there (refreshed while it listens)
 *
 * Honest answers: a command carries the instant by which it must start; the server drops one it
 * takes later (the caller has given up by then), so a command is never carried out after its caller
 * was told it was not. The caller waits for the answer until that instant plus the time the command
 * may take to run. A caller finds out at once when no server listens.
 */
import { randomUUID } from 'node:crypto';
import { StoreUnavailable } from '../../errors.js';
import { createRedis, type Keyspace, type Redis } from './client.js';

/** How long an answer waits for its caller. */
const REPLY_TTL_MS = 60_000;
/** How long the server's presence lasts without a refresh (it refreshes at least every SERVER_POLL_MS). */
const SERVER_TTL_MS = 5_000;
const SERVER_POLL_MS = 1_000;
/** Blocking connections kept for callers between requests. */
const IDLE_BLOCKING_MAX = 4;

export interface CommandChannelOptions {
  /** The deployment's command connection (fail-fast: src/store/redis/client.ts createRedis). */
  redis: Redis;
  /** For the blocking connections (a blocking read holds its connection). */
  redisUrl: string;
  ks: Keyspace;
  name: string;
  /** Commands waiting beyond this are dropped, oldest first (default 1000). */
  maxQueued?: number;
}

/** A command the server took, with when it had to start. */
export interface TakenCommand {
  id: string;
  payload: string;
  start_by: number;
}

export type RequestOutcome = { answer: string } | { absent: true } | { timeout: true };

interface Envelope {
  id: string;
  start_by: number;
  payload: string;
}

/**
 * A connection for the blocking reads (a blocking read holds its connection). Fail-fast like every
 * command connection (createRedis): a read in flight when Redis goes away is refused at once, so a
 * caller answers 503 instead of hanging; the reads block at most SERVER_POLL_MS, under its timeout.
 */
function blockingConnection(url: string, name: string): Redis {
  return createRedis(url, { name });
}

export class CommandChannel {
  private readonly queueKey: string;
  private readonly serverKey: string;
  private readonly idle: Redis[] = [];
  private readonly busy = new Set<Redis>();
  private closed = false;

  constructor(private readonly o: CommandChannelOptions) {
    this.queueKey = o.ks.k('cmd', o.name);
    this.serverKey = o.ks.k('cmd', o.name, 'server');
  }

  private replyKey(id: string): string {
    return this.o.ks.k('cmd', this.o.name, 'reply', id);
  }

  // ---- the caller's side ------------------------------------------------------------------------

  /**
   * Sends a command and waits for its answer: `absent` when no server listens, `timeout` when it
   * did not start within `startWithinMs` (then it never will) or did not answer within
   * `startWithinMs + runWithinMs`. Throws StoreUnavailable when Redis cannot take the command.
   */
  async request(payload: string, opts: { startWithinMs: number; runWithinMs: number; now?: () => number }): Promise<RequestOutcome> {
    const now = opts.now ?? Date.now;
    const id = randomUUID();
    const startBy = now() + opts.startWithinMs;
    const envelope: Envelope = { id, start_by: startBy, payload };
    try {
      if ((await this.o.redis.get(this.serverKey)) === null) return { absent: true };
      await this.o.redis
        .multi()
        .lpush(this.queueKey, JSON.stringify(envelope))
        .ltrim(this.queueKey, 0, (this.o.maxQueued ?? 1000) - 1)
        .pexpire(this.queueKey, opts.startWithinMs * 2)
        .exec();
    } catch {
      throw new StoreUnavailable('redis', `sending the command to the ${this.o.name} process`);
    }
    const until = startBy + opts.runWithinMs;
    const conn = this.idle.pop() ?? blockingConnection(this.o.redisUrl, `flow-${this.o.name}-caller`);
    this.busy.add(conn);
    let healthy = true;
    try {
      while (!this.closed) {
        const left = until - now();
        if (left <= 0) return { timeout: true };
        let got: [string, string] | null;
        try {
          got = await conn.blpop(this.replyKey(id), Math.max(0.01, Math.min(left, SERVER_POLL_MS) / 1000));
        } catch {
          // Redis went away while the command was out: it may have been carried out, its answer is
          // out of reach now. Said at once, as every request that needs Redis does.
          healthy = false;
          throw new StoreUnavailable('redis', `waiting for the ${this.o.name} process's answer (the command was sent and may have taken effect)`);
        }
        if (got) return { answer: got[1] };
      }
      return { timeout: true };
    } finally {
      this.busy.delete(conn);
      if (healthy && !this.closed && this.idle.length < IDLE_BLOCKING_MAX) this.idle.push(conn);
      else conn.disconnect();
    }
  }

  // ---- the server's side ------------------------------------------------------------------------

  /** A server: takes commands on its own blocking connection. */
  server(): CommandServer {
    return new CommandServer(this.o, this.queueKey, this.serverKey, (id) => this.replyKey(id));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of [...this.idle, ...this.busy]) c.disconnect();
    this.idle.length = 0;
  }
}

export class CommandServer {
  private readonly conn: Redis;
  private readonly token = randomUUID();

  constructor(
    private readonly o: CommandChannelOptions,
    private readonly queueKey: string,
    private readonly serverKey: string,
    private readonly replyKey: (id: string) => string,
  ) {
    this.conn = blockingConnection(o.redisUrl, `flow-${o.name}-server`);
  }

  /** Says this server listens (for SERVER_TTL_MS); call at least every SERVER_POLL_MS. */
  async present(): Promise<void> {
    await this.o.redis.set(this.serverKey, this.token, 'PX', SERVER_TTL_MS);
  }

  /**
   * The next command, waiting up to SERVER_POLL_MS; null when none came. `expired` receives the
   * commands taken after their start-by instant: they are dropped unanswered (their caller gave up).
   */
  async take(now: () => number, expired: (c: TakenCommand) => void): Promise<TakenCommand | null> {
    const got = await this.conn.brpop(this.queueKey, SERVER_POLL_MS / 1000);
    if (!got) return null;
    let env: Envelope;
    try {
      env = JSON.parse(got[1]) as Envelope;
    } catch {
      return null;
    }
    if (typeof env?.id !== 'string' || typeof env.payload !== 'string' || typeof env.start_by !== 'number') return null;
    const taken = { id: env.id, payload: env.payload, start_by: env.start_by };
    if (taken.start_by < now()) {
      expired(taken);
      return null;
    }
    return taken;
  }

  /** Hands a command's answer to its caller (kept REPLY_TTL_MS). */
  async reply(id: string, answer: string): Promise<void> {
    await this.o.redis.multi().lpush(this.replyKey(id), answer).pexpire(this.replyKey(id), REPLY_TTL_MS).exec();
  }

  /** Stops listening: the presence goes at once when it is still this server's. */
  async close(): Promise<void> {
    const current = await this.o.redis.get(this.serverKey).catch(() => null);
    if (current === this.token) await this.o.redis.del(this.serverKey).catch(() => undefined);
    this.conn.disconnect();
  }
}
