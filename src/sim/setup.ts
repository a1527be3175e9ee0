/**
 * Lays the simulated world out at `now`: each contest's runtime state (history played out from its
 * own random stream, so it does not shift the dynamics' sequence), positions and their complements,
 * the venues, which contests a venue lists the wrong way round, and every venue's first books.
 */
import type { Contest } from '../domain/catalog.js';
import type { GameState } from '../venues/types.js';
import type { SimContestParams } from './catalog.js';
import { nameOf, type MarketCore } from './core.js';
import { buildState, computeResults, finalize, goLive, newEff, refreshEffective } from './game.js';
import { createListing } from './listings.js';
import { SIM_PARTNER_IDS, SIM_PERSONALITIES } from './personalities.js';
import { reprice } from './pricing.js';
import { Rng, hashSeed } from './rng.js';
import type { ContestRt, PosRt, VenueRt } from './runtime.js';

export function initWorld(core: MarketCore, now: number): void {
  const cat = core.catalog;
  for (const p of cat.participants) core.participantNames.set(p.id, p.name);
  for (const cp of cat.contest_participants) {
    let s = core.contestParticipants.get(cp.contest_id);
    if (!s) core.contestParticipants.set(cp.contest_id, (s = new Set()));
    s.add(cp.participant_id);
  }
  const contestById = new Map(cat.contests.map((c) => [c.id, c]));
  for (const p of core.world.params) {
    const c = newContestRt(core, p, contestById.get(p.contest_id)!, now);
    core.contests.set(p.contest_id, c);
  }
  for (const c of core.contests.values()) {
    if (c.p.parent_contest_id) {
      const parent = core.contests.get(c.p.parent_contest_id);
      if (parent) {
        c.parent = parent;
        parent.children.push(c);
      }
    }
  }
  cat.positions.forEach((pos, i) => {
    const c = core.contests.get(pos.contest_id)!;
    const pr: PosRt = { i, pos, meta: core.world.meta[i]!, c, complement: null, listings: [], shift: 0, shiftAt: now };
    core.positions.push(pr);
    core.positionSeq = i;
    core.byHash.set(pos.position_hash, pr);
    c.positions.push(pr);
  });
  const groups = new Map<string, PosRt[]>();
  for (const pr of core.positions) {
    const g = groups.get(pr.pos.group_key);
    if (g) g.push(pr);
    else groups.set(pr.pos.group_key, [pr]);
  }
  for (const g of groups.values()) {
    if (g.length === 2) {
      g[0]!.complement = g[1]!;
      g[1]!.complement = g[0]!;
    }
  }

  // Contest phases at `now`: history is played out with its own stream so it does not shift
  // the dynamics' sequence.
  const history = new Rng(hashSeed(core.seed, 'history'));
  for (const c of core.contests.values()) {
    const end = c.p.start_ms + c.p.duration_ms;
    if (c.p.closed || now >= end) {
      goLive(c, Math.min(now, end), history);
      finalize(c, history);
      c.settled = true;
      c.results = computeResults(c);
    } else if (now >= c.p.start_ms) {
      goLive(c, now, history);
    }
    refreshEffective(c, now);
  }
  for (const c of core.contests.values()) c.state = buildState(c, now, ((id: string) => nameOf(core, id)));

  for (const id of SIM_PARTNER_IDS) {
    const pers = SIM_PERSONALITIES[id];
    const v: VenueRt = {
      id,
      pers,
      listings: [],
      byPosition: new Map(),
      byInstrument: new Map(),
      groupBias: new Map(),
      due: new Set(),
      pending: new Set(),
      staleUntil: 0,
      flipped: new Set(),
      accounts: new Map(),
      orders: new Map(),
      byClientId: new Map(),
      orderSeq: 0,
      tradeSeq: 0,
      instrumentSeq: 0,
      scheduled: [],
      situationsStarted: { price_move: 0, whale_trade: 0, block_trade: 0, flow_imbalance: 0, trade_through: 0, volume_spike: 0, trade_burst: 0 },
    };
    core.venues.set(id, v);
    if (pers.wire === 'internal') continue;
    core.quoting.push(v);
    const vr = new Rng(hashSeed(core.seed, `flip/${id}`));
    if (pers.dynamics.flip_contest_share > 0) {
      for (const c of core.contests.values()) if (c.p.kind !== 'outright' && vr.bool(pers.dynamics.flip_contest_share)) v.flipped.add(c.p.contest_id);
    }
    const cov = pers.dynamics.coverage;
    for (const pr of core.positions) {
      if (pr.c.settled) continue;
      if (!cov.markets.includes(pr.pos.market_key)) continue;
      if (pr.meta.line_offset > cov.max_line_offset) continue;
      const l = createListing(core, v, pr, now);
      reprice(core, l, now, true);
    }
  }
}

export function newContestRt(core: MarketCore, p: SimContestParams, contest: Contest, now: number): ContestRt {
  return {
    p,
    contest,
    phase: 'scheduled',
    mu: p.mu0,
    tau: p.tau0,
    strengths: [...p.strengths],
    home: 0,
    away: 0,
    periodScores: [],
    playerFinal: [],
    eliminated: new Set(),
    manual: false,
    settled: false,
    winner: null,
    result: null,
    finishMethod: null,
    state: null as unknown as GameState,
    stateTs: now,
    lastStateEmit: now,
    situationSeed: hashSeed(core.seed, p.contest_id),
    eff: newEff(p),
    positions: [],
    children: [],
    parent: null,
    results: null,
  };
}
