/**
 * The matcher's shapes: what it reads (venue catalogs), what it understands of each venue contest
 * (an EventView: league, participants, start, and what every position pays on), and what it gives
 * back (one merged catalog, the position map, the report). Plain data throughout.
 */
import type { Contest, League, Market, Participant, Partner, PositionDefinition } from '../../domain/catalog.js';

/**
 * One venue's catalog: the shape `seedCatalog` takes (src/store/pg/catalog.ts CatalogSeed; src/venues
 * cannot import src/store), plus what an adapter adds. Polymarket's `tokens` give the outcome
 * labels of its yes/no markets; other extras are ignored.
 */
export interface VenueCatalog {
  leagues: League[];
  participants: Participant[];
  contests: Contest[];
  markets: Market[];
  contest_markets: { contest_id: string; market_id: string }[];
  positions: PositionDefinition[];
  partners: Partner[];
  contest_participants?: { contest_id: string; participant_id: string; role: string }[];
  tokens?: { position_hash: string | null; outcome: string; outcome_index: number }[];
}

/** The merged catalog: the same shape, every venue in it. */
export interface MergedCatalog {
  leagues: League[];
  participants: Participant[];
  contests: Contest[];
  markets: Market[];
  contest_markets: { contest_id: string; market_id: string }[];
  positions: PositionDefinition[];
  partners: Partner[];
  contest_participants: { contest_id: string; participant_id: string; role: string }[];
}

/**
 * What one position pays on, in venue-neutral terms:
 * - `winner`: `pick` (a participant key, or `draw`) wins the game / the outright;
 * - `handicap`: `pick` wins after adding `line` to its score (−3.5: wins by 4 or more);
 * - `total`: the combined score is over / under `line` (`pick` is `over` or `under`).
 * Two positions of two venues are the same outcome exactly when kind, line and pick are equal.
 */
export type OutcomeKind = 'winner' | 'handicap' | 'total';

export interface Outcome {
  kind: OutcomeKind;
  /** null for winner; the line otherwise. */
  line: number | null;
  pick: string;
}

/** What the matcher makes of one native position. */
export type PositionReading =
  | { position_hash: string; as: 'outcome'; outcome: Outcome; market_ref: string }
  /** The complement of another listed outcome of the venue (a Kalshi "No" on "X wins"): not a
   *  price of its own once merged, so it is left unlinked (a neg-risk No token's treatment). */
  | { position_hash: string; as: 'complement'; of: Outcome; market_ref: string }
  /** Not understood: stays in its venue's own contest, never merged. */
  | { position_hash: string; as: 'loose'; market_ref: string; why: string };

export type EventShape = 'game' | 'outright' | 'other';

/** One venue contest as the matcher understands it. */
export interface EventView {
  partner_id: string;
  contest_id: string;
  title: string;
  /** Canonical league key from the alias table; null when the venue league is not in it. */
  league: string | null;
  shape: EventShape;
  /** Participant keys (sorted): a game's two sides (a draw is not a participant); an outright's runners. */
  participants: string[];
  /** The home side's key when the venue says which it is. */
  home: string | null;
  /** Unix ms: when the contest happens or is decided (each venue's starts_at). */
  starts_at: number;
  /** Identity-bearing title words (normalize.ts titleTokens). */
  title_tokens: string[];
  positions: PositionReading[];
  /** Why the view is partial or empty (shown in the report). */
  notes: string[];
}

export type DecisionKind = 'matched' | 'low_confidence' | 'unmatched' | 'separate';

/** The score of one candidate pair and its parts (see score.ts for the weights). */
export interface ScoreDetail {
  score: number;
  participants: number;
  time: number;
  title: number;
  /** Set when a hard rule ruled the pair out (the score is then 0). */
  veto: string | null;
}

export interface MatchCandidate {
  partner_id: string;
  contest_id: string;
  title: string;
  detail: ScoreDetail;
}

/** The decision about one venue contest. */
export interface MatchDecision {
  partner_id: string;
  contest_id: string;
  title: string;
  decision: DecisionKind;
  /** How a `matched` decision was reached. */
  by: 'score' | 'override' | null;
  /** The merged contest it became part of (matched only). */
  merged_into: string | null;
  /** The best candidate's score (1 for an override); null without any candidate. */
  confidence: number | null;
  /** The best candidate on another venue, whether or not it was taken. */
  candidate: MatchCandidate | null;
  /** Positions: aligned with another venue's, mapped into the merged contest alone, left unlinked (complements), or left in the venue's own contest. */
  positions: { aligned: number; mapped: number; unlinked: number; loose: number };
  reason: string;
}

export interface MatchReport {
  venues: string[];
  /** Venue contests read. */
  contests: number;
  /** Venue contests merged with another venue's (each counts, so a 2-venue merge counts 2). */
  matched: number;
  /** Venue contests left on their own with a candidate below the threshold. */
  low_confidence: number;
  /** Venue contests left on their own with no candidate (or kept apart by the mapping file). */
  unmatched: number;
  /** Merged contests made. */
  merged_contests: number;
  /** Positions quoted by two or more venues after the merge. */
  aligned_positions: number;
  threshold: number;
  decisions: MatchDecision[];
  /** Mapping-file entries that named contests no catalog holds (not errors: a venue may list them later). */
  warnings: string[];
}

/** native position_hash → merged position_hash, or null (unlinked), per partner. Absent: unchanged. */
export type PositionMap = Record<string, Record<string, string | null>>;

export interface MergeResult {
  catalog: MergedCatalog;
  report: MatchReport;
  position_map: PositionMap;
  /** native contest id → merged contest id, per partner (only contests that moved). */
  contest_map: Record<string, Record<string, string>>;
}
