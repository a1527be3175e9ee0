import { describe, expect, it } from 'vitest';
import { canonicalEntitlement, keyEntitlements, missingEntitlements, PLAN_RATE_LIMITS } from '../../../src/domain/plans.js';

describe('plans', () => {
  it('rate limits are the spec table', () => {
    expect(PLAN_RATE_LIMITS).toEqual({
      free: { perMinute: 60, perDay: 10_000 },
      pro: { perMinute: 300, perDay: 50_000 },
      scale: { perMinute: 1_000, perDay: 500_000 },
      organization: { perMinute: 600, perDay: 200_000 },
      enterprise: { perMinute: 1_200, perDay: 2_000_000 },
    });
  });
  it('ticks need scale; connect needs organization', () => {
    expect(keyEntitlements('pro', 'data')).not.toContain('stream:ticks');
    expect(keyEntitlements('scale', 'data')).toContain('stream:ticks');
    expect(keyEntitlements('scale', 'data')).not.toContain('connect:trade');
    expect(keyEntitlements('organization', 'data')).toContain('connect:trade');
  });
  it('the two spellings of a scope are one entitlement', () => {
    expect(canonicalEntitlement('price_history')).toBe('pricing:history');
    expect(canonicalEntitlement('account_read')).toBe('account:read');
    expect(missingEntitlements(new Set(['pricing:history']), ['price_history'])).toEqual([]);
  });
});
