/**
 * Venue fees, from a venue's fee model (FeeModel in quotes.ts): the size-free fee packet a quote
 * carries and the fee of a fill. Shared by the compute math (fee_packet), the simulated venues
 * (what they charge) and the order checks (what an order would pay).
 */
import { round6 } from './prices.js';
import type { FeeModel, FeePacket } from './quotes.js';

/** The spec's canonical stake for taker_fee and maker_fee, in USD of notional. */
export const CANONICAL_STAKE_USD = 100;

export type FeeRole = 'taker' | 'maker';

/**
 * The fee packet of a quote at `price` under `model`, or null when the fees are unknown.
 *
 * Prices are all-in per one-dollar contract, so they hold at any size:
 * - none: taker_price = maker_price = p, fees 0.
 * - pq: fee per contract = rate·p·(1−p), so price = p + rate·p·(1−p); on a USD 100 stake
 *   (100/p contracts) the fee is 100·rate·(1−p).
 * - flat_pct: fee = pct % of stake, so price = p·(1 + pct/100) and the fee on USD 100 is pct.
 *
 * Per-order rounding some venues apply (e.g. fees rounded up to the cent) depends on the order
 * size and is left to preflight; these are the size-free rates.
 */
export function feePacket(price: number, model: FeeModel): FeePacket | null {
  switch (model.kind) {
    case 'none':
      return { taker_price: round6(price), maker_price: round6(price), taker_fee: 0, maker_fee: 0 };
    case 'pq': {
      const pq = price * (1 - price);
      return {
        taker_price: round6(price + model.taker_rate * pq),
        maker_price: round6(price + model.maker_rate * pq),
        taker_fee: round6(CANONICAL_STAKE_USD * model.taker_rate * (1 - price)),
        maker_fee: round6(CANONICAL_STAKE_USD * model.maker_rate * (1 - price)),
      };
    }
    case 'flat_pct':
      return {
        taker_price: round6(price * (1 + model.taker_pct / 100)),
        maker_price: round6(price * (1 + model.maker_pct / 100)),
        taker_fee: round6((CANONICAL_STAKE_USD * model.taker_pct) / 100),
        maker_fee: round6((CANONICAL_STAKE_USD * model.maker_pct) / 100),
      };
    case 'unknown':
      return null;
  }
}

/**
 * Fee in USD for `contracts` filled at probability `price`. `unknown` and `none` charge nothing
 * here (an unknown schedule is the venue's business; we record what it reports).
 * `roundUpToCent` mirrors venues that round each order's fee up to the cent.
 */
export function fillFee(model: FeeModel, role: FeeRole, price: number, contracts: number, roundUpToCent = false): number {
  let fee = 0;
  switch (model.kind) {
    case 'pq':
      fee = (role === 'taker' ? model.taker_rate : model.maker_rate) * price * (1 - price) * contracts;
      break;
    case 'flat_pct':
      fee = ((role === 'taker' ? model.taker_pct : model.maker_pct) / 100) * price * contracts;
      break;
    case 'none':
    case 'unknown':
      fee = 0;
  }
  if (roundUpToCent) return Math.ceil(round6(fee) * 100 - 1e-9) / 100;
  return round6(fee);
}
