/** OpenAPI shapes of the order routes (they describe answers; app.ts never serializes with them). */
import { Type, type Static, type TSchema } from 'typebox';
import type { PreflightResult as PreflightResultT } from '../../../src/domain/order-checks.js';
import {
  FILL_STATUSES,
  LEG_STATUSES,
  ORDER_RESULTS,
  ORDER_STATUSES,
  type BuyResponse as BuyResponseT,
  type OrderResolution as OrderResolutionT,
  type RestingOrder as RestingOrderT,
  type RouterOrder as RouterOrderT,
  type RouterOrderResult as RouterOrderResultT,
} from '../../../src/domain/router-orders.js';
import type { Agrees, Same } from '../openapi/shapes.js';
import { LEG_REJECT_CODES } from '../../../src/domain/orders.js';

const closed = { additionalProperties: false } as const;
const Timestamp = Type.String({ format: 'date-time' });
const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});
const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const Nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});
const Currency = Type.Enum(['USD', 'ATLAS'], { description: 'USD real money; ATLAS practice money (never summed with USD)' });

/** The spec's closed set of per-leg rejected_code values (buy and preflight). */
export const REJECTED_CODES = LEG_REJECT_CODES;

export const RouterOrderResult = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'aligned with the request’s orders array' }),
    status: Type.Enum([...LEG_STATUSES]),
    sor_decision_id: Type.String({ description: 'execution audit id' }),
    requested_partner_id: Type.String({ description: 'the venue named (partner_id, or the first segment of liquidity_hash)' }),
    filled_notional: Type.Number({ description: 'booked; ATLAS on a practice leg' }),
    filled_shares: Type.Number({ description: 'contracts booked' }),
    unfilled_notional: Type.Number({ description: 'requested minus booked; 0 on a clean full fill' }),
    avg_price: Type.Number({ description: 'the fill price; 0 when nothing filled' }),
    rejected_reason: NullableString('human-readable when not completed'),
    rejected_code: Type.Union([Type.Enum([...REJECTED_CODES]), Type.Null()], { description: 'null when completed, or when the router could not plan the leg (free-text reason only)' }),
    venues: Type.Array(
      Type.Object(
        {
          partner_id: Type.String({ description: 'the book the leg was sent to; the internal book on a practice leg' }),
          success: Type.Boolean(),
          router_order_id: NullableString(),
          error: NullableString(),
        },
        closed,
      ),
      { description: 'the books the leg was sent to; empty for a leg that wrote no order' },
    ),
  },
  { ...closed, $id: 'RouterOrderResult' },
);

export const BuyResponse = Type.Object(
  {
    results: Type.Array(RouterOrderResult),
    halted_at_index: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'the leg that halted the request under on_leg_failure halt' }),
    opportunity_id: NullableString('the opportunity the orders joined or opened; null when no leg wrote an order'),
    model_id: NullableString('the model the orders are filed under (the request’s, or the joined opportunity’s)'),
  },
  { ...closed, $id: 'BuyResponse' },
);

