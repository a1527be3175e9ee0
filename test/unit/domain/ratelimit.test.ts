import { describe, expect, it } from 'vitest';
import { countInOrder, retryAfterSeconds, windowsAt } from '../../../src/domain/ratelimit.js';
import { randomRequests, referenceCounts } from '../../support/ratelimit-model.js';

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

describe('countInOrder (the batched gate replays it)', () => {
  it('matches counting one request at a time on 500 random sequences', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const reqs = randomRequests(seed, 1 + (seed % 60));
      const m0 = seed % 7 === 0 ? 45 : seed % 30;
      const d0 = seed % 11 === 0 ? 45 : (seed * 7) % 30;
      const ref = referenceCounts(m0, d0, reqs);
      const got = countInOrder(m0, d0, reqs);
      expect(got, `seed ${seed}`).toEqual(ref.verdicts);
    }
  });
  it('refusals take no budget: a later request with a wider limit is still admitted', () => {
    const v = countInOrder(2, 0, [
      { rpm: 2, rpd: 100, dayExempt: false },
      { rpm: 3, rpd: 100, dayExempt: false },
    ]);
    expect(v).toEqual([
      { kind: 'minute_exceeded', minuteCount: 2, dayCount: 0 },
      { kind: 'allowed', minuteCount: 3, dayCount: 1 },
    ]);
  });
  it('checks the minute window first, and a day-exempt request ignores a spent day', () => {
    const spent = { rpm: 1, rpd: 5, dayExempt: false };
    expect(countInOrder(1, 5, [spent])[0]!.kind).toBe('minute_exceeded');
    expect(countInOrder(0, 5, [spent])[0]).toEqual({ kind: 'day_exceeded', minuteCount: 0, dayCount: 5 });
    expect(countInOrder(0, 5, [{ ...spent, dayExempt: true }])[0]).toEqual({ kind: 'allowed', minuteCount: 1, dayCount: 5 });
  });
});
