import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contestOfPositionHash, liquidityHash, parsePositionHash, partnerOfLiquidityHash, positionHash } from '../../../src/domain/hashes.js';

describe('position_hash', () => {
  const key = { contest_id: 'ct1', market_id: 'spread', side_key: 'home', variable: -3.5, participant_id: 'p9', timeframe: 'ft' };
  it('joins six parts in the fixed order', () => {
    expect(positionHash(key)).toBe('ct1:spread:home:-3.5:p9:ft');
  });
  it('round-trips through the parser', () => {
    expect(parsePositionHash(positionHash(key))).toEqual(key);
  });
  it('normalizes -0 and trailing zeros so equal lines give equal hashes', () => {
    expect(positionHash({ ...key, variable: -0 })).toBe(positionHash({ ...key, variable: 0 }));
    expect(positionHash({ ...key, variable: 1.5 })).toBe('ct1:spread:home:1.5:p9:ft');
  });
  it('refuses parts holding the separator', () => {
    expect(() => positionHash({ ...key, contest_id: 'a:b' })).toThrow();
  });
  it('returns null for foreign strings', () => {
    expect(parsePositionHash('a:b:c')).toBeNull();
    expect(parsePositionHash('a:b:c:x:e:f')).toBeNull();
  });
});

describe('contestOfPositionHash', () => {
  it('answers what parsePositionHash answers of the contest, on any text', () => {
    // Texts made of separators, digits, signs and letters, so every way a hash can be malformed comes up.
    const text = fc.stringMatching(/^[:0-9a-z.eE+\- ]{0,24}$/);
    const hashLike = fc.array(fc.oneof(fc.constantFrom('', '1', '-3.5', 'x', 'NaN', 'Infinity', ' ', '1e3'), text), { minLength: 0, maxLength: 8 }).map((parts) => parts.join(':'));
    fc.assert(
      fc.property(fc.oneof(text, hashLike), (h) => {
        expect(contestOfPositionHash(h)).toBe(parsePositionHash(h)?.contest_id ?? null);
      }),
      { numRuns: 5000 },
    );
  });
  it('names the contest of a minted hash and refuses a seventh part or an empty one', () => {
    const h = positionHash({ contest_id: 'ct_1', market_id: 'ml', side_key: 'home', variable: 0, participant_id: 'p', timeframe: 'ft' });
    expect(contestOfPositionHash(h)).toBe('ct_1');
    expect(contestOfPositionHash(`${h}:x`)).toBeNull();
    expect(contestOfPositionHash(h.replace(':ml:', '::'))).toBeNull();
    expect(contestOfPositionHash(h.replace(':0:', ':zero:'))).toBeNull();
  });
});

describe('liquidity_hash', () => {
  it('names the venue first', () => {
    const h = liquidityHash('sim_exchange', 'ct1:spread:home:-3.5:p9:ft');
    expect(partnerOfLiquidityHash(h)).toBe('sim_exchange');
  });
  it('rejects malformed hashes', () => {
    expect(partnerOfLiquidityHash(':x')).toBeNull();
    expect(partnerOfLiquidityHash('abc')).toBeNull();
  });
});
