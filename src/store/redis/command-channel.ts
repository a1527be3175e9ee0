/**
 * A request/reply channel between processes over Redis lists, for commands that one process
 * serves (the simulator's control, docs/simulator.md): a caller pushes a command and waits for its
 * answer; the serving process takes commands in order, runs them one at a time and pushes each
 * answer back. Payloads are opaque strings here (the callers own their shapes).
 *
 *   <prefix>:cmd:<name>                list of waiting commands (newest first), at most maxQueued,
 *                                      expiring when nobody pushes for a while
 *   <prefix>:cmd:<name>:reply:<caller> the answers to one calling process (each names its command),
 *                                      kept REPLY_TTL_MS after the last one
 *   <prefix>:cmd:<name>:server         the serving process is there (refreshed while it listens)
 *
 * Built for a steady stream of commands (a bench drives hundreds a second): a caller checks the
 * server's presence and pushes in one script, and one blocking read per calling process collects
 * every answer for it; the server takes what waits in one read (up to TAKE_BATCH).
 *
 * Honest answers: a command carries the instant by which it must start; the server drops one it
 * takes later (the caller has given up by then), so a command is never carried out after its caller
 * was told it was not. The caller waits for the answer until that instant plus the time the command
 * may take to run. A caller finds out at once when no server listens (nothing is queued then).
 */
import { randomUUID } from 'node:crypto';
import { StoreUnavailable } from '../../errors.js';
import { createRedis, type Keyspace, type Redis } from './client.js';
import { luaScript, type ScriptCall } from './script.js';

/** How long answers wait for their caller. */
const REPLY_TTL_MS = 60_000;
/** How long the server's presence lasts without a refresh (it refreshes at least every SERVER_POLL_MS). */
const SERVER_TTL_MS = 5_000;
const SERVER_POLL_MS = 1_000;
/** Commands the server takes in one read. */
const TAKE_BATCH = 64;

// KEYS: queue, server presence. ARGV: envelope, max queued, queue lifetime ms. 0 when no server
// listens (nothing queued), else 1.
const PUSH_LUA = `
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

export interface CommandChannelOptions {
  /** The deployment's command connection (fail-fast: src/store/redis/client.ts createRedis). */
  redis: Redis;
  /** For the blocking reads (a blocking read holds its connection). */
  redisUrl: string;
  ks: Keyspace;
  name: string;
  /** Commands waiting beyond this are dropped, oldest first (default 1000). */
  maxQueued?: number;
}

/** A command the server took, with when it had to start and where its answer goes. */
export interface TakenCommand {
  id: string;
  payload: string;
  start_by: number;
  reply_to: string;
}

export type RequestOutcome = { answer: string } | { absent: true } | { timeout: true };

interface Envelope {
  id: string;
  start_by: number;
  payload: string;
  reply_to: string;
}

interface Waiter {
  resolve(o: RequestOutcome): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A connection for the blocking reads. Fail-fast like every command connection (createRedis): a
 * read in flight when Redis goes away is refused at once, so a caller answers 503 instead of
 * hanging; the reads block at most SERVER_POLL_MS, under its timeout.
 */
function blockingConnection(url: string, name: string): Redis {
  return createRedis(url, { name });
}

export class CommandChannel {
  private readonly queueKey: string;
  private readonly serverKey: string;
  /** Where the server sends this process's answers. */
  private readonly replyKey: string;
  private readonly push: ScriptCall<number>;
  /** Callers waiting for their answer, by command id (each leaves at its answer or its deadline). */
  private readonly waiting = new Map<string, Waiter>();
  private listener: Redis | null = null;
  private listening: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly o: CommandChannelOptions) {
    this.queueKey = o.ks.k('cmd', o.name);
    this.serverKey = o.ks.k('cmd', o.name, 'server');
    this.replyKey = o.ks.k('cmd', o.name, 'reply', randomUUID());
    this.push = luaScript<number>(o.redis, PUSH_LUA);
  }

  // ---- the caller's side ------------------------------------------------------------------------

  /**
   * Sends a command and waits for its answer: `absent` when no server listens, `timeout` when it
   * did not start within `startWithinMs` (then it never will) or did not answer within
   * `startWithinMs + runWithinMs`. Throws StoreUnavailable when Redis cannot take the command, or
   * went away while it was out (it may have been carried out then).
   */
  async request(payload: string, opts: { startWithinMs: number; runWithinMs: number; now?: () => number }): Promise<RequestOutcome> {
    const now = opts.now ?? Date.now;
    const id = randomUUID();
    const startBy = now() + opts.startWithinMs;
    const envelope: Envelope = { id, start_by: startBy, payload, reply_to: this.replyKey };
    // Waiting before the push: an answer may come back before the push's own reply does.
    const answer = new Promise<RequestOutcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ timeout: true });
      }, Math.max(0, startBy + opts.runWithinMs - now()));
      this.waiting.set(id, { resolve, reject, timer });
    });
    // Redis may fail the listener while the push is still out: the answer's rejection is then not
    // awaited yet (and is not the one to report if the push fails too).
    answer.catch(() => undefined);
    this.listen();
    let pushed: number;
    try {
      pushed = await this.push([this.queueKey, this.serverKey], [JSON.stringify(envelope), this.o.maxQueued ?? 1000, opts.startWithinMs * 2]);
    } catch {
      this.settle(id);
      throw new StoreUnavailable('redis', `sending the command to the ${this.o.name} process`);
    }
    if (pushed === 0) {
      this.settle(id);
      return { absent: true };
    }
    return answer;
  }

  /** Forgets a waiting caller (its request answered otherwise). */
  private settle(id: string): void {
    const w = this.waiting.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    this.waiting.delete(id);
  }

  /**
   * One blocking read per process collects the answers to every waiting caller. The loop ends when
   * nobody waits; its connection stays for the next request (a connection per request cost a
   * connect, a handshake and a ready check each, at hundreds of commands a second), and goes only
   * after Redis failed it or at close().
   */
  private listen(): void {
    if (this.listening || this.closed) return;
    let conn = this.listener;
    if (!conn) {
      conn = this.listener = blockingConnection(this.o.redisUrl, `flow-${this.o.name}-caller`);
      // Swallowed here: a failed read is handled where it is sent.
      conn.on('error', () => undefined);
    }
    let failed = false;
    this.listening = (async () => {
      while (!this.closed && this.waiting.size > 0) {
        let got: [string, string] | null;
        try {
          got = await conn.blpop(this.replyKey, SERVER_POLL_MS / 1000);
        } catch {
          // Redis went away while commands were out: they may have been carried out, their answers
          // are out of reach now. Said at once, as every request that needs Redis does.
          failed = true;
          this.failAll();
          break;
        }
        if (!got) continue;
        let reply: { id?: unknown; answer?: unknown };
        try {
          reply = JSON.parse(got[1]) as typeof reply;
        } catch {
          continue;
        }
        const w = typeof reply.id === 'string' ? this.waiting.get(reply.id) : undefined;
        if (!w || typeof reply.answer !== 'string') continue; // its caller gave up already
        clearTimeout(w.timer);
        this.waiting.delete(reply.id as string);
        w.resolve({ answer: reply.answer });
      }
    })().finally(() => {
      if (failed || this.closed) {
        conn.disconnect();
        if (this.listener === conn) this.listener = null;
      }
      this.listening = null;
      // A request that came while the loop was ending needs a listener of its own.
      if (this.waiting.size > 0) this.listen();
    });
  }

  private failAll(): void {
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      this.waiting.delete(id);
      w.reject(new StoreUnavailable('redis', `waiting for the ${this.o.name} process's answer (the command was sent and may have taken effect)`));
    }
  }

  // ---- the server's side ------------------------------------------------------------------------

  /** A server: takes commands on its own blocking connection. */
  server(): CommandServer {
    return new CommandServer(this.o, this.queueKey, this.serverKey);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      this.waiting.delete(id);
      w.resolve({ timeout: true });
    }
    this.listener?.disconnect();
    this.listener = null;
  }
}

