/**
 * Token buckets: how an adapter keeps its own request rate inside what the venue publishes, so the
 * venue never has to refuse or throttle us (a 429 costs a round trip and, on some venues, a penalty
 * box).
 *
 * A `TokenBucket` holds `capacity` tokens at most (the burst) and refills continuously at
 * `refillPerSecond`. Venues publish limits two ways:
 * - per second (Kalshi): a bucket of one second's budget refilled at that rate;
 * - as "N requests per window" (Polymarket, per 10 s): `windowBudget(N, W)`. A bucket of capacity C
 *   refilled at r admits at most C + r·W in any window of W, so it is sized at 10 % of N with the
 *   other 90 % refilled over the window: never more than N in any sliding window, and short
 *   bursts still pass at once.
 *
 * `take(cost)` waits for one bucket; a `RateLimiter` holds a venue's named buckets and
 * `acquire(names)` takes a token from each bucket a request counts against (venue-wide, service,
 * endpoint) at once, so the tightest applies. Both wait first-in first-out (a big request is not
 * starved by small ones behind it) in a bounded queue: past `maxQueue` waiting requests the call
 * rejects at once with a retryable `rate_limited`, so a caller that outruns the venue for long sees
 * errors instead of an ever longer queue. `drain()` empties a bucket, for when the venue said 429
 * anyway (our idea of its budget was wrong, or another client shares the key).
 *
 * Time comes from `clock` (default performance.now: monotonic, so a wall-clock step neither
 * starves nor floods the bucket) and waiting from `sleep`, so tests can drive both.
 */
import { VenueError, VenueErrorCodes } from './errors.js';

export interface TokenBucketSpec {
  /** Most tokens held at once (the burst a quiet period earns). */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

/** A bucket that never admits more than `limit` requests in any `windowMs` (see the module doc). */
export function windowBudget(limit: number, windowMs: number): TokenBucketSpec {
  if (!(limit > 0) || !(windowMs > 0)) throw new RangeError(`a window budget needs a positive limit and window: ${limit}/${windowMs}ms`);
  const capacity = Math.max(1, Math.floor(limit / 10));
  return { capacity, refillPerSecond: ((limit - capacity) * 1000) / windowMs };
}

/** How waiting is done and bounded; shared by a bucket and a limiter. */
export interface PacingOptions {
  /** Requests allowed to wait at once (default 1000). */
  maxQueue?: number;
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** For error messages and VenueError.partner_id. */
  partnerId?: string;
  name?: string;
}

export interface TokenBucketOptions extends TokenBucketSpec, PacingOptions {}

const realSleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    // A pacing wait must not keep a process alive on its own.
    t.unref?.();
  });

const monotonic = () => performance.now();

/**
 * The FIFO, bounded wait both a bucket and a limiter use: `run(tryNow)` resolves once `tryNow()`
 * answers 0 (it took its tokens), sleeping the ms it answers otherwise, behind earlier callers.
 */
class PacedQueue {
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private readonly maxQueue: number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Requests that had to wait, and for how long in total (ms): the figures a metric reads. */
  waits = 0;
  waitedMs = 0;
  /** Requests refused because the queue was full. */
  refused = 0;

  constructor(private readonly opts: PacingOptions) {
    this.maxQueue = opts.maxQueue ?? 1000;
    this.sleep = opts.sleep ?? realSleep;
  }

  run(tryNow: () => number, retryAfterMs: number): Promise<void> {
    // Nobody ahead and the tokens are there: no queue, no tick of delay.
    if (this.queued === 0 && tryNow() === 0) return Promise.resolve();
    if (this.queued >= this.maxQueue) {
      this.refused++;
      return Promise.reject(
        new VenueError('retryable', VenueErrorCodes.rateLimited, `${this.opts.name ?? this.opts.partnerId ?? 'rate limit'}: ${this.queued} requests already wait for the rate limit`, {
          partner_id: this.opts.partnerId ?? null,
          retry_after_ms: retryAfterMs,
        }),
      );
    }
    this.queued++;
    this.waits++;
    const turn = this.tail.then(async () => {
      for (;;) {
        const wait = tryNow();
        if (wait === 0) return;
        this.waitedMs += wait;
        await this.sleep(wait);
      }
    });
    const done = turn.finally(() => {
      this.queued--;
    });
    // The chain must survive a failed link (a sleep that throws), or every later request would fail.
    this.tail = done.catch(() => undefined);
    return done;
  }
}

