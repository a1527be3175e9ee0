/**
 * The end of a contest: settlement on every venue, the emptied books, the final state and the
 * settlement event; then the contest leaves the venues' listings (and, if churned, the model).
 */
import { nameOf, type MarketCore } from './core.js';
import { forgetSettledOrders, settleVenue } from './engine.js';
import type { SimSettleEvent } from './events.js';
import { buildState, computeResults } from './game.js';
import { delist } from './listings.js';
import { stamp } from './pricing.js';
import { emitQuote, publishState } from './publish.js';
import type { ContestRt } from './runtime.js';

/**
 * Settles a contest whose results are known: every venue that takes orders settles them, every
 * listing publishes its emptied book, then the game state and the settlement go out, and only then
 * do the venues delist it (settlement feeds name their instruments).
 */
export function settleInternal(core: MarketCore, c: ContestRt, now: number): SimSettleEvent {
  c.settled = true;
  c.phase = 'final';
  c.results ??= computeResults(c);
  c.stateTs = now;
  const built = buildState(c, now, ((id: string) => nameOf(core, id)));
  c.state = c.manual ? { ...c.state, game_status: 'final', contest_result: built.contest_result, winner_participant_id: built.winner_participant_id } : built;
  for (const v of core.venues.values()) {
    if (v.pers.capabilities.orders.place) {
      settleVenue(core.engine, v, c.p.contest_id, c.results);
      forgetSettledOrders(core.engine, v, c.p.contest_id);
    }
    for (const l of v.listings) {
      if (l.pr.c !== c || l.closed) continue;
      l.closed = true;
      l.levels = [];
      stamp(core, l, now);
      emitQuote(core, l);
    }
  }
  publishState(core, c, now, true);
  const ev: SimSettleEvent = {
    contest_id: c.p.contest_id,
    winner_participant_id: c.winner,
    results: [...c.results].map(([position_hash, result]) => ({ position_hash, result })),
    ts_event: now,
  };
  core.feeds.settlements.deliver(ev, core.feeds.safe);
  // Settlement feeds name the venues' instruments: delist only once they have gone out.
  for (const v of core.venues.values()) delist(v, c);
  forgetChurned(core, c);
  return ev;
}

/** A settled churned contest leaves the model entirely (the world's own contests stay queryable). */
export function forgetChurned(core: MarketCore, c: ContestRt): void {
  if (!c.p.contest_id.startsWith('ct_churn_')) return;
  core.contests.delete(c.p.contest_id);
  core.contestParticipants.delete(c.p.contest_id);
  for (const pr of c.positions) core.byHash.delete(pr.pos.position_hash);
}
