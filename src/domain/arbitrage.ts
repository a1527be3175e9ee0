/**
 * The Arbitrage resource (spec "Arbitrage"), with the extra fields this service documents in
 * docs/arbitrage.md: what a buyer can actually execute when walking both books after fees.
 * One definition for the compute workers, the REST read, the stream channel and the signal.
 */

/** One venue quoting one side, as an arbitrage lists it. */
export interface ArbitrageOption {
  partner_id: string;
  partner_name: string;
  /** The venue's best price for the side (what a buyer pays before fees). */
  price: number;
  /** The taker price after the venue's fee packet; null when the venue publishes no fee packet. */
  after_fee_price: number | null;
  /** USD at the best price. */
  available: number;
  title: string;
  position_hash: string;
  source: 'streaming' | 'polling';
}

export interface ArbitrageSide {
  market_side_id: string;
  title: string;
  /** options[0] is the venue of the selected pair; the others follow cheapest after fees first. */
  options: ArbitrageOption[];
}

/**
 * Extra (documented, beyond the spec): the selected pair walked level by level through both books,
 * buying equal contracts on each side while a further contract pair still costs less than 1.0
 * after fees. null when neither venue shows a book.
 */
export interface ArbitrageDepthWalk {
  /** Contracts bought on each side. */
  contracts: number;
  /** USD spent on both legs together, fees included where known: the largest stake that stays profitable. */
  deployable_stake: number;
  /** Guaranteed profit at that stake (contracts − deployable_stake). */
  profit_usd: number;
  /** profit_usd / deployable_stake in percent: the edge at the deployable stake. */
  after_fee_edge_pct: number;
  /** false when a leg's venue publishes no fee packet: the walk then counts no fee on that leg. */
  fees_known: boolean;
}

export interface Arbitrage {
  /** Stable per venue pair and position pair across repricings. */
  arbitrage_id: string;
  contest: { id: string; label: string | null; league_id: string | null };
  market: { id: string; variable_id: string | null };
  /** Sum of the selected pair's prices, under 1.0. */
  combined_price: number;
  /** Gross profit percent: (1 − combined) / combined × 100. */
  roi_pct: number;
  /** The same after both legs' taker fees; null when a leg's fees are unknown. */
  after_fee_roi_pct: number | null;
  profitable_after_fees: boolean | null;
  /** USD across both legs deployable at the best prices (equal contracts on each side). */
  max_investment: number;
  /** The two mutually exclusive positions, in the group's order. */
  sides: ArbitrageSide[];
  /** When this arbitrage_id was first detected in its current run (kept across repricings). */
  detected_at: string;
  depth_walk: ArbitrageDepthWalk | null;
}

/** How long an arbitrage is served after the computation that last saw it (spec: 120 s). */
export const ARBITRAGE_TTL_MS = 120_000;
