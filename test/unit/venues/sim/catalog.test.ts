import { describe, expect, it } from 'vitest';
import type { TeamTag } from '../../../../src/domain/catalog.js';
import { parsePositionHash } from '../../../../src/domain/hashes.js';
import { buildSimCatalog } from '../../../../src/sim/index.js';
import { NOW } from './support.js';

const HOUR = 3_600_000;
const cat = buildSimCatalog(42, new Date(NOW));

describe('sim catalog', () => {
  it('has no ":" in any id', () => {
    const ids = [
      ...cat.leagues.map((x) => x.id),
      ...cat.participants.map((x) => x.id),
      ...cat.contests.map((x) => x.id),
      ...cat.markets.map((x) => x.id),
      ...cat.partners.map((x) => x.partner_id),
    ];
    for (const id of ids) expect(id).not.toContain(':');
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has 4-6 leagues covering team, athlete and undeclared participant types', () => {
    expect(cat.leagues.length).toBeGreaterThanOrEqual(4);
    expect(cat.leagues.length).toBeLessThanOrEqual(6);
    const types = new Set(cat.leagues.map((l) => l.participant_type));
    expect(types).toEqual(new Set(['team', 'athlete', null]));
  });

  it('spreads 20-40 contests from a few hours ago to ~10 days ahead, some live, most scheduled', () => {
    expect(cat.contests.length).toBeGreaterThanOrEqual(20);
    expect(cat.contests.length).toBeLessThanOrEqual(40);
    const open = cat.contests.filter((c) => c.status === 'open');
    const closed = cat.contests.filter((c) => c.status === 'closed');
    expect(closed.length).toBeGreaterThanOrEqual(2);
    expect(open.length + closed.length).toBe(cat.contests.length);
    const starts = open.map((c) => Date.parse(c.starts_at) - NOW);
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(-6 * HOUR);
    expect(Math.max(...starts)).toBeLessThanOrEqual(10.5 * 24 * HOUR);
    expect(Math.max(...starts)).toBeGreaterThan(7 * 24 * HOUR);
    const started = starts.filter((s) => s <= 0).length;
    expect(started).toBeGreaterThanOrEqual(3);
    expect(started).toBeLessThan(open.length / 2);
    // ordered by start time
    const sorted = [...cat.contests].sort((a, b) => a.starts_at.localeCompare(b.starts_at));
    expect(cat.contests.map((c) => c.id)).toEqual(sorted.map((c) => c.id));
  });

  it('gives head-to-head team contests object tags: teams, venue, broadcast, source, event_title', () => {
    const teamLeagues = new Set(cat.leagues.filter((l) => l.participant_type === 'team').map((l) => l.id));
    const h2h = cat.contests.filter((c) => teamLeagues.has(c.league_id));
    expect(h2h.length).toBeGreaterThan(10);
    for (const c of h2h) {
      for (const t of [c.tags.home_team, c.tags.away_team] as TeamTag[]) {
        expect(typeof t).toBe('object');
        expect(Object.keys(t).sort()).toEqual(['abbr', 'full_label', 'market_name', 'name']);
        for (const v of Object.values(t)) expect(typeof v === 'string' && v.length > 0).toBe(true);
      }
      expect(Object.keys(c.tags.venue!).sort()).toEqual(['city', 'country', 'name', 'state', 'time_zone']);
      expect(c.tags.broadcast?.network).toBeTruthy();
      expect(c.tags.source).toBe('sim');
      expect(c.tags.event_title).toBeTruthy();
      expect(c.type).toBe('match');
    }
  });

  it('has a tournament with child contests and no team tags', () => {
    const tournaments = cat.contests.filter((c) => c.type === 'tournament');
    expect(tournaments.length).toBeGreaterThanOrEqual(1);
    const t = tournaments[0]!;
    expect(t.tags.home_team).toBeUndefined();
    expect(t.tags.away_team).toBeUndefined();
    const children = cat.contests.filter((c) => c.parent_contest_id === t.id);
    expect(children.length).toBeGreaterThanOrEqual(2);
    const markets = cat.contest_markets.filter((m) => m.contest_id === t.id).map((m) => m.market_id);
    expect(markets).toContain('tournament_winner');
  });

  it('gives athlete competitors a country', () => {
    const athleteLeagues = new Set(cat.leagues.filter((l) => l.participant_type === 'athlete').map((l) => l.id));
    const athletes = cat.participants.filter((p) => athleteLeagues.has(p.league_id));
    expect(athletes.length).toBeGreaterThanOrEqual(10);
    for (const a of athletes) expect(a.country).toMatch(/^[A-Z]{3}$/);
    const fights = cat.contests.filter((c) => c.type === 'fight');
    expect(fights.length).toBeGreaterThan(0);
    for (const f of fights) {
      for (const comp of f.tags.competitors as { country: string }[]) expect(comp.country).toMatch(/^[A-Z]{3}$/);
    }
  });

  it('defines moneyline, spread and total ladders, player points and a tournament winner', () => {
    const byKey = new Map(cat.markets.map((m) => [m.key, m]));
    expect([...byKey.keys()].sort()).toEqual(['moneyline', 'player_points', 'spread', 'total', 'tournament_winner']);
    expect(byKey.get('player_points')!.variable_required).toBe(true);
    expect(byKey.get('tournament_winner')!.allow_multiple_participants).toBe(true);
    expect(byKey.get('moneyline')!.variable_required).toBe(false);
    // ladders: several lines per spread/total ladder
    const ladders = new Map<string, Set<number>>();
    for (const p of cat.positions) {
      if (p.ladder_key === null || (p.market_key !== 'spread' && p.market_key !== 'total')) continue;
      if (!ladders.has(p.ladder_key)) ladders.set(p.ladder_key, new Set());
      ladders.get(p.ladder_key)!.add(Math.abs(p.variable));
    }
    expect([...ladders.values()].some((s) => s.size >= 5)).toBe(true);
    // player points sit on an athlete participant with a line
    const pp = cat.positions.filter((p) => p.market_key === 'player_points');
    expect(pp.length).toBeGreaterThan(0);
    const pIds = new Set(cat.participants.filter((x) => x.id.startsWith('pl_')).map((x) => x.id));
    for (const p of pp) {
      expect(pIds.has(p.participant_id)).toBe(true);
      expect(p.variable % 1).toBe(0.5);
      expect(['over', 'under']).toContain(p.side_key);
    }
  });

  it('builds positions whose hashes parse back to their parts, with groups of mutually exclusive sides', () => {
    const contests = new Set(cat.contests.map((c) => c.id));
    const participants = new Set(cat.participants.map((p) => p.id));
    const groups = new Map<string, typeof cat.positions>();
    for (const p of cat.positions) {
      const k = parsePositionHash(p.position_hash)!;
      expect(k).toEqual({ contest_id: p.contest_id, market_id: p.market_id, side_key: p.side_key, variable: p.variable, participant_id: p.participant_id, timeframe: p.timeframe });
      expect(contests.has(p.contest_id)).toBe(true);
      expect(participants.has(p.participant_id)).toBe(true);
      expect(cat.contest_markets).toContainEqual({ contest_id: p.contest_id, market_id: p.market_id });
      if (!groups.has(p.group_key)) groups.set(p.group_key, []);
      groups.get(p.group_key)!.push(p);
    }
    expect(new Set(cat.positions.map((p) => p.position_hash)).size).toBe(cat.positions.length);
    for (const [key, g] of groups) {
      if (key.endsWith('/tournament_winner')) {
        expect(g.length).toBeGreaterThanOrEqual(4);
      } else {
        expect(g.length).toBe(2);
        expect(new Set(g.map((p) => p.side_key)).size).toBe(2);
      }
    }
    // spread sides carry opposite handicaps
    for (const g of groups.values()) {
      if (g[0]!.market_key === 'spread') expect(g[0]!.variable).toBe(-g[1]!.variable);
    }
    // totals use synthetic over/under participants
    const totals = cat.positions.filter((p) => p.market_key === 'total');
    expect(new Set(totals.map((p) => p.participant_name))).toEqual(new Set(['Over', 'Under']));
  });

  it('lists the six venue personalities with full order_config and credential_fields', () => {
    const ids = cat.partners.map((p) => p.partner_id);
    expect(ids).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice']);
    const by = Object.fromEntries(cat.partners.map((p) => [p.partner_id, p]));
    expect(by.sim_exchange!.order_config).toMatchObject({ price_format: 'cents', price_tick: 1, min_price: 1, max_price: 99, whole_contracts: true, price_submitted: true, cancel_supported: true, supported_order_types: ['market', 'limit'] });
    expect(by.sim_book01!.order_config).toMatchObject({ price_format: 'probability', amount_increment: 0.01, supported_order_types: ['market', 'limit'] });
    expect(by.sim_sportsbook!.order_config).toMatchObject({ price_format: 'american', price_submitted: false, cancel_supported: false, supported_order_types: ['market'] });
    expect(by.sim_sportsbook!.order_config.max_order_amount).toBeGreaterThan(0);
    expect(by.sim_quotes!).toMatchObject({ orders_allowed: false, order_config: { orders_allowed: false } });
    expect(by.practice!).toMatchObject({ internal_book: true, connectable: false, credential_fields: [], order_config: { supported_order_types: ['market'] } });
    for (const p of cat.partners) {
      expect(p.logo_url).toMatch(/^https:\/\//);
      expect(Object.keys(p.order_config).sort()).toEqual(
        ['amount_increment', 'cancel_supported', 'credentials_allowed', 'full_fill_always_allowed', 'max_order_amount', 'max_price', 'min_order_amount', 'min_price', 'orders_allowed', 'price_format', 'price_submitted', 'price_tick', 'supported_order_types', 'whole_contracts'].sort(),
      );
    }
  });
});
