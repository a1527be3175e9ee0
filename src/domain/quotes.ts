/** Quote vocabulary shared by the venues, the compute math and the stores. Pure types. */

/**
 * How a venue charges a taker or maker.
 * - `none`: no explicit fee (a sportsbook's vig is inside its price).
 * - `pq`: fee per one-dollar contract = rate · p · (1 − p).
 * - `flat_pct`: percent of the stake; `2` means 2 % (not 0.02).
 * - `unknown`: the venue publishes no fee schedule we trust (unknown is not fee-free).
 */
export type FeeModel =
  | { kind: 'none' }
  | { kind: 'pq'; taker_rate: number; maker_rate: number }
  | { kind: 'flat_pct'; taker_pct: number; maker_pct: number }
  | { kind: 'unknown' };

/** One level of a venue's offers for buying a position: price a buyer pays (0-1) and USD behind it. */
export interface PriceLevel {
  price: number;
  available: number;
}

/** How a quote reached us: a venue push stream or a poll. */
export type QuoteSource = 'streaming' | 'polling';

/** Prices usable at any size, and fees on a canonical USD 100 stake (spec "fee_packet"). */
export interface FeePacket {
  taker_price: number;
  maker_price: number;
  taker_fee: number;
  maker_fee: number;
}

/**
 * What a computation changed in a contest's stored texts since the run `base`, whose snapshot it
 * continued from: the fields of the depth hash ([position_hash, Depth JSON]) and of the snapshot's
 * quotes hash ([position index, its quotes' members], '' when it has none now). What it writes
 * instead of every field, when the stored snapshot is still base's (src/store/redis/hot.ts checks).
 */
export interface TextsSince {
  base: string;
  depth: [string, string][];
  quotes: [string, string][];
}

/**
 * A snapshot text as stored: `rest`, the text with its `quotes` member empty, and per position
 * with visible quotes its members of that object ([position index, text]); the text is rest with
 * the members joined by commas, in position order, inside `"quotes":{}`.
 */
export interface SnapshotParts {
  rest: string;
  quotes: [string, string][];
}

/** The snapshot text of its rest and its positions' quote members (in position order). */
export function snapshotText(rest: string, members: readonly string[]): string {
  const at = rest.indexOf('"quotes":{');
  if (members.length === 0 || at < 0) return rest;
  return rest.slice(0, at + 10) + members.join(',') + rest.slice(at + 10);
}
