/**
 * Market signals (spec "Signal", "Signal type catalog"; docs/signals.md): the resource, the catalog
 * of types with their published thresholds and lifetimes, and the rules every detector shares (one
 * strength scale, confidence levels, ids). Pure data and functions: the compute workers, the REST
 * reads, the stream and the simulator all use this one definition.
 */

import type { PositionDefinition } from './catalog.js';
import { fnv64Hex, formatVariable } from './hashes.js';

export const SIGNAL_TYPES = ['arbitrage', 'price_move', 'whale_trade', 'block_trade', 'trade_burst', 'flow_imbalance', 'trade_through', 'volume_spike', 'off_market_price'] as const;
export type SignalType = (typeof SIGNAL_TYPES)[number];

export const SIGNAL_STATUSES = ['beta', 'active', 'deprecated', 'retired'] as const;
export type SignalStatus = (typeof SIGNAL_STATUSES)[number];

export const CONFIDENCES = ['low', 'medium', 'high'] as const;
export type Confidence = (typeof CONFIDENCES)[number];
export const CONFIDENCE_RANK: Readonly<Record<Confidence, number>> = { low: 1, medium: 2, high: 3 };

/** Bumped when the strength or confidence formulas change (docs/signals.md). */
export const CALIBRATION_VERSION = 1;

/** The position a signal is about (spec "Signal".position). */
export interface SignalPosition {
  position_hash: string;
  router_contest_id: string;
  router_league_id: string | null;
  router_market_id: string;
  market_key: string;
  market_side_id: string;
  market_variable_id: string | null;
  participant_id: string;
  timeframe_id: string;
  title: string;
  contest_label: string | null;
}

export interface SignalVenue {
  partner_id: string;
  partner_name: string;
}

export interface Signal {
  signal_id: string;
  dedupe_key: string;
  signal_type: SignalType;
  schema_version: number;
  status: SignalStatus;
  position: SignalPosition;
  related_positions: string[];
  headline: string;
  explanation: string;
  /** 0-100, one scale for every type (docs/signals.md "Strength"). */
  strength: number;
  confidence: Confidence;
  calibration_version: number;
  detected_at: string;
  expires_at: string;
  venues: SignalVenue[];
  /** Type-specific; the catalog's evidence_fields name what each type carries. */
  evidence: Record<string, unknown>;
}

/** One catalog entry as the service defines it (the per-key `entitled` fields are added when served). */
export interface SignalTypeDefinition {
  signal_type: SignalType;
  name: string;
  family: 'core' | 'premium';
  status: SignalStatus;
  /** false for trade_burst (computed, never published) and retired types. */
  published: boolean;
  schema_version: number;
  description: string;
  strength_semantics: string;
  evidence_fields: string[];
  required_entitlements: string[];
  /** null for a retired type (no life: never emitted). */
  typical_ttl_seconds: number | null;
}

/** The catalog entry as GET /signals/types answers it for one key. */
export interface SignalCatalogEntry extends Omit<SignalTypeDefinition, 'published'> {
  entitled: boolean;
  missing_entitlements: string[];
}

const READ = ['signals:read'];

