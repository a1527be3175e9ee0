import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_QUOTE_AGE_MS, isActionable, isStale, staleInstant } from '../../../src/compute/quotes.js';
import { NOW_MS, quote } from './helpers.js';

describe('isStale', () => {
  const policy = DEFAULT_MAX_QUOTE_AGE_MS; // polling 60 s, streaming 120 s

  it('polling quotes go stale after 60 s, streaming after 120 s', () => {
    expect(isStale(quote('a', 0.5, 10, { as_of: '2026-03-01T11:59:00.000Z' }), NOW_MS, policy)).toBe(false); // exactly 60 s
    expect(isStale(quote('a', 0.5, 10, { as_of: '2026-03-01T11:58:59.999Z' }), NOW_MS, policy)).toBe(true);
    expect(isStale(quote('a', 0.5, 10, { source: 'streaming', as_of: '2026-03-01T11:58:30.000Z' }), NOW_MS, policy)).toBe(false);
    expect(isStale(quote('a', 0.5, 10, { source: 'streaming', as_of: '2026-03-01T11:57:59.000Z' }), NOW_MS, policy)).toBe(true);
  });

  it('reads non-canonical ISO forms by parsing them', () => {
    expect(isStale(quote('a', 0.5, 10, { as_of: '2026-03-01T13:59:30+02:00' }), NOW_MS, policy)).toBe(false); // 30 s old
    expect(isStale(quote('a', 0.5, 10, { as_of: '2026-03-01T13:58:00+02:00' }), NOW_MS, policy)).toBe(true); // 120 s old
    expect(isStale(quote('a', 0.5, 10, { as_of: '2026-03-01T11:58:00Z' }), NOW_MS, policy)).toBe(true);
  });

  it('honours the ingest flag', () => {
    expect(isStale(quote('a', 0.5, 10, { stale: true }), NOW_MS, policy)).toBe(true);
    expect(isStale(quote('a', 0.5, 10, { stale: true, stale_after_ms: NOW_MS + 60_000 }), NOW_MS, policy)).toBe(true);
  });

  it('judges a quote with its venue bound by stale_after_ms alone: stale strictly after it', () => {
    expect(isStale(quote('a', 0.5, 10, { stale_after_ms: NOW_MS }), NOW_MS, policy)).toBe(false);
    expect(isStale(quote('a', 0.5, 10, { stale_after_ms: NOW_MS - 1 }), NOW_MS, policy)).toBe(true);
    // The venue's bound replaces the default age policy both ways: a 90 s old polled quote is
    // fresh under a 100 s bound, a 1 s old one stale once its bound has passed.
    expect(isStale(quote('a', 0.5, 10, { as_of: '2026-03-01T11:58:30.000Z', stale_after_ms: NOW_MS + 10_000 }), NOW_MS, policy)).toBe(false);
    expect(isStale(quote('a', 0.5, 10, { as_of: '2026-03-01T11:59:59.000Z', stale_after_ms: NOW_MS - 500 }), NOW_MS, policy)).toBe(true);
  });
});

describe('isActionable', () => {
  it('needs a price in (0, 1), USD 1 and freshness', () => {
    expect(isActionable(0.5, 1, false)).toBe(true);
    expect(isActionable(0.5, 0.99, false)).toBe(false);
    expect(isActionable(0.5, 1, true)).toBe(false);
    expect(isActionable(0, 100, false)).toBe(false);
    expect(isActionable(1, 100, false)).toBe(false);
  });
});

describe('staleInstant', () => {
  const policy = DEFAULT_MAX_QUOTE_AGE_MS;
  // Canonical, non-canonical, lenient (Feb 30, hour 24), unparseable and out-of-range as_of values around NOW_MS.
  const asOf = fc.oneof(
    fc.integer({ min: -400_000, max: 400_000 }).map((d) => new Date(NOW_MS + d).toISOString()),
    fc.integer({ min: -400_000, max: 400_000 }).map((d) => new Date(NOW_MS + d).toISOString().replace('.000Z', 'Z').replace(/\.(\d{3})Z$/, 'Z')),
    fc.constantFrom('2026-02-30T12:00:00.000Z', '2026-03-01T24:00:00.000Z', '2026-13-01T00:00:00.000Z', 'garbage', '', '+275760-09-13T00:00:00.000Z', '2026-03-01T13:59:30+02:00'),
  );
  const q = fc.record({
    as_of: asOf,
    source: fc.constantFrom('streaming' as const, 'polling' as const),
    stale: fc.constantFrom(undefined, true, false),
    stale_after_ms: fc.option(fc.oneof(fc.integer({ min: NOW_MS - 400_000, max: NOW_MS + 400_000 }), fc.constant(Number.NaN)), { nil: undefined }),
  });

  it('is stale at a clock exactly when the clock is past its instant (or, when NaN, says nothing)', () => {
    fc.assert(
      fc.property(q, fc.array(fc.integer({ min: -500_000, max: 500_000 }), { minLength: 1, maxLength: 5 }), (over, offsets) => {
        const quoteNow = quote('a', 0.5, 10, over.stale_after_ms === undefined ? { ...over, stale_after_ms: undefined } : over);
        const t = staleInstant(quoteNow, policy);
        if (Number.isNaN(t)) return;
        for (const d of offsets) expect(NOW_MS + d > t).toBe(isStale(quoteNow, NOW_MS + d, policy));
      }),
      { numRuns: 2_000 },
    );
  });

  it('is NaN for an as_of that only looks canonical, so a caller asks isStaleAt', () => {
    expect(staleInstant(quote('a', 0.5, 10, { as_of: '2026-02-30T12:00:00.000Z' }), policy)).toBeNaN();
    expect(staleInstant(quote('a', 0.5, 10, { as_of: '2026-03-01T11:59:00.000Z' }), policy)).toBe(NOW_MS);
    expect(staleInstant(quote('a', 0.5, 10, { stale: true }), policy)).toBe(Number.NEGATIVE_INFINITY);
    expect(staleInstant(quote('a', 0.5, 10, { as_of: 'garbage' }), policy)).toBe(Number.POSITIVE_INFINITY);
  });
});
