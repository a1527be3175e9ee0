/**
 * Kalshi's trading fees (Kalshi fee schedule, kalshi.com/docs/kalshi-fee-schedule.pdf, and
 * docs.kalshi.com/getting_started/fee_rounding):
 *
 *   taker fee = 0.07   × C × P × (1 − P)     C contracts, P the price paid in dollars
 *   maker fee = 0.0175 × C × P × (1 − P)     only on series whose fee_type is quadratic_with_maker_fees
 *
 * each scaled by the series' `fee_multiplier` (1 unless the series says otherwise). `fee_type: flat`
 * series follow a separate table we do not have: their fees are `unknown`, never guessed.
 *
 * Rounding: each fill's trade fee is rounded up to $0.0001 (a centicent); a non-direct member's
 * balance moves in whole cents, so the order's fee is the sum of its fills' trade fees rounded up to
 * the cent (the venue's per-order fee accumulator refunds what per-fill rounding over-charged, so the
 * order converges to one rounding, not one per fill). A single fill is therefore simply
 * ceil_to_cent(0.07 × C × P × (1 − P)): 100 contracts at $0.50 pay $1.75; 1 contract at $0.50 pays
 * $0.02.
 *
 * All arithmetic is exact (bigint micros); floats only appear in the size-free FeeModel a quote carries.
 */
import { UNIT, divRound, parseMicros, type Micros } from '../../domain/money.js';
import type { FeeModel } from '../types.js';

export type KalshiFeeRole = 'taker' | 'maker';

export interface KalshiFeeSchedule {
  fee_type: 'quadratic' | 'quadratic_with_maker_fees' | 'flat';
  fee_multiplier: number;
}

/** The General Trading Fees Table with no maker fees: what a series without its own record pays. */
export const DEFAULT_FEE_SCHEDULE: KalshiFeeSchedule = { fee_type: 'quadratic', fee_multiplier: 1 };

/** Rates as exact fractions: 0.07 = 7/100, 0.0175 = 175/10000. */
const RATE = { taker: { num: 7n, den: 100n }, maker: { num: 175n, den: 10_000n } } as const;
export const TAKER_RATE = 0.07;
export const MAKER_RATE = 0.0175;

const CENTICENT: Micros = 100n; // $0.0001 in micro-dollars
const CENT: Micros = 10_000n; // $0.01

/** A series record's fee fields → a schedule (unknown fee types read as flat: fees unknown). */
export function feeScheduleOf(series: { fee_type?: string; fee_multiplier?: number } | null | undefined): KalshiFeeSchedule {
  if (!series || series.fee_type === undefined) return DEFAULT_FEE_SCHEDULE;
  const m = series.fee_multiplier;
  const fee_multiplier = typeof m === 'number' && Number.isFinite(m) && m >= 0 ? m : 1;
  const t = series.fee_type;
  return { fee_type: t === 'quadratic' || t === 'quadratic_with_maker_fees' ? t : 'flat', fee_multiplier };
}

/** The size-free fee model a quote carries (feePacket in src/domain/fees.ts reads it). */
export function feeModelOf(s: KalshiFeeSchedule): FeeModel {
  if (s.fee_type === 'flat') return { kind: 'unknown' };
  const m = s.fee_multiplier;
  return {
    kind: 'pq',
    taker_rate: Number((TAKER_RATE * m).toFixed(8)),
    maker_rate: s.fee_type === 'quadratic_with_maker_fees' ? Number((MAKER_RATE * m).toFixed(8)) : 0,
  };
}

/**
 * One fill's trade fee in micro-dollars, rounded up to the centicent; null when the schedule's fees
 * are unknown (flat). `price` and `count` are micros.
 */
export function tradeFeeMicros(s: KalshiFeeSchedule, role: KalshiFeeRole, price: Micros, count: Micros): Micros | null {
  if (s.fee_type === 'flat') return null;
  if (role === 'maker' && s.fee_type !== 'quadratic_with_maker_fees') return 0n;
  const mult = parseMicros(String(s.fee_multiplier), 'ceil').micros;
  const r = RATE[role];
  // fee (micro-dollars) = r · M · C · P · (1 − P) · 1e6 with M, C, P given in micros:
  //   r.num · m · c · p · (UNIT − p) / (r.den · UNIT^3)
  const n = r.num * mult * count * price * (UNIT - price);
  const d = r.den * UNIT * UNIT * UNIT;
  return divRound(n, d * CENTICENT, 'ceil') * CENTICENT;
}

/** The fee an order pays for its fills, in micro-dollars, rounded up to the cent; null when unknown. */
export function orderFeeMicros(s: KalshiFeeSchedule, fills: readonly { role: KalshiFeeRole; price: Micros; count: Micros }[]): Micros | null {
  let sum = 0n;
  for (const f of fills) {
    const fee = tradeFeeMicros(s, f.role, f.price, f.count);
    if (fee === null) return null;
    sum += fee;
  }
  return divRound(sum, CENT, 'ceil') * CENT;
}
