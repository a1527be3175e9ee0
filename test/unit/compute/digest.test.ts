import { describe, expect, it } from 'vitest';
import { liquidityDigest } from '../../../src/compute/digest.js';

const answer = (asOf: string, price: number) => JSON.stringify([{ position_hash: 'p', partner_liquidities: [{ price, as_of: asOf, is_stale: false }] }]);

describe('liquidityDigest', () => {
  it('ignores as_of values and nothing else', () => {
    const a = liquidityDigest(answer('2026-03-01T11:59:59.000Z', 0.5));
    expect(liquidityDigest(answer('2026-03-01T12:00:19.000Z', 0.5))).toBe(a);
    expect(liquidityDigest(answer('2026-03-01T11:59:59.000Z', 0.51))).not.toBe(a);
    expect(liquidityDigest(answer('2026-03-01T11:59:59.000Z', 0.5).replace('"is_stale":false', '"is_stale":true'))).not.toBe(a);
  });

  it('is a safe integer, and differs for texts that differ only past an as_of', () => {
    const d = liquidityDigest('[]');
    expect(Number.isSafeInteger(d)).toBe(true);
    expect(liquidityDigest('{"as_of":"x","a":1}')).not.toBe(liquidityDigest('{"as_of":"x","a":2}'));
    expect(liquidityDigest('{"as_of":"x')).toBe(liquidityDigest('{'));
  });
});
