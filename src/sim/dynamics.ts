/**
 * Time in the simulated market: each tick moves contests (the game, the latent prices), opens a
 * churned contest when due, and has every quoting venue go stale or come back, deliver the prints of
 * a situation under way, start episodes (outliers, arbitrages) and situations of its own, reprice
 * the listings due after a game event, reprice at random at its own rate and print random trades.
 * Async fills land whether or not the market is frozen. Every draw comes from the seeded streams,
 * in a fixed order, so the same seed and the same tick times give the same market.
 */
import { bad, currentTime, type MarketCore } from './core.js';
import { deliverPending, matchResting } from './engine.js';
import { refreshEffective, stepContest } from './game.js';
import { openChurnContest } from './churn.js';
import { reprice } from './pricing.js';
import { emitQuote, publishState, publishTrade } from './publish.js';
import type { ContestRt, VenueRt } from './runtime.js';
import { settleInternal } from './settlement.js';
import { deliverScheduled, spontaneousSituations, tradePrice } from './situations.js';

/** Live game state is republished at least this often, even when nothing happened. */
const STATE_REFRESH_MS = 10_000;

/**
 * Advances the world to `nowMs`: contests and latent prices move, venues reprice, trade, go
 * stale or misprice, due async fills land. When frozen only order mechanics (async fills)
 * progress. Times before the last tick are treated as the last tick.
 */
export function advance(core: MarketCore, nowMs: number): void {
  if (!Number.isFinite(nowMs)) throw bad('invalid_time', `tick time must be a number: ${nowMs}`);
  const now = Math.max(nowMs, core.lastNow);
  const dt = now - core.lastNow;
  core.lastNow = now;
  if (!core.frozen && dt > 0) {
    const o = core.churn.opts;
    if (o && now >= core.churn.nextAt) {
      core.churn.nextAt = now + o.every_ms;
      openChurnContest(core, now, o);
    }
    for (const c of core.contests.values()) {
      const before = c.phase;
      const r = stepContest(c, now, dt, core.rng);
      if (!c.settled) refreshEffective(c, now);
      if (r.finalized) {
        settleInternal(core, c, now);
        if (c.parent && c.parent.p.kind === 'outright') {
          const loser = c.winner === c.p.home_id ? c.p.away_id : c.p.home_id;
          if (loser && c.parent.p.entrant_ids.includes(loser) && !c.parent.settled) {
            c.parent.eliminated.add(loser);
            refreshEffective(c.parent, now);
            publishState(core, c.parent, now);
          }
        }
      } else if (r.stateChanged || (c.phase === 'live' && now - c.lastStateEmit >= STATE_REFRESH_MS) || before !== c.phase) {
        publishState(core, c, now);
      }
      // In play the price moves with the clock as well as the score: venues keep repricing,
      // each at its own reaction speed.
      if (!c.settled && (r.stateChanged || c.phase === 'live')) scheduleReaction(core, c, now, !r.stateChanged);
    }
    const dtS = dt / 1000;
    const dtH = dt / 3_600_000;
    for (const v of core.quoting) {
      const d = v.pers.dynamics;
      if (now >= v.staleUntil && d.stale.rate_per_hour > 0 && core.rng.bool(1 - Math.exp(-d.stale.rate_per_hour * dtH))) {
        v.staleUntil = now + core.rng.float(d.stale.min_ms, d.stale.max_ms);
      }
      if (v.scheduled.length > 0) deliverScheduled(core.situations, v, now);
      if (now < v.staleUntil || v.listings.length === 0) continue;
      episodes(core, v, now, dtH);
      spontaneousSituations(core.situations, v, now, dtH, core.srng);
      if (v.due.size > 0) {
        for (const l of [...v.due]) {
          if (l.dueAt > now) continue;
          v.due.delete(l);
          l.dueAt = Infinity;
          if (l.pinned || l.closed) continue;
          reprice(core, l, now);
          matchResting(core.engine, l);
          emitQuote(core, l);
        }
      }
      const n = core.rng.poisson(v.listings.length * d.update_rate * dtS * core.activity);
      for (let j = 0; j < n; j++) updateRandom(core, v, now);
      if (d.trades_per_second > 0) {
        const nt = core.rng.poisson(d.trades_per_second * dtS * core.activity);
        for (let j = 0; j < nt; j++) randomTrade(core, v, now);
      }
    }
  }
  for (const v of core.venues.values()) if (v.pending.size > 0) deliverPending(core.engine, v, now);
}

/** After a game event each venue reprices the contest's listings once it has reacted. */
export function scheduleReaction(core: MarketCore, c: ContestRt, now: number, onlyIdle = false): void {
  for (const pr of c.positions) {
    for (const l of pr.listings) {
      if (l.pinned || l.closed || (onlyIdle && l.dueAt !== Infinity)) continue;
      const at = now + Math.max(500, (l.v.pers.dynamics.lag_ms / 4) * core.rng.float(0.5, 1.5));
      if (at < l.dueAt) {
        l.dueAt = at;
        l.v.due.add(l);
      }
    }
  }
}

