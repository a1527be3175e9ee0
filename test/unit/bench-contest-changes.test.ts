import { describe, expect, it } from 'vitest';
import { BENCH_VENUES, ContestChanges } from '../../bench/support/contest-changes.js';
import { runLiquidityJob } from '../../src/compute/job.js';

describe('bench compute load: a large contest and its changes', () => {
  it('is a catalog-shaped contest of 200 positions in two-position groups and ladders, every venue quoting each', () => {
    const c = new ContestChanges({ seed: 1, contestId: 'ct_t' });
    const input = c.input();
    expect(input.positions).toHaveLength(200);
    expect(new Set(input.positions.map((p) => p.position_hash)).size).toBe(200);
    const groups = new Map<string, number>();
    for (const p of input.positions) groups.set(p.group_key, (groups.get(p.group_key) ?? 0) + 1);
    expect(groups.size).toBe(100);
    expect([...groups.values()].every((n) => n === 2)).toBe(true);
    const ladders = new Set(input.positions.map((p) => p.ladder_key).filter((k) => k !== null));
    expect(ladders).toEqual(new Set(['ct_t/spread', 'ct_t/total', ...Array.from({ length: 10 }, (_, i) => `ct_t/player_points/bench_player_${i + 1}`)]));
    expect(input.positions.filter((p) => p.market_key === 'moneyline')).toHaveLength(2);
    for (const p of input.positions) {
      expect(p.quotes.map((q) => q.partner_id)).toEqual(BENCH_VENUES);
      for (const q of p.quotes) {
        expect(q.levels.length).toBeGreaterThan(0);
        expect(q.price).toBe(q.levels[0]!.price);
        // Best first, dearer after.
        expect(q.levels.every((l, k) => k === 0 || l.price > q.levels[k - 1]!.price)).toBe(true);
      }
    }
    expect(new Set(input.positions[0]!.quotes.map((q) => q.fee.kind))).toEqual(new Set(['pq', 'none', 'flat_pct', 'unknown']));
    expect(c.quoteCount).toBe(1000);
  });

  it('gives the same inputs for the same seed, and others for another', () => {
    const a = new ContestChanges({ seed: 7, contestId: 'ct_t' });
    const b = new ContestChanges({ seed: 7, contestId: 'ct_t' });
    const other = new ContestChanges({ seed: 8, contestId: 'ct_t' });
    for (let k = 0; k < 50; k++) {
      a.next();
      b.next();
      other.next();
    }
    expect(JSON.stringify(a.next())).toBe(JSON.stringify(b.next()));
    expect(JSON.stringify(a.next())).not.toBe(JSON.stringify(other.next()));
  });

  it('reprices a few quotes per change, each with a newer ts_event and confirmation, and shares the rest with the last input', () => {
    const c = new ContestChanges({ seed: 3, contestId: 'ct_t', arbitrages: 0, outliers: 0 });
    let before = c.input();
    for (let k = 0; k < 200; k++) {
      const after = c.next();
      expect(after.now_ms).toBeGreaterThan(before.now_ms);
      let moved = 0;
      for (let i = 0; i < after.positions.length; i++) {
        const qa = after.positions[i]!.quotes;
        const qb = before.positions[i]!.quotes;
        for (let j = 0; j < qa.length; j++) {
          if (qa[j] === qb[j]) continue;
          moved++;
          expect(qa[j]!.ts_event).toBeGreaterThan(qb[j]!.ts_event);
          expect(qa[j]!.as_of > qb[j]!.as_of).toBe(true);
        }
      }
      // One to three draws, which may hit one listing twice.
      expect(moved).toBeGreaterThanOrEqual(1);
      expect(moved).toBeLessThanOrEqual(3);
      before = after;
    }
  });

  it('holds arbitrages and outliers for the computation to find, change after change', () => {
    const c = new ContestChanges({ seed: 5, contestId: 'ct_t', arbitrages: 4, outliers: 6 });
    let prev: string | null = null;
    let input = c.input();
    for (let k = 0; k < 150; k++) {
      const out = runLiquidityJob({ input, prevJson: prev });
      prev = out.snapshotJson;
      if (k % 50 === 0) {
        expect((JSON.parse(out.arbitragesJson) as unknown[]).length).toBeGreaterThanOrEqual(1);
        expect(out.outliers.length).toBe(6);
      }
      input = c.next();
    }
  });
});
