/**
 * The liquidity job as a compute thread takes it from the pipeline thread (pipelines/compute-pool.ts),
 * built so that little crosses between the threads on a change:
 *
 *   full   the whole job (input and stored snapshot): the thread computes from the snapshot and
 *          answers every text fragment, so the caller starts its mirror of the texts over (the
 *          thread keeps its runs without their texts, which only the caller assembles)
 *   delta  only what changed in the input (the clock and the repriced positions' quotes) and the run
 *          the caller's mirror is at: answered with the fragments that changed, or `miss` when the
 *          thread does not hold that run (restarted, evicted, or it moved on), and the caller
 *          sends the job in full
 *
 * A contest goes to one thread (the caller hashes its id), so its run is there for the next change.
 */
import type { RunCacheLimits } from './run-cache.js';
import { jsonFaithful, unwire, type WireDelta } from './input-delta.js';
import { advanceOrDrop, liquidityRun, threadRuns } from './job.js';
import type { SerializedSignal } from '../domain/signals.js';
import type { LiquidityFindings, LiquidityJobInput, LiquidityJobOutput } from './job-types.js';
import { packPatch, unpackPatch, type TextPatch, type WirePatch } from './contest-text.js';

export type LiquidityTask =
  | { kind: 'full'; job: LiquidityJobInput; limits?: RunCacheLimits }
  | { kind: 'delta'; contestId: string; base: string; delta: WireDelta };

/**
 * The signals of a step as they cross threads: their texts one after the other in `s`, and per
 * signal the lengths of its dedupe_key, signal_type and json and its expires_ms in `n`. A string and
 * a typed array clone as two copies; the signal objects one by one cost about 30 µs a change of the
 * bench's 200-position contest (11 signals a change while its arbitrage episodes run), 3 µs so.
 */
export interface WireSignals {
  s: string;
  n: Float64Array;
}

export function packSignals(list: readonly SerializedSignal[]): WireSignals {
  const n = new Float64Array(4 * list.length);
  const parts = new Array<string>(3 * list.length);
  for (let i = 0; i < list.length; i++) {
    const x = list[i]!;
    n[4 * i] = x.dedupe_key.length;
    n[4 * i + 1] = x.signal_type.length;
    n[4 * i + 2] = x.json.length;
    n[4 * i + 3] = x.expires_ms;
    parts[3 * i] = x.dedupe_key;
    parts[3 * i + 1] = x.signal_type;
    parts[3 * i + 2] = x.json;
  }
  return { s: parts.join(''), n };
}

export function unpackSignals(w: WireSignals): SerializedSignal[] {
  const { s, n } = w;
  if (n.length % 4 !== 0) throw new Error(`signals on the wire with ${n.length} numbers, not four a signal`);
  const out = new Array<SerializedSignal>(n.length / 4);
  let pos = 0;
  const take = (len: number): string => s.slice(pos, (pos += len));
  for (let i = 0; i < out.length; i++) {
    const dedupe_key = take(n[4 * i]!);
    const signal_type = take(n[4 * i + 1]!) as SerializedSignal['signal_type'];
    const json = take(n[4 * i + 2]!);
    out[i] = { dedupe_key, signal_type, expires_ms: n[4 * i + 3]!, json };
  }
  if (pos !== s.length) throw new Error(`signals text of ${s.length} characters whose lengths add up to ${pos}`);
  return out;
}

export type LiquidityTaskResult =
  | { kind: 'miss' }
  /**
   * The run's text fragments (every one of them after a full task) and its findings: all but the
   * signals as JSON, the patch's lead, when JSON gives them back as they are (ticks, entries and
   * points are a few dozen small objects, which clone at ten times the cost of their text), else
   * whole in `findings`.
   */
  | { kind: 'step'; patch: WirePatch; signals: WireSignals; findings?: LiquidityFindings }
  /** An input a run refuses, computed from scratch: the whole output, no mirror. */
  | { kind: 'output'; output: LiquidityJobOutput };

function packStep(findings: LiquidityFindings, patch: TextPatch): LiquidityTaskResult {
  const { signals, ...rest } = findings;
  return jsonFaithful(rest) ? { kind: 'step', patch: packPatch(patch, JSON.stringify(rest)), signals: packSignals(signals) } : { kind: 'step', patch: packPatch(patch), signals: packSignals([]), findings };
}

/** The findings and text patch of a step result. */
export function unpackStep(res: Extract<LiquidityTaskResult, { kind: 'step' }>): { findings: LiquidityFindings; patch: TextPatch } {
  const { patch, lead } = unpackPatch(res.patch);
  return { findings: res.findings ?? { ...(JSON.parse(lead) as Omit<LiquidityFindings, 'signals'>), signals: unpackSignals(res.signals) }, patch };
}

export function runLiquidityTask(task: LiquidityTask): LiquidityTaskResult {
  const runs = threadRuns;
  if (task.kind === 'delta') {
    const now = task.delta.now_ms;
    const run = runs.get(task.contestId, now);
    if (run === undefined || run.runId !== task.base) return { kind: 'miss' };
    const delta = unwire(task.delta, (i) => run.quotesOf(i));
    const step = delta && advanceOrDrop(runs, task.contestId, run, delta);
    if (step === null) {
      runs.delete(task.contestId);
      return { kind: 'miss' };
    }
    runs.set(task.contestId, run, now);
    return packStep(step.findings, step.patch);
  }
  if (task.limits) runs.limit(task.limits);
  // The thread keeps no texts (the caller does), so a whole job always starts from the snapshot: its patch has every fragment.
  const r = liquidityRun(task.job, runs, false);
  if ('output' in r) return { kind: 'output', output: r.output };
  return packStep(r.step.findings, r.step.patch);
}
