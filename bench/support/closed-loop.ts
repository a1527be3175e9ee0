/**
 * Load drivers that never abandon an operation in flight at the deadline (autocannon does): every
 * operation started is waited for and counted, so a bench can reconcile what it was answered with
 * what the store holds (an abandoned request may still have committed).
 * - drive: a closed loop. `workers` loops, each starting its next operation when the previous one
 *   answered, until `seconds` have passed: the most the system under test serves at that concurrency.
 * - pace: an open loop. Operations start on a fixed schedule, `rate` a second, whether or not the
 *   earlier ones answered, so a latency figure is one at a stated load (a closed loop's latency is
 *   its concurrency over its throughput, by Little's law), timed from the scheduled start: a late
 *   start counts against the system, as a client that sent on time would have seen it.
 * Throughput is the operations that succeeded over the time until the last one answered.
 */
import type { LoadResult } from './autocannon.js';

/** What one operation answered: `ok`, a refusal (a non-2xx status, by its label), or an error thrown. */
export type Outcome = { ok: true } | { ok: false; refusal: string };

export interface DriveResult extends LoadResult {
  /** Refusals and errors by label (status code or error message), with one example each. */
  failures: Map<string, { count: number; example: string }>;
  /** The most operations in flight at once. */
  maxInFlight: number;
}

/** The value at quantile q (0-1) of ascending `sorted`, NaN when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Runs operations and keeps their figures: latency of the successes, refusals and errors by label. */
class Recorder {
  private readonly latencies: number[] = [];
  private readonly failures = new Map<string, { count: number; example: string }>();
  private refused = 0;
  private errors = 0;
  private inFlight = 0;
  private maxInFlight = 0;
  readonly start = performance.now();

  constructor(private readonly op: (worker: number) => Promise<Outcome>) {}

  /** Runs op(worker); its latency runs from `from` (now, unless a schedule says when it was due). */
  async run(worker: number, from = performance.now()): Promise<void> {
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      const out = await this.op(worker);
      if (out.ok) this.latencies.push(performance.now() - from);
      else {
        this.refused++;
        this.fail(out.refusal.split(' ')[0]!, out.refusal);
      }
    } catch (err) {
      this.errors++;
      const message = err instanceof Error ? err.message : String(err);
      this.fail(message.slice(0, 80), message);
    } finally {
      this.inFlight--;
    }
  }

  private fail(label: string, example: string): void {
    const f = this.failures.get(label);
    if (f) f.count++;
    else this.failures.set(label, { count: 1, example });
  }

  result(name: string): DriveResult {
    const elapsed = (performance.now() - this.start) / 1000;
    const sorted = Float64Array.from(this.latencies).sort();
    const round = (ms: number) => Math.round(ms * 100) / 100;
    return {
      name,
      rps: this.latencies.length / elapsed,
      requests: this.latencies.length,
      p50: round(quantile(sorted, 0.5)),
      p99: round(quantile(sorted, 0.99)),
      errors: this.errors,
      non2xx: this.refused,
      failures: this.failures,
      maxInFlight: this.maxInFlight,
    };
  }
}

/**
 * Runs `op(worker)` from `workers` closed loops for `seconds`; `op` resolves an Outcome or throws (an
 * error, counted apart from refusals). Latency is from the call to its answer, in ms.
 */
export async function drive(name: string, workers: number, seconds: number, op: (worker: number) => Promise<Outcome>): Promise<DriveResult> {
  const rec = new Recorder(op);
  const deadline = rec.start + seconds * 1000;
  const loop = async (w: number) => {
    while (performance.now() < deadline) await rec.run(w);
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => loop(w)));
  return rec.result(name);
}

/**
 * Starts `op(i mod workers)` for i = 0, 1, … at `rate` a second for `seconds`, each at its scheduled
 * instant (or as soon after as this process gets to it), then waits for every one to answer.
 * Latency is from the scheduled instant to the answer, in ms.
 */
export async function pace(name: string, workers: number, rate: number, seconds: number, op: (worker: number) => Promise<Outcome>): Promise<DriveResult> {
  const rec = new Recorder(op);
  const total = Math.max(1, Math.round(rate * seconds));
  const due = (i: number) => rec.start + (i * 1000) / rate;
  const running: Promise<void>[] = [];
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (; next < total && due(next) <= now; next++) running.push(rec.run(next % workers, due(next)));
      if (next >= total) resolve();
      else setTimeout(tick, Math.max(0, due(next) - performance.now()));
    };
    tick();
  });
  await Promise.all(running);
  return rec.result(name);
}
