/** Fees a venue charges on a fill: the domain's fee model math (src/domain/fees.ts), re-exported for the adapters. */
export { fillFee, type FeeRole } from '../domain/fees.js';
