/**
 * The order a buy's legs run in (spec "Orders: place" rules 2-5), over arbitrary legs whose
 * pre-checks and placements pass or fail: what is placed, in which order, what halts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { HALTED_UPSTREAM, sequenceLegs, type LegFailure, type LegOutcome } from '../../../src/domain/router-orders.js';

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
});
