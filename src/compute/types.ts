/**
 * Shared input and output shapes of the liquidity math. Everything here is plain data (no
 * classes, no Maps) so it crosses a piscina worker boundary and a Redis snapshot unchanged.
 *
 * Output shapes follow `spec/interface.md`: Position, partner_liquidities entry, tick entry, Depth.
 */
import type { Arbitrage } from '../domain/arbitrage.js';
import type { PositionDefinition } from '../domain/catalog.js';
import type { FeeModel, FeePacket, PriceLevel, QuoteSource } from '../domain/quotes.js';
import type { PartnerLiquidity, TickEntry } from '../domain/stream.js';

// ---------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------

export type { FeeModel, QuoteSource };
/** One price level of a venue's book: the price a buyer pays and USD behind it. */
export type BookLevel = PriceLevel;

/** One venue's quote for buying one position. */
export interface VenueQuote {
  partner_id: string;
  partner_name: string;
  liquidity_hash: string;
  /** Best price a buyer of this position pays, 0-1. */
  price: number;
  /** USD notional at the best level. */
  available: number;
  /** Book levels, best (lowest price) first. May be empty for a quote without depth. */
  levels: readonly BookLevel[];
  fee: FeeModel;
  /** The side the venue lists this participant on; differs from the position's side_key when
   *  the venue lists the participant on the opposite side. */
  venue_side_key: string;
  source: QuoteSource;
  /** When the service last confirmed this quote (ISO 8601 UTC). Drives staleness. */
  as_of: string;
  /** When the venue says the quote changed (unix ms). Versions the quote (buy_id). */
  ts_event: number;
  /** false for a quote with no depth behind it, e.g. a sportsbook line with available 0. */
  real_book: boolean;
  /** Set by ingest when it knows the quote can no longer be trusted (e.g. the venue's stream
   *  dropped); independent of the age rule. */
  stale?: boolean;
  /**
   * Unix ms after which the quote counts as unconfirmed (stale): its last confirmation plus the
   * venue's freshness bound (`quoteStaleAfterMs` in src/venues/freshness.ts). Exactly at it the
   * quote is still fresh. When absent the default age policy (max_quote_age_ms) judges as_of.
   */
  stale_after_ms?: number;
}

/** One bettable outcome of the contest with every venue quote for it. */
export interface PositionInput extends PositionDefinition {
  quotes: readonly VenueQuote[];
}

/** Maximum age of `as_of` per source before a quote counts as stale, for quotes that carry no
 *  `stale_after_ms` (their venue's own bound). */
export interface QuoteAgePolicy {
  streaming: number;
  polling: number;
}

/** Everything one contest's computation needs: its positions with quotes, and the clock. */
export interface ContestInput {
  contest_id: string;
  positions: readonly PositionInput[];
  /** The clock, passed in so the math stays pure (unix ms). */
  now_ms: number;
  /** Defaults to DEFAULT_MAX_QUOTE_AGE_MS (see quotes.ts). */
  max_quote_age_ms?: QuoteAgePolicy;
  /** The contest's label and league, as an arbitrage names them (null when unknown). */
  label?: string | null;
  league_id?: string | null;
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

export type { FeePacket };


/** consensus_price − venue price; positive means the venue is cheaper than fair. */
export interface Edge {
  partner_id: string;
  edge: number;
}

/** The ladder model's fair probability of this position's side at one line of its ladder. */
export interface DistributionPoint {
  variable: number;
  price: number;
}

/** One element of the contest liquidity array (spec "Position"). */
export interface PositionLiquidity
  extends Pick<
    PositionDefinition,
    'position_hash' | 'contest_id' | 'title' | 'market_key' | 'side_key' | 'variable' | 'participant_id' | 'participant_name' | 'participant_image_url'
  > {
  /** Fair value across venues, or null when nothing usable quotes the position. */
  consensus_price: number | null;
  /** Line where the ladder's fair probability crosses 0.5, in this position's own line
   *  convention; null for markets without a ladder or when the ladder cannot place it. */
  consensus_line: number | null;
  /** Ladder model at every quoted line, ascending by variable; null without a ladder. */
  distribution_prices: DistributionPoint[] | null;
  edges: Edge[];
  paper_bettable: boolean;
  partner_liquidities: PartnerLiquidity[];
}

/** A tick: a partner_liquidities entry plus what a stream consumer needs (the spec's tick entry). */
export type { PartnerLiquidity, TickEntry };

/** One venue's book for a position (Depth partners[] entry). */
export interface DepthPartner {
  partner_id: string;
  partner_name: string;
  /** Best (lowest price) first. */
  levels: BookLevel[];
  total_available: number;
  /** First level's price; null when the venue shows no level (a quote without depth). */
  best_price: number | null;
  fetched_at: string;
}

/** Depth (spec), one per position. */
export interface PositionDepth {
  position_hash: string;
  partners: DepthPartner[];
  fetched_at: string;
}

/**
 * What the next run needs from this one to apply the tick-sending rule: the last computed tick
 * entry of every visible (non-withheld) quote, keyed by liquidity_hash. Plain object so it can be
 * stored as JSON.
 */
export interface ContestSnapshot {
  contest_id: string;
  quotes: Record<string, TickEntry>;
  /** detected_at of each arbitrage found by this run, by arbitrage_id (kept while it persists). */
  arbs?: Record<string, string>;
}

/** Tick entries are shared between `ticks` and `snapshot.quotes`: treat the result as read-only. */
export interface ContestResult {
  contest_id: string;
  positions: PositionLiquidity[];
  depth: PositionDepth[];
  /** Ticks to publish for this change, per the tick-sending rule against `prev`. */
  ticks: TickEntry[];
  /** The contest's cross-venue arbitrages (src/compute/arbitrage.ts). */
  arbitrages: Arbitrage[];
  /** Pass back as `prev` on the next run. */
  snapshot: ContestSnapshot;
}
