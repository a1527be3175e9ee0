/**
 * The liquidity job as a compute thread takes it from the pipeline thread (pipelines/compute-pool.ts),
 * built so that little crosses between the threads on a change:
 *
 *   full   the whole job (input and stored snapshot): the thread continues from its run of the
 *          contest when the snapshot is that run's, else computes from the snapshot; it answers
 *          every text fragment, so the caller starts its mirror of the texts over
 *   delta  only what changed in the input (the clock and the repriced positions' quotes) and the run
 *          the caller's mirror is at: answered with the fragments that changed, or `miss` when the
 *          thread does not hold that run (restarted, evicted, or it moved on), and the caller
 *          sends the job in full
 *
 * A contest goes to one thread (the caller hashes its id), so its run is there for the next change.
 */
import type { RunCacheLimits } from './run-cache.js';
import { unwire, type WireDelta } from './input-delta.js';
import { liquidityRun, threadRuns } from './job.js';
import type { LiquidityFindings, LiquidityJobInput, LiquidityJobOutput } from './job-types.js';
import type { TextPatch } from './contest-text.js';

export type LiquidityTask =
  | { kind: 'full'; job: LiquidityJobInput; limits?: RunCacheLimits }
  | { kind: 'delta'; contestId: string; base: string; delta: WireDelta };

export type LiquidityTaskResult =
  | { kind: 'miss' }
  /** The run's findings and its text fragments (every one of them after a full task). */
  | { kind: 'step'; findings: LiquidityFindings; patch: TextPatch }
  /** An input a run refuses, computed from scratch: the whole output, no mirror. */
  | { kind: 'output'; output: LiquidityJobOutput };

export function runLiquidityTask(task: LiquidityTask): LiquidityTaskResult {
  const runs = threadRuns;
  if (task.kind === 'delta') {
    const now = task.delta.now_ms;
    const run = runs.get(task.contestId, now);
    if (run === undefined || run.text.run !== task.base) return { kind: 'miss' };
    const delta = unwire(task.delta, (i) => run.quotesOf(i));
    const step = delta && run.advance(delta);
    if (step === null) {
      runs.delete(task.contestId);
      return { kind: 'miss' };
    }
    runs.set(task.contestId, run, now);
    return { kind: 'step', findings: step.findings, patch: step.patch };
  }
  if (task.limits) runs.limit(task.limits);
  const r = liquidityRun(task.job, runs);
  if ('output' in r) return { kind: 'output', output: r.output };
  return { kind: 'step', findings: r.step.findings, patch: r.continued ? r.run.text.fullPatch() : r.step.patch };
}
