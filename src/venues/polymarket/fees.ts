/**
 * Polymarket fees → the domain's FeeModel.
 *
 * The formula (docs.polymarket.com/trading/fees; the per-market schedule as Gamma publishes it):
 *
 *     fee = C × rate × (p × (1 − p))^exponent        C shares filled at price p, takers only
 *
 * `rate` and `exponent` come from the market's `feeSchedule` (`{"rate": 0.03, "exponent": 1,
 * "takerOnly": true, "rebateRate": 0.25}`); `feesEnabled: false` means no fee. Every schedule
 * recorded so far has exponent 1, which is exactly the domain's `pq` kind (fee per contract =
 * rate · p · (1 − p)), so the taker rate is the schedule's rate and the maker rate 0 (makers pay
 * nothing; the maker rebate is a daily share of a pool, not a per-fill credit, so it is not
 * counted). The older `makerBaseFee`/`takerBaseFee` (1000), `GET /fee-rate` and per-trade
 * `fee_rate_bps` are not the rate charged and are ignored.
 *
 * Two cases the `pq` kind cannot express exactly are bounded from above, so a fee packet never
 * understates what a taker pays (an arbitrage is never found on a fee we left out):
 * - an exponent e > 1: (p(1−p))^e ≤ p(1−p) · (1/4)^(e−1), equal at p = 0.5, so the taker rate is
 *   rate · 0.25^(e−1);
 * - fees enabled but no readable schedule (a market from before feeSchedule, an exponent below 1):
 *   the highest category rate Polymarket publishes (crypto, 0.07).
 *
 * Every Polymarket quote therefore carries a `pq` model (a fee-free market is `pq` 0/0, the same
 * prices as `none`): one kind per venue, as describe() declares it.
 */
import type { FeeModel } from '../types.js';
import type { PmFeeSchedule } from './parse.js';

/** The highest category taker rate Polymarket publishes (crypto; sports 0.03, politics 0.04, …). */
export const POLYMARKET_MAX_TAKER_RATE = 0.07;

/** The venue-level model: what a market whose schedule we cannot read is assumed to charge. */
export const POLYMARKET_FALLBACK_FEE: FeeModel = { kind: 'pq', taker_rate: POLYMARKET_MAX_TAKER_RATE, maker_rate: 0 };

export const POLYMARKET_NO_FEE: FeeModel = { kind: 'pq', taker_rate: 0, maker_rate: 0 };

/** Rates carry at most 9 decimals (0.25^(e−1) products are exact in binary only for small e). */
const clean = (x: number) => Math.round(x * 1e9) / 1e9;

export function feeModelOf(m: { fees_enabled: boolean | null; fee_schedule: PmFeeSchedule | null }): FeeModel {
  if (m.fees_enabled === false) return POLYMARKET_NO_FEE;
  const s = m.fee_schedule;
  if (s === null || !(s.rate >= 0) || !(s.exponent >= 1) || !Number.isFinite(s.exponent)) {
    // Fees on (or not said) with no schedule we can read: assume the most a market charges.
    return POLYMARKET_FALLBACK_FEE;
  }
  const taker = clean(s.rate * 0.25 ** (s.exponent - 1));
  return { kind: 'pq', taker_rate: taker, maker_rate: s.taker_only ? 0 : taker };
}
