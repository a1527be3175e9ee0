/** Public surface of the pure liquidity math. */
export * from './types.js';
export { computeContest } from './contest.js';
export { groupConsensus, liquidityWeight, MIN_WEIGHT_USD, MAX_WEIGHT_USD, ONE_SIDED_WEIGHT, STALE_WEIGHT } from './consensus.js';
export type { ConsensusQuote, MemberConsensus } from './consensus.js';
export { devigMultiplicative, overround } from './devig.js';
export { partnerDepth, positionDepth } from './depth.js';
export { feePacket, CANONICAL_STAKE_USD } from './fees.js';
export { fitLadder, isotonicFit, crossingLine } from './ladder.js';
export type { LadderPoint, LadderFit } from './ladder.js';
export { medianInPlace } from './median.js';
export { americanOdds } from './odds.js';
export { isOutlier, realBookMedian, OUTLIER_DISTANCE, MIN_REAL_BOOKS_FOR_MEDIAN } from './outliers.js';
export { round6, OUTPUT_DECIMALS } from './precision.js';
export { isActionable, isStale, isStaleAt, staleCutoffs, isTradablePrice, MIN_QUOTE_USD, DEFAULT_MAX_QUOTE_AGE_MS } from './quotes.js';
export { tickReason, shouldSendTick, buyId, removalTick, SHRINK_ALERT_USD } from './ticks.js';
export type { StaleCutoffs } from './quotes.js';
export type { QuoteTop, TickReason } from './ticks.js';
export { withheldMask } from './withholding.js';
