/**
 * One liquidity job: compute the contest against its stored snapshot, and do the serialization and
 * diffing where it computes, so the pipeline thread only moves strings to Redis and the bus.
 *
 * A thread keeps the last run of each contest it computed (RunCache of ContestRun): when the stored
 * snapshot is that run's own text, the job continues from the run in memory and recomputes only what
 * the change touches (contest-run.ts). Otherwise (a cold thread, an evicted run, a snapshot another
 * worker wrote) it parses the snapshot and computes the contest from scratch. Both give the same
 * output (test/unit/compute/contest-run.test.ts); the stored snapshot stays the source of truth.
 */
import { serializeSignal, type Signal } from '../domain/signals.js';
import { entryChanged, removalEntry, toChangedEntry } from './changes.js';
import { computeContest } from './contest.js';
import { ContestRun, type RunStep } from './contest-run.js';
import type { InputDelta } from './input-delta.js';
import { answerDigest, type ContestText } from './contest-text.js';
import { liquidityDigest } from './digest.js';
import type { ChangedEntry, ConsensusPoint, LiquidityFindings, LiquidityJobInput, LiquidityJobOutput } from './job-types.js';
import { arbitrageSignal, liveQuotes, priceMoveSignal, signalSchedule, signalsDigest, takeSample, withoutExpiry, type ConsensusSample } from './market-signals.js';
import { DEFAULT_RUN_CACHE_LIMITS, RunCache } from './run-cache.js';
import { newRunId, parseSnapshot, type StoredSnapshot } from './snapshot.js';
import type { ContestInput, ContestResult, ContestSnapshot } from './types.js';
import type { PositionDefinition } from '../domain/catalog.js';

export type { ChangedEntry, ConsensusPoint, LiquidityFindings, LiquidityJobInput, LiquidityJobOutput } from './job-types.js';

/**
 * Compares two snapshots quote by quote: the changed_entries items of every quote whose price,
 * available or is_stale differ; a vanished (or newly withheld) quote reads available 0 at its last
 * price, confirmed now. A stored quote from before is_stale existed reads as fresh. (Price history
 * is not derived from this: ingest records every venue change as it arrives.)
 */
export function quoteChanges(prev: ContestSnapshot | undefined, next: ContestSnapshot, nowIso: string): ChangedEntry[] {
  const changed: ChangedEntry[] = [];
  const before = prev?.quotes ?? {};
  for (const h in next.quotes) {
    const q = next.quotes[h]!;
    if (entryChanged(Object.hasOwn(before, h) ? before[h] : undefined, q)) changed.push(toChangedEntry(q));
  }
  for (const h in before) {
    if (Object.hasOwn(next.quotes, h)) continue;
    const entry = removalEntry(before[h]!, nowIso);
    if (entry) changed.push(entry);
  }
  return changed;
}

/** The runs this thread keeps (one per contest it computed lately). */
export const threadRuns = new RunCache<ContestRun>(DEFAULT_RUN_CACHE_LIMITS, (r) => r.size());

/** A job's run: the contest's run and its step, or (for an input a run refuses) the whole output. */
export type LiquidityRun = { run: ContestRun; step: RunStep; continued: boolean } | { output: LiquidityJobOutput };

/**
 * Computes one contest against its stored snapshot (ignored when it is another contest's),
 * continuing from this thread's run of it when the snapshot is that run's; `runs` null computes
 * from scratch and keeps nothing.
 */
export function runLiquidityJob(job: LiquidityJobInput, runs: RunCache<ContestRun> | null = threadRuns): LiquidityJobOutput {
  const r = liquidityRun(job, runs);
  return 'output' in r ? r.output : jobOutput(r.run.text!, r.step.findings);
}

/** The job output of a run's findings with its texts (assembled from the fragments). */
export function jobOutput(text: ContestText, findings: LiquidityFindings): LiquidityJobOutput {
  const out: LiquidityJobOutput = { ...findings, positionsJson: text.answerJson(), snapshotJson: text.snapshotJson(), depth: text.depth(), arbitragesJson: text.arbitrages };
  out.snapshotParts = text.snapshotParts();
  const since = text.textsSince();
  if (since) out.textsSince = since;
  return out;
}

/** The run of a job; `keepText` false on a compute thread, whose texts the calling thread assembles (ContestRun.text). */
export function liquidityRun(job: LiquidityJobInput, runs: RunCache<ContestRun> | null, keepText = true): LiquidityRun {
  const id = job.input.contest_id;
  const now = job.input.now_ms;
  const cached = runs?.get(id, now);
  if (cached && cached.holds(job.prevJson)) {
    const delta = cached.delta(job.input);
    const step = delta && advanceOrDrop(runs!, id, cached, delta);
    if (step) {
      runs!.set(id, cached, now);
      return { run: cached, step, continued: true };
    }
  }
  const prev = parseSnapshot(job.prevJson, id);
  const started = ContestRun.start(job.input, prev, keepText);
  if (started === null) {
    runs?.delete(id);
    return { output: runFromScratch(job.input, prev) };
  }
  runs?.set(id, started.run, now);
  return { run: started.run, step: started.step, continued: false };
}

