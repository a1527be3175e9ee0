import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runLiquidityJob, type LiquidityJobOutput } from '../../../src/compute/job.js';
import type { PositionInput, VenueQuote } from '../../../src/compute/types.js';
import { FRESH_AS_OF, NOW_MS, position, quote } from './helpers.js';

const LATER_AS_OF = '2026-03-01T11:59:59.500Z';

const home = (quotes: VenueQuote[], over: Partial<PositionInput> = {}) => position('ct1:ml:home', quotes, { group_key: 'ml', ...over });
const away = (quotes: VenueQuote[]) => position('ct1:ml:away', quotes, { group_key: 'ml', side_key: 'away' });

function base(over: Partial<VenueQuote> = {}): PositionInput[] {
  return [
    home([quote('a', 0.52, 5_000, { liquidity_hash: 'a:h', ...over }), quote('b', 0.53, 5_000, { liquidity_hash: 'b:h' })]),
    away([quote('a', 0.5, 5_000, { liquidity_hash: 'a:a', venue_side_key: 'away' })]),
  ];
}

/** Runs a sequence of computations of contest ct1, each against the snapshot the previous stored. */
function runs(...steps: PositionInput[][]): LiquidityJobOutput[] {
  const out: LiquidityJobOutput[] = [];
  let prevJson: string | null = null;
  for (const positions of steps) {
    const o = runLiquidityJob({ input: { contest_id: 'ct1', positions, now_ms: NOW_MS }, prevJson });
    out.push(o);
    prevJson = o.snapshotJson;
  }
  return out;
}

describe('runLiquidityJob: changed entries', () => {
  it('carry the quote’s as_of and is_stale', () => {
    const [first] = runs(base({ stale_after_ms: NOW_MS - 1 }));
    expect(first.changed).toContainEqual({ liquidity_hash: 'a:h', partner_id: 'a', price: 0.52, available: 5_000, as_of: FRESH_AS_OF, is_stale: true });
    expect(first.changed).toContainEqual({ liquidity_hash: 'b:h', partner_id: 'b', price: 0.53, available: 5_000, as_of: FRESH_AS_OF, is_stale: false });
  });

  it('an is_stale flip is a change for the stream both ways, but not a tick', () => {
    const [, stale, freshAgain] = runs(base(), base({ stale_after_ms: NOW_MS - 1 }), base({ as_of: LATER_AS_OF }));
    expect(stale.changed).toEqual([{ liquidity_hash: 'a:h', partner_id: 'a', price: 0.52, available: 5_000, as_of: FRESH_AS_OF, is_stale: true }]);
    // Not a tick either: the tick rule looks at price and size only.
    expect(stale.ticks.filter((t) => t.liquidity_hash === 'a:h')).toEqual([]);
    expect(stale.refreshRequired).toBe(false);
    expect(freshAgain.changed).toEqual([{ liquidity_hash: 'a:h', partner_id: 'a', price: 0.52, available: 5_000, as_of: LATER_AS_OF, is_stale: false }]);
    expect(freshAgain.ticks.filter((t) => t.liquidity_hash === 'a:h')).toEqual([]);
  });

  it('a price change is both a change and a tick', () => {
    const [, moved] = runs(base(), base({ price: 0.54 }));
    expect(moved.changed).toEqual([expect.objectContaining({ liquidity_hash: 'a:h', price: 0.54, is_stale: false })]);
    expect(moved.ticks).toEqual([expect.objectContaining({ liquidity_hash: 'a:h', price: 0.54 })]);
  });

  it('a vanished quote is sent at available 0, confirmed now and not stale', () => {
    const gone = base({ stale_after_ms: NOW_MS - 1 });
    gone[0] = home([quote('b', 0.53, 5_000, { liquidity_hash: 'b:h' })]);
    const [, second] = runs(base({ stale_after_ms: NOW_MS - 1 }), gone);
    expect(second.changed).toEqual([{ liquidity_hash: 'a:h', partner_id: 'a', price: 0.52, available: 0, as_of: new Date(NOW_MS).toISOString(), is_stale: false }]);
  });

  it('a re-confirmation alone (a newer as_of) changes nothing and requires no refresh', () => {
    const [, again] = runs(base(), base({ as_of: LATER_AS_OF }));
    expect(again.changed).toEqual([]);
    expect(again.refreshRequired).toBe(false);
    expect(JSON.parse(again.positionsJson)[0].partner_liquidities[0].as_of).toBe(LATER_AS_OF);
  });
});

