/**
 * The incremental run (src/compute/contest-run.ts) against the whole computation from scratch
 * (runFromScratch: computeContest, the signals, JSON.stringify of every object): for any sequence
 * of changes, each run's output equals the one computed from scratch against the same stored
 * snapshot (the snapshot's run id aside), and a mirror fed the run's text patches assembles the
 * same texts. Then the ways a thread's run may not match the stored snapshot: evicted, an older
 * snapshot, another writer's, a copy that differs, a snapshot from before run ids.
 */
import { snapshotText } from '../../../src/domain/quotes.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContestText } from '../../../src/compute/contest-text.js';
import { jobOutput, liquidityRun, runFromScratch, runLiquidityJob, type LiquidityJobOutput } from '../../../src/compute/job.js';
import type { ContestRun } from '../../../src/compute/contest-run.js';
import { RunCache } from '../../../src/compute/run-cache.js';
import { parseSnapshot } from '../../../src/compute/snapshot.js';
import type { ContestInput, FeeModel, PositionInput, VenueQuote } from '../../../src/compute/types.js';
import { NOW_MS, position, quote } from './helpers.js';

const VENUES = ['a', 'b', 'c', 'd'] as const;
const FEES: FeeModel[] = [{ kind: 'none' }, { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 }, { kind: 'flat_pct', taker_pct: 2, maker_pct: 0 }, { kind: 'unknown' }];

/**
 * The contest's shape: a moneyline, a total ladder of three lines (two ladder sides), an outright
 * of three runners (a group that forms no arbitrage) and a lone position. Sides alternate so
 * withholding and the false-arb guard have something to judge.
 */
interface Slot {
  group: string;
  side: string;
  ladder: string | null;
  variable: number;
}
const SLOTS: Slot[] = [
  { group: 'ml', side: 'home', ladder: null, variable: 0 },
  { group: 'ml', side: 'away', ladder: null, variable: 0 },
  ...[210.5, 211.5, 212.5].flatMap((line) => [
    { group: `tot${line}`, side: 'over', ladder: 'tot', variable: line },
    { group: `tot${line}`, side: 'under', ladder: 'tot', variable: line },
  ]),
  { group: 'out', side: 'r1', ladder: null, variable: 0 },
  { group: 'out', side: 'r2', ladder: null, variable: 0 },
  { group: 'out', side: 'r3', ladder: null, variable: 0 },
  { group: 'solo', side: 'yes', ladder: null, variable: 0 },
];

/** One venue's quote on one position, as independent knobs. */
interface Knobs {
  price: number;
  available: number;
  levels: number;
  fee: number;
  flipped: boolean;
  /** ms after the run's start when it stops being fresh (its freshness bound), or none (the age policy judges as_of). */
  staleAfter: number | null;
  asOf: number;
  realBook: boolean;
  streaming: boolean;
  flagged: boolean;
}
const knobs: fc.Arbitrary<Knobs> = fc.record({
  price: fc.constantFrom(0.05, 0.3, 0.42, 0.45, 0.48, 0.5, 0.52, 0.55, 0.58, 0.8, 0.99),
  available: fc.constantFrom(0, 0.5, 40, 500, 2_500, 50_000),
  levels: fc.integer({ min: 0, max: 3 }),
  fee: fc.integer({ min: 0, max: FEES.length - 1 }),
  flipped: fc.constantFrom(false, false, false, true),
  staleAfter: fc.option(fc.constantFrom(-1, 5_000, 60_000, 400_000), { nil: null }),
  asOf: fc.constantFrom(-1_000, -50_000, -90_000, -200_000),
  realBook: fc.boolean(),
  streaming: fc.boolean(),
  flagged: fc.constantFrom(false, false, false, true),
});

/** The contest's quotes: one optional quote per (position, venue). */
type State = (Knobs | null)[][];

