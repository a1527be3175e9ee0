/**
 * Fees a venue charges on a fill, from its fee model (see FeeModel in types.ts).
 */
import { round6 } from './prices.js';
import type { FeeModel } from './types.js';

export type FeeRole = 'taker' | 'maker';

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
