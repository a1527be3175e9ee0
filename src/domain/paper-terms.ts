/**
 * The stake and contracts of a practice leg at its price, exactly, in decimal: what the wallet is
 * debited and what the order books. Computed here rather than asked of PostgreSQL (it was one round
 * trip of every practice buy for two multiplications), with the same results and the same text as
 * the numeric expressions it replaces: round(shares × price, 6) half away from zero, and the amount
 * ÷ price cut to 6 decimals, both printed with six decimals; an amount or shares given as is.
 * The quotient is cut from the exact one (numeric division would round at its own scale first, so
 * a quotient whose digits past the sixth are all nines for a dozen places could round up there).
 */

export interface PaperSize {
  /** Exact decimal text of the stake the leg asked for, or null when it asked for shares. */
  amount: string | null;
  /** Exact decimal text of the contracts the leg asked for, or null when it asked for an amount. */
  shares: string | null;
  /** The fill price: the quote's number as its shortest decimal text. */
  price: string;
}

export interface PaperTerms {
  /** What the wallet is debited: the amount asked, or shares × price rounded half up to 6 decimals. */
  stake: string;
  /** The contracts booked: the shares asked, or amount ÷ price cut to 6 decimals (never more than the stake buys). */
  shares: string;
  /** false when the stake rounds to nothing (a few shares at a low price). */
  positive: boolean;
}

/** A non-negative decimal's exact value: digits × 10^-scale. */
interface Exact {
  digits: bigint;
  scale: number;
}

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

function exact(text: string): Exact {
  const m = DECIMAL.exec(text);
  if (!m) throw new RangeError(`not a non-negative decimal: ${JSON.stringify(text)}`);
  const [, int, frac = '', exp = '0'] = m;
  const scale = frac.length - Number(exp);
  const digits = BigInt(`${int}${frac}`);
  return scale >= 0 ? { digits, scale } : { digits: digits * 10n ** BigInt(-scale), scale: 0 };
}

/** Plain text of a value given as is (how numeric prints its input: no exponent, no leading zeros, its own decimals). */
function plain(text: string): string {
  const { digits, scale } = exact(text);
  const s = digits.toString().padStart(scale + 1, '0');
  return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
}

/** Millionths as text with all six decimals ("1.500000"). */
function sixDecimals(micros: bigint): string {
  const s = micros.toString().padStart(7, '0');
  return `${s.slice(0, -6)}.${s.slice(-6)}`;
}

/** The terms of one leg (price > 0). */
export function paperTerms(leg: PaperSize): PaperTerms {
  const p = exact(leg.price);
  if (p.digits === 0n) throw new RangeError('a price of zero has no terms');
  if (leg.amount !== null) {
    const a = exact(leg.amount);
    // a / p × 10^6, floored: (a.digits / 10^a.scale) / (p.digits / 10^p.scale) × 10^6.
    const shares = (a.digits * 10n ** BigInt(p.scale + 6)) / (p.digits * 10n ** BigInt(a.scale));
    return { stake: plain(leg.amount), shares: sixDecimals(shares), positive: a.digits > 0n };
  }
  if (leg.shares === null) throw new RangeError('a leg asks for an amount or for shares');
  const s = exact(leg.shares);
  // s × p × 10^6, rounded half away from zero (both are non-negative).
  const num = s.digits * p.digits * 1_000_000n;
  const den = 10n ** BigInt(s.scale + p.scale);
  const stake = (num + den / 2n) / den;
  return { stake: sixDecimals(stake), shares: plain(leg.shares), positive: stake > 0n };
}
