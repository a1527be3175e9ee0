/**
 * The order a buy's legs run in (spec "Orders: place" rules 2-5), over arbitrary legs whose
 * pre-checks and placements pass or fail: what is placed, in which order, what halts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { checkFailure, HALTED_UPSTREAM, sequenceLegs, type LegFailure, type LegOutcome } from '../../../src/domain/router-orders.js';

const leg = (index: number): ResolvedLeg => ({
  index,
  partner_id: 'sim_exchange',
  position_hash: 'p',
  liquidity_hash: null,
  amount: 1,
  shares: null,
  max_price: 0.5,
  mode: 'paper',
  order_type: 'market',
  unplannable: null,
});
const fail = (code: LegFailure['code']): LegFailure => ({ status: 'failed', code, reason: String(code) });

/** Per leg: whether its pre-check passes and whether its placement succeeds. */
const scenario = fc.array(fc.record({ checks: fc.boolean(), places: fc.boolean() }), { minLength: 1, maxLength: 12 });
const options = fc.record({ halt: fc.boolean(), checkAllFirst: fc.boolean(), parallel: fc.boolean() });

async function run(legs: { checks: boolean; places: boolean }[], opts: { halt: boolean; checkAllFirst: boolean; parallel: boolean }) {
  const placed: number[] = [];
  let checked = 0;
  const resolved = legs.map((_, i) => leg(i));
  const r = await sequenceLegs(resolved, opts, {
    async checkAll(ls) {
      checked++;
      return ls.map((l) => (legs[l.index]!.checks ? null : fail('insufficient_balance')));
    },
    async place(l): Promise<LegOutcome<number>> {
      placed.push(l.index);
      return legs[l.index]!.places ? { placed: l.index, status: 'completed' } : { failure: fail('above_max_price') };
    },
  });
  return { ...r, placed, checked };
}

describe('sequenceLegs', () => {
  it('places in array order, each leg at most once, and answers every leg', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, options, async (legs, opts) => {
        const r = await run(legs, opts);
        expect(r.outcomes).toHaveLength(legs.length);
        expect(r.outcomes.every((o) => o !== undefined)).toBe(true);
        expect(r.placed).toEqual([...r.placed].sort((a, b) => a - b));
        expect(new Set(r.placed).size).toBe(r.placed.length);
        expect(r.checked).toBe(opts.checkAllFirst ? 1 : 0);
      }),
    );
  });

  it('continue: every leg is placed (all of them, or those whose pre-check passed)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.boolean(), fc.boolean(), async (legs, checkAllFirst, parallel) => {
        const r = await run(legs, { halt: false, checkAllFirst, parallel });
        const expected = legs.flatMap((l, i) => (!checkAllFirst || l.checks ? [i] : []));
        expect(r.placed).toEqual(expected);
        expect(r.haltedAt).toBeNull();
        expect(r.outcomes.some((o) => 'failure' in o && o.failure === HALTED_UPSTREAM)).toBe(false);
      }),
    );
  });

  it('halt one at a time: nothing after the first failure is placed; those legs are halted_upstream and halted_at_index names it', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (legs) => {
        const r = await run(legs, { halt: true, checkAllFirst: false, parallel: false });
        const first = legs.findIndex((l) => !l.places);
        expect(r.haltedAt).toBe(first === -1 ? null : first);
        expect(r.placed).toEqual(legs.map((_, i) => i).filter((i) => first === -1 || i <= first));
        r.outcomes.forEach((o, i) => {
          if (first !== -1 && i > first) expect(o).toEqual({ failure: HALTED_UPSTREAM });
        });
      }),
    );
  });

  it('check_all_first with halt: a failing pre-check means nothing is placed (zero exposure)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.boolean(), async (legs, parallel) => {
        const r = await run(legs, { halt: true, checkAllFirst: true, parallel });
        const first = legs.findIndex((l) => !l.checks);
        if (first === -1) return;
        expect(r.placed).toEqual([]);
        expect(r.haltedAt).toBe(first);
        r.outcomes.forEach((o, i) => expect(o).toEqual(legs[i]!.checks ? { failure: HALTED_UPSTREAM } : { failure: fail('insufficient_balance') }));
      }),
    );
  });

  it('parallel: once the pre-checks pass, one leg’s placement failure does not stop another', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (legs) => {
        const passing = legs.map((l) => ({ ...l, checks: true }));
        const r = await run(passing, { halt: true, checkAllFirst: true, parallel: true });
        expect(r.placed).toEqual(passing.map((_, i) => i));
        expect(r.haltedAt).toBeNull();
      }),
    );
  });

  it('halt: a leg placed and then failed or rejected by its venue halts like a pre-check failure; resting and pending do not', async () => {
    const statuses = fc.array(fc.constantFrom('completed', 'resting', 'pending', 'failed', 'rejected') as fc.Arbitrary<'completed' | 'resting' | 'pending' | 'failed' | 'rejected'>, { minLength: 1, maxLength: 10 });
    await fc.assert(
      fc.asyncProperty(statuses, async (st) => {
        const placed: number[] = [];
        const r = await sequenceLegs(st.map((_, i) => leg(i)), { halt: true, checkAllFirst: false, parallel: false }, {
          checkAll: async () => [],
          async place(l) {
            placed.push(l.index);
            return { placed: l.index, status: st[l.index]! };
          },
        });
        const first = st.findIndex((s) => s === 'failed' || s === 'rejected');
        expect(r.haltedAt).toBe(first === -1 ? null : first);
        expect(placed).toEqual(st.map((_, i) => i).filter((i) => first === -1 || i <= first));
      }),
    );
  });

  it('parallel: legs of one lane are placed one after another in array order, lanes at once', async () => {
    const venues = fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(venues, async (vs) => {
        const running = new Map<string, number>();
        let concurrentLanes = 0;
        const order = new Map<string, number[]>();
        const legs = vs.map((v, i) => ({ ...leg(i), partner_id: v }));
        await sequenceLegs(legs, { halt: false, checkAllFirst: false, parallel: true }, {
          checkAll: async () => [],
          lane: (l) => l.partner_id,
          async place(l): Promise<LegOutcome<number>> {
            expect(running.get(l.partner_id) ?? 0).toBe(0);
            running.set(l.partner_id, 1);
            concurrentLanes = Math.max(concurrentLanes, [...running.values()].filter((n) => n > 0).length);
            (order.get(l.partner_id) ?? order.set(l.partner_id, []).get(l.partner_id)!).push(l.index);
            await new Promise((r) => setTimeout(r, 0));
            running.set(l.partner_id, 0);
            return { placed: l.index, status: 'failed' };
          },
        });
        for (const list of order.values()) expect(list).toEqual([...list].sort((x, y) => x - y));
        expect(concurrentLanes).toBe(new Set(vs).size);
      }),
      { numRuns: 30 },
    );
  });

  it('checkFailure: a refusal with a code is failed (control blocks, venue constraints); without one, or no_live_price_for_paper, rejected', () => {
    expect(checkFailure({ rejected_code: 'venue_disabled', rejected_reason: 'x' })).toEqual({ status: 'failed', code: 'venue_disabled', reason: 'x' });
    expect(checkFailure({ rejected_code: 'insufficient_balance', rejected_reason: 'x' }).status).toBe('failed');
    expect(checkFailure({ rejected_code: null, rejected_reason: 'no such venue' })).toEqual({ status: 'rejected', code: null, reason: 'no such venue' });
    expect(checkFailure({ rejected_code: 'no_live_price_for_paper', rejected_reason: 'x' }).status).toBe('rejected');
  });
});
