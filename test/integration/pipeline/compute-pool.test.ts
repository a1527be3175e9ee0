/**
 * The compute pool runs a small job on the calling thread and a large one on its worker thread;
 * both give the same answer (the worker is the real piscina thread, loaded through its bootstrap).
 * A contest's later jobs cross to its thread as deltas, and every way the thread's run or this
 * side's mirror can fail to match the stored snapshot falls back to the whole job, with the same
 * answer as the computation from scratch.
 */
import { snapshotText } from '../../../src/domain/quotes.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ContestChanges } from '../../../bench/support/contest-changes.js';
import { ComputePool, INLINE_GAP_MS, INLINE_MAX_QUOTES } from '../../../pipelines/compute-pool.js';
import { runFromScratch, runLiquidityJob, type LiquidityJobInput, type LiquidityJobOutput } from '../../../src/compute/job.js';
import { parseSnapshot } from '../../../src/compute/snapshot.js';
import type { ContestInput } from '../../../src/compute/types.js';
import { NOW_MS, position, quote } from '../../unit/compute/helpers.js';

/** The pool's clock, moved by the tests only: the burst rule is about time between jobs, not this machine's speed. */
let clock = 0;
const pool = new ComputePool(1, { now: () => clock });
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

  it('keeps a contest whose inline run holds the stored snapshot inline within the gap: it continues, never starts afresh on the worker', async () => {
    const chain = (id: string) => {
      const job = contest(2);
      job.input.contest_id = id;
      for (const p of job.input.positions) p.position_hash = p.position_hash.replace('ct1', id);
      return job;
    };
    const held = chain('ct_sticky');
    clock += INLINE_GAP_MS * 2;
    const first = await pool.liquidity(held);
    const before = [pool.inlineRuns, pool.pooledRuns];
    let prev = first.snapshotJson;
    for (let k = 1; k <= 4; k++) {
      // Within the gap, against the snapshot its inline run handed out: inline, and continued.
      clock += 1;
      const input = structuredClone(held.input);
      input.positions[0]!.quotes[0]!.price = 0.5 + k / 100;
      const out = await pool.liquidity({ input, prevJson: prev });
      expect(out.textsSince).toBeDefined();
      expectSame(out, reference(input, prev));
      prev = out.snapshotJson;
    }
    expect([pool.inlineRuns - before[0]!, pool.pooledRuns - before[1]!]).toEqual([4, 0]);
    // Another contest within the gap (no inline run holds its snapshot) still goes to the worker.
    await pool.liquidity(chain('ct_other'));
    expect([pool.inlineRuns - before[0]!, pool.pooledRuns - before[1]!]).toEqual([4, 1]);
  });
});

