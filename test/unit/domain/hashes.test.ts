import { describe, expect, it } from 'vitest';
import { liquidityHash, parsePositionHash, partnerOfLiquidityHash, positionHash } from '../../../src/domain/hashes.js';

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