export class CommandServer {
  private readonly conn: Redis;
  private readonly token = randomUUID();
  /** Commands taken in the last read and not yet handed out, oldest first. */
  private readonly taken: string[] = [];

  constructor(
    private readonly o: CommandChannelOptions,
    private readonly queueKey: string,
    private readonly serverKey: string,
  ) {
    this.conn = blockingConnection(o.redisUrl, `flow-${o.name}-server`);
    // Swallowed here: a failed read is handled where it is sent (the consumer retries).
    this.conn.on('error', () => undefined);
  }

  /** Says this server listens (for SERVER_TTL_MS); call at least every SERVER_POLL_MS. */
  async present(): Promise<void> {
    await this.o.redis.set(this.serverKey, this.token, 'PX', SERVER_TTL_MS);
  }

  /**
   * The next command in the order sent, waiting up to SERVER_POLL_MS; null when none came. What
   * waits is read at once (up to TAKE_BATCH) and handed out one by one. `expired` receives the
   * commands taken after their start-by instant: they are dropped unanswered (their caller gave up).
   */
  async take(now: () => number, expired: (c: TakenCommand) => void): Promise<TakenCommand | null> {
    if (this.taken.length === 0) {
      const first = await this.conn.brpop(this.queueKey, SERVER_POLL_MS / 1000);
      if (!first) return null;
      this.taken.push(first[1]);
      const more = await this.conn.rpop(this.queueKey, TAKE_BATCH - 1);
      if (more) this.taken.push(...more);
    }
    const raw = this.taken.shift()!;
    let env: Envelope;
    try {
      env = JSON.parse(raw) as Envelope;
    } catch {
      return null;
    }
    if (typeof env?.id !== 'string' || typeof env.payload !== 'string' || typeof env.start_by !== 'number' || typeof env.reply_to !== 'string') return null;
    const taken = { id: env.id, payload: env.payload, start_by: env.start_by, reply_to: env.reply_to };
    if (taken.start_by < now()) {
      expired(taken);
      return null;
    }
    return taken;
  }

  /** Hands a command's answer to its caller (kept REPLY_TTL_MS). */
  async reply(c: Pick<TakenCommand, 'id' | 'reply_to'>, answer: string): Promise<void> {
    await this.o.redis
      .multi()
      .lpush(c.reply_to, JSON.stringify({ id: c.id, answer }))
      .pexpire(c.reply_to, REPLY_TTL_MS)
      .exec();
  }

  /** Stops listening: the presence goes at once when it is still this server's. */
  async close(): Promise<void> {
    const current = await this.o.redis.get(this.serverKey).catch(() => null);
    if (current === this.token) await this.o.redis.del(this.serverKey).catch(() => undefined);
    this.conn.disconnect();
  }
}
