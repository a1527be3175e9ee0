/** Builders for compute tests: a quote or position with sensible defaults, overridable per test. */
import type { PositionInput, VenueQuote } from '../../../src/compute/types.js';

export const NOW_MS = Date.parse('2026-03-01T12:00:00.000Z');
export const FRESH_AS_OF = '2026-03-01T11:59:59.000Z';

export function quote(partnerId: string, price: number, available: number, over: Partial<VenueQuote> = {}): VenueQuote {
  return {
    partner_id: partnerId,
    partner_name: partnerId.toUpperCase(),
    liquidity_hash: `${partnerId}:${over.venue_side_key ?? 'home'}-${price}`,
    price,
    available,
    levels: available > 0 ? [{ price, available }] : [],
    fee: { kind: 'none' },
    venue_side_key: 'home',
    source: 'polling',
    as_of: FRESH_AS_OF,
    ts_event: NOW_MS - 5_000,
    real_book: true,
    ...over,
  };
}

export function position(hash: string, quotes: VenueQuote[], over: Partial<PositionInput> = {}): PositionInput {
  return {
    position_hash: hash,
    contest_id: 'ct1',
    title: `title ${hash}`,
    market_id: 'mk1',
    market_key: 'moneyline',
    side_key: 'home',
    variable: 0,
    participant_id: `p-${hash}`,
    participant_name: `Name ${hash}`,
    participant_image_url: null,
    timeframe: 'ft',
    group_key: 'g1',
    ladder_key: null,
    quotes,
    ...over,
  };
}
