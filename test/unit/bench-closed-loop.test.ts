import { describe, expect, it } from 'vitest';
import { drive, quantile } from '../../bench/support/closed-loop.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('bench closed-loop driver', () => {
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
});
