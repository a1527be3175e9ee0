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
  /** Consensus prices that changed (history points). */
  consensus: ConsensusPoint[];
  positions: number;
}

/** Quotes whose price or available differ between two snapshots; a vanished quote reads available 0. */
export function changedEntries(prev: ContestSnapshot | undefined, next: ContestSnapshot): ChangedEntry[] {
  const out: ChangedEntry[] = [];
  const before = prev?.quotes ?? {};
  for (const h in next.quotes) {
    const q = next.quotes[h]!;
    const p = before[h];
    if (!p || p.price !== q.price || p.available !== q.available) {
      out.push({ liquidity_hash: h, partner_id: q.partner_id, price: q.price, available: q.available });
    }
  }
  for (const h in before) {
    if (!(h in next.quotes)) {
      const p = before[h]!;
      if (p.available !== 0) out.push({ liquidity_hash: h, partner_id: p.partner_id, price: p.price, available: 0 });
    }
  }
  return out;
}

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
  return {
    positionsJson: JSON.stringify(result.positions),
    snapshotJson: JSON.stringify(stored),
    depth: result.depth.map((d) => [d.position_hash, JSON.stringify(d)]),
    ticks: result.ticks,
    changed: changedEntries(prev, result.snapshot),
    consensus,
    positions: result.positions.length,
  };
}
