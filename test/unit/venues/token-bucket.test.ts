/**
 * The one token bucket of the venue adapters (src/venues/token-bucket.ts), on a manual clock: a
 * bucket waits exactly as long as the refill needs, in arrival order; a window budget never admits
 * more than the published limit in any window; a request takes from every bucket it names; a full
 * queue is refused rather than grown. Kalshi's per-tier buckets are checked in
 * test/venues/kalshi/rules.test.ts, Polymarket's published limits here.
 */
import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../src/venues/errors.js';
import { POLYMARKET_RATE_LIMITS, rateKeys } from '../../../src/venues/polymarket/venue.js';
import { RateLimiter, TokenBucket, windowBudget } from '../../../src/venues/token-bucket.js';

const clock = () => {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe('token bucket', () => {
  it('waits exactly as long as the refill needs, in arrival order', async () => {
    let now = 0;
    const slept: number[] = [];
    const b = new TokenBucket({ capacity: 20, refillPerSecond: 20, clock: () => now, sleep: async (ms) => { slept.push(ms); now += ms; } });
    for (let i = 0; i < 20; i++) await b.take(1);
    expect(slept).toEqual([]);
    expect(b.waits).toBe(0);
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((i) => b.take(1).then(() => order.push(i))));
    // Each further token takes 1/20 s.
    expect(slept).toEqual([50, 50, 50]);
    expect(order).toEqual([1, 2, 3]);
    expect(b.waits).toBe(3);
    expect(b.waitedMs).toBe(150);
    b.drain();
    expect(b.tryTake(1)).toBe(50);
    await expect(b.take(21)).rejects.toThrow(RangeError);
  });

  it('refuses with a retryable rate_limited past its queue bound, and the queue survives a failed wait', async () => {
    let fail = true;
    const b = new TokenBucket({ capacity: 1, refillPerSecond: 1, maxQueue: 2, clock: () => 0, partnerId: 'kalshi', sleep: () => (fail ? Promise.reject(new Error('sleep broke')) : new Promise(() => undefined)) });
    await b.take(1); // the token was there: it never queued
    const first = b.take(1);
    void b.take(1).catch(() => undefined);
    await expect(b.take(1)).rejects.toMatchObject({ kind: 'retryable', code: 'rate_limited', partner_id: 'kalshi' });
    expect(b.refused).toBe(1);
    await expect(first).rejects.toThrow('sleep broke');
    fail = false;
    // The failed links left the queue: two may wait again.
    await new Promise((r) => setImmediate(r));
    void b.take(1);
    void b.take(1);
    await expect(b.take(1)).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('a window budget of 500 per 10 s: a burst of 50, then 45 per second', () => {
    expect(windowBudget(500, 10_000)).toEqual({ capacity: 50, refillPerSecond: 45 });
    const c = clock();
    const b = new TokenBucket({ ...windowBudget(500, 10_000), clock: c.now });
    let n = 0;
    while (b.tryTake() === 0) n++;
    expect(n).toBe(50);
    expect(b.waitMs()).toBe(23); // 1 token at 45/s
    c.advance(1000);
    expect(Math.round(b.available())).toBe(45);
  });

  it('never admits more than the limit in any 10 s window, however the requests come', () => {
    const c = clock();
    const limit = 300;
    const b = new TokenBucket({ ...windowBudget(limit, 10_000), clock: c.now });
    const admitted: number[] = [];
    // Greedy: try every 7 ms for a minute.
    for (let t = 0; t < 60_000; t += 7) {
      while (b.tryTake() === 0) admitted.push(c.now());
      c.advance(7);
    }
    let worst = 0;
    for (let i = 0, j = 0; i < admitted.length; i++) {
      while (admitted[i]! - admitted[j]! >= 10_000) j++;
      worst = Math.max(worst, i - j + 1);
    }
    expect(worst).toBeLessThanOrEqual(limit);
    expect(worst).toBeGreaterThan(limit * 0.95); // and uses nearly all of it
  });

  it('a request takes one token from each bucket it names, only when all have one', () => {
    const c = clock();
    const l = new RateLimiter({ a: { capacity: 2, refillPerSecond: 1 }, b: { capacity: 1, refillPerSecond: 1 } }, { clock: c.now });
    expect(l.tryAcquire(['a', 'b'])).toBe(0);
    expect(l.tryAcquire(['a', 'b'])).toBe(1000); // b is empty: a keeps its token
    expect(l.bucket('a')!.available()).toBe(1);
    expect(l.tryAcquire(['a'])).toBe(0);
    expect(l.spent.get('a')).toBe(2);
    expect(() => l.tryAcquire(['nope'])).toThrow(RangeError);
  });

  it('acquire resolves at once with tokens left, and refuses beyond maxQueue with a retryable rate_limited', async () => {
    const c = clock();
    const l = new RateLimiter({ a: { capacity: 1, refillPerSecond: 0.001 } }, { clock: c.now, maxQueue: 0, partnerId: 'polymarket' });
    await l.acquire(['a']);
    const err = await l.acquire(['a']).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VenueError);
    expect((err as VenueError).kind).toBe('retryable');
    expect((err as VenueError).code).toBe('rate_limited');
    expect(l.refused).toBe(1);
  });

  it('acquire waits for the tightest bucket it names, in arrival order', async () => {
    let now = 0;
    const slept: number[] = [];
    const l = new RateLimiter(
      { wide: { capacity: 10, refillPerSecond: 10 }, narrow: { capacity: 1, refillPerSecond: 4 } },
      { clock: () => now, sleep: async (ms) => { slept.push(ms); now += ms; } },
    );
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((i) => l.acquire(['wide', 'narrow']).then(() => order.push(i))));
    expect(order).toEqual([1, 2, 3]);
    expect(slept).toEqual([250, 250]); // narrow refills one token per 250 ms; wide never held anyone up
    expect(l.waits).toBe(2);
    expect(l.spent.get('wide')).toBe(3);
  });

  it("Polymarket's published limits, as buckets", () => {
    expect(POLYMARKET_RATE_LIMITS['gamma:/events']).toEqual(windowBudget(500, 10_000));
    expect(POLYMARKET_RATE_LIMITS['clob:/book']).toEqual({ capacity: 150, refillPerSecond: 135 });
    expect(POLYMARKET_RATE_LIMITS.general).toEqual({ capacity: 1500, refillPerSecond: 1350 });
    expect(rateKeys('clob', '/books')).toEqual(['general', 'clob', 'clob:/books']);
    for (const k of rateKeys('clob', '/books')) expect(POLYMARKET_RATE_LIMITS[k]).toBeDefined();
  });
});
