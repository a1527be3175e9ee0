/**
 * Fixed, clock-aligned rate-limit windows (spec "Limits"): the minute window starts on the UTC
 * minute, the day window at UTC midnight. No bursting across a boundary.
 */
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export interface Windows {
  minuteIndex: number;
  dayIndex: number;
  /** Epoch seconds at which each window resets. */
  minuteResetSec: number;
  dayResetSec: number;
  minuteTtlMs: number;
  dayTtlMs: number;
}

export function windowsAt(nowMs: number): Windows {
  const minuteIndex = Math.floor(nowMs / MINUTE_MS);
  const dayIndex = Math.floor(nowMs / DAY_MS);
  const minuteReset = (minuteIndex + 1) * MINUTE_MS;
  const dayReset = (dayIndex + 1) * DAY_MS;
  return {
    minuteIndex,
    dayIndex,
    minuteResetSec: minuteReset / 1000,
    dayResetSec: dayReset / 1000,
    minuteTtlMs: minuteReset - nowMs,
    dayTtlMs: dayReset - nowMs,
  };
}

/** Whole seconds to wait, never 0 (a caller told to retry in 0 s would spin). */
export const retryAfterSeconds = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs / 1000));

/** One request as the counting script sees it: its limits and whether the day window skips it. */
export interface CountedRequest {
  rpm: number;
  rpd: number;
  dayExempt: boolean;
}

export interface CountVerdict {
  kind: 'allowed' | 'minute_exceeded' | 'day_exceeded';
  /** The window counts after this request (a refused request leaves them as they were). */
  minuteCount: number;
  dayCount: number;
}

/**
 * Counts requests in arrival order from the window counts before them, exactly as if each request ran
 * alone: the minute window is checked first, a refused request takes no budget, a day-exempt request
 * counts against the minute window only. The Redis script (src/store/redis/gate.ts) runs the same
 * loop to move its counters; the caller replays it here from the starting counts the script returns.
 */
export function countInOrder(minuteStart: number, dayStart: number, requests: readonly CountedRequest[]): CountVerdict[] {
  let m = minuteStart;
  let d = dayStart;
  const out: CountVerdict[] = new Array(requests.length);
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]!;
    let kind: CountVerdict['kind'] = 'allowed';
    if (m >= r.rpm) kind = 'minute_exceeded';
    else if (!r.dayExempt && d >= r.rpd) kind = 'day_exceeded';
    else {
      m++;
      if (!r.dayExempt) d++;
    }
    out[i] = { kind, minuteCount: m, dayCount: d };
  }
  return out;
}
