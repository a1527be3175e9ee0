/**
 * One liquidity job as the worker thread runs it: compute the contest, then do the serialization and
 * diffing on the worker too, so the pipeline thread only moves strings to Redis and the bus.
 */
import type { LiquidityChangedEntry } from '../domain/stream.js';
import { computeContest } from './contest.js';
import { liquidityDigest } from './digest.js';
import type { ContestInput, ContestSnapshot, TickEntry } from './types.js';

export interface LiquidityJobInput {
  input: ContestInput;
  /** The previous snapshot as stored (JSON), or null on the first computation. */
  prevJson: string | null;
}

/** A changed_entries item of liquidity.update. */
export type ChangedEntry = LiquidityChangedEntry;

export interface ConsensusPoint {
  position_hash: string;
  price: number;
}

export interface LiquidityJobOutput {
  positionsJson: string;
  snapshotJson: string;
  depth: [string, string][];
  ticks: TickEntry[];
  /** What liquidity.update carries: every quote whose price, size or is_stale changed since the
   *  previous snapshot (incl. removals at 0). */
  changed: ChangedEntry[];
  /** The REST liquidity answer changed but no entry carries it (e.g. only a consensus moved): the
   *  liquidity.update to send has no entries and refresh_required true. Never true with `changed`
   *  non-empty. See liquidityUpdateEvents in src/domain/stream.ts. */
  refreshRequired: boolean;
  /** Consensus prices that changed (history points). */
  consensus: ConsensusPoint[];
  /** Liquidity hashes flagged as outliers now (ingest marks their next ticks in history with it). */
  outliers: string[];
  positions: number;
}

/** The quote changes between two snapshots: price history rows and stream entries. */
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
    const p = Object.hasOwn(before, h) ? before[h] : undefined;
    if (!p || p.price !== q.price || p.available !== q.available || (p.is_stale ?? false) !== q.is_stale) changed.push(toChangedEntry(q));
  }
  for (const h in before) {
    if (!Object.hasOwn(next.quotes, h)) {
      const p = before[h]!;
      if (p.available !== 0) {
        changed.push(toChangedEntry({ ...p, available: 0, actionable: false, as_of: nowIso, is_stale: false }));
      }
    }
  }
  return changed;
}

const toChangedEntry = (t: TickEntry): ChangedEntry => ({
  liquidity_hash: t.liquidity_hash,
  partner_id: t.partner_id,
  price: t.price,
  available: t.available,
  as_of: t.as_of,
  is_stale: t.is_stale,
});

/** What the hot state keeps between runs, beyond the tick-rule snapshot. */
interface StoredSnapshot extends ContestSnapshot {
  consensus?: Record<string, number | null>;
  /** liquidityDigest of the last positionsJson; absent in snapshots older than it. */
  positions_digest?: number;
}

/** Computes one contest against its stored snapshot (ignored when it is another contest's). */
export function runLiquidityJob(job: LiquidityJobInput): LiquidityJobOutput {
  const last = job.prevJson ? (JSON.parse(job.prevJson) as StoredSnapshot) : undefined;
  const prev = last && last.contest_id === job.input.contest_id ? last : undefined;
  const result = computeContest(job.input, prev);
  const consensusNow: Record<string, number | null> = {};
  const consensus: ConsensusPoint[] = [];
  for (const p of result.positions) {
    consensusNow[p.position_hash] = p.consensus_price;
    if (p.consensus_price !== null && prev?.consensus?.[p.position_hash] !== p.consensus_price) {
      consensus.push({ position_hash: p.position_hash, price: p.consensus_price });
    }
  }
  const positionsJson = JSON.stringify(result.positions);
  const digest = liquidityDigest(positionsJson);
  const stored: StoredSnapshot = { ...result.snapshot, consensus: consensusNow, positions_digest: digest };
  const changes = quoteChanges(prev, result.snapshot, new Date(job.input.now_ms).toISOString());
  // A first computation (or one after a snapshot without a digest) counts as a changed answer.
  const answerChanged = prev?.positions_digest !== digest;
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
  };
}
