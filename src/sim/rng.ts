/**
 * Seeded randomness for the simulator. Everything random in the sim comes from here, never from
 * Math.random, so one seed gives one world and one sequence of quotes.
 */

import { hashSeed, mulberry32 } from '../domain/random.js';

export { hashSeed, mulberry32 };

export class Rng {
  private readonly next01: () => number;
  private spare: number | null = null;

  constructor(readonly seed: number) {
    this.next01 = mulberry32(seed);
  }

  /** An independent stream for a named purpose (same seed + label → same stream). */
  fork(label: string): Rng {
    return new Rng(hashSeed(this.seed, label));
  }

  /** [0, 1) */
  next(): number {
    return this.next01();
  }

  /** [lo, hi) */
  float(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next01();
  }

  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next01() * (hi - lo + 1));
  }

  bool(p: number): boolean {
    return this.next01() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from empty list');
    return items[Math.floor(this.next01() * items.length)]!;
  }

  /** Fisher-Yates on a copy. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next01() * (i + 1));
      const t = out[i]!;
      out[i] = out[j]!;
      out[j] = t;
    }
    return out;
  }

  /** Standard normal (Box-Muller, the second value kept for the next call). */
  normal(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = this.next01();
    const v = this.next01();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Poisson count (Knuth for small means, rounded normal beyond). */
  poisson(lambda: number): number {
    if (!(lambda > 0)) return 0;
    if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * this.normal()));
    const l = Math.exp(-lambda);
    let k = 0;
    let p = 1;
    do {
      k++;
      p *= this.next01();
    } while (p > l);
    return k - 1;
  }
}

/** Standard normal CDF (Abramowitz-Stegun 7.1.26 via erf; absolute error < 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + y) : 0.5 * (1 - y);
}
