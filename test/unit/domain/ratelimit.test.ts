import { describe, expect, it } from 'vitest';
import { retryAfterSeconds, windowsAt } from '../../../src/domain/ratelimit.js';

describe('fixed windows', () => {
  it('align to the UTC minute and UTC midnight', () => {
    const w = windowsAt(Date.parse('2026-11-20T23:59:59.250Z'));
    expect(w.minuteResetSec).toBe(Date.parse('2026-11-21T00:00:00Z') / 1000);
    expect(w.dayResetSec).toBe(Date.parse('2026-11-21T00:00:00Z') / 1000);
    expect(w.minuteTtlMs).toBe(750);
    expect(w.dayTtlMs).toBe(750);
  });
  it('a new window starts exactly at the boundary', () => {
    const a = windowsAt(Date.parse('2026-11-20T10:00:59.999Z'));
    const b = windowsAt(Date.parse('2026-11-20T10:01:00.000Z'));
    expect(b.minuteIndex).toBe(a.minuteIndex + 1);
    expect(b.minuteTtlMs).toBe(60_000);
    expect(b.dayIndex).toBe(a.dayIndex);
  });
  it('retry-after is whole seconds, at least 1', () => {
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
  });
});