export const SIGNAL_CATALOG: readonly SignalTypeDefinition[] = [
  {
    signal_type: 'arbitrage',
    name: 'Cross-venue arbitrage',
    family: 'core',
    status: 'active',
    published: true,
    schema_version: 1,
    description: 'Two mutually exclusive positions on different venues whose best prices sum under 1.0 (docs/arbitrage.md).',
    strength_semantics: 'Gross profit percent mapped onto 0-100: 1 % → 20, 5 % → 100 (capped); halved when unprofitable after fees.',
    evidence_fields: ['arbitrage_id', 'best_combined_price', 'best_guaranteed_profit_pct', 'after_fee_roi', 'profitable_after_fees', 'best_max_investment', 'sides', 'venues'],
    required_entitlements: READ,
    typical_ttl_seconds: 120,
  },
  {
    signal_type: 'price_move',
    name: 'Consensus price move',
    family: 'core',
    status: 'beta',
    published: true,
    schema_version: 1,
    description: 'The consensus price of a position moved by at least 5 points (0.05) within 5 minutes.',
    strength_semantics: 'Size of the move: 0.05 → 25, 0.20 or more → 100.',
    evidence_fields: ['from_price', 'to_price', 'move', 'direction', 'window_ms', 'venues_now', 'venues_before', 'total_available_usd'],
    required_entitlements: READ,
    typical_ttl_seconds: 300,
  },
  {
    signal_type: 'whale_trade',
    name: 'Whale trade',
    family: 'premium',
    status: 'beta',
    published: true,
    schema_version: 1,
    description: 'A print of at least twice the whale threshold: the greater of USD 500 and eight times the position’s median print. Before the scheduled start, confidence is at most medium.',
    strength_semantics: 'Multiple of the threshold: 2× → 40, 10× or more → 100.',
    evidence_fields: ['notional_usd', 'size_multiple', 'threshold_usd', 'baseline_median_notional_usd', 'depth_ratio', 'contest_phase', 'trader_id', 'is_block', 'partner_id'],
    required_entitlements: READ,
    typical_ttl_seconds: 600,
  },
  {
    signal_type: 'block_trade',
    name: 'Block trade',
    family: 'premium',
    status: 'beta',
    published: true,
    schema_version: 1,
    description: 'A negotiated off-book block the venue flagged (is_block).',
    strength_semantics: 'Notional: USD 1,000 → 20, USD 50,000 or more → 100 (log scale).',
    evidence_fields: ['notional_usd', 'price', 'trader_id', 'partner_id'],
    required_entitlements: READ,
    typical_ttl_seconds: 900,
  },
  {
    signal_type: 'trade_burst',
    name: 'Trade burst',
    family: 'premium',
    status: 'beta',
    published: false,
    schema_version: 1,
    description: 'Many prints on one position within a short window. Computed, never published.',
    strength_semantics: 'Not published.',
    evidence_fields: ['trades', 'total_notional_usd', 'largest_print_usd', 'window_ms', 'partner_id'],
    required_entitlements: READ,
    typical_ttl_seconds: 300,
  },
  {
    signal_type: 'flow_imbalance',
    name: 'One-way aggressive flow',
    family: 'premium',
    status: 'beta',
    published: true,
    schema_version: 1,
    description: 'Unanimous one-direction aggressive flow in the last minute: at least five prints and USD 1,000, no single print more than half of it.',
    strength_semantics: 'Notional of the flow: USD 1,000 → 30, USD 20,000 or more → 100 (log scale).',
    evidence_fields: ['buy_notional_usd', 'sell_notional_usd', 'imbalance', 'venues', 'partner_id'],
    required_entitlements: READ,
    typical_ttl_seconds: 180,
  },
  {
    signal_type: 'trade_through',
    name: 'Trade through the quote',
    family: 'premium',
    status: 'beta',
    published: true,
    schema_version: 1,
    description: 'A print at a price through the venue’s cached best price by at least 0.02 (evaluating; initial threshold).',
    strength_semantics: 'Distance through the quote: 0.02 → 20, 0.10 or more → 100.',
    evidence_fields: ['price', 'cached_price', 'through', 'quote_age_ms', 'partner_id'],
    required_entitlements: READ,
    typical_ttl_seconds: 300,
  },
  {
    signal_type: 'volume_spike',
    name: 'Volume spike',
    family: 'premium',
    status: 'beta',
    published: true,
    schema_version: 1,
    description: 'Prints in the last 5 minutes at least 4 times the position’s baseline per 5 minutes, and at least 8 prints (evaluating; initial threshold).',
    strength_semantics: 'Multiple of the baseline: 4× → 40, 10× or more → 100.',
    evidence_fields: ['trades_last_5m', 'baseline_per_5m', 'multiple', 'partner_id'],
    required_entitlements: READ,
    typical_ttl_seconds: 600,
  },
  {
    signal_type: 'off_market_price',
    name: 'Off-market price',
    family: 'core',
    status: 'retired',
    published: false,
    schema_version: 1,
    description: 'Retired: no longer emitted (outliers are flagged on ticks instead). Kept so stored type strings still resolve.',
    strength_semantics: 'Not emitted.',
    evidence_fields: [],
    required_entitlements: READ,
    typical_ttl_seconds: null,
  },
];

export const SIGNAL_DEFINITION: Readonly<Record<SignalType, SignalTypeDefinition>> = Object.fromEntries(SIGNAL_CATALOG.map((d) => [d.signal_type, d])) as Record<SignalType, SignalTypeDefinition>;

/** The catalog as one key sees it: entitled when it holds every required entitlement. */
export function catalogFor(entitlements: ReadonlySet<string>): SignalCatalogEntry[] {
  return SIGNAL_CATALOG.map(({ published: _p, ...d }) => {
    const missing = d.required_entitlements.filter((e) => !entitlements.has(e));
    return { ...d, entitled: missing.length === 0, missing_entitlements: missing };
  });
}

/** The catalog definition of a type string, or undefined for a string the catalog does not know. */
export function signalDefinition(type: unknown): SignalTypeDefinition | undefined {
  return typeof type === 'string' && Object.hasOwn(SIGNAL_DEFINITION, type) ? SIGNAL_DEFINITION[type as SignalType] : undefined;
}

/** Types the service serves (REST and stream): published and not retired. trade_burst and off_market_price never are. */
export function isServedType(type: unknown): boolean {
  const d = signalDefinition(type);
  return d !== undefined && d.published && d.status !== 'retired';
}