function toQuote(pos: number, v: number, k: Knobs, tsEvent: number): VenueQuote {
  const slot = SLOTS[pos]!;
  const levels = Array.from({ length: k.levels }, (_, n) => ({ price: Math.min(0.99, k.price + n * 0.01), available: k.available * (n + 1) }));
  return quote(VENUES[v]!, k.price, k.available, {
    liquidity_hash: `${VENUES[v]}:${pos}`,
    levels,
    fee: FEES[k.fee]!,
    venue_side_key: k.flipped ? `not-${slot.side}` : slot.side,
    stale_after_ms: k.staleAfter === null ? undefined : NOW_MS + k.staleAfter,
    as_of: new Date(NOW_MS + k.asOf).toISOString(),
    ts_event: tsEvent,
    real_book: k.realBook,
    source: k.streaming ? 'streaming' : 'polling',
    ...(k.flagged ? { stale: true } : {}),
  });
}

function toInput(state: State, nowMs: number, title: string, tsEvents: number[][]): ContestInput {
  const positions: PositionInput[] = SLOTS.map((s, i) =>
    position(`ct1:${s.group}:${s.side}`, state[i]!.flatMap((k, v) => (k ? [toQuote(i, v, k, tsEvents[i]![v]!)] : [])), {
      group_key: s.group,
      side_key: s.side,
      ladder_key: s.ladder,
      variable: s.variable,
      market_id: s.group,
      title: i === 0 ? title : `title ${s.group} ${s.side}`,
      participant_id: s.ladder ? 'total' : `p-${s.side}`,
    }),
  );
  return { contest_id: 'ct1', positions, now_ms: nowMs, label: 'A @ B', league_id: 'lg' };
}

/** A change: the clock moves, and some quotes change, appear or vanish; now and then the catalog changes too. */
interface Change {
  advanceMs: number;
  edits: { pos: number; venue: number; to: Knobs | null }[];
  rename: boolean;
}
const change: fc.Arbitrary<Change> = fc.record({
  advanceMs: fc.constantFrom(0, 2, 1_000, 25_000, 25_000, 35_000, 70_000, 200_000),
  edits: fc.array(fc.record({ pos: fc.integer({ min: 0, max: SLOTS.length - 1 }), venue: fc.integer({ min: 0, max: VENUES.length - 1 }), to: fc.option(knobs, { freq: 6, nil: null }) }), { maxLength: 3 }),
  rename: fc.constantFrom(false, false, false, false, false, false, false, true),
});
const start: fc.Arbitrary<State> = fc.array(fc.array(fc.option(knobs, { freq: 4, nil: null }), { minLength: VENUES.length, maxLength: VENUES.length }), {
  minLength: SLOTS.length,
  maxLength: SLOTS.length,
});

