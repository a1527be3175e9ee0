import { describe, expect, it } from 'vitest';
import { Rng, hashSeed, mulberry32, normalCdf } from '../../../../src/sim/rng.js';

describe('seeded randomness', () => {
  it('mulberry32 is deterministic per seed and differs across seeds', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const c = mulberry32(8);
    const xa = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(xa);
    expect(Array.from({ length: 5 }, c)).not.toEqual(xa);
    for (const x of xa) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });

  it('forks are independent streams named by label', () => {
    const r = new Rng(1);
    expect(r.fork('x').next()).toBe(new Rng(1).fork('x').next());
    expect(r.fork('x').next()).not.toBe(r.fork('y').next());
    expect(hashSeed(1, 'a')).not.toBe(hashSeed(2, 'a'));
  });

  it('draws have the right shape', () => {
    const r = new Rng(123);
    const n = 20_000;
    let sum = 0;
    let sq = 0;
    for (let i = 0; i < n; i++) {
      const z = r.normal();
      sum += z;
      sq += z * z;
    }
    expect(Math.abs(sum / n)).toBeLessThan(0.03);
    expect(Math.abs(sq / n - 1)).toBeLessThan(0.05);
    let ps = 0;
    for (let i = 0; i < 5000; i++) ps += r.poisson(3);
    expect(ps / 5000).toBeGreaterThan(2.85);
    expect(ps / 5000).toBeLessThan(3.15);
    for (let i = 0; i < 1000; i++) {
      const k = r.int(2, 4);
      expect([2, 3, 4]).toContain(k);
    }
    expect(r.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(() => r.pick([])).toThrow();
  });

  it('normalCdf matches known values', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-1)).toBeCloseTo(0.158655, 6);
  });
});
