/**
 * One liquidity job as the worker thread runs it: compute the contest, then do the serialization and
 * diffing on the worker too, so the pipeline thread only moves strings to Redis and the bus.
 */
import { computeContest } from './contest.js';
import type { ContestInput, ContestSnapshot, TickEntry } from './types.js';

export interface LiquidityJobInput {
  input: ContestInput;
  /** The previous snapshot as stored (JSON), or null on the first computation. */
  prevJson: string | null;
}

export interface ChangedEntry {
  liquidity_hash: string;
  partner_id: string;
  price: number;
  available: number;
}

export interface ConsensusPoint {
  position_hash: string;
  price: number;
}

export interface LiquidityJobOutput {
  positionsJson: string;
  snapshotJson: string;
  depth: [string, string][];
  ticks: TickEntry[];
  /** Every quote whose price or size changed since the previous snapshot (incl. removals at 0). */
  changed: ChangedEntry[];
  /** The same changes as full tick entries, for price history (every change, not only those the
   *  tick-sending rule publishes). */
  changedTicks: TickEntry[];
  /** Consensus prices that changed (history points). */
  consensus: ConsensusPoint[];
  /** Liquidity hashes flagged as outliers now (ingest marks their next ticks in history with it). */
  outliers: string[];
  positions: number;
}

/**
 * Quotes whose price or available differ between two snapshots, as full tick entries; a vanished
 * (or newly withheld) quote reads available 0 at its last price.
 */
export function changedQuotes(prev: ContestSnapshot | undefined, next: ContestSnapshot, nowIso: string): TickEntry[] {
  const out: TickEntry[] = [];
  const before = prev?.quotes ?? {};
  for (const h in next.quotes) {
    const q = next.quotes[h]!;
    const p = before[h];
    if (!p || p.price !== q.price || p.available !== q.available) out.push(q);
  }
  for (const h in before) {
    if (!(h in next.quotes)) {
      const p = before[h]!;
      if (p.available !== 0) out.push({ ...p, available: 0, actionable: false, as_of: nowIso });
    }
  }
  return out;
}

const toChangedEntry = (t: TickEntry): ChangedEntry => ({ liquidity_hash: t.liquidity_hash, partner_id: t.partner_id, price: t.price, available: t.available });

interface StoredSnapshot extends ContestSnapshot {
  consensus?: Record<string, number | null>;
}

export function runLiquidityJob(job: LiquidityJobInput): LiquidityJobOutput {
  const prev = job.prevJson ? (JSON.parse(job.prevJson) as StoredSnapshot) : undefined;
  const result = computeContest(job.input, prev && prev.contest_id === job.input.contest_id ? prev : undefined);
  const consensusNow: Record<string, number | null> = {};
  const consensus: ConsensusPoint[] = [];
  for (const p of result.positions) {
    consensusNow[p.position_hash] = p.consensus_price;
    if (p.consensus_price !== null && prev?.consensus?.[p.position_hash] !== p.consensus_price) {
      consensus.push({ position_hash: p.position_hash, price: p.consensus_price });
    }
  }
  const stored: StoredSnapshot = { ...result.snapshot, consensus: consensusNow };
  const changedTicks = changedQuotes(prev, result.snapshot, new Date(job.input.now_ms).toISOString());
  return {
    positionsJson: JSON.stringify(result.positions),
    snapshotJson: JSON.stringify(stored),
    depth: result.depth.map((d) => [d.position_hash, JSON.stringify(d)]),
    ticks: result.ticks,
    changed: changedTicks.map(toChangedEntry),
    changedTicks,
    consensus,
    outliers: Object.values(result.snapshot.quotes)
      .filter((q) => q.outlier)
      .map((q) => q.liquidity_hash),
    positions: result.positions.length,
  };
}
