/**
 * Response shapes of the order routes (spec "Preflight result"). Closed objects; the compile-time
 * check at the end ties each to the domain type the response is built from.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { PreflightResult as PreflightResultT } from '../../../src/domain/order-checks.js';
import type { Agrees, Same } from '../openapi/shapes.js';

const closed = { additionalProperties: false } as const;
const Nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});

export const REJECTED_CODES = [
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
export const PREFLIGHT_WARNINGS = ['amount_off_increment', 'price_off_tick', 'insufficient_balance'] as const;
export const FIX_HINTS = [
  'raise_stake',
  'reduce_stake',
  'raise_max_price',
  'lower_max_price',
  'switch_venue',
  'connect_venue',
  'add_funds',
  'choose_mode',
  'choose_position',
  'retry_later',
  'fix_earlier_leg',
] as const;

export const PreflightFeePacket = Type.Object(
  {
    taker_price: Type.Number({ description: 'all-in price per contract at expected_price when taking' }),
    maker_price: Type.Number({ description: 'all-in price per contract at expected_price when resting' }),
    taker_fee: Type.Number({ description: 'USD: the taker fee for THIS order’s amount (not the canonical USD 100 of the liquidity feed)' }),
    maker_fee: Type.Number({ description: 'USD: the maker fee for THIS order’s amount' }),
  },
  { $id: 'PreflightFeePacket', ...closed },
);

export const PreflightVenue = Type.Object(
  {
    partner_id: Type.String({ description: 'the venue that would fill; the internal book on a practice leg' }),
    expected_price: Nullable(Type.Number(), 'average 0-1 price of the expected fill; null when nothing would fill'),
    allocated_amount: Type.Number({ description: 'USD that would fill at once on this venue' }),
    fee_packet: Nullable(PreflightFeePacket, 'null when the venue publishes no fee schedule (fees unknown, not fee-free)'),
    verified: Type.Optional(Type.Boolean({ description: 'verify_liquidity only: whether the live book was read (a fresh, deep venue skips it; so does a process without venue adapters)' })),
    live_available: Type.Optional(Nullable(Type.Number(), 'verify_liquidity only: USD the live book offers at or below max_price; null when not read')),
    live_price: Type.Optional(Nullable(Type.Number(), 'verify_liquidity only: the live best price; null when not read or empty')),
  },
  { $id: 'PreflightVenue', ...closed },
);

export const NormalizedOrder = Type.Object(
  {
    max_price: Type.Number({ description: '0-1: the limit on the venue’s price grid (never above the max_price sent)' }),
    amount: Type.Number({ description: 'USD (ATLAS on a practice leg) after the venue’s amount increment; a share count valued at max_price' }),
    contracts: Type.Number({ description: 'contracts the order buys: what the book fills (market), what it targets (limit), amount ÷ price (practice)' }),
    price_basis: Type.Enum(['book', 'offer', 'max_price', 'best_live_price'], {
      description: 'what the contracts are priced at: the book walk, the venue’s offer (accept-by-id venues), max_price (limit orders), the best live price (practice)',
    }),
    price_format: Type.Enum(['cents', 'probability', 'american'], { description: 'the venue’s native price unit' }),
    native_max_price: Type.Number({ description: 'max_price in price_format units, as it would be submitted' }),
  },
  { $id: 'NormalizedOrder', ...closed },
);

export const PreflightResult = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'aligned with the request’s orders array' }),
    requested_partner_id: Type.String({ description: 'the venue named (partner_id, or the first segment of liquidity_hash)' }),
    accepted: Type.Boolean(),
    rejected_code: Nullable(Type.Enum([...REJECTED_CODES]), 'null when accepted, and on a leg the router cannot plan (rejected_reason says why)'),
    rejected_reason: Nullable(Type.String(), 'developer text'),
    message_user: Type.String({ description: 'plain-language text for the end user' }),
    fix: Nullable(Type.Enum([...FIX_HINTS]), 'what to change; null when accepted'),
    warnings: Type.Array(Type.Enum([...PREFLIGHT_WARNINGS]), { description: 'non-blocking: the order was adjusted to the venue grid, or the last known (not synced) balance looks too low' }),
    currency: Nullable(Type.Enum(['USD', 'ATLAS']), 'what the leg books in; null on a leg without a mode'),
    normalized: Nullable(NormalizedOrder, 'null when the leg was refused before it reached the venue grid'),
    would_rest: Type.Boolean({ description: 'a limit order would rest (part of) its contracts at max_price' }),
    expected_fill_price: Nullable(Type.Number()),
    total_allocated: Type.Number({ description: 'USD that would fill at once' }),
    unfilled_amount: Type.Number({ description: 'requested minus total_allocated: rests (limit), is killed (market), or is whole-contract rounding' }),
    total_taker_fee: Nullable(Type.Number(), 'USD for this order’s amount; null when the venue’s fees are unknown (estimate)'),
    total_maker_fee: Nullable(Type.Number(), 'USD for this order’s amount; null when unknown (estimate)'),
    total_cost_taker: Nullable(Type.Number(), 'notional (resting part at max_price) plus the taker fee'),
    venues: Type.Array(PreflightVenue),
  },
  { $id: 'PreflightResult', ...closed },
);

export const PreflightData = Type.Object(
  {
    results: Type.Array(PreflightResult),
    halted_at_index: Nullable(Type.Integer({ minimum: 0 }), 'with on_leg_failure halt: the first leg that failed (the request stops there); null otherwise'),
  },
  { $id: 'PreflightData', ...closed },
);

export type OrderShapesAgreeWithTheDomain = [Agrees<Same<Static<typeof PreflightResult>, PreflightResultT>>];
