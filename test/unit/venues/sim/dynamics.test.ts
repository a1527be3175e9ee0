/**
 * The market model's behaviour over time: contest lifecycle, venue personalities (outliers,
 * opposite-side listings, staleness, arbitrage), ladders that make sense, and throughput.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSimAdapter } from '../../../../src/venues/sim/index.js';
import { SIM_PERSONALITIES, SimMarket, type SimQuoteEvent, type SimSettleEvent, type SimStateEvent } from '../../../../src/sim/index.js';
import { NOW, newMarket, phaseOf } from './support.js';

const HOUR = 3_600_000;

describe('contest lifecycle', () => {
  it('contests already under way at start are live with scores, clock, period and situation', () => {
    const m = newMarket();
    const live = m.catalog.contests.filter((c) => phaseOf(m, c.id) === 'live');
    expect(live.length).toBeGreaterThanOrEqual(4);
    const team = live.filter((c) => c.tags.home_team);
    expect(team.length).toBeGreaterThanOrEqual(3);
    for (const c of team) {
      const s = m.gameState(c.id)!.state;
      expect(s.clock!.is_running).toBe(true);
      expect(s.clock!.display).toMatch(/^\d+:\d\d$/);
      expect(s.period!.number).toBeGreaterThanOrEqual(1);
      expect(s.scores!.home_score + s.scores!.away_score).toBeGreaterThan(0);
      expect(s.scores!.period_scores.reduce((x, p) => x + p.home_score, 0)).toBe(s.scores!.home_score);
      expect(s.situation).not.toBeNull();
      expect(s.leaderboard).toBeNull();
    }
    // individual sports and outrights carry a leaderboard instead of team scores
    const tournament = m.catalog.contests.find((c) => c.type === 'tournament')!;
    const t = m.gameState(tournament.id)!.state;
    expect(t.scores).toBeNull();
    expect(t.leaderboard!.length).toBe(8);
    expect(t.leaderboard!.map((e) => e.rank)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const tennis = live.find((c) => c.parent_contest_id === tournament.id)!;
    const ts = m.gameState(tennis.id)!.state;
    expect(ts.scores).toBeNull();
    expect(ts.leaderboard).toHaveLength(2);
    expect(ts.period!.type).toBe('set');
  });

  it('closed contests are final with a result and no books', () => {
    const m = newMarket();
    const closed = m.catalog.contests.filter((c) => c.status === 'closed');
    expect(closed.length).toBeGreaterThan(0);
    for (const c of closed) {
      const s = m.gameState(c.id)!.state;
      expect(s.game_status).toBe('final');
      expect(['home_win', 'away_win']).toContain(s.contest_result);
      // A home or away result needs both sides named, two different teams, and the winner is the side the result names.
      const team = expect.objectContaining({ name: expect.stringMatching(/\S/), full_label: expect.stringMatching(/\S/) });
      expect(c.tags.home_team).toEqual(team);
      expect(c.tags.away_team).toEqual(team);
      expect(c.tags.home_team!.full_label).not.toBe(c.tags.away_team!.full_label);
      const side = s.contest_result === 'home_win' ? 'home' : 'away';
      expect(s.winner_participant_id).toBe(m.catalog.contest_participants.find((p) => p.contest_id === c.id && p.role === side)!.participant_id);
      expect(m.results(c.id)!.results.length).toBe(m.catalog.positions.filter((p) => p.contest_id === c.id).length);
      for (const p of m.catalog.positions.filter((x) => x.contest_id === c.id)) expect(m.instrumentForPosition('sim_exchange', p.position_hash)).toBeUndefined();
    }
  });

  it('scheduled → live → final, settling every position, with states on the feed', () => {
    const m = newMarket();
    m.setActivity(0); // lifecycle only: keeps the test fast
    const c = m.catalog.contests
      .filter((x) => x.league_id === 'lg_sba' && phaseOf(m, x.id) === 'scheduled')
      .sort((a, b) => a.starts_at.localeCompare(b.starts_at))[0]!;
    const states: SimStateEvent[] = [];
    const settles: SimSettleEvent[] = [];
    m.onState((s) => s.contest_id === c.id && states.push(s));
    m.onSettle((s) => settles.push(s));
    const start = Date.parse(c.starts_at);
    let t = NOW;
    while (t < start + 3 * HOUR) m.tick((t += 30_000));
    const statuses = [...new Set(states.map((s) => s.state.game_status))];
    expect(statuses).toEqual(['live', 'final']);
    const periods = new Set(states.filter((s) => s.state.period).map((s) => s.state.period!.label));
    expect([...periods]).toEqual(expect.arrayContaining(['Q1', 'Q2', 'Q3', 'Q4']));
    const fin = states.at(-1)!.state;
    expect(fin).toMatchObject({ game_status: 'final', clock: { remaining_seconds: 0, is_running: false } });
    expect(fin.scores!.home_score).not.toBe(fin.scores!.away_score);
    expect(fin.winner_participant_id).toBe(fin.scores!.home_score > fin.scores!.away_score ? m.catalog.contest_participants.find((p) => p.contest_id === c.id && p.role === 'home')!.participant_id : m.catalog.contest_participants.find((p) => p.contest_id === c.id && p.role === 'away')!.participant_id);
    const mine = settles.filter((s) => s.contest_id === c.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.results).toHaveLength(m.catalog.positions.filter((p) => p.contest_id === c.id).length);
    const ml = new Map(mine[0]!.results.map((r) => [r.position_hash, r.result]));
    const winners = m.catalog.positions.filter((p) => p.contest_id === c.id && p.market_key === 'moneyline' && ml.get(p.position_hash) === 'win');
    expect(winners.map((p) => p.participant_id)).toEqual([fin.winner_participant_id]);
  });

  it('a decided child match eliminates its loser from the tournament', () => {
    const m = newMarket();
    m.setActivity(0);
    const tournament = m.catalog.contests.find((c) => c.type === 'tournament')!;
    const child = m.catalog.contests.find((c) => c.parent_contest_id === tournament.id && phaseOf(m, c.id) === 'live')!;
    let t = NOW;
    while (phaseOf(m, child.id) !== 'final' && t < NOW + 4 * HOUR) m.tick((t += 30_000));
    const winner = m.gameState(child.id)!.state.winner_participant_id!;
    const loser = m.catalog.contest_participants.find((p) => p.contest_id === child.id && p.participant_id !== winner)!.participant_id;
    const lb = m.gameState(tournament.id)!.state.leaderboard!;
    expect(lb.find((e) => e.participant_id === loser)!.status).toBe('eliminated');
    expect(lb.at(-1)!.participant_id).toBe(loser);
  });
});

interface Watch {
  latest: Map<string, Map<string, SimQuoteEvent>>;
}

function watch(m: SimMarket): Watch {
  const latest = new Map<string, Map<string, SimQuoteEvent>>();
  for (const v of ['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'] as const) {
    for (const ev of m.books(v)) {
      if (!latest.has(ev.instrument.position_hash)) latest.set(ev.instrument.position_hash, new Map());
      latest.get(ev.instrument.position_hash)!.set(v, ev);
    }
  }
  m.onQuote((ev) => {
    if (!latest.has(ev.instrument.position_hash)) latest.set(ev.instrument.position_hash, new Map());
    latest.get(ev.instrument.position_hash)!.set(ev.partner_id, ev);
  });
  return { latest };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};

describe('venue personalities over 20 simulated minutes', () => {
  const m = newMarket(7);
  const w = watch(m);
  const pos = new Map(m.catalog.positions.map((p) => [p.position_hash, p]));
  const groups = new Map<string, string[]>();
  for (const p of m.catalog.positions) groups.set(p.group_key, [...(groups.get(p.group_key) ?? []), p.position_hash]);
  const outliersBy = new Map<string, number>();
  let arbs = 0;
  let realArbs = 0;
  const staleSeen = new Set<string>();
  let staleViolations = 0;
  let t = NOW;
  const perTick = new Map<string, number>();
  m.onQuote((ev) => perTick.set(ev.partner_id, (perTick.get(ev.partner_id) ?? 0) + 1));
  for (let i = 0; i < 1200; i++) {
    perTick.clear();
    m.tick((t += 1000));
    for (const v of m.state().venues) {
      if (!v.stale) continue;
      staleSeen.add(v.partner_id);
      if ((perTick.get(v.partner_id) ?? 0) > 0) staleViolations++;
    }
    if (i % 20 !== 0) continue;
    for (const [hash, byVenue] of w.latest) {
      const real = [...byVenue].filter(([v, ev]) => SIM_PERSONALITIES[v as 'sim_exchange'].real_book && ev.levels.length > 0);
      for (const [v, ev] of byVenue) {
        if (ev.levels.length === 0) continue;
        const others = real.filter(([o]) => o !== v).map(([, e]) => e.levels[0]!.price);
        if (others.length >= 3 && Math.abs(ev.levels[0]!.price - median(others)) > 0.15) outliersBy.set(v, (outliersBy.get(v) ?? 0) + 1);
      }
      // two-way groups only (an outright's runners are exclusive but not exhaustive)
      const group = groups.get(pos.get(hash)!.group_key)!;
      if (group.length !== 2 || group[0] !== hash) continue;
      const other = { position_hash: group[1]! };
      const ob = w.latest.get(other.position_hash);
      if (!ob) continue;
      for (const [va, a] of byVenue) {
        for (const [vb, b] of ob) {
          if (va === vb || !a.levels[0] || !b.levels[0]) continue;
          if (a.levels[0].price + b.levels[0].price < 1) {
            arbs++;
            if (SIM_PERSONALITIES[va as 'sim_exchange'].partner.orders_allowed && SIM_PERSONALITIES[vb as 'sim_exchange'].partner.orders_allowed) realArbs++;
          }
        }
      }
    }
  }

  it('one venue sometimes quotes more than 0.15 away from the others', () => {
    expect(outliersBy.get('sim_quotes') ?? 0).toBeGreaterThan(0);
    const total = [...outliersBy.values()].reduce((a, b) => a + b, 0);
    expect((outliersBy.get('sim_quotes') ?? 0) / total).toBeGreaterThan(0.7);
  });

  it('cross-venue arbitrage between tradable venues appears now and then, but not everywhere', () => {
    expect(realArbs).toBeGreaterThan(0);
    // venue pairs in arbitrage per two-way group and sample: rare
    const twoWay = [...groups.values()].filter((g) => g.length === 2).length;
    expect(arbs / (60 * twoWay)).toBeLessThan(0.02);
  });

  it('only sim_p2p lists some participants on the opposite side, consistently within a contest', () => {
    const flipped = new Map<string, Set<string>>();
    for (const v of ['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'] as const) {
      for (const inst of m.instruments(v)) {
        const p = pos.get(inst.position_hash)!;
        if (inst.venue_side_key === p.side_key) continue;
        if (!flipped.has(v)) flipped.set(v, new Set());
        flipped.get(v)!.add(p.contest_id);
        expect(inst.venue_side_key).toBe(p.side_key === 'home' ? 'away' : 'home');
      }
    }
    expect([...flipped.keys()]).toEqual(['sim_p2p']);
    for (const cid of flipped.get('sim_p2p')!) {
      for (const inst of m.instruments('sim_p2p').filter((i) => i.contest_id === cid)) {
        const p = pos.get(inst.position_hash)!;
        if (p.market_key === 'moneyline' || p.market_key === 'spread') expect(inst.venue_side_key).not.toBe(p.side_key);
      }
    }
  });

  it('venues go stale now and then, and publish nothing while stale', () => {
    expect(staleSeen.size).toBeGreaterThan(0);
    expect(staleViolations).toBe(0);
  });

  it('venues disagree with each other (consensus is not any single quote)', () => {
    let differing = 0;
    let compared = 0;
    for (const byVenue of w.latest.values()) {
      const prices = [...byVenue.values()].filter((e) => e.levels.length > 0).map((e) => e.levels[0]!.price);
      if (prices.length < 3) continue;
      compared++;
      if (new Set(prices).size > 1) differing++;
    }
    expect(compared).toBeGreaterThan(50);
    expect(differing / compared).toBeGreaterThan(0.9);
  });

  it('spread ladders are monotone in the line on one venue', () => {
    let checked = 0;
    for (const c of m.catalog.contests.filter((x) => x.league_id === 'lg_sba' && phaseOf(m, x.id) === 'scheduled')) {
      const home = m.catalog.positions.filter((p) => p.contest_id === c.id && p.market_key === 'spread' && p.side_key === 'home').sort((a, b) => a.variable - b.variable);
      const prices = home.map((p) => w.latest.get(p.position_hash)!.get('sim_exchange')!.levels[0]!.price);
      for (let i = 1; i < prices.length; i++) expect(prices[i]!).toBeGreaterThanOrEqual(prices[i - 1]! - 0.02);
      expect(prices.at(-1)!).toBeGreaterThan(prices[0]!);
      checked++;
    }
    expect(checked).toBeGreaterThan(2);
  });

  it('each venue keeps its own quote cadence (streaming venues update most)', () => {
    const listings = Object.fromEntries(m.state().venues.map((v) => [v.partner_id, v.listings]));
    expect(listings.sim_exchange).toBeGreaterThan(listings.sim_p2p!);
    expect(listings.sim_sportsbook).toBeGreaterThan(listings.sim_quotes!);
  });
});

describe('trades', () => {
  it('trade-publishing venues print trades; others never do', () => {
    const m = newMarket(3);
    const by = new Map<string, number>();
    let blocks = 0;
    let wallets = 0;
    m.onTrade((t) => {
      by.set(t.partner_id, (by.get(t.partner_id) ?? 0) + 1);
      if (t.is_block) blocks++;
      if (t.trader_id_kind === 'wallet') wallets++;
      expect(t.price).toBeGreaterThan(0);
      expect(t.price).toBeLessThan(1);
      expect(t.size_contracts).toBeGreaterThan(0);
    });
    let t = NOW;
    for (let i = 0; i < 600; i++) m.tick((t += 1000));
    expect([...by.keys()].sort()).toEqual(['sim_book01', 'sim_exchange']);
    expect(by.get('sim_exchange')!).toBeGreaterThan(500);
    expect(wallets).toBe(by.get('sim_book01'));
    expect(blocks).toBeGreaterThan(0);
  });
});

// Rates are measured by `npm run bench -- ingest` (it prints what the simulator produced per second),
// never asserted here: a timed assertion in vitest measures the machine's load, not the code.
describe('bursts', () => {
  it('burst(n) makes exactly n quote changes, each on the feed', () => {
    const m = newMarket(1);
    let n = 0;
    m.onQuote(() => n++);
    m.burst(5_000); // warm up
    n = 0;
    const made = m.burst(100_000);
    expect(made).toBe(100_000);
    expect(n).toBe(100_000);
  });

  it("a streaming adapter delivers every change of its venue's listings from a burst", async () => {
    const m = new SimMarket({ seed: 1, now: NOW });
    const a = createSimAdapter(m, 'sim_exchange', { clock: () => NOW });
    await a.connect();
    let n = 0;
    a.subscribeQuotes(() => n++);
    let onVenue = 0;
    m.onQuote(() => onVenue++, 'sim_exchange');
    m.burst(5_000);
    n = 0;
    onVenue = 0;
    m.burst(100_000);
    expect(onVenue).toBeGreaterThan(20_000);
    expect(n).toBe(onVenue);
  });
});

describe('quote versions and the driver', () => {
  it('every change of a listing has a strictly later ts_event, never ahead of model time', () => {
    const m = newMarket(2);
    const last = new Map<string, number>();
    let bad = 0;
    let ahead = 0;
    m.onQuote((ev) => {
      const prev = last.get(ev.instrument.liquidity_hash);
      if (prev !== undefined && ev.ts_event <= prev) bad++;
      last.set(ev.instrument.liquidity_hash, ev.ts_event);
      if (ev.ts_event > m.nowMs()) ahead++;
    });
    m.burst(50_000); // ~25 changes per listing within one millisecond of model time
    let t = m.nowMs();
    for (let i = 0; i < 40; i++) m.tick((t += 250));
    expect(last.size).toBeGreaterThan(1000);
    expect(bad).toBe(0);
    expect(ahead).toBe(0);
  });

  describe('start/stop', () => {
    afterEach(() => vi.useRealTimers());
    it('ticks on a timer with the given clock until stopped', () => {
      vi.useFakeTimers();
      const m = newMarket(4);
      let now = NOW;
      let quotes = 0;
      m.onQuote(() => quotes++);
      m.start({ interval_ms: 100, clock: () => now });
      m.start({ interval_ms: 100, clock: () => now }); // idempotent
      expect(m.state().running).toBe(true);
      for (let i = 0; i < 20; i++) {
        now += 100;
        vi.advanceTimersByTime(100);
      }
      expect(m.nowMs()).toBe(NOW + 2000);
      expect(quotes).toBeGreaterThan(0);
      m.stop();
      expect(m.state().running).toBe(false);
      const seen = quotes;
      now += 5000;
      vi.advanceTimersByTime(5000);
      expect(quotes).toBe(seen);
    });
  });
});
