/**
 * Venue-native price units ↔ the service's 0-1 probability, and rounding onto a venue's grid.
 * Shared by every adapter and by the order checks (src/domain/order-checks.ts): a venue declares its
 * unit in order_config.price_format.
 */
import type { OrderConfig } from './catalog.js';

export type PriceFormat = OrderConfig['price_format'];

/** Rounds to 6 decimals: the precision every normalized price and USD amount carries. */
export function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Rounds to cents. */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** American odds of a probability: favourites negative (−100p/(1−p)), underdogs positive. */
export function probToAmerican(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`probability out of (0,1): ${p}`);
  return p >= 0.5 ? (-100 * p) / (1 - p) : (100 * (1 - p)) / p;
}

/** Probability of american odds; |odds| < 100 is not a valid american price. */
export function americanToProb(a: number): number {
  if (!Number.isFinite(a) || Math.abs(a) < 100) throw new RangeError(`not american odds: ${a}`);
  return a < 0 ? -a / (-a + 100) : 100 / (a + 100);
}

/** A 0-1 probability in the venue's native unit (unrounded). */
export function toNative(format: PriceFormat, p: number): number {
  switch (format) {
    case 'cents':
      return p * 100;
    case 'probability':
      return p;
    case 'american':
      return probToAmerican(p);
  }
}

/** A native price as a 0-1 probability (rounded to 6 decimals). */
export function fromNative(format: PriceFormat, x: number): number {
  switch (format) {
    case 'cents':
      return round6(x / 100);
    case 'probability':
      return round6(x);
    case 'american':
      return round6(americanToProb(x));
  }
}

const GRID_EPS = 1e-9;

/**
 * Rounds a buyer's limit onto the grid in the buyer's favour (never to a higher probability, so
 * the order never fills above the caller's max_price). Cents/probability floor to the tick;
 * american odds round toward +∞ (−124.7 → −124 is a lower probability; +150.4 → +151 too),
 * skipping the invalid (−100, 100) gap.
 */
export function roundLimitForBuyer(format: PriceFormat, native: number, tick: number): number {
  if (format === 'american') {
    let v = Math.ceil(native / tick - GRID_EPS) * tick;
    if (v > -100 && v < 100) v = native <= -100 ? -100 : 100;
    return v;
  }
  const steps = Math.floor(native / tick + GRID_EPS);
  return onTick(steps, tick);
}

/** Rounds an offer price onto the grid against the buyer (up), as a venue quoting an ask does. */
export function roundAskOnGrid(format: PriceFormat, native: number, tick: number): number {
  if (format === 'american') {
    let v = Math.floor(native / tick + GRID_EPS) * tick;
    if (v > -100 && v < 100) v = -100;
    return v;
  }
  const steps = Math.ceil(native / tick - GRID_EPS);
  return onTick(steps, tick);
}

/** True when a native price sits on the tick grid. */
export function onGrid(native: number, tick: number): boolean {
  const steps = native / tick;
  return Math.abs(steps - Math.round(steps)) < 1e-7;
}

function decimalsOf(x: number): number {
  const s = String(x);
  const i = s.indexOf('.');
  return i < 0 ? 0 : Math.min(12, s.length - i - 1);
}

/** A tick as a whole number over a power of ten, when its decimal text says so exactly. */
interface TickScale {
  /** The power of ten (0: the tick's text is not a plain decimal of fewer than 12 places). */
  scale: number;
  /** tick × scale, rounded: the tick's whole form. */
  whole: number;
}

/** Per tick (a venue has a few; bounded all the same). */
const TICK_SCALES = new Map<number, TickScale>();
const TICK_SCALES_MAX = 1024;

function tickScale(tick: number): TickScale {
  let t = TICK_SCALES.get(tick);
  if (t === undefined) {
    const d = decimalsOf(tick);
    const scale = 10 ** d;
    const whole = Math.round(tick * scale);
    t = !String(tick).includes('e') && d < 12 && Math.abs(tick * scale - whole) < 1e-9 ? { scale, whole } : { scale: 0, whole: 0 };
    if (TICK_SCALES.size >= TICK_SCALES_MAX) TICK_SCALES.clear();
    TICK_SCALES.set(tick, t);
  }
  return t;
}

/**
 * steps × tick as the decimal it names: Number((steps * tick).toFixed(decimals of tick)), the same
 * number, without the text (the simulated venues round every level of every quote through here).
 * Whole numbers divided by a power of ten are correctly rounded, as the text's parse is; ticks
 * whose text is not a plain decimal, and products too large for whole doubles, go through the text.
 */
function onTick(steps: number, tick: number): number {
  const { scale, whole } = tickScale(tick);
  if (scale === 0 || !(Math.abs(steps) < 1e9) || !(Math.abs(steps * whole) < Number.MAX_SAFE_INTEGER)) return Number((steps * tick).toFixed(decimalsOf(tick)));
  // + 0: a zero step reads as 0, never -0, as the text's parse gives.
  return (steps * whole) / scale + 0;
}

/**
 * Whether a native price lies in the venue's [min_price, max_price] band. For american odds the
 * band is read as a probability band (min_price the longest underdog price, max_price the
 * shortest favourite) because the unit itself is not monotonic in probability.
 */
export function inPriceBand(cfg: Pick<OrderConfig, 'price_format' | 'min_price' | 'max_price'>, native: number): boolean {
  if (cfg.price_format === 'american') {
    if (Math.abs(native) < 100) return false;
    const p = americanToProb(native);
    if (cfg.min_price !== null && p < americanToProb(cfg.min_price) - 1e-12) return false;
    if (cfg.max_price !== null && p > americanToProb(cfg.max_price) + 1e-12) return false;
    return true;
  }
  if (cfg.min_price !== null && native < cfg.min_price - GRID_EPS) return false;
  if (cfg.max_price !== null && native > cfg.max_price + GRID_EPS) return false;
  return true;
}
