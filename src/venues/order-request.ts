/**
 * The checks every adapter makes on a VenueOrderRequest before anything venue-specific: the shape
 * the contract suite (test/contract/venue-adapter.contract.ts) holds every adapter to. A request
 * that fails them is refused with a non-retryable VenueError (invalid_request, invalid_amount,
 * invalid_price): retrying the same request gives the same answer.
 */
import { VenueError, VenueErrorCodes } from './errors.js';
import type { VenueOrder, VenueOrderRequest, VenueRejectCode } from './types.js';

const invalid = (partnerId: string, code: string, message: string) => new VenueError('non_retryable', code, message, { partner_id: partnerId });

export function validateOrderRequest(partnerId: string, req: VenueOrderRequest): void {
  if (typeof req !== 'object' || req === null) throw invalid(partnerId, VenueErrorCodes.invalidRequest, 'order request must be an object');
  if (typeof req.client_order_id !== 'string' || req.client_order_id.length === 0) throw invalid(partnerId, VenueErrorCodes.invalidRequest, 'client_order_id is required');
  if (typeof req.account_id !== 'string' || req.account_id.length === 0) throw invalid(partnerId, VenueErrorCodes.invalidRequest, 'account_id is required');
  if ((req.position_hash === undefined) === (req.liquidity_hash === undefined)) {
    throw invalid(partnerId, VenueErrorCodes.invalidRequest, 'exactly one of position_hash or liquidity_hash');
  }
  if ((req.amount === undefined) === (req.shares === undefined)) throw invalid(partnerId, VenueErrorCodes.invalidAmount, 'exactly one of amount or shares');
  const size = req.amount ?? req.shares!;
  if (typeof size !== 'number' || !Number.isFinite(size) || size <= 0) throw invalid(partnerId, VenueErrorCodes.invalidAmount, `amount/shares must be positive: ${String(size)}`);
  if (typeof req.max_price !== 'number' || !(req.max_price > 0 && req.max_price < 1)) {
    throw invalid(partnerId, VenueErrorCodes.invalidPrice, `max_price must be strictly between 0 and 1: ${String(req.max_price)}`);
  }
  if (req.order_type !== 'market' && req.order_type !== 'limit') throw invalid(partnerId, VenueErrorCodes.invalidRequest, `unknown order_type ${String(req.order_type)}`);
  if (req.time_in_force !== undefined && req.time_in_force !== 'ioc' && req.time_in_force !== 'fok') {
    throw invalid(partnerId, VenueErrorCodes.invalidRequest, `unknown time_in_force ${String(req.time_in_force)}`);
  }
}

/** A rejection decided before the venue saw the order (no venue order id). */
export function localRejection(
  partnerId: string,
  req: VenueOrderRequest,
  code: VenueRejectCode,
  reason: string,
  at: { position_hash: string; liquidity_hash: string | null; currency: VenueOrder['currency']; ts: number },
): VenueOrder {
  return {
    partner_id: partnerId,
    venue_order_id: '',
    client_order_id: req.client_order_id,
    account_id: req.account_id,
    position_hash: at.position_hash,
    liquidity_hash: at.liquidity_hash,
    order_type: req.order_type,
    status: 'rejected',
    requested_amount: req.amount ?? null,
    requested_contracts: req.shares ?? null,
    limit_price: req.max_price,
    filled_contracts: 0,
    filled_notional: 0,
    avg_price: null,
    fees: 0,
    remaining_contracts: 0,
    reject_code: code,
    reject_reason: reason,
    warnings: [],
    currency: at.currency,
    ts_event: at.ts,
    ts_init: at.ts,
  };
}
