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
