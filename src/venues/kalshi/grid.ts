/**
 * A Kalshi market's price grid and contract rules, and the venue's order_config.
 *
 * Each market states its grid as `price_ranges` (start, end, step in dollars) under a named
 * `price_level_structure` (docs.kalshi.com/getting_started/fixed_point_migration):
 *   linear_cent        0.00–1.00 step 0.01
 *   deci_cent          0.00–1.00 step 0.001
 *   tapered_deci_cent  0.00–0.10 step 0.001, 0.10–0.90 step 0.01, 0.90–1.00 step 0.001
 * Legacy markets carry neither, only `tick_size: 1` (cent): read as linear_cent. A valid price is
 * a multiple of its range's step strictly between 0 and 1 (a contract at $0 or $1 is not a trade).
 *
 * order_config is per venue, not per market (spec): its tick is the coarsest step of the structures
 * above, $0.01, which lies on every one of those grids, so a price on it is valid on any market. The
 * adapter itself rounds each order onto the market's own, possibly finer, grid.
 */
import type { OrderConfig } from '../../domain/catalog.js';
import { UNIT, type Micros } from '../../domain/money.js';
import type { KalshiMarket } from './messages.js';
import { decimalMicros } from './units.js';

export interface GridRange {
  start: Micros;
  end: Micros;
  step: Micros;
}

const CENT_GRID: GridRange[] = [{ start: 0n, end: UNIT, step: 10_000n }];

/** The market's grid (legacy or missing fields → linear cent). Throws malformed on a bad range. */
export function gridOf(m: Pick<KalshiMarket, 'price_ranges'>): GridRange[] {
  const rs = m.price_ranges;
  if (!Array.isArray(rs) || rs.length === 0) return CENT_GRID;
  const out = rs.map((r) => ({
    start: decimalMicros(r?.start, 'price_ranges.start'),
    end: decimalMicros(r?.end, 'price_ranges.end'),
    step: decimalMicros(r?.step, 'price_ranges.step'),
  }));
  for (const r of out) if (r.step <= 0n || r.end <= r.start) return CENT_GRID;
  return out.sort((a, b) => (a.start < b.start ? -1 : 1));
}

function rangeOf(grid: GridRange[], p: Micros): GridRange | null {
  // A price on a boundary belongs to the range it starts (0.10 is on the 0.10–0.90 cent grid).
  for (let i = grid.length - 1; i >= 0; i--) if (p >= grid[i]!.start && p <= grid[i]!.end) return grid[i]!;
  return null;
}

/** Whether `p` (micros) is a price an order may carry on this grid. */
export function onGrid(grid: GridRange[], p: Micros): boolean {
  if (p <= 0n || p >= UNIT) return false;
  const r = rangeOf(grid, p);
  return r !== null && (p - r.start) % r.step === 0n;
}

/**
 * The highest valid price not above `p` (a buyer's limit never rounds up), or null when there is none
 * (p below the smallest valid price).
 */
export function floorOnGrid(grid: GridRange[], p: Micros): Micros | null {
  let x = p >= UNIT ? UNIT - 1n : p;
  while (x > 0n) {
    const r = rangeOf(grid, x);
    if (r === null) return null;
    const down = r.start + ((x - r.start) / r.step) * r.step;
    if (down > 0n && down < UNIT) return down;
    // `down` is the range start (0): nothing valid in this range below p.
    if (r.start === 0n) return null;
    x = r.start - 1n;
  }
  return null;
}

/** The smallest and largest valid prices of a grid. */
export function bandOf(grid: GridRange[]): { min: Micros; max: Micros } {
  const first = grid[0]!;
  const last = grid[grid.length - 1]!;
  const min = first.start + first.step;
  // The largest multiple of the last step below 1.
  const max = last.start + ((UNIT - 1n - last.start) / last.step) * last.step;
  return { min, max };
}

/** Whether orders on this market may be sized in fractions of a contract. The 3.10.0 spec still
 *  accepts whole contracts only on orders, fractional trading or not, so orders stay whole. */
export const WHOLE_CONTRACT_ORDERS = true;

/** The venue price tick of order_config (dollars): valid on every known structure. */
export const VENUE_PRICE_TICK = 0.01;

/**
 * Kalshi's order_config. Prices are submitted as dollars (0-1, the `probability` format) on a grid;
 * orders are whole contracts, the smallest one a single contract at the lowest price ($0.01); there
 * is no per-order USD cap in the published rules (position limits are per member and market), so
 * max_order_amount is null. Every order is a priced limit: a market order is an immediate-or-cancel
 * (or fill-or-kill) limit at the caller's max_price; a limit order rests good-till-cancelled.
 */
export function kalshiOrderConfig(ordersAllowed: boolean): OrderConfig {
  return {
    orders_allowed: ordersAllowed,
    credentials_allowed: true,
    min_order_amount: VENUE_PRICE_TICK,
    max_order_amount: null,
    amount_increment: null,
    whole_contracts: WHOLE_CONTRACT_ORDERS,
    full_fill_always_allowed: false,
    price_submitted: true,
    price_format: 'probability',
    price_tick: VENUE_PRICE_TICK,
    min_price: VENUE_PRICE_TICK,
    max_price: 1 - VENUE_PRICE_TICK,
    cancel_supported: true,
    supported_order_types: ['market', 'limit'],
  };
}

/**
 * One market's order rules as an OrderConfig: its tick is the coarsest step of its own grid (so every
 * multiple of it is valid anywhere on that market: 0.01 on linear and tapered grids, 0.001 on
 * deci_cent) and its band the grid's smallest and largest valid prices.
 */
export function marketOrderConfig(m: Pick<KalshiMarket, 'price_ranges'>, ordersAllowed: boolean): OrderConfig {
  const grid = gridOf(m);
  const coarsest = grid.reduce((s, r) => (r.step > s ? r.step : s), 0n);
  const { min, max } = bandOf(grid);
  const dollars = (x: Micros) => Number(x) / 1e6;
  return {
    ...kalshiOrderConfig(ordersAllowed),
    min_order_amount: dollars(min),
    price_tick: dollars(coarsest),
    min_price: dollars(min),
    max_price: dollars(max),
  };
}

/** A micro price as the fixed-point dollar text Kalshi takes ("0.0200"; 6 places when finer than 4). */
export function dollarsText(p: Micros): string {
  const s = (p < 0n ? -p : p).toString().padStart(7, '0');
  const int = s.slice(0, -6);
  let frac = s.slice(-6);
  frac = frac.endsWith('00') ? frac.slice(0, 4) : frac;
  return `${p < 0n ? '-' : ''}${int}.${frac}`;
}