/** The snapshot without its run id (each run's own). */
const withoutRun = (json: string) => json.replace(/^\{"run":"[^"]*",/, '{');

/** The output computed from scratch against the same stored snapshot (what any path must give). */
function reference(input: ContestInput, prevJson: string | null): LiquidityJobOutput {
  return runFromScratch(input, parseSnapshot(prevJson, input.contest_id));
}

function expectSame(got: LiquidityJobOutput, want: LiquidityJobOutput): void {
  expect(withoutRun(got.snapshotJson)).toBe(withoutRun(want.snapshotJson));
  expect(got.positionsJson).toBe(want.positionsJson);
  // The fields changed since the previous run (test/unit/compute/contest-run.test.ts holds them to the texts whole) are fields of these texts.
  const { snapshotJson: _a, positionsJson: _b, snapshotParts, textsSince, ...rest } = got;
  const { snapshotJson: _c, positionsJson: _d, ...restWant } = want;
  expect(rest).toEqual(restWant);
  expect(snapshotText(snapshotParts!.rest, snapshotParts!.quotes.map(([, q]) => q))).toBe(got.snapshotJson);
  if (textsSince) {
    expect(textsSince.depth.filter(([h, d]) => got.depth.some(([h2, d2]) => h2 === h && d2 === d))).toEqual(textsSince.depth);
    expect(textsSince.quotes.filter(([i, q]) => q === '' || snapshotParts!.quotes.some(([i2, q2]) => i2 === i && q2 === q))).toEqual(textsSince.quotes);
  }
}

describe('ComputePool: deltas and their fallbacks (contests of 1,000 quotes)', () => {
  it('sends a contest’s later changes as deltas, each contest to its own thread, with the answers computed from scratch', async () => {
    const two = new ComputePool(2);
    try {
      const chains = [0, 1, 2].map((i) => ({ changes: new ContestChanges({ seed: 7 + i, contestId: `ct_pool_${i}` }), prev: null as string | null }));
      for (let k = 0; k < 12; k++) {
        await Promise.all(
          chains.map(async (c) => {
            const input = k ? c.changes.next() : c.changes.input();
            const out = await two.liquidity({ input, prevJson: c.prev });
            expectSame(out, reference(input, c.prev));
            c.prev = out.snapshotJson;
          }),
        );
      }
      expect([two.fullRuns, two.deltaRuns, two.deltaMisses]).toEqual([3, 33, 0]);
      // A copy of the stored snapshot (as read back from Redis) is known as well as the string itself.
      const c = chains[0]!;
      const input = c.changes.next();
      const copy = JSON.parse(JSON.stringify([c.prev]))[0] as string;
      expectSame(await two.liquidity({ input, prevJson: copy }), reference(input, copy));
      expect(two.deltaRuns).toBe(34);
    } finally {
      await two.close();
    }
  });

  it('an older snapshot, or another writer’s: the job crosses whole and is computed from that snapshot', async () => {
    const p = new ComputePool(1);
    try {
      const changes = new ContestChanges({ seed: 21, contestId: 'ct_stale' });
      const first = await p.liquidity({ input: changes.input(), prevJson: null });
      const second = await p.liquidity({ input: changes.next(), prevJson: first.snapshotJson });
      // The store still holds the first (the second lost its compare-and-set).
      const older = { input: changes.next(), prevJson: first.snapshotJson };
      expectSame(await p.liquidity(older), reference(older.input, older.prevJson));
      // Another process computed the contest meanwhile.
      const other = runLiquidityJob({ input: changes.next(), prevJson: second.snapshotJson }, null);
      const theirs = { input: changes.next(), prevJson: other.snapshotJson };
      expectSame(await p.liquidity(theirs), reference(theirs.input, theirs.prevJson));
      expect([p.fullRuns, p.deltaRuns, p.deltaMisses]).toEqual([3, 1, 0]);
    } finally {
      await p.close();
    }
  });

  it('a thread that no longer holds the run (evicted, or moved on by a job of the same snapshot) answers a miss, and the job crosses whole', async () => {
    // The threads keep one run each; this side keeps every mirror.
    const p = new ComputePool(1, { runs: { maxEntries: 1, maxBytes: 2 ** 30, idleMs: 600_000 } });
    try {
      const a = new ContestChanges({ seed: 31, contestId: 'ct_miss_a' });
      const b = new ContestChanges({ seed: 32, contestId: 'ct_miss_b' });
      const fa = await p.liquidity({ input: a.input(), prevJson: null });
      const fb = await p.liquidity({ input: b.input(), prevJson: null });
      // b's run pushed a's out of the thread: a's delta misses.
      const next = { input: a.next(), prevJson: fa.snapshotJson };
      const na = await p.liquidity(next);
      expectSame(na, reference(next.input, next.prevJson));
      expect([p.fullRuns, p.deltaRuns, p.deltaMisses]).toEqual([3, 1, 1]);
      // Two jobs of one contest from the same snapshot at once: the first moves the thread's run on, the second misses.
      const inputs = [a.next(), a.next()] as const;
      const both = await Promise.all(inputs.map((input) => p.liquidity({ input, prevJson: na.snapshotJson })));
      both.forEach((out, i) => expectSame(out, reference(inputs[i]!, na.snapshotJson)));
      expect([p.fullRuns, p.deltaRuns, p.deltaMisses]).toEqual([4, 3, 2]);
      expect(fb.positions).toBe(200);
    } finally {
      await p.close();
    }
  });

  it('keeps within its bounds: a mirror evicted here sends the job whole', async () => {
    const p = new ComputePool(1, { mirrors: { maxEntries: 1, maxBytes: 2 ** 30, idleMs: 600_000 } });
    try {
      const a = new ContestChanges({ seed: 41, contestId: 'ct_bound_a' });
      const b = new ContestChanges({ seed: 42, contestId: 'ct_bound_b' });
      let pa = (await p.liquidity({ input: a.input(), prevJson: null })).snapshotJson;
      let pb = (await p.liquidity({ input: b.input(), prevJson: null })).snapshotJson;
      for (let k = 0; k < 3; k++) {
        const ia = a.next();
        const oa = await p.liquidity({ input: ia, prevJson: pa });
        expectSame(oa, reference(ia, pa));
        const ib = b.next();
        const ob = await p.liquidity({ input: ib, prevJson: pb });
        expectSame(ob, reference(ib, pb));
        [pa, pb] = [oa.snapshotJson, ob.snapshotJson];
      }
      expect([p.fullRuns, p.deltaRuns]).toEqual([8, 0]);
    } finally {
      await p.close();
    }
  });
});
