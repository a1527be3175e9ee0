/** OpenAPI shapes of performance, positions and the history ledger (they describe answers; app.ts never serializes with them). */
import { Type, type Static } from 'typebox';
import { FUNDING } from '../../../src/domain/account.js';
import { GROUP_BYS, type Performance as PerformanceT } from '../../../src/domain/performance.js';
import { POSITION_SOURCES, POSITION_STATUSES, type AccountPositions as AccountPositionsT, type HistoryRecord as HistoryRecordT } from '../../../src/domain/positions.js';
import { ORDER_RESULTS } from '../../../src/domain/router-orders.js';
import { Meta, Pagination, type Agrees, type Same } from '../openapi/shapes.js';

const closed = { additionalProperties: false } as const;
const Money = (description: string) => Type.Number({ description });
const NullableMoney = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const Timestamp = Type.String({ format: 'date-time' });
const Currency = Type.Enum(['USD', 'ATLAS']);
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Outcome = Type.Union([Type.Enum([...ORDER_RESULTS]), Type.Null()], { description: 'win, lose, push or cancelled; null while open' });

// ---- performance ---------------------------------------------------------------------------------

const figures = {
  staked: Money('the sum of the booked stakes of the settled win and lose orders'),
  net_pl: Money('the sum of net_winnings minus the booked stakes, over every settled order (venue fees included)'),
  roi: Type.Number({ description: 'net_pl / staked as a ratio, 6 decimals; 0 when staked is 0' }),
  settled_count: Count('orders settled in the window'),
};
const outcomes = { wins: Count('settled win'), losses: Count('settled lose'), pushes: Count('settled push') };

export const PerformanceGroup = Type.Object(
  {
    key: Type.String({ description: 'league_id, model_id (no_model for orders without one), YYYY-MM-DD (UTC day of settlement), partner_id, or the opportunity type (untyped)' }),
    label: Type.String({ description: 'the name to show: league, model (No model), day, venue, opportunity type' }),
    ...figures,
    ...outcomes,
  },
  { ...closed, $id: 'PerformanceGroup' },
);

export const PerformanceBucket = Type.Object(
  {
    funding: Type.Object(
      {
        currency: Currency,
        is_real_money: Type.Boolean({ description: `${FUNDING.USD.currency} true, ${FUNDING.ATLAS.currency} false` }),
        symbol: Type.String(),
        precision: Type.Integer({ minimum: 0 }),
        label: Type.String(),
      },
      closed,
    ),
    ...figures,
    pending_count: Count('orders placed in the window that have not settled (still filling, or awaiting their result)'),
    ...outcomes,
    cancelled: Count('settled orders that booked nothing'),
    groups: Type.Array(PerformanceGroup, { description: 'empty with group_by none; ordered by key' }),
  },
  { ...closed, $id: 'PerformanceBucket' },
);

export const Performance = Type.Object(
  {
    by_currency: Type.Array(PerformanceBucket, { description: 'one bucket per currency, USD then ATLAS, both always present; never summed' }),
    from: Type.String({ format: 'date-time', description: 'the window’s start (inclusive), as applied' }),
    to: Type.String({ format: 'date-time', description: 'the window’s end (inclusive), as applied' }),
    group_by: Type.Enum([...GROUP_BYS]),
  },
  { ...closed, $id: 'Performance' },
);

// ---- positions and history ----------------------------------------------------------------------

export const AccountPosition = Type.Object(
  {
    position_key: Type.String({ description: '<partner_id>:<position_hash>' }),
    partner_id: Type.String({ description: 'the venue; practice for ATLAS positions' }),
    partner_name: Type.String(),
    currency: Currency,
    contest_id: Type.String(),
    market_id: Type.Union([Type.String(), Type.Null()], { description: 'the catalog’s market; null when the catalog does not hold the position' }),
    side_key: Type.Union([Type.String(), Type.Null()], { description: 'the catalog’s side; null when the catalog does not hold the position' }),
    position_hash: Type.String(),
    title: Type.String(),
    contracts: Type.Number({ description: 'contracts booked' }),
    avg_price: Type.Number({ description: 'booked notional / contracts, 6 decimals' }),
    cost_basis: Money('booked notional plus venue fees'),
    fees: Money('the venue fees inside cost_basis'),
    payout: NullableMoney('what the book paid back; null while open'),
    net_pnl: NullableMoney('payout − cost_basis; null while open'),
    outcome: Outcome,
    status: Type.Enum([...POSITION_STATUSES], { description: 'open until every order of the position has settled' }),
    order_count: Count('orders rolled up into the row'),
    opened_at: Timestamp,
    settled_at: Type.Union([Timestamp, Type.Null()], { description: 'when its last order settled; null while open' }),
  },
  { ...closed, $id: 'AccountPosition' },
);

export const AccountPositions = Type.Object(
  {
    source: Type.Enum([...POSITION_SOURCES], { description: 'orders: the orders placed through the buy endpoint (default); history: the venues’ ledger (history=1)' }),
    positions: Type.Array(AccountPosition),
  },
  { ...closed, $id: 'AccountPositions' },
);

/** `{data: {source, positions[]}, pagination, meta}`: a cursor page whose data is an object. */
export const AccountPositionsPage = Type.Object({ data: AccountPositions, pagination: Pagination, meta: Meta }, { ...closed, description: 'A page of positions' });

export const HistoryRecord = Type.Object(
  {
    router_order_id: Type.String(),
    partner_id: Type.String(),
    partner_name: Type.String(),
    venue_reference: Type.String({ description: 'the venue’s order id, or the client_order_id the service sent' }),
    kind: Type.Literal('bet'),
    side: Type.Literal('buy'),
    instrument_label: Type.String(),
    quantity: Type.Number({ description: 'contracts booked' }),
    price: Type.Number({ description: 'average fill price, 0-1' }),
    currency: Currency,
    status: Type.Enum([...POSITION_STATUSES]),
    cost: Money('booked notional plus the venue fee'),
    payout: NullableMoney('null while open'),
    outcome: Outcome,
    position_key: Type.String({ description: '<partner_id>:<position_hash>, as on the positions' }),
    settled_pnl: NullableMoney('payout − cost; null while open'),
    occurred_at: Timestamp,
    settled_at: Type.Union([Timestamp, Type.Null()]),
    placed_via_openmarkets: Type.Boolean({ description: 'true: placed through this service' }),
  },
  { ...closed, $id: 'HistoryRecord' },
);

export type AttributionShapesAgreeWithTheDomain = [
  Agrees<Same<Static<typeof Performance>, PerformanceT>>,
  Agrees<Same<Static<typeof AccountPositions>, AccountPositionsT>>,
  Agrees<Same<Static<typeof HistoryRecord>, HistoryRecordT>>,
];
