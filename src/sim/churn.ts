/**
 * Churn (soak runs): the market keeps opening short contests, copies of one of the world's team
 * games under new ids, that go live, finish and settle like any other; settlement.ts forgets them
 * once settled. The catalog learns each one from the `opened` feed.
 */
import type { Contest } from '../domain/catalog.js';
import { positionHash } from '../domain/hashes.js';
import type { SimContestParams, SimPosition } from './catalog.js';
import { nameOf, type MarketCore } from './core.js';
import type { SimChurnOptions, SimContestOpenedEvent } from './events.js';
import { buildState, refreshEffective } from './game.js';
import { createListing } from './listings.js';
import { reprice } from './pricing.js';
import { emitQuote, publishState } from './publish.js';
import type { PosRt } from './runtime.js';
import { newContestRt } from './setup.js';

/** Opens one churned contest now, lists it on every quoting venue and publishes its books and state. */
export function openChurnContest(core: MarketCore, now: number, o: SimChurnOptions): void {
  const template = core.world.params.find((p) => p.kind === 'team_h2h' && !p.closed)!;
  const tc = core.contests.get(template.contest_id)!;
  const id = `ct_churn_${String(++core.churn.seq).padStart(6, '0')}`;
  const start = now + o.lead_ms;
  const p: SimContestParams = { ...template, contest_id: id, start_ms: start, duration_ms: o.duration_ms, closed: false, players: template.players.map((x) => ({ ...x })) };
  const contest: Contest = { ...tc.contest, id, title: `${tc.contest.title} (${core.churn.seq})`, starts_at: new Date(start).toISOString(), status: 'open' };
  const c = newContestRt(core, p, contest, now);
  const participants = [...(core.contestParticipants.get(template.contest_id) ?? [])];
  core.contestParticipants.set(id, new Set(participants));
  const positions: SimPosition[] = [];
  const rekey = (k: string | null) => (k === null ? null : id + k.slice(template.contest_id.length));
  const byGroup = new Map<string, PosRt>();
  for (const tpr of tc.positions) {
    const src = tpr.pos;
    const pos: SimPosition = {
      ...src,
      contest_id: id,
      group_key: rekey(src.group_key)!,
      ladder_key: rekey(src.ladder_key),
      position_hash: positionHash({ contest_id: id, market_id: src.market_id, side_key: src.side_key, variable: src.variable, participant_id: src.participant_id, timeframe: src.timeframe }),
    };
    const pr: PosRt = { i: ++core.positionSeq, pos, meta: tpr.meta, c, complement: null, listings: [], shift: 0, shiftAt: now };
    const other = byGroup.get(pos.group_key);
    if (other) {
      pr.complement = other;
      other.complement = pr;
    } else byGroup.set(pos.group_key, pr);
    c.positions.push(pr);
    core.byHash.set(pos.position_hash, pr);
    positions.push(pos);
  }
  refreshEffective(c, now);
  c.state = buildState(c, now, ((id: string) => nameOf(core, id)));
  core.contests.set(id, c);
  const ev: SimContestOpenedEvent = {
    contest,
    contest_markets: [...new Set(positions.map((x) => x.market_id))].map((market_id) => ({ contest_id: id, market_id })),
    contest_participants: participants.map((participant_id) => ({ contest_id: id, participant_id, role: participant_id === p.home_id ? 'home' : participant_id === p.away_id ? 'away' : 'entrant' })),
    positions,
  };
  core.feeds.opened.deliver(ev, core.feeds.safe);
  for (const v of core.quoting) {
    const cov = v.pers.dynamics.coverage;
    for (const pr of c.positions) {
      if (!cov.markets.includes(pr.pos.market_key) || pr.meta.line_offset > cov.max_line_offset) continue;
      const l = createListing(core, v, pr, now);
      reprice(core, l, now, true);
      emitQuote(core, l);
    }
  }
  publishState(core, c, now, true);
}
