/** The liquidity job's input and output: what the pipeline hands compute and gets back. */
import type { SnapshotParts, TextsSince } from '../domain/quotes.js';
import type { SerializedSignal } from '../domain/signals.js';
import type { LiquidityChangedEntry } from '../domain/stream.js';
import type { ContestInput, TickEntry } from './types.js';

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
  /** The snapshot as stored in parts (absent: stored whole, a run from scratch's). */
  snapshotParts?: SnapshotParts;
  /** What changed in the stored texts since the previous run, when these texts continued from it (absent: a run from scratch, every field is new). */
  textsSince?: TextsSince;
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
  /** The contest's arbitrages now (Arbitrage[] as JSON): stored on every run, so the set lives 120 s past the last change. */
  arbitragesJson: string;
  /** Whether the set differs from the previous run's (arbitrage.update is sent only then). */
  arbitragesChanged: boolean;
  /** The contest's arbitrage and price_move signals now, serialized here (src/compute/market-signals.ts),
   *  when they are to be written (signalsDue); empty otherwise, so they cross no thread for nothing. */
  signals: SerializedSignal[];
  /** Whether they must be written now: they changed, or the oldest comes within a minute of its expiry. */
  signalsDue: boolean;
}

/** A job's output without its three big texts and the depth fields (what a run finds beyond its texts). */
export type LiquidityFindings = Omit<LiquidityJobOutput, 'positionsJson' | 'snapshotJson' | 'depth' | 'snapshotParts' | 'textsSince' | 'arbitragesJson'>;
