/**
 * Response shapes of the market-signal reads (spec "Arbitrage", "Signal"), each tied at compile time
 * to the domain type the code builds it from.
 */
import { Type, type Static } from 'typebox';
import type { Arbitrage as ArbitrageT } from '../../../src/domain/arbitrage.js';
import { CONFIDENCES, SIGNAL_STATUSES, SIGNAL_TYPES, type Signal as SignalT, type SignalCatalogEntry as SignalCatalogEntryT } from '../../../src/domain/signals.js';
import { Nullable, type Agrees, type Same } from '../openapi/shapes.js';

const closed = { additionalProperties: false };
const Probability = (description?: string) => Type.Number({ minimum: 0, maximum: 1, ...(description ? { description } : {}) });

export const ArbitrageOption = Type.Object(
  {
    partner_id: Type.String(),
    partner_name: Type.String(),
    price: Probability('the venue’s best price for the side, before fees'),
    after_fee_price: Nullable(Type.Number({ description: 'all-in taker price after the venue’s fee packet; null when the venue publishes none (fees unknown, not free)' })),
    available: Type.Number({ minimum: 0, description: 'USD at the best price' }),
    title: Type.String(),
    position_hash: Type.String(),
    source: Type.Enum(['streaming', 'polling']),
  },
  { $id: 'ArbitrageOption', ...closed },
);

export const ArbitrageSide = Type.Object(
  {
    market_side_id: Type.String(),
    title: Type.String(),
    options: Type.Array(ArbitrageOption, { description: 'options[0] is the selected pair’s venue (cheapest after fees); the others follow, cheapest after fees first' }),
  },
  { $id: 'ArbitrageSide', ...closed },
);

export const Arbitrage = Type.Object(
  {
    arbitrage_id: Type.String({ description: 'stable per venue pair and position pair across repricings' }),
    contest: Type.Object({ id: Type.String(), label: Nullable(Type.String()), league_id: Nullable(Type.String()) }, closed),
    market: Type.Object({ id: Type.String(), variable_id: Nullable(Type.String({ description: 'the line of the pair; null for a market without lines' })) }, closed),
    combined_price: Type.Number({ description: 'sum of the selected pair’s prices, under 1.0' }),
    roi_pct: Type.Number({ description: 'gross profit percent: (1 − combined_price) / combined_price × 100' }),
    after_fee_roi_pct: Nullable(Type.Number({ description: 'the same after both legs’ taker fees; null when a leg’s venue publishes no fee packet' })),
    profitable_after_fees: Nullable(Type.Boolean()),
    max_investment: Type.Number({ description: 'USD across both legs at the best prices, equal contracts on each side' }),
    sides: Type.Array(ArbitrageSide, { minItems: 2, maxItems: 2, description: 'the two mutually exclusive positions' }),
    detected_at: Type.String({ format: 'date-time', description: 'first detection of this arbitrage_id in its current run' }),
    depth_walk: Nullable(
      Type.Object(
        {
          contracts: Type.Number({ description: 'contracts bought on each side' }),
          deployable_stake: Type.Number({ description: 'USD on both legs, fees included where known: the largest stake that stays profitable walking both books' }),
          profit_usd: Type.Number({ description: 'guaranteed profit at that stake' }),
          after_fee_edge_pct: Type.Number({ description: 'profit_usd / deployable_stake × 100' }),
          fees_known: Type.Boolean({ description: 'false when a leg’s venue publishes no fee packet (its fee counted as 0)' }),
        },
        { ...closed, description: 'Extra (beyond the spec): what is executable when walking both books (docs/arbitrage.md); null when neither venue shows a book' },
      ),
    ),
  },
  { $id: 'Arbitrage', ...closed },
);

export const ArbitrageMeta = Type.Object(
  { timestamp: Type.String({ format: 'date-time' }), api_version: Type.Literal('v1'), total: Type.Integer({ minimum: 0, description: 'matching arbitrages before limit' }) },
  closed,
);