/** The snapshot without its run id (which differs between any two runs). */
const withoutRun = (json: string) => json.replace(/^\{"run":"[^"]*",/, '{');

function expectSameOutput(got: LiquidityJobOutput, want: LiquidityJobOutput): void {
  expect(withoutRun(got.snapshotJson)).toBe(withoutRun(want.snapshotJson));
  expect(got.positionsJson).toBe(want.positionsJson);
  // The stored parts and what changed since the previous run have nothing to compare with from scratch: check() holds them to the texts.
  const { snapshotJson: _a, positionsJson: _b, snapshotParts: _p, textsSince: _s, ...rest } = got;
  const { snapshotJson: _c, positionsJson: _d, ...restWant } = want;
  expect(rest).toEqual(restWant);
}

/** Runs the sequence, checking every run against the computation from scratch on the same stored snapshot. */
function check(initial: State, changes: Change[]): { continued: number; runs: number; seen: Set<string> } {
  const state = initial.map((row) => row.slice());
  const tsEvents = SLOTS.map(() => VENUES.map(() => NOW_MS - 5_000));
  const runs = new RunCache<ContestRun>({ maxEntries: 4, maxBytes: 2 ** 30, idleMs: 3_600_000 }, (r) => r.size());
  const mirror = new ContestText();
  let now = NOW_MS;
  let title = 'title 0';
  let prevJson: string | null = null;
  let prevDepth: [string, string][] = [];
  let prevQuotes: [string, string][] = [];
  let continued = 0;
  // What the runs found (to show a scenario reaches what it is about).
  const seen = new Set<string>();
  for (let k = 0; k <= changes.length; k++) {
    const c = changes[k - 1];
    if (c) {
      now += c.advanceMs;
      for (const e of c.edits) {
        state[e.pos]![e.venue] = e.to;
        tsEvents[e.pos]![e.venue]! += 1;
      }
      if (c.rename) title = `title ${k}`;
    }
    const input = toInput(state, now, title, tsEvents);
    const want = runFromScratch(input, parseSnapshot(prevJson, 'ct1'));
    const r = liquidityRun({ input, prevJson }, runs);
    expect('run' in r).toBe(true);
    if (!('run' in r)) return { continued, runs: k, seen };
    if (r.continued) continued++;
    // A run continues from memory exactly when it can: its last snapshot is the stored one and only quotes changed.
    expect(r.continued).toBe(k > 0 && !c!.rename);
    const got = jobOutput(r.run.text!, r.step.findings);
    expectSameOutput(got, want);
    // A thread that mirrors the texts from the patches alone assembles the same strings.
    mirror.apply(r.step.patch);
    expect(mirror.answerJson()).toBe(got.positionsJson);
    expect(mirror.snapshotJson()).toBe(got.snapshotJson);
    expect(mirror.depth()).toEqual(got.depth);
    expect(mirror.arbitrages).toBe(got.arbitragesJson);
    // The snapshot in its stored parts is the snapshot.
    expect(snapshotText(got.snapshotParts!.rest, got.snapshotParts!.quotes.map(([, q]) => q))).toBe(got.snapshotJson);
    // A continued run names the run it continued from and the depth and quote fields it changed:
    // those written over the previous ones give these (what the store writes instead of every field).
    expect(got.textsSince === undefined).toBe(!r.continued);
    expect(mirror.textsSince() === null).toBe(!r.continued);
    if (got.textsSince) {
      const { base, depth, quotes } = got.textsSince;
      expect(`{"run":${JSON.stringify(base)},`).toBe(prevJson!.slice(0, base.length + 10));
      expect([...new Map([...prevDepth, ...depth])]).toEqual(got.depth);
      const merged = new Map([...prevQuotes, ...quotes]);
      expect([...merged].filter(([, q]) => q !== '').sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual(got.snapshotParts!.quotes);
      expect(mirror.textsSince()).toEqual(got.textsSince);
    }
    prevDepth = got.depth;
    prevQuotes = got.snapshotParts!.quotes;
    prevJson = got.snapshotJson;
    for (const sig of got.signals) seen.add(sig.signal_type);
    if (got.changed.some((e) => e.is_stale)) seen.add('stale');
    if (got.ticks.some((t) => t.available === 0)) seen.add('removed');
    if (got.arbitragesChanged && got.arbitragesJson === '[]') seen.add('arbitrage cleared');
  }
  return { continued, runs: changes.length + 1, seen };
}

describe('the incremental run equals the computation from scratch', () => {
  it('for any contest and any sequence of changes: snapshots, answers, depth, ticks, changed entries, arbitrages, signals, outliers', () => {
    fc.assert(
      fc.property(start, fc.array(change, { minLength: 1, maxLength: 16 }), (s, cs) => {
        check(s, cs);
      }),
      { numRuns: 150 },
    );
  });

  it('through the situations the property reaches only by chance: arbitrage found, held and gone; a price move; stale by the clock; samples leaving the window', () => {
    // Both sides of the moneyline priced under 1.0 across venues a and b, with money behind them.
    const k = (price: number, over: Partial<Knobs> = {}): Knobs => ({ price, available: 5_000, levels: 2, fee: 0, flipped: false, staleAfter: 60_000, asOf: -1_000, realBook: true, streaming: true, flagged: false, ...over });
    const state: State = SLOTS.map(() => VENUES.map(() => null));
    state[0] = [k(0.45), k(0.5), k(0.5), null];
    state[1] = [k(0.5), k(0.5), k(0.52), null];
    state[2] = [k(0.5), k(0.52), k(0.5), null];
    state[3] = [k(0.5), k(0.5), k(0.52), null];
    const changes: Change[] = [
      { advanceMs: 2, edits: [{ pos: 1, venue: 1, to: k(0.48) }], rename: false },
      { advanceMs: 1_000, edits: [{ pos: 2, venue: 0, to: k(0.51) }], rename: false },
      // The moneyline's consensus moves by more than 0.05: a price move.
      { advanceMs: 35_000, edits: [{ pos: 0, venue: 1, to: k(0.7) }, { pos: 0, venue: 2, to: k(0.7) }, { pos: 1, venue: 2, to: k(0.32) }], rename: false },
      { advanceMs: 2, edits: [{ pos: 1, venue: 1, to: k(0.6) }], rename: false },
      // Past every freshness bound: everything turns stale with no quote changed.
      { advanceMs: 70_000, edits: [], rename: false },
      // Nothing changes for six minutes, a change every 25 s: the oldest samples leave the window.
      ...Array.from({ length: 15 }, () => ({ advanceMs: 25_000, edits: [], rename: false })),
      { advanceMs: 2, edits: [{ pos: 0, venue: 0, to: null }], rename: false },
    ];
    const r = check(state, changes);
    expect([r.continued, r.runs]).toEqual([changes.length, changes.length + 1]);
    expect([...r.seen].sort()).toEqual(['arbitrage', 'arbitrage cleared', 'price_move', 'removed', 'stale']);
  });
});

describe('when the thread’s run is not the stored snapshot, the job computes from the snapshot', () => {
  const k = (price: number): Knobs => ({ price, available: 5_000, levels: 1, fee: 1, flipped: false, staleAfter: 60_000, asOf: -1_000, realBook: true, streaming: true, flagged: false });
  const state: State = SLOTS.map((_, i) => VENUES.map((_, v) => k(0.4 + ((i + v) % 4) * 0.03)));
  const tsEvents = SLOTS.map(() => VENUES.map(() => NOW_MS - 5_000));
  const input = (now: number, price = 0.44) => {
    const s = state.map((row) => row.slice());
    s[0]![0] = k(price);
    return toInput(s, now, 'title', tsEvents);
  };
  const fresh = () => new RunCache<ContestRun>({ maxEntries: 8, maxBytes: 2 ** 30, idleMs: 60_000 }, (r) => r.size());

  it('continues from its run when the stored snapshot is that run’s, also when read back as a copy', () => {
    const runs = fresh();
    const first = runLiquidityJob({ input: input(NOW_MS), prevJson: null }, runs);
    const copy = JSON.parse(JSON.stringify({ s: first.snapshotJson })).s as string;
    const r = liquidityRun({ input: input(NOW_MS + 2, 0.46), prevJson: copy }, runs);
    expect('run' in r && r.continued).toBe(true);
  });

  it('evicted (or idle past its lifetime): from the snapshot, the same output', () => {
    for (const evict of [(runs: RunCache<ContestRun>) => runs.clear(), () => undefined]) {
      const runs = fresh();
      const first = runLiquidityJob({ input: input(NOW_MS), prevJson: null }, runs);
      evict(runs);
      // 61 s later the run has been idle past the cache's 60 s lifetime.
      const next = { input: input(NOW_MS + 61_000, 0.46), prevJson: first.snapshotJson };
      const r = liquidityRun(next, runs);
      expect('run' in r && r.continued).toBe(false);
      if ('run' in r) expectSameOutput(jobOutput(r.run.text!, r.step.findings), runFromScratch(next.input, parseSnapshot(first.snapshotJson, 'ct1')));
    }
  });

  it('an older snapshot (a newer run was computed but not stored): from the snapshot', () => {
    const runs = fresh();
    const first = runLiquidityJob({ input: input(NOW_MS), prevJson: null }, runs);
    runLiquidityJob({ input: input(NOW_MS + 2, 0.46), prevJson: first.snapshotJson }, runs);
    const next = { input: input(NOW_MS + 4, 0.47), prevJson: first.snapshotJson };
    const r = liquidityRun(next, runs);
    expect('run' in r && r.continued).toBe(false);
    if ('run' in r) expectSameOutput(jobOutput(r.run.text!, r.step.findings), runFromScratch(next.input, parseSnapshot(first.snapshotJson, 'ct1')));
  });

  it('another writer’s snapshot, or a copy of this run’s that differs in one character: from the snapshot', () => {
    const runs = fresh();
    const first = runLiquidityJob({ input: input(NOW_MS), prevJson: null }, runs);
    const other = runFromScratch(input(NOW_MS + 1, 0.45), parseSnapshot(first.snapshotJson, 'ct1'));
    const s = first.snapshotJson;
    const at = s.indexOf('"answer_digest":') + '"answer_digest":'.length;
    const altered = s.slice(0, at) + (s[at] === '1' ? '2' : '1') + s.slice(at + 1);
    expect(altered.length).toBe(s.length);
    expect(altered.slice(0, 40)).toBe(s.slice(0, 40));
    for (const prevJson of [altered, other.snapshotJson]) {
      const r = liquidityRun({ input: input(NOW_MS + 2, 0.46), prevJson }, runs);
      expect('run' in r && r.continued).toBe(false);
      // The cache now holds the run started from that snapshot; put the first run back for the next case.
      runs.clear();
      runs.set('ct1', (liquidityRun({ input: input(NOW_MS), prevJson: null }, runs) as { run: ContestRun }).run, NOW_MS);
    }
  });

  it('a snapshot from before run ids (positions_digest, no run): read, computed from it, the answer counted as changed once', () => {
    const legacy = JSON.parse(runFromScratch(input(NOW_MS), undefined).snapshotJson) as Record<string, unknown>;
    delete legacy.run;
    legacy.positions_digest = legacy.answer_digest;
    delete legacy.answer_digest;
    const prevJson = JSON.stringify(legacy);
    const runs = fresh();
    const out = runLiquidityJob({ input: input(NOW_MS + 2), prevJson }, runs);
    expect(out.changed).toEqual([]);
    expect(out.refreshRequired).toBe(true);
    expect(runLiquidityJob({ input: input(NOW_MS + 4), prevJson: out.snapshotJson }, runs).refreshRequired).toBe(false);
  });

  it('a run that throws midway (a quote no rule can judge) is dropped, not continued from half changed', () => {
    const runs = fresh();
    const first = runLiquidityJob({ input: input(NOW_MS), prevJson: null }, runs);
    const bad = input(NOW_MS + 2, 0.46);
    const q = bad.positions[0]!.quotes[0]!;
    const broken = { ...bad, positions: bad.positions.map((p, n) => (n ? p : { ...p, quotes: [{ ...q, source: 'carrier pigeon' as never, stale_after_ms: undefined }, ...p.quotes.slice(1)] })) };
    expect(() => runLiquidityJob({ input: broken, prevJson: first.snapshotJson }, runs)).toThrow();
    expect(runs.size).toBe(0);
    const next = { input: input(NOW_MS + 4, 0.47), prevJson: first.snapshotJson };
    const r = liquidityRun(next, runs);
    expect('run' in r && r.continued).toBe(false);
    if ('run' in r) expectSameOutput(jobOutput(r.run.text!, r.step.findings), runFromScratch(next.input, parseSnapshot(first.snapshotJson, 'ct1')));
  });

  it('an input a run refuses (a liquidity hash on two positions) is computed from scratch, and nothing is kept', () => {
    const runs = fresh();
    const i = input(NOW_MS);
    const dup = { ...i, positions: i.positions.map((p, n) => (n === 1 ? { ...p, quotes: [...p.quotes, i.positions[0]!.quotes[0]!] } : p)) };
    const out = runLiquidityJob({ input: dup, prevJson: null }, runs);
    expectSameOutput(out, runFromScratch(dup, undefined));
    expect(runs.size).toBe(0);
    // A change that would introduce one into a kept run: refused there, computed from scratch.
    const first = runLiquidityJob({ input: i, prevJson: null }, runs);
    const r = liquidityRun({ input: { ...dup, now_ms: NOW_MS + 2 }, prevJson: first.snapshotJson }, runs);
    expect('output' in r).toBe(true);
    if ('output' in r) expectSameOutput(r.output, runFromScratch({ ...dup, now_ms: NOW_MS + 2 }, parseSnapshot(first.snapshotJson, 'ct1')));
  });
});
