import { describe, expect, it } from 'vitest';
import { drive, pace, quantile } from '../../bench/support/closed-loop.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('bench load drivers', () => {
  it('takes quantiles of a sorted list, NaN of none', () => {
    const xs = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(xs, 0.5)).toBe(50);
    expect(quantile(xs, 0.99)).toBe(99);
    expect(quantile(xs, 1)).toBe(100);
    expect(quantile([7], 0.99)).toBe(7);
    expect(quantile([], 0.5)).toBeNaN();
  });

  it('waits for the operations in flight at the deadline and counts every one, by outcome', async () => {
    let started = 0;
    let finished = 0;
    const r = await drive('t', 4, 0.1, async (w) => {
      const n = ++started;
      await sleep(30);
      finished++;
      if (w === 3) throw new Error('boom');
      return n % 5 === 0 ? { ok: false, refusal: '409 balance_cap' } : { ok: true };
    });
    // Nothing abandoned: every operation started answered and is counted once.
    expect(finished).toBe(started);
    expect(r.requests + r.non2xx + r.errors).toBe(started);
    expect(r.errors).toBe(r.failures.get('boom')!.count);
    expect(r.errors).toBeGreaterThan(0);
    expect(r.non2xx).toBe(r.failures.get('409')?.count ?? 0);
    expect(r.requests).toBeGreaterThan(0);
    expect(r.p50).toBeGreaterThanOrEqual(29);
    expect(r.p99).toBeGreaterThanOrEqual(r.p50);
    // Throughput counts successes only, over the time until the last answer (≥ the 0.1 s asked).
    expect(r.rps).toBeLessThanOrEqual(r.requests / 0.1);
  });

  it('closed loop: never more in flight than loops', async () => {
    const r = await drive('t', 3, 0.05, async () => {
      await sleep(5);
      return { ok: true };
    });
    expect(r.maxInFlight).toBe(3);
  });

  it('paced: starts rate × seconds operations on schedule, spread over the workers, whether or not earlier ones answered', async () => {
    const starts: number[] = [];
    const workers: number[] = [];
    const t0 = performance.now();
    const r = await pace('t', 4, 200, 0.2, async (w) => {
      starts.push(performance.now() - t0);
      workers.push(w);
      // Far slower than the schedule: a closed loop of 4 would start only 4 in 100 ms.
      await sleep(100);
      return { ok: true };
    });
    expect(starts).toHaveLength(40);
    expect(r.requests).toBe(40);
    expect(workers.slice(0, 8)).toEqual([0, 1, 2, 3, 0, 1, 2, 3]);
    // Operation i is due at i × 5 ms; none starts early, and the last long before answers would
    // let it (a closed loop of 4 would start it after 900 ms).
    starts.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(i * 5 - 1));
    expect(starts[39]!).toBeLessThan(500);
    expect(r.maxInFlight).toBeGreaterThan(4);
    expect(r.p50).toBeGreaterThanOrEqual(99);
  });

  it('paced: latency runs from the scheduled start, so a late start counts against the system', async () => {
    let first = true;
    const r = await pace('t', 1, 100, 0.05, async () => {
      // The first operation blocks this process for 60 ms: the four due meanwhile start late.
      if (first) {
        first = false;
        const until = performance.now() + 60;
        while (performance.now() < until);
      }
      return { ok: true };
    });
    expect(r.requests).toBe(5);
    // Due at 10, 20, 30 and 40 ms, started at about 60 ms: the latest waited about 50 ms.
    expect(r.p99).toBeGreaterThanOrEqual(45);
  });

  it('paced: counts refusals and errors, and waits for every operation started', async () => {
    let started = 0;
    let finished = 0;
    const r = await pace('t', 2, 100, 0.1, async (w) => {
      started++;
      await sleep(20);
      finished++;
      if (w === 1) throw new Error('boom');
      return w === 0 && finished % 2 === 0 ? { ok: false, refusal: '503 unavailable' } : { ok: true };
    });
    expect(started).toBe(10);
    expect(finished).toBe(10);
    expect(r.requests + r.non2xx + r.errors).toBe(10);
    expect(r.non2xx).toBe(r.failures.get('503')?.count ?? 0);
    expect(r.errors).toBe(5);
    expect(r.failures.get('boom')!.count).toBe(5);
  });
});