/** The run advanced by `delta`; a run that throws midway is half changed, so it is dropped before the error goes on. */
export function advanceOrDrop(runs: RunCache<ContestRun>, id: string, run: ContestRun, delta: InputDelta): RunStep | null {
  try {
    return run.advance(delta);
  } catch (err) {
    runs.delete(id);
    throw err;
  }
}

/**
 * The whole computation in one go, on whole objects: computeContest, then the signals, then every
 * text serialized. The reference the incremental run is tested against, and the path of inputs it
 * refuses (a liquidity or position hash twice).
 */
export function runFromScratch(input: ContestInput, prev: StoredSnapshot | undefined): LiquidityJobOutput {
  const result = computeContest(input, prev);
  const consensusNow: Record<string, number | null> = {};
  const consensus: ConsensusPoint[] = [];
  for (const p of result.positions) {
    consensusNow[p.position_hash] = p.consensus_price;
    if (p.consensus_price !== null && prev?.consensus?.[p.position_hash] !== p.consensus_price) {
      consensus.push({ position_hash: p.position_hash, price: p.consensus_price });
    }
  }
  const positionsJson = JSON.stringify(result.positions);
  const digest = answerDigest(result.positions);
  const arbitragesJson = JSON.stringify(result.arbitrages);
  const arbDigest = liquidityDigest(arbitragesJson);
  const sig = liquiditySignals(input, result, prev);
  const stored: StoredSnapshot = {
    run: newRunId(),
    ...result.snapshot,
    consensus: consensusNow,
    answer_digest: digest,
    arbitrages_digest: arbDigest,
    samples: sig.samples,
    moves: sig.moves,
    signals_digest: sig.digest,
    signals_refresh_ms: sig.refreshMs,
  };
  const changes = quoteChanges(prev, result.snapshot, new Date(input.now_ms).toISOString());
  // A first computation (or one after a snapshot without a digest) counts as a changed answer.
  const answerChanged = prev?.answer_digest !== digest;
  return {
    positionsJson,
    snapshotJson: JSON.stringify(stored),
    depth: result.depth.map((d) => [d.position_hash, JSON.stringify(d)]),
    ticks: result.ticks,
    changed: changes,
    refreshRequired: answerChanged && changes.length === 0,
    consensus,
    outliers: Object.values(result.snapshot.quotes)
      .filter((q) => q.outlier)
      .map((q) => q.liquidity_hash),
    positions: result.positions.length,
    arbitragesJson,
    // A first run with no arbitrage has nothing to clear; after a snapshot without the digest, any set is news.
    arbitragesChanged: prev?.arbitrages_digest === undefined ? result.arbitrages.length > 0 : prev.arbitrages_digest !== arbDigest,
    signals: sig.signals,
    signalsDue: sig.due,
  };
}

/**
 * The contest's liquidity signals (arbitrage, price_move) and what the snapshot keeps for the next
 * run. They are written when they changed (expiry aside) or when the soonest to expire has less
 * than a minute left (signalSchedule).
 */
function liquiditySignals(input: ContestInput, result: ContestResult, prev: StoredSnapshot | undefined) {
  const now = input.now_ms;
  const facts = { contest_id: input.contest_id, label: input.label ?? null, league_id: input.league_id ?? null };
  const defs = new Map<string, PositionDefinition>(input.positions.map((p) => [p.position_hash, p]));
  const samples: Record<string, ConsensusSample[]> = {};
  const moves: Record<string, string> = {};
  const signals: Signal[] = [];
  for (const p of result.positions) {
    const def = defs.get(p.position_hash);
    if (!def || p.consensus_price === null) continue;
    const live = liveQuotes(p.partner_liquidities);
    const taken = takeSample(prev?.samples?.[p.position_hash] ?? [], [now, p.consensus_price, live.venues]);
    samples[p.position_hash] = taken;
    const move = priceMoveSignal({ def, consensus: p.consensus_price, ...live }, taken, facts, now, prev?.moves ?? {});
    if (move) {
      signals.push(move);
      moves[move.dedupe_key] = move.detected_at;
    }
  }
  for (const a of result.arbitrages) {
    const s = arbitrageSignal(a, defs, facts, now);
    if (s) signals.push(s);
  }
  const serialized = signals.map(serializeSignal);
  const digest = signalsDigest(signals.map(withoutExpiry));
  const soonest = serialized.reduce((m, s) => Math.min(m, s.expires_ms), Number.POSITIVE_INFINITY);
  const { due, refreshMs } = signalSchedule(digest, soonest, now, prev);
  return { signals: due ? serialized : [], due, digest, refreshMs, samples, moves };
}
