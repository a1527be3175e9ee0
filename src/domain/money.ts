/**
 * Exact fixed-point arithmetic for order sizes: USD amounts, prices and contract counts as integer
 * millionths (micros) in a bigint. Six decimals is the scale PostgreSQL keeps money in
 * (numeric(24,6)) and the precision every published price carries, so a value that came from a
 * JSON number, a price level or a numeric column converts without loss, and every sum, product
 * and floor an order is booked with is exact. A bigint has no range limit, so a USD 10^12 stake
 * times a price needs no care either.
 *
 * Numbers become micros through their shortest round-trip text (what JSON carried: 0.1 → "0.1"),
 * never through a float multiplication (0.1 * 1e6 is not an integer in binary).
 */

/** An amount in millionths: USD micro-dollars, micro-probability or micro-contracts. */
export type Micros = bigint;

/** One unit (1 USD, a probability of 1, one contract) in micros. */
export const UNIT: Micros = 1_000_000n;

export type Rounding = 'floor' | 'ceil' | 'half';

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

/** n / d (d > 0) rounded as asked; floor and ceil are toward −∞ and +∞, half is half away from zero. */
export function divRound(n: bigint, d: bigint, mode: Rounding): bigint {
  if (d <= 0n) throw new RangeError('divisor must be positive');
  const q = n / d;
  const r = n % d;
  if (r === 0n) return q;
  switch (mode) {
    case 'floor':
      return n < 0n ? q - 1n : q;
    case 'ceil':
      return n < 0n ? q : q + 1n;
    case 'half': {
      const twice = 2n * (r < 0n ? -r : r);
      if (twice < d) return q;
      return n < 0n ? q - 1n : q + 1n;
    }
  }
}

/** A decimal's text (plain or with an exponent) in micros, and whether it needed rounding. */
export function parseMicros(text: string, mode: Rounding = 'floor'): { micros: Micros; exact: boolean } {
  const m = DECIMAL.exec(text.trim());
  if (!m) throw new RangeError(`not a decimal: ${JSON.stringify(text)}`);
  const [, sign, int, frac = '', exp = '0'] = m;
  const digits = BigInt(`${sign}${int}${frac}`);
  const shift = Number(exp) - frac.length + 6;
  if (shift >= 0) return { micros: digits * 10n ** BigInt(shift), exact: true };
  const d = 10n ** BigInt(-shift);
  return { micros: divRound(digits, d, mode), exact: digits % d === 0n };
}

/** A finite number in micros (through its shortest text), rounded as asked. */
export function toMicros(x: number, mode: Rounding = 'floor'): Micros {
  if (!Number.isFinite(x)) throw new RangeError(`not a finite number: ${x}`);
  return parseMicros(String(x), mode).micros;
}

/** Whether a number holds at most six decimals (converts to micros exactly). */
export const isMicroExact = (x: number): boolean => Number.isFinite(x) && parseMicros(String(x)).exact;

/** Micros as decimal text, trailing zeros dropped ("12.5", "-0.000001", "3"). */
export function microsText(m: Micros): string {
  const neg = m < 0n;
  const abs = neg ? -m : m;
  const int = abs / UNIT;
  const frac = (abs % UNIT).toString().padStart(6, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** Micros as a JSON number: the double nearest the exact decimal (what JSON.stringify then prints). */
export const fromMicros = (m: Micros): number => Number(microsText(m));

/** a × b for two micro quantities (e.g. contracts × price = USD), rounded as asked. */
export const mulMicros = (a: Micros, b: Micros, mode: Rounding): Micros => divRound(a * b, UNIT, mode);

/** a ÷ b for two micro quantities (e.g. USD ÷ price = contracts), rounded as asked; b > 0. */
export const divMicros = (a: Micros, b: Micros, mode: Rounding): Micros => divRound(a * UNIT, b, mode);

/** Floors to a whole multiple of `step` (> 0): an amount onto its increment, contracts onto whole ones. */
export const floorTo = (m: Micros, step: Micros): Micros => divRound(m, step, 'floor') * step;

export const minMicros = (a: Micros, b: Micros): Micros => (a < b ? a : b);
export const maxMicros = (a: Micros, b: Micros): Micros => (a > b ? a : b);
