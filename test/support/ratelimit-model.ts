/**
 * The rate-limit rule as one request at a time against two counters, written the way the original
 * per-request script did it (count, then undo a refusal), independently of countInOrder. Tests use it
 * as the reference the batched gate must match.
 */
import type { CountedRequest, CountVerdict } from '../../src/domain/ratelimit.js';
import { mulberry32 } from '../../src/domain/random.js';

export function referenceCounts(minuteStart: number, dayStart: number, requests: readonly CountedRequest[]): { verdicts: CountVerdict[]; minute: number; day: number } {
  let m = minuteStart;
  let d = dayStart;
  const verdicts = requests.map((r): CountVerdict => {
    m += 1;
    if (m > r.rpm) {
      m -= 1;
      return { kind: 'minute_exceeded', minuteCount: m, dayCount: d };
    }
    if (r.dayExempt) return { kind: 'allowed', minuteCount: m, dayCount: d };
    d += 1;
    if (d > r.rpd) {
      d -= 1;
      m -= 1;
      return { kind: 'day_exceeded', minuteCount: m, dayCount: d };
    }
    return { kind: 'allowed', minuteCount: m, dayCount: d };
  });
  return { verdicts, minute: m, day: d };
}

/** Requests in runs (as one key's burst arrives) with mixed limits and exemptions. */
export function randomRequests(seed: number, n: number): CountedRequest[] {
  const rnd = mulberry32(seed);
  const out: CountedRequest[] = [];
  while (out.length < n) {
    const r = { rpm: 1 + Math.floor(rnd() * 40), rpd: 1 + Math.floor(rnd() * 40), dayExempt: rnd() < 0.3 };
    for (let run = 1 + Math.floor(rnd() * 6); run > 0 && out.length < n; run--) out.push(r);
  }
  return out;
}