export class TokenBucket {
  readonly capacity: number;
  readonly refillPerSecond: number;
  private readonly clock: () => number;
  private readonly queue: PacedQueue;
  private tokens: number;
  private last: number;

  constructor(opts: TokenBucketOptions) {
    if (!(opts.capacity > 0) || !(opts.refillPerSecond > 0)) throw new RangeError(`token bucket capacity and refill must be positive: ${JSON.stringify({ capacity: opts.capacity, refillPerSecond: opts.refillPerSecond })}`);
    this.capacity = opts.capacity;
    this.refillPerSecond = opts.refillPerSecond;
    this.clock = opts.clock ?? monotonic;
    this.queue = new PacedQueue(opts);
    this.tokens = opts.capacity;
    this.last = this.clock();
  }

  /** Requests that had to wait, the total wait (ms), and requests refused (queue full). */
  get waits(): number {
    return this.queue.waits;
  }

  get waitedMs(): number {
    return this.queue.waitedMs;
  }

  get refused(): number {
    return this.queue.refused;
  }

  private refill(): void {
    const now = this.clock();
    if (now > this.last) {
      this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.refillPerSecond);
      this.last = now;
    }
  }

  /** Tokens available now (fractional while refilling). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** Ms until `cost` tokens are there (0: now). Takes nothing. */
  waitMs(cost = 1): number {
    if (cost > this.capacity) throw new RangeError(`cost ${cost} exceeds the bucket capacity ${this.capacity}`);
    this.refill();
    if (this.tokens >= cost) return 0;
    return Math.ceil(((cost - this.tokens) / this.refillPerSecond) * 1000);
  }

  /** Takes `cost` tokens when they are there and answers 0, else takes nothing and answers the wait in ms. */
  tryTake(cost = 1): number {
    const wait = this.waitMs(cost);
    if (wait === 0) this.tokens -= cost;
    return wait;
  }

  /** Resolves once `cost` tokens are taken (FIFO behind earlier callers). */
  take(cost = 1): Promise<void> {
    if (cost > this.capacity) return Promise.reject(new RangeError(`cost ${cost} exceeds the bucket capacity ${this.capacity}`));
    return this.queue.run(() => this.tryTake(cost), Math.ceil((cost / this.refillPerSecond) * 1000));
  }

  /** Empties the bucket: the venue refused us, so assume its budget is spent until it refills. */
  drain(): void {
    this.refill();
    this.tokens = 0;
  }
}

/** A venue's named buckets; a request takes one token from each bucket it names. */
export class RateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly queue: PacedQueue;
  /** Tokens handed out, per bucket name (what the requests spent). */
  readonly spent = new Map<string, number>();

  constructor(specs: Readonly<Record<string, TokenBucketSpec>>, opts: PacingOptions = {}) {
    this.queue = new PacedQueue(opts);
    // The buckets only count: waiting is the limiter's one queue.
    for (const [name, spec] of Object.entries(specs)) this.buckets.set(name, new TokenBucket({ ...spec, clock: opts.clock, name }));
  }

  /** Requests that had to wait, and requests refused (queue full). */
  get waits(): number {
    return this.queue.waits;
  }

  get refused(): number {
    return this.queue.refused;
  }

  bucket(name: string): TokenBucket | undefined {
    return this.buckets.get(name);
  }

  /** Takes one token from every named bucket at once when all have one; else the longest wait in ms. */
  tryAcquire(names: readonly string[]): number {
    const bs = this.lookup(names);
    const wait = Math.max(0, ...bs.map((b) => b.waitMs()));
    if (wait === 0) {
      for (const b of bs) b.tryTake();
      for (const n of names) this.spent.set(n, (this.spent.get(n) ?? 0) + 1);
    }
    return wait;
  }

  private lookup(names: readonly string[]): TokenBucket[] {
    return names.map((n) => {
      const b = this.buckets.get(n);
      if (!b) throw new RangeError(`no rate-limit bucket ${JSON.stringify(n)}`);
      return b;
    });
  }

  /** Resolves once a token of every named bucket is taken (FIFO); rejects `rate_limited` when the queue is full. */
  acquire(names: readonly string[]): Promise<void> {
    const bs = this.lookup(names); // an unknown bucket is a bug: throw now, not inside the queue
    return this.queue.run(() => this.tryAcquire(names), Math.max(0, ...bs.map((b) => Math.ceil(1000 / b.refillPerSecond))));
  }
}
