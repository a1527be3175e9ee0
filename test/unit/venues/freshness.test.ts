import { describe, expect, it } from 'vitest';
import { QUOTE_RECONFIRM_MS, freshnessByVenue, quoteStaleAfterMs, ruleFreshnessMs } from '../../../src/venues/freshness.js';
import { SIM_PARTNER_IDS, SIM_PERSONALITIES } from '../../../src/sim/index.js';

describe('venue freshness bounds', () => {
  it('every simulated venue with quotes declares the bound of the documented rule (docs/pricing.md, "Freshness")', () => {
    const declared = Object.fromEntries(SIM_PARTNER_IDS.map((id) => [id, SIM_PERSONALITIES[id].capabilities.quotes.freshness_ms]));
    expect(declared).toEqual({ sim_exchange: 30_000, sim_book01: 30_000, sim_sportsbook: 35_000, sim_p2p: 30_000, sim_quotes: 50_000, practice: null });
    for (const id of SIM_PARTNER_IDS) {
      const q = SIM_PERSONALITIES[id].capabilities.quotes;
      if (q.freshness_ms !== null) expect(q.freshness_ms).toBe(ruleFreshnessMs(q.poll_interval_ms));
    }
  });

  it('the rule always leaves room beyond the longest gap between two confirmations', () => {
    for (const poll of [null, 1_000, 3_000, 5_000, 10_000, 60_000]) expect(ruleFreshnessMs(poll)).toBeGreaterThan(QUOTE_RECONFIRM_MS + (poll ?? 0));
  });

  it('stale_after_ms is the confirmation time plus the bound; none without a bound', () => {
    expect(quoteStaleAfterMs(1_000, 30_000)).toBe(31_000);
    expect(quoteStaleAfterMs(1_000, null)).toBeUndefined();
  });

  it('maps each quoting venue to its bound', () => {
    const m = freshnessByVenue(SIM_PARTNER_IDS.map((id) => SIM_PERSONALITIES[id]));
    expect([...m]).toEqual([
      ['sim_exchange', 30_000],
      ['sim_book01', 30_000],
      ['sim_sportsbook', 35_000],
      ['sim_p2p', 30_000],
      ['sim_quotes', 50_000],
    ]);
  });
});