export const RouterOrder = Type.Object(
  {
    router_order_id: Type.String(),
    title: Type.String(),
    partner_id: Type.String({ description: 'the book filled on: the internal book (practice) for a paper order' }),
    partner_name: Type.String(),
    partner: Type.Object({ partner_id: Type.String(), partner_name: Type.String(), internal_book: Type.Boolean(), logo_url: Type.String() }, closed),
    logo_url: Type.String(),
    requested_partner_id: Type.String({ description: 'the venue the leg named' }),
    amount: Type.Number({ description: 'the order’s notional: booked plus unfilled' }),
    price: Type.Number({ description: 'average fill price; the limit while nothing has filled' }),
    currency: Currency,
    mode: Type.Enum(['real', 'paper']),
    order_type: Type.Enum(['market', 'limit']),
    fee: Type.Number({ description: 'realized venue fee (0 on the internal book)' }),
    amount_with_fee: Type.Number(),
    model_id: NullableString(),
    model_name: NullableString(),
    opportunity_id: NullableString(),
    contest_id: Type.String(),
    position_hash: Type.String(),
    liquidity_hash: NullableString('the liquidity_hash the leg named, if it named one'),
    max_price: Type.Number(),
    avg_price: NullableNumber('null while nothing has filled'),
    filled_notional: Type.Number(),
    filled_shares: Type.Number(),
    unfilled_notional: Type.Number(),
    leg_status: Type.Enum([...LEG_STATUSES], { description: 'the leg status the buy answered' }),
    status: Type.Enum([...ORDER_STATUSES], { description: 'pending: fill not confirmed; open: working or awaiting settlement; closed: settled or ended' }),
    fill_status: Type.Enum([...FILL_STATUSES], { description: 'unfilled, partially_filled, or filled (the whole notional booked)' }),
    result: Type.Union([Type.Enum([...ORDER_RESULTS]), Type.Null()], { description: 'null until settled' }),
    winnings: NullableNumber('null until settled'),
    net_winnings: NullableNumber('null until settled'),
    settled_at: Type.Union([Timestamp, Type.Null()]),
    cancelled_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { ...closed, $id: 'RouterOrder' },
);

export const RestingOrder = Type.Object(
  {
    router_order_id: Type.String(),
    title: Type.String(),
    partner_id: Type.String(),
    partner_name: Type.String(),
    amount: Type.Number(),
    price: Type.Number({ description: 'the limit the order rests at' }),
    fill_status: Type.Enum(['unfilled', 'partially_filled']),
    currency: Currency,
    contest_id: Type.String(),
    position_hash: Type.String(),
    filled_notional: Type.Number(),
    unfilled_notional: Type.Number(),
    created_at: Timestamp,
  },
  { ...closed, $id: 'RestingOrder' },
);

export const RestingOrders = Type.Object({ orders: Type.Array(RestingOrder) }, { ...closed, $id: 'RestingOrders' });

export const OrderResolution = Type.Object(
  {
    router_order_id: Type.String(),
    contest_id: Type.String(),
    position_hash: Type.String(),
    title: Type.String(),
    currency: Currency,
    status: Type.Enum([...ORDER_STATUSES]),
    resolved: Type.Boolean({ description: 'the outcome is final: settled, or closed with nothing booked' }),
    result: Type.Union([Type.Enum([...ORDER_RESULTS]), Type.Null()], { description: 'null until settled' }),
    amount: Type.Number({ description: 'the booked stake the result applies to' }),
    winnings: NullableNumber('null until settled'),
    net_winnings: NullableNumber('null until settled'),
    settled_at: Type.Union([Timestamp, Type.Null()]),
  },
  { ...closed, $id: 'OrderResolution' },
);

export const CancelResult = Type.Object(
  {
    router_order_id: Type.String(),
    status: Type.Enum(['cancelled', 'pending'], {
      description:
        'cancelled: the venue cancelled the remainder (or the order never reached a venue); pending: the venue has not answered within the wait, the cancel is still carried out and its outcome arrives on the orders channel and in GET orders',
    }),
    unfilled_notional: Type.Number({ description: 'requested minus booked: the remainder that will never fill (pending: as recorded now)' }),
  },
  { ...closed, $id: 'CancelResult' },
);

export type OrderShapesAgreeWithTheDomain = [
  Agrees<Same<Static<typeof RouterOrderResult>, RouterOrderResultT>>,
  Agrees<Same<Static<typeof BuyResponse>, BuyResponseT>>,
  Agrees<Same<Static<typeof RouterOrder>, RouterOrderT>>,
  Agrees<Same<Static<typeof RestingOrder>, RestingOrderT>>,
  Agrees<Same<Static<typeof OrderResolution>, OrderResolutionT>>,
];

// ---- preflight (spec "Preflight result") ----------------------------------------------------------

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

export type PreflightShapesAgreeWithTheDomain = [Agrees<Same<Static<typeof PreflightResult>, PreflightResultT>>];
