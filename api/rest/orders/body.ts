/**
 * The buy and preflight body (one schema for both, spec "Orders: place"): strict at every depth, so
 * a field outside the contract is 400 unknown_parameter and nothing is placed. Types are checked
 * here; the rules between fields are src/domain/orders.ts resolveRequest.
 */
import { Type, type Static } from 'typebox';
import { ApiError } from '../../../src/errors.js';
import { MAX_LEGS, resolveRequest, type BuyRequest, type ResolvedLeg } from '../../../src/domain/orders.js';
import type { Principal } from '../../../src/domain/principal.js';
import { Id, PositionHash } from '../schemas.js';

const closed = { additionalProperties: false } as const;
const Positive = (description: string) => Type.Number({ exclusiveMinimum: 0, maximum: 1e12, description });

export const BuyLegBody = Type.Object(
  {
    liquidity_hash: Type.Optional(PositionHash),
    position_hash: Type.Optional(PositionHash),
    partner_id: Type.Optional(Id),
    amount: Type.Optional(Positive('USD stake; exactly one of amount or shares')),
    shares: Type.Optional(Positive('contract count')),
    max_price: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: 'never fills above it; strictly between 0 and 1' }),
    mode: Type.Optional(Type.Enum(['real', 'paper'], { description: 'real (default on a live key) or paper; required on a test key' })),
    order_type: Type.Optional(Type.Enum(['market', 'limit'], { description: 'market (default) or limit' })),
  },
  { ...closed, $id: 'BuyLeg' },
);

export const BuyBody = Type.Object(
  {
    // Bounded generously here so a long array answers too_many_legs (with the limit), not a schema error.
    orders: Type.Array(BuyLegBody, { minItems: 1, maxItems: 1000 }),
    verify_liquidity: Type.Optional(Type.Boolean()),
    check_all_first: Type.Optional(Type.Boolean()),
    on_leg_failure: Type.Optional(Type.Enum(['continue', 'halt'])),
    placement: Type.Optional(Type.Literal('parallel')),
    opportunity_id: Type.Optional(Id),
    model_id: Type.Optional(Id),
  },
  { ...closed, $id: 'BuyRequest' },
);

export type BuyBodyT = Static<typeof BuyBody>;

/** The 400 codes a buy or preflight answers besides the shared ones. */
export const BUY_REQUEST_CODES = ['too_many_legs', 'conflicting_parameters', 'unsupported_order_type'] as const;

/** The body's legs resolved (venue, mode and defaults), or the request-level 400. */
export function resolvedLegs(body: BuyBodyT, principal: Pick<Principal, 'environment'>): ResolvedLeg[] {
  const r = resolveRequest(body as BuyRequest, principal.environment);
  if ('refusal' in r) throw new ApiError(400, r.refusal.code, r.refusal.message, r.refusal.details);
  return r.legs;
}

export { MAX_LEGS };
