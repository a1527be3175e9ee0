/**
 * Properties of the merge over random venue catalogs (games from a few real teams, random starts,
 * spreads and totals, listed home/away either way, on two or three venues):
 * - deterministic, and independent of the order of the venues and of everything inside them;
 * - a merged position joins outcomes of one market type and one line only, at most one per venue;
 * - a merged contest takes at most one contest per venue, and only pairs at or above the threshold;
 * - every venue position is accounted for exactly once (merged, unlinked, or kept as listed);
 * - the merged catalog names no market or contest it does not list.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePositionHash } from '../../../src/domain/hashes.js';
import { MATCH_THRESHOLD, mergeVenueCatalogs, type MergeResult, type VenueCatalog } from '../../../src/venues/matching/index.js';
import { aliasesWith, gamesCatalog, TEST_LEAGUES, type GameSpec } from './support.js';

const aliases = aliasesWith(TEST_LEAGUES);
const TEAMS = ['Green Bay Packers', 'Baltimore', 'PIT', 'Chicago Bears', 'Detroit Lions'];
const KIND: Record<string, string> = { moneyline: 'winner', spread: 'handicap', total: 'total' };

const gameArb = fc
  .record({
    home: fc.integer({ min: 0, max: TEAMS.length - 1 }),
    away: fc.integer({ min: 1, max: TEAMS.length - 1 }),
    hour: fc.integer({ min: 0, max: 40 }),
    spreads: fc.uniqueArray(fc.constantFrom(-7, -3.5, -3, 2.5, 3.5), { maxLength: 2 }),
    totals: fc.uniqueArray(fc.constantFrom(3.5, 41.5, 42), { maxLength: 2 }),
    moneyline: fc.boolean(),
  })
  .map((g) => ({ ...g, away: (g.home + g.away) % TEAMS.length }));

const venueArb = fc.array(gameArb, { minLength: 1, maxLength: 4 });

function catalogs(venues: (typeof gameArb extends fc.Arbitrary<infer G> ? G : never)[][]): Record<string, VenueCatalog> {
  const out: Record<string, VenueCatalog> = {};
  venues.forEach((games, v) => {
    const id = ['a', 'b', 'c'][v]!;
    const specs: GameSpec[] = games.map((g, i) => ({
      id: `g${i}`,
      home: TEAMS[g.home]!,
      away: TEAMS[g.away]!,
      starts: new Date(Date.UTC(2025, 11, 28) + g.hour * 3_600_000).toISOString(),
      spreads: g.spreads,
      totals: g.totals,
      moneyline: g.moneyline,
    }));
    out[id] = gamesCatalog(id, `${id}_nfl`, specs);
  });
  return out;
}

/** The same catalogs with the venues, and every list inside them, in another order. */
function shuffled(cats: Record<string, VenueCatalog>, seed: number): Record<string, VenueCatalog> {
  let s = seed >>> 0;
  const rnd = () => ((s = (s * 1_103_515_245 + 12_345) >>> 0) % 1000) / 1000;
  const mix = <T>(xs: T[]): T[] => xs.map((x) => [rnd(), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x);
  const out: Record<string, VenueCatalog> = {};
  for (const k of mix(Object.keys(cats))) {
    const c = cats[k]!;
    out[k] = { ...c, leagues: mix(c.leagues), participants: mix(c.participants), contests: mix(c.contests), markets: mix(c.markets), contest_markets: mix(c.contest_markets), positions: mix(c.positions), partners: mix(c.partners) };
  }
  return out;
}

function check(r: MergeResult, cats: Record<string, VenueCatalog>): void {
  const native = new Map<string, { venue: string; kind: string; variable: number }>();
  for (const [v, c] of Object.entries(cats)) for (const p of c.positions) native.set(p.position_hash, { venue: v, kind: KIND[p.market_id]!, variable: p.variable });
  const merged = new Map(r.catalog.positions.map((p) => [p.position_hash, p]));
  const members = new Map<string, string[]>();
  for (const [v, map] of Object.entries(r.position_map)) {
    for (const [n, m] of Object.entries(map)) {
      expect(native.get(n)?.venue).toBe(v);
      if (m === null) continue;
      expect(merged.has(m)).toBe(true);
      members.set(m, [...(members.get(m) ?? []), n]);
    }
  }
  for (const [m, ns] of members) {
    const def = merged.get(m)!;
    const kinds = new Set(ns.map((n) => native.get(n)!.kind));
    const lines = new Set(ns.map((n) => native.get(n)!.variable));
    // One market type and one line per merged position (a handicap line is the picked side's).
    expect(kinds.size).toBe(1);
    expect(lines.size).toBe(1);
    expect(def.variable).toBe([...lines][0]);
    expect(new Set(ns.map((n) => native.get(n)!.venue)).size).toBe(ns.length);
  }
  // Every venue position once: in its venue's contest as listed, or moved (merged or unlinked).
  for (const [h] of native) {
    const moved = Object.values(r.position_map).some((map) => Object.prototype.hasOwnProperty.call(map, h));
    expect(moved).toBe(!merged.has(h));
  }
  const byMerged = new Map<string, string[]>();
  for (const d of r.report.decisions) {
    if (d.decision !== 'matched') {
      expect(d.merged_into).toBeNull();
      continue;
    }
    expect(d.confidence!).toBeGreaterThanOrEqual(MATCH_THRESHOLD);
    byMerged.set(d.merged_into!, [...(byMerged.get(d.merged_into!) ?? []), d.partner_id]);
  }
  for (const [, venues] of byMerged) {
    expect(venues.length).toBeGreaterThanOrEqual(2);
    expect(new Set(venues).size).toBe(venues.length);
  }
  for (const c of r.catalog.contests) for (const p of r.catalog.positions.filter((x) => x.contest_id === c.id)) expect(parsePositionHash(p.position_hash)?.contest_id).toBe(c.id);
  // The catalog stands on its own (seedCatalog's foreign keys): every market a position or a
  // contest names is listed, and so is every contest a position names.
  const markets = new Set(r.catalog.markets.map((m) => m.id));
  const contests = new Set(r.catalog.contests.map((c) => c.id));
  for (const p of r.catalog.positions) {
    expect(markets.has(p.market_id)).toBe(true);
    expect(contests.has(p.contest_id)).toBe(true);
  }
  for (const l of r.catalog.contest_markets) expect(markets.has(l.market_id)).toBe(true);
}

describe('merge properties', () => {
  it('is deterministic and order-independent, and never joins two types, two lines or two positions of one venue', () => {
    let merged = 0;
    let aligned = 0;
    fc.assert(
      fc.property(fc.array(venueArb, { minLength: 2, maxLength: 3 }), fc.integer(), (venues, seed) => {
        const cats = catalogs(venues);
        const r = mergeVenueCatalogs(cats, { aliases });
        check(r, cats);
        merged += r.report.merged_contests;
        aligned += r.report.aligned_positions;
        expect(mergeVenueCatalogs(cats, { aliases })).toEqual(r);
        expect(mergeVenueCatalogs(shuffled(cats, seed), { aliases })).toEqual(r);
      }),
      { numRuns: 150 },
    );
    // The cases did merge (the properties were not checked on empty results only).
    expect(merged).toBeGreaterThan(20);
    expect(aligned).toBeGreaterThan(20);
  });

  it('merges identical listings on two venues whole: every position aligned', () => {
    fc.assert(
      fc.property(venueArb, (games) => {
        // Starts a day apart, so no two games of one venue compete for one partner; a moneyline
        // listed, so each game names its two teams.
        const listed = games.map((g, i) => ({ ...g, hour: i * 24, moneyline: true }));
        const cats = catalogs([listed, listed]);
        const r = mergeVenueCatalogs(cats, { aliases });
        expect(r.report.matched).toBe(2 * games.length);
        expect(r.report.aligned_positions).toBe(cats.a!.positions.length);
        expect(r.catalog.positions).toHaveLength(cats.a!.positions.length);
      }),
      { numRuns: 60 },
    );
  });
});
