/** Shared helpers for the simulator tests (not a test file). */
import { SimMarket, SIM_PARTNER_IDS, type SimPartnerId } from '../../../../src/sim/index.js';

/** A fixed "now" so catalogs and quotes are reproducible. */
export const NOW = Date.UTC(2026, 0, 10, 18, 0, 0);

export function newMarket(seed = 42, now = NOW): SimMarket {
  return new SimMarket({ seed, now });
}

/** A clock the adapters stamp ts_init with; advance() also ticks the market. */
export function manualClock(market: SimMarket): { now: () => number; advance: (ms: number) => void } {
  let t = market.nowMs();
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
      market.tick(t);
    },
  };
}

export function phaseOf(market: SimMarket, contestId: string): string {
  return market.gameState(contestId)!.state.game_status;
}

/**
 * A position of a scheduled contest that `partnerId` lists with a book priced between 0.2 and
 * 0.8 (for the practice book: one some real venue prices).
 */
export function pickPosition(market: SimMarket, partnerId: SimPartnerId, marketKey = 'moneyline'): string {
  for (const p of market.catalog.positions) {
    if (p.market_key !== marketKey || phaseOf(market, p.contest_id) !== 'scheduled') continue;
    const venues = partnerId === 'practice' ? SIM_PARTNER_IDS.filter((v) => v !== 'practice') : [partnerId];
    for (const v of venues) {
      const inst = market.instrumentForPosition(v, p.position_hash);
      if (!inst) continue;
      const top = market.book(v, inst.instrument_id)!.levels[0];
      if (top && top.price > 0.2 && top.price < 0.8 && top.available >= 5) return p.position_hash;
    }
  }
  throw new Error(`no suitable ${marketKey} position on ${partnerId}`);
}

export function contestOf(market: SimMarket, positionHash: string): string {
  return market.catalog.positions.find((p) => p.position_hash === positionHash)!.contest_id;
}

export function positionOf(market: SimMarket, positionHash: string) {
  return market.catalog.positions.find((p) => p.position_hash === positionHash)!;
}

/** The other side of a two-way group. */
export function complementOf(market: SimMarket, positionHash: string): string {
  const p = positionOf(market, positionHash);
  return market.catalog.positions.find((x) => x.group_key === p.group_key && x.position_hash !== positionHash)!.position_hash;
}
