import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_QUOTE_AGE_MS, isActionable, isStale } from '../../../src/compute/quotes.js';
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
