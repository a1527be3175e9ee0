/**
 * A closed-loop load driver: `workers` loops, each starting its next operation when the previous one
 * answered, until `seconds` have passed. Unlike autocannon, it never abandons an operation in flight
 * at the deadline: every operation started is waited for and counted, so a bench can reconcile what
 * it was answered with what the store holds (an abandoned request may still have committed).
 * Throughput is the operations that succeeded over the time until the last one answered.
 */
import type { LoadResult } from './autocannon.js';

/** What one operation answered: `ok`, a refusal (a non-2xx status, by its label), or an error thrown. */
export type Outcome = { ok: true } | { ok: false; refusal: string };

export interface DriveResult extends LoadResult {
  /** Refusals and errors by label (status code or error message), with one example each. */
  failures: Map<string, { count: number; example: string }>;
}

/** The value at quantile q (0-1) of ascending `sorted`, NaN when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Runs `op(worker)` from `workers` loops for `seconds`; `op` resolves an Outcome or throws (an error,
 * counted apart from refusals). Latency is from the call to its answer, in ms.
 */
export async function drive(name: string, workers: number, seconds: number, op: (worker: number) => Promise<Outcome>): Promise<DriveResult> {
  const latencies: number[] = [];
  const failures = new Map<string, { count: number; example: string }>();
  let refused = 0;
  let errors = 0;
  const fail = (label: string, example: string) => {
    const f = failures.get(label);
    if (f) f.count++;
    else failures.set(label, { count: 1, example });
  };
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const loop = async (w: number) => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const out = await op(w);
        if (out.ok) latencies.push(performance.now() - t0);
        else {
          refused++;
          fail(out.refusal.split(' ')[0]!, out.refusal);
        }
      } catch (err) {
        errors++;
        const message = err instanceof Error ? err.message : String(err);
        fail(message.slice(0, 80), message);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => loop(w)));
  const elapsed = (performance.now() - start) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    name,
    rps: latencies.length / elapsed,
    requests: latencies.length,
    p50: round(quantile(sorted, 0.5)),
    p99: round(quantile(sorted, 0.99)),
    errors,
    non2xx: refused,
    failures,
  };
}