function updateRandom(core: MarketCore, v: VenueRt, now: number): boolean {
  const l = v.listings[Math.floor(core.rng.next() * v.listings.length)]!;
  if (l.pinned || l.closed) return false;
  reprice(core, l, now);
  matchResting(core.engine, l);
  emitQuote(core, l);
  return true;
}

function episodes(core: MarketCore, v: VenueRt, now: number, dtH: number): void {
  const d = v.pers.dynamics;
  if (d.outlier && d.outlier.rate_per_hour > 0) {
    const n = core.rng.poisson(d.outlier.rate_per_hour * dtH);
    for (let i = 0; i < n; i++) {
      const l = v.listings[Math.floor(core.rng.next() * v.listings.length)]!;
      if (l.pinned || l.closed) continue;
      const mag = core.rng.float(d.outlier.min_offset, d.outlier.max_offset);
      // Overpriced where there is room (an underpriced outlier would also read as an arbitrage
      // against every other venue); underpriced only near certainty.
      l.outlierOff = l.lag + mag <= 0.98 ? mag : -mag;
      l.outlierUntil = now + core.rng.float(d.outlier.min_ms, d.outlier.max_ms);
      reprice(core, l, now);
      emitQuote(core, l);
    }
  }
  if (d.arb && d.arb.rate_per_hour > 0) {
    const n = core.rng.poisson(d.arb.rate_per_hour * dtH);
    for (let i = 0; i < n; i++) {
      const l = v.listings[Math.floor(core.rng.next() * v.listings.length)]!;
      const edge = core.rng.float(d.arb.min_edge, d.arb.max_edge);
      const dur = core.rng.float(d.arb.min_ms, d.arb.max_ms);
      if (l.pinned || l.closed || !l.pr.complement) continue;
      let other: number | null = null;
      for (const o of l.pr.complement.listings) {
        if (o.v === v || o.closed || !o.v.pers.real_book) continue;
        const top = o.levels[0];
        if (top && top.available > 0 && (other === null || top.price < other)) other = top.price;
      }
      if (other === null) continue;
      // The grid rounds asks up by at most one tick: aim one tick lower so the edge survives it.
      const target = 1 - other - edge - v.pers.partner.order_config.price_tick * (v.pers.wire === 'exchange' ? 0.01 : 1);
      if (target < 0.03) continue;
      l.arbOff = target - l.lag;
      l.arbUntil = now + dur;
      reprice(core, l, now);
      matchResting(core.engine, l);
      emitQuote(core, l);
    }
  }
}

function randomTrade(core: MarketCore, v: VenueRt, now: number): void {
  const l = v.listings[Math.floor(core.rng.next() * v.listings.length)]!;
  const top = l.levels[0];
  // A one-way flow situation owns the listing's tape for its window.
  if (l.closed || !top || now < l.tapeHeldUntil) return;
  const buy = core.rng.bool(0.7);
  const price = tradePrice(l, buy ? 'buy' : 'sell')!;
  let size = Math.exp(Math.log(40) + core.rng.normal());
  let isBlock = false;
  if (core.rng.bool(0.02)) size *= 25;
  if (v.pers.wire === 'exchange' && core.rng.bool(0.01)) {
    size *= 60;
    isBlock = true;
  }
  size = v.pers.wire === 'exchange' ? Math.max(1, Math.round(size)) : Math.max(0.01, Math.round(size * 100) / 100);
  const trader = v.pers.wire === 'book01' ? core.wallets[Math.floor(core.rng.next() * core.wallets.length)]! : null;
  publishTrade(core, v, l, buy ? 'buy' : 'sell', price, size, isBlock, trader, now - v.pers.dynamics.net_delay_ms);
}

/**
 * Produces `n` quote changes at once, as fast as possible (for benchmarks and load): random
 * listings of the quoting venues reprice and publish. Returns how many changes went out
 * (0 while frozen: frozen quotes only change through setQuote).
 */
export function burst(core: MarketCore, n: number): number {
  if (core.frozen || !(n > 0)) return 0;
  const now = currentTime(core);
  const total = core.quoting.reduce((s, v) => s + v.listings.length, 0);
  if (total === 0) return 0;
  let emitted = 0;
  let attempts = 0;
  while (emitted < n && attempts < n * 4) {
    attempts++;
    let k = Math.floor(core.rng.next() * total);
    let v = core.quoting[0]!;
    for (const q of core.quoting) {
      if (k < q.listings.length) {
        v = q;
        break;
      }
      k -= q.listings.length;
    }
    const l = v.listings[k]!;
    if (l.pinned || l.closed) continue;
    reprice(core, l, now);
    matchResting(core.engine, l);
    emitQuote(core, l);
    emitted++;
  }
  return emitted;
}