/** The types a key with these entitlements may see: every served type whose required entitlements it holds. */
export function entitledTypes(entitlements: ReadonlySet<string>): ReadonlySet<SignalType> {
  return new Set(SIGNAL_CATALOG.filter((d) => d.required_entitlements.every((e) => entitlements.has(e))).map((d) => d.signal_type));
}

/**
 * What a reader asks of signals besides their scope: the same four rules for GET /signals and the
 * `signal` channel, so the two never disagree. Beta signals only with includeBeta; confidence and
 * strength are minimums; types null means every type.
 */
export interface SignalSelection {
  types: ReadonlySet<string> | null;
  includeBeta: boolean;
  minStrength: number | null;
  minConfidence: Confidence | null;
}

/** A shape-tolerant view: the stream applies this to logged JSON, so nothing is trusted to be typed. */
type SignalLike = { signal_type?: unknown; status?: unknown; strength?: unknown; confidence?: unknown };

/** The predicate of a selection; served types only, retired signals never. */
export function selectsSignal(sel: SignalSelection): (s: SignalLike) => boolean {
  const minRank = sel.minConfidence === null ? 0 : CONFIDENCE_RANK[sel.minConfidence];
  return (s) => {
    if (!isServedType(s.signal_type) || s.status === 'retired') return false;
    if (sel.types !== null && !sel.types.has(s.signal_type as string)) return false;
    if (!sel.includeBeta && s.status === 'beta') return false;
    if (minRank > 0 && !((typeof s.confidence === 'string' && Object.hasOwn(CONFIDENCE_RANK, s.confidence) ? CONFIDENCE_RANK[s.confidence as Confidence] : 0) >= minRank)) return false;
    if (sel.minStrength !== null && !(typeof s.strength === 'number' && s.strength >= sel.minStrength)) return false;
    return true;
  };
}

export const isConfidence = (v: unknown): v is Confidence => typeof v === 'string' && (CONFIDENCES as readonly string[]).includes(v);

/** Clamps and rounds onto the one 0-100 strength scale. */
export const strength = (x: number): number => Math.max(0, Math.min(100, Math.round(x)));

/**
 * A linear map of `value` from [lo, hi] onto [sLo, 100], clamped: the shape every type's strength
 * takes on its own measure (docs/signals.md "Strength").
 */
export function scaled(value: number, lo: number, hi: number, sLo: number): number {
  if (!(value > lo)) return strength(value >= lo ? sLo : (sLo * value) / lo);
  return strength(sLo + ((100 - sLo) * (Math.min(value, hi) - lo)) / (hi - lo));
}

/** The same on a log scale (notional sizes span orders of magnitude). */
export function logScaled(value: number, lo: number, hi: number, sLo: number): number {
  if (!(value > 0)) return 0;
  return scaled(Math.log(value), Math.log(lo), Math.log(hi), sLo);
}

/**
 * A signal's id: stable for one detection (dedupe_key and the instant it was first detected), so a
 * re-delivered or re-computed signal keeps its id while a new occurrence gets a new one.
 */
export function signalId(dedupeKey: string, detectedAt: string): string {
  return `sig_${fnv64Hex(`${dedupeKey}\u0000${detectedAt}`)}`;
}

/** expires_at of a signal of `type` detected at `detectedMs`. */
export function expiresAt(type: SignalType, detectedMs: number): string {
  return new Date(detectedMs + (SIGNAL_DEFINITION[type].typical_ttl_seconds ?? 0) * 1000).toISOString();
}

/** market_side_id of a position: its market and side (the same id an arbitrage's side carries). */
export const marketSideId = (p: Pick<PositionDefinition, 'market_id' | 'side_key'>): string => `${p.market_id}:${p.side_key}`;

/** The line as an id (`"-3.5"`), null for a market without lines. */
export const marketVariableId = (p: Pick<PositionDefinition, 'ladder_key' | 'variable'>): string | null => (p.ladder_key === null ? null : formatVariable(p.variable));

/** The position block of a signal, from the catalog's definition and the contest's facts. */
export function signalPosition(p: PositionDefinition, contest: { label: string | null; league_id: string | null }): SignalPosition {
  return {
    position_hash: p.position_hash,
    router_contest_id: p.contest_id,
    router_league_id: contest.league_id,
    router_market_id: p.market_id,
    market_key: p.market_key,
    market_side_id: marketSideId(p),
    market_variable_id: marketVariableId(p),
    participant_id: p.participant_id,
    timeframe_id: p.timeframe,
    title: p.title,
    contest_label: contest.label,
  };
}

/** A signal serialized where it was computed (a compute worker), with what the store indexes it by. */
export interface SerializedSignal {
  dedupe_key: string;
  signal_type: SignalType;
  expires_ms: number;
  json: string;
}

export const serializeSignal = (s: Signal): SerializedSignal => ({ dedupe_key: s.dedupe_key, signal_type: s.signal_type, expires_ms: Date.parse(s.expires_at), json: JSON.stringify(s) });
