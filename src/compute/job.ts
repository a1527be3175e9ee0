/**
 * One liquidity job as the worker thread runs it: compute the contest, then do the serialization and
 * diffing on the worker too, so the pipeline thread only moves strings to Redis and the bus.
 */
import type { LiquidityChangedEntry } from '../domain/stream.js';
import { computeContest } from './contest.js';
import { liquidityDigest } from './digest.js';
import type { PositionDefinition } from '../domain/catalog.js';
import { serializeSignal, type SerializedSignal, type Signal } from '../domain/signals.js';
import { arbitrageSignal, priceMoveSignal, REFRESH_BEFORE_EXPIRY_MS, takeSample, type ConsensusSample } from './market-signals.js';
import { isActionable } from './quotes.js';
import type { ContestInput, ContestResult, ContestSnapshot, TickEntry } from './types.js';

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
  /** The contest's arbitrages now (Arbitrage[] as JSON): stored on every run, so the set lives 120 s past the last change. */
  arbitragesJson: string;
  /** Whether the set differs from the previous run's (arbitrage.update is sent only then). */
  arbitragesChanged: boolean;
  /** The contest's arbitrage and price_move signals now, serialized here (src/compute/market-signals.ts). */
  signals: SerializedSignal[];
  /** Whether they must be written now: they changed, or the oldest comes within a minute of its expiry. */
  signalsDue: boolean;
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
  const arbitragesJson = JSON.stringify(result.arbitrages);
  const arbDigest = liquidityDigest(arbitragesJson);
  const sig = liquiditySignals(job.input, result, prev);
  const stored: StoredSnapshot = {
    ...result.snapshot,
    consensus: consensusNow,
    positions_digest: digest,
    arbitrages_digest: arbDigest,
    samples: sig.samples,
    moves: sig.moves,
    signals_digest: sig.digest,
    signals_refresh_ms: sig.refreshMs,
  };
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
 * than a minute left, so a signal that holds never lapses and an unchanged set is not rewritten on
 * every liquidity change.
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
    const live = p.partner_liquidities.filter((q) => isActionable(q.price, q.available, q.is_stale));
    const available = live.reduce((s, q) => s + q.available, 0);
    const taken = takeSample(prev?.samples?.[p.position_hash] ?? [], [now, p.consensus_price, live.length]);
    samples[p.position_hash] = taken;
    const venueList = live.map((q) => ({ partner_id: q.partner_id, partner_name: q.partner_name }));
    const move = priceMoveSignal({ def, consensus: p.consensus_price, venues: live.length, available, venueList }, taken, facts, now, prev?.moves ?? {});
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
  // What the signals say, their expiry aside: a rewrite only for its expiry is the refresh's business.
  const digest = liquidityDigest(JSON.stringify(signals.map((s) => ({ ...s, expires_at: '' }))));
  const soonest = serialized.reduce((m, s) => Math.min(m, s.expires_ms), Number.POSITIVE_INFINITY);
  const due = digest !== prev?.signals_digest || (prev?.signals_refresh_ms !== undefined && now >= prev.signals_refresh_ms);
  // When written now, the next refresh falls a minute before the soonest expiry; otherwise the one planned stands.
  const refreshMs = due ? (Number.isFinite(soonest) ? soonest - REFRESH_BEFORE_EXPIRY_MS : undefined) : prev?.signals_refresh_ms;
  return { signals: serialized, due, digest, refreshMs, samples, moves };
}
