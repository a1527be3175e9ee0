/**
 * The compute pool runs a small job on the calling thread and a large one on its worker thread;
 * both give the same answer (the worker is the real piscina thread, loaded through its bootstrap).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ComputePool, INLINE_GAP_MS, INLINE_MAX_QUOTES } from '../../../pipelines/compute-pool.js';
import { runLiquidityJob, type LiquidityJobInput } from '../../../src/compute/job.js';
import { NOW_MS, position, quote } from '../../unit/compute/helpers.js';

/** The pool's clock, moved by the tests only: the burst rule is about time between jobs, not this machine's speed. */
let clock = 0;
const pool = new ComputePool(1, () => clock);
afterAll(() => pool.close());

/** A contest of `n` two-way markets, each side quoted by three venues. */
function contest(n: number): LiquidityJobInput {
  const positions = [];
  for (let m = 0; m < n; m++) {
    for (const side of ['home', 'away'] as const) {
      const quotes = ['a', 'b', 'c'].map((v, i) => quote(v, side === 'home' ? 0.5 + i * 0.01 : 0.49 - i * 0.01, 1_000 + i, { liquidity_hash: `${v}:${m}:${side}`, venue_side_key: side }));
      positions.push(position(`ct1:m${m}:${side}`, quotes, { group_key: `m${m}`, side_key: side }));
    }
  }
  return { input: { contest_id: 'ct1', positions, now_ms: NOW_MS }, prevJson: null };
}

describe('ComputePool', () => {
  it('runs a job of at most INLINE_MAX_QUOTES quotes inline and a larger one on the worker, with the same results', async () => {
    const small = contest(Math.floor(INLINE_MAX_QUOTES / 6));
    const large = contest(Math.ceil(INLINE_MAX_QUOTES / 6) + 2);
    const s = await pool.liquidity(small);
    expect([pool.inlineRuns, pool.pooledRuns]).toEqual([1, 0]);
    const l = await pool.liquidity(large);
    expect([pool.inlineRuns, pool.pooledRuns]).toEqual([1, 1]);
    expect(s.positionsJson).toBe(runLiquidityJob(small).positionsJson);
    expect(l.positionsJson).toBe(runLiquidityJob(large).positionsJson);
    expect(l.positions).toBe(large.input.positions.length);
  });

  it('sends a small job that follows an inline one within INLINE_GAP_MS to the worker (a burst never holds the event loop)', async () => {
    const small = contest(2);
    const before = [pool.inlineRuns, pool.pooledRuns];
    clock += INLINE_GAP_MS * 2;
    const burst = await Promise.all([pool.liquidity(small), pool.liquidity(small), pool.liquidity(small)]);
    expect([pool.inlineRuns - before[0]!, pool.pooledRuns - before[1]!]).toEqual([1, 2]);
    expect(new Set(burst.map((o) => o.positionsJson)).size).toBe(1);
    // A small job after a pause longer than the gap runs inline again; one within the gap does not.
    clock += INLINE_GAP_MS + 1;
    await pool.liquidity(small);
    clock += INLINE_GAP_MS - 1;
    await pool.liquidity(small);
    expect([pool.inlineRuns - before[0]!, pool.pooledRuns - before[1]!]).toEqual([2, 3]);
  });
});
