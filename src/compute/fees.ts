/** The size-free fee packet of a quote: the domain's fee model math (src/domain/fees.ts), re-exported for the compute math. */
export { CANONICAL_STAKE_USD, feePacket } from '../domain/fees.js';