const SignalTypeName = Type.Enum([...SIGNAL_TYPES], { description: 'a type of the catalog (GET /flow/v1/signals/types)' });
const SignalStatus = Type.Enum([...SIGNAL_STATUSES]);

export const SignalPosition = Type.Object(
  {
    position_hash: Type.String(),
    router_contest_id: Type.String(),
    router_league_id: Nullable(Type.String()),
    router_market_id: Type.String(),
    market_key: Type.String(),
    market_side_id: Type.String({ description: 'the market and side (the same id an arbitrage side carries)' }),
    market_variable_id: Nullable(Type.String({ description: 'the line, e.g. "-3.5"; null for a market without lines' })),
    participant_id: Type.String(),
    timeframe_id: Type.String(),
    title: Type.String(),
    contest_label: Nullable(Type.String()),
  },
  { $id: 'SignalPosition', ...closed },
);

export const Signal = Type.Object(
  {
    signal_id: Type.String({ description: 'stable for one detection: a re-delivered signal keeps it, a new occurrence gets a new one' }),
    dedupe_key: Type.String({ description: 'one live signal per key: a newer detection replaces the older' }),
    signal_type: SignalTypeName,
    schema_version: Type.Integer({ minimum: 1 }),
    status: SignalStatus,
    position: SignalPosition,
    related_positions: Type.Array(Type.String(), { description: 'position_hash of the other positions the signal involves' }),
    headline: Type.String(),
    explanation: Type.String(),
    strength: Type.Integer({ minimum: 0, maximum: 100, description: 'one 0-100 scale for every type' }),
    confidence: Type.Enum([...CONFIDENCES]),
    calibration_version: Type.Integer({ minimum: 1 }),
    detected_at: Type.String({ format: 'date-time' }),
    expires_at: Type.String({ format: 'date-time', description: 'drop the signal yourself once this passes' }),
    venues: Type.Array(Type.Object({ partner_id: Type.String(), partner_name: Type.String() }, closed), { description: 'the venues the signal is about' }),
    evidence: Type.Record(Type.String(), Type.Unknown(), { description: 'type-specific; the catalog entry’s evidence_fields name what each type carries' }),
  },
  { $id: 'Signal', ...closed },
);

export const SignalMeta = Type.Object(
  {
    timestamp: Type.String({ format: 'date-time' }),
    api_version: Type.Literal('v1'),
    total: Type.Integer({ minimum: 0, description: 'matching signals before limit' }),
    returned: Type.Integer({ minimum: 0, description: 'signals in data (at most limit)' }),
    contest_count: Type.Integer({ minimum: 0, description: 'distinct contests among the matching signals (before limit)' }),
  },
  closed,
);

export const SignalCatalogEntry = Type.Object(
  {
    signal_type: SignalTypeName,
    name: Type.String(),
    family: Type.Enum(['core', 'premium']),
    status: SignalStatus,
    schema_version: Type.Integer({ minimum: 1 }),
    description: Type.String(),
    strength_semantics: Type.String(),
    evidence_fields: Type.Array(Type.String()),
    required_entitlements: Type.Array(Type.String()),
    typical_ttl_seconds: Nullable(Type.Integer({ minimum: 0, description: 'null for a retired type (never emitted)' })),
    entitled: Type.Boolean({ description: 'whether the asking key holds every required entitlement' }),
    missing_entitlements: Type.Array(Type.String(), { description: 'the required entitlements the asking key lacks' }),
  },
  { $id: 'SignalCatalogEntry', ...closed },
);

export type SignalShapesAgreeWithTheDomain = [
  Agrees<Same<Static<typeof Arbitrage>, ArbitrageT>>,
  Agrees<Same<Static<typeof Signal>, SignalT>>,
  Agrees<Same<Static<typeof SignalCatalogEntry>, SignalCatalogEntryT>>,
];
