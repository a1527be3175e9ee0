/**
 * Orders as the buy and preflight routes take them (spec "Orders: place"): the request's shape and
 * the rules that need nothing but the request itself. Rules that need the venue (its order_config,
 * connection, balance, book) are per leg and never an HTTP error; see the preflight and buy modules.
 */

export type OrderType = 'market' | 'limit';

/** The spec's closed set of per-leg rejected_code values of a 200 buy and of preflight (spec "Errors"). */
export const LEG_REJECT_CODES = [
  'venue_disabled',
  'execution_limit_exceeded',
  'orders_not_supported',
  'below_min_order',
  'above_max_order',
  'unfillable',
  'price_out_of_band',
  'above_max_price',
  'insufficient_size',
  'insufficient_live_depth',
  'insufficient_balance',
  'halted_upstream',
  'no_live_price_for_paper',
] as const;
export type LegRejectCode = (typeof LEG_REJECT_CODES)[number];
export type OrderMode = 'real' | 'paper';
export type OnLegFailure = 'continue' | 'halt';

export interface BuyLeg {
  liquidity_hash?: string;
  position_hash?: string;
  partner_id?: string;
  amount?: number;
  shares?: number;
  max_price: number;
  mode?: OrderMode;
  order_type?: OrderType;
}

export interface BuyRequest {
  orders: BuyLeg[];
  verify_liquidity?: boolean;
  check_all_first?: boolean;
  on_leg_failure?: OnLegFailure;
  placement?: 'parallel';
  opportunity_id?: string;
  model_id?: string;
}

/** Operator interface: a buy takes at most 25 legs (400 too_many_legs). */
export const MAX_LEGS = 25;

/** A leg after the request-level rules: its venue and mode decided, defaults applied. */
export interface ResolvedLeg {
  index: number;
  /** The venue named: partner_id, or the liquidity_hash's first segment. */
  partner_id: string;
  position_hash: string | null;
  liquidity_hash: string | null;
  amount: number | null;
  shares: number | null;
  max_price: number;
  /** null: a test key's leg that named no mode; the leg is rejected (status rejected), not placed. */
  mode: OrderMode | null;
  order_type: OrderType;
  /** Why the router cannot plan this leg (status rejected, free-text reason, no code), or null. */
  unplannable: string | null;
}

/** A request-level refusal: the whole call is a 400 with this code, nothing placed. */
export interface RequestRefusal {
  code: 'invalid_parameter' | 'too_many_legs' | 'conflicting_parameters';
  message: string;
  details?: Record<string, unknown>;
}

/**
 * The liquidity_hash's venue: its first segment (spec: "the first segment of liquidity_hash").
 * Hashes are otherwise opaque; this one split is the spec's own rule.
 */
export const partnerOfLiquidityHash = (h: string): string => h.split(':')[0] ?? '';

/**
 * Applies the rules every leg and the request must meet before anything else is looked at:
 * exactly one of liquidity_hash/position_hash (position_hash needs partner_id; a partner_id that
 * contradicts the liquidity_hash is refused), exactly one of amount/shares, positive, max_price
 * strictly in (0, 1), at most 25 legs, placement parallel + halt needs check_all_first: a 400,
 * nothing placed. mode defaults to real on a live key; on a test key a leg without one is rejected
 * (the spec's leg status, the router cannot plan it), the others still go. Returns the resolved
 * legs or the refusal.
 */
export function resolveRequest(req: BuyRequest, environment: 'test' | 'live'): { legs: ResolvedLeg[] } | { refusal: RequestRefusal } {
  const bad = (code: RequestRefusal['code'], message: string, details?: Record<string, unknown>) => ({ refusal: { code, message, details } });
  if (req.orders.length === 0) return bad('invalid_parameter', 'orders must hold at least one leg', { parameter: 'orders' });
  if (req.orders.length > MAX_LEGS) return bad('too_many_legs', `a buy takes at most ${MAX_LEGS} legs; split it`, { max_legs: MAX_LEGS, legs: req.orders.length });
  if (req.placement === 'parallel' && req.on_leg_failure === 'halt' && req.check_all_first !== true) {
    return bad('conflicting_parameters', 'placement parallel with on_leg_failure halt needs check_all_first true: legs placed at once cannot halt each other', {
      parameters: ['placement', 'on_leg_failure', 'check_all_first'],
    });
  }
  const legs: ResolvedLeg[] = [];
  for (const [index, leg] of req.orders.entries()) {
    const at = (p: string) => ({ parameter: `orders[${index}].${p}`, index });
    if ((leg.liquidity_hash === undefined) === (leg.position_hash === undefined)) {
      return bad('invalid_parameter', `orders[${index}]: give exactly one of liquidity_hash or position_hash`, at('liquidity_hash'));
    }
    let partner = leg.partner_id;
    if (leg.position_hash !== undefined && partner === undefined) return bad('invalid_parameter', `orders[${index}]: position_hash needs partner_id (the venue to fill on)`, at('partner_id'));
    if (leg.liquidity_hash !== undefined) {
      const implied = partnerOfLiquidityHash(leg.liquidity_hash);
      if (partner !== undefined && partner !== implied) return bad('invalid_parameter', `orders[${index}]: partner_id ${partner} is not the venue of liquidity_hash (${implied})`, at('partner_id'));
      partner = implied;
    }
    if ((leg.amount === undefined) === (leg.shares === undefined)) return bad('invalid_parameter', `orders[${index}]: give exactly one of amount (USD) or shares (contracts)`, at('amount'));
    const size = leg.amount ?? leg.shares!;
    if (!(size > 0) || !Number.isFinite(size)) return bad('invalid_parameter', `orders[${index}]: ${leg.amount !== undefined ? 'amount' : 'shares'} must be a positive number`, at(leg.amount !== undefined ? 'amount' : 'shares'));
    if (!(leg.max_price > 0 && leg.max_price < 1)) return bad('invalid_parameter', `orders[${index}]: max_price must be strictly between 0 and 1`, at('max_price'));
    legs.push({
      index,
      partner_id: partner!,
      position_hash: leg.position_hash ?? null,
      liquidity_hash: leg.liquidity_hash ?? null,
      amount: leg.amount ?? null,
      shares: leg.shares ?? null,
      max_price: leg.max_price,
      mode: leg.mode ?? (environment === 'live' ? 'real' : null),
      order_type: leg.order_type ?? 'market',
      unplannable: leg.mode === undefined && environment === 'test' ? 'a leg sent with a test key must name its mode (paper or real); this one was not placed' : null,
    });
  }
  return { legs };
}
