/**
 * The compute snapshot as stored in Redis (`snap:<contest>`): what the next run of the contest
 * diffs against and carries forward. Readable by the code before it and after it (a rolling deploy
 * runs both): members are only ever added, and a member a reader does not know is ignored; a
 * member it expects but does not find makes it take the safe branch (recompute from scratch, count
 * the answer as changed).
 */
import type { ConsensusSample } from './market-signals.js';
import type { ContestSnapshot } from './types.js';

export interface StoredSnapshot extends ContestSnapshot {
  /**
   * The run that wrote it, first in the text: two runs never write the same text, so a thread that
   * holds the text its run handed out knows a stored snapshot as its own by comparing the two
   * (ContestText.holds), and continues from that run instead of parsing the snapshot. Absent in
   * snapshots older than it.
   */
  run?: string;
  consensus?: Record<string, number | null>;
  /**
   * Digest of the REST answer (answerDigest in digest.ts, as_of values left out). Replaces
   * `positions_digest` (a digest of the whole answer text, which an incremental run cannot update
   * without reading all of it): a reader that finds only the other one counts the answer as
   * changed once (one refresh_required hint per contest across a deploy).
   */
  answer_digest?: number;
  /** liquidityDigest of the last arbitragesJson; absent in snapshots older than it. */
  arbitrages_digest?: number;
  /** Consensus samples of the last 5 minutes per position (price_move). */
  samples?: Record<string, ConsensusSample[]>;
  /** detected_at of each price_move found by this run, by dedupe_key (kept while it goes on). */
  moves?: Record<string, string>;
  /** Digest of the signals last written (their expiry aside), and when they must be written again. */
  signals_digest?: number;
  signals_refresh_ms?: number;
}

/** The stored snapshot of `contestId`, or undefined when there is none or it is another contest's. */
export function parseSnapshot(json: string | null, contestId: string): StoredSnapshot | undefined {
  if (!json) return undefined;
  const last = JSON.parse(json) as StoredSnapshot;
  return last.contest_id === contestId ? last : undefined;
}

// Run ids: a random prefix per thread (52 bits) and a counter. Unique enough that a snapshot
// naming a run was written by that run: a thread holds runs of its own ids only.
const THREAD_PREFIX = Math.floor(Math.random() * 2 ** 26).toString(36) + Math.floor(Math.random() * 2 ** 26).toString(36);
let runCounter = 0;

/** A fresh run id (letters, digits and dots: nothing JSON escapes). */
export function newRunId(): string {
  return `${THREAD_PREFIX}.${(++runCounter).toString(36)}`;
}