describe('runLiquidityJob: refreshRequired', () => {
  it('is false when nothing changed', () => {
    const [, same] = runs(base(), base());
    expect(same.changed).toEqual([]);
    expect(same.refreshRequired).toBe(false);
  });

  it('is false when entries carry the change', () => {
    const [first, moved] = runs(base(), base({ available: 100 }));
    expect(first.changed.length).toBeGreaterThan(0);
    expect(first.refreshRequired).toBe(false);
    expect(moved.changed).toHaveLength(1);
    expect(moved.refreshRequired).toBe(false);
  });

  it('is true when the answer changed with no quote change: a fee schedule, a catalog field', () => {
    const [, fee, title] = runs(
      base(),
      base({ fee: { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 } }),
      [home(base({ fee: { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 } })[0].quotes as VenueQuote[], { title: 'renamed' }), base()[1]],
    );
    expect(fee.changed).toEqual([]);
    expect(fee.refreshRequired).toBe(true);
    expect(title.changed).toEqual([]);
    expect(title.refreshRequired).toBe(true);
  });

  it('is true on a first computation with nothing quoted, and on a snapshot of another contest', () => {
    const empty = [home([]), away([])];
    const [first, second] = runs(empty, empty);
    expect(first.changed).toEqual([]);
    expect(first.refreshRequired).toBe(true);
    expect(second.refreshRequired).toBe(false);
    const other = runLiquidityJob({ input: { contest_id: 'ct2', positions: [], now_ms: NOW_MS }, prevJson: null });
    const ct1 = runLiquidityJob({ input: { contest_id: 'ct1', positions: empty, now_ms: NOW_MS }, prevJson: other.snapshotJson });
    expect(ct1.refreshRequired).toBe(true);
  });

  /** The answer as a client compares it: as_of bumps are re-confirmations, not changes. */
  const withoutAsOf = (json: string) => JSON.stringify(JSON.parse(json), (k, v: unknown) => (k === 'as_of' ? undefined : v));

  /** One venue's quote on one side, as a few independent knobs; undefined when it is absent. */
  interface Knobs {
    price: number;
    available: number;
    stale: boolean;
    later: boolean;
    pq: boolean;
  }
  const SLOTS = [
    ['a', 'home'],
    ['b', 'home'],
    ['a', 'away'],
    ['b', 'away'],
  ] as const;
  const knobs = fc.record({
    price: fc.constantFrom(0.4, 0.45, 0.5, 0.55),
    available: fc.constantFrom(0, 500, 5_000),
    stale: fc.boolean(),
    later: fc.boolean(),
    pq: fc.boolean(),
  });
  const toQuote = (slot: number, k: Knobs) => {
    const [partner, side] = SLOTS[slot];
    return quote(partner, k.price, k.available, {
      liquidity_hash: `${partner}:${side}`,
      venue_side_key: side,
      stale_after_ms: k.stale ? NOW_MS - 1 : NOW_MS + 30_000,
      as_of: k.later ? LATER_AS_OF : FRESH_AS_OF,
      fee: k.pq ? { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 } : { kind: 'none' },
    });
  };
  // Consecutive states differ by one small edit (or none), so unchanged quotes, re-confirmations and
  // answer-only changes are common rather than a rare coincidence of random states.
  const edit = fc.oneof(
    fc.constant({ kind: 'none' as const }),
    fc.constant({ kind: 'rename' as const }),
    fc.record({ kind: fc.constant('slot' as const), slot: fc.integer({ min: 0, max: 3 }), knob: fc.constantFrom('price', 'available', 'stale', 'later', 'pq', 'presence'), to: knobs }),
  );
  const scenario = fc.record({ start: fc.array(fc.option(knobs, { nil: undefined }), { minLength: 4, maxLength: 4 }), edits: fc.array(edit, { minLength: 1, maxLength: 8 }) });

  /** The contest's positions before the first edit and after each edit. */
  function states(sc: { start: (Knobs | undefined)[]; edits: { kind: string; slot?: number; knob?: string; to?: Knobs }[] }): PositionInput[][] {
    let slots = sc.start;
    let renamed = false;
    const out: PositionInput[][] = [];
    const emit = () =>
      out.push([
        home(slots.flatMap((k, i) => (k && i < 2 ? [toQuote(i, k)] : [])), renamed ? { title: 'renamed' } : {}),
        away(slots.flatMap((k, i) => (k && i >= 2 ? [toQuote(i, k)] : []))),
      ]);
    emit();
    for (const e of sc.edits) {
      if (e.kind === 'rename') renamed = !renamed;
      else if (e.kind === 'slot') {
        const i = e.slot!;
        const cur = slots[i];
        slots = [...slots];
        if (e.knob === 'presence') slots[i] = cur ? undefined : e.to;
        else if (cur) slots[i] = { ...cur, [e.knob!]: e.to![e.knob as keyof Knobs] };
      }
      emit();
    }
    return out;
  }

  it('is true exactly when the answer changed and no entry carries it (property)', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const outs = runs(...states(sc));
        for (let i = 1; i < outs.length; i++) {
          const o = outs[i];
          const answerChanged = withoutAsOf(o.positionsJson) !== withoutAsOf(outs[i - 1].positionsJson);
          if (o.changed.length > 0) expect(o.refreshRequired).toBe(false);
          else expect(o.refreshRequired).toBe(answerChanged);
        }
      }),
      { numRuns: 300 },
    );
  });
});
