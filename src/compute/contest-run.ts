/**
 * The incremental liquidity run of one contest: the same computation as computeContest and the
 * job's signals (contest.ts, market-signals.ts, the same helpers), kept per position, per group and
 * per ladder side, so that the next change recomputes only what it touches.
 *
 * A change reprices a few quotes. What depends on them, and is recomputed:
 *   the position's flags (withheld, stale, outliers, median), visible quotes, tick entries, depth
 *   and texts; its group's consensus; a member whose consensus moved, its edges and its ladder
 *   side's fit (every position of the side carries the side's distribution); arbitrage of its group
 *   and that arbitrage's signal.
 * What depends on the clock, and is looked at on every run: a quote's staleness (a quote confirmed
 * long ago turns stale with no change: its position is recomputed), the depth of a position no
 * venue shows (stamped now), the consensus samples and price moves of every position, the expiry
 * of every signal. Everything else is kept from the previous run, its text included (contest-text.ts).
 *
 * A run starts from a stored snapshot (ContestRun.start, which computes everything) and then
 * advances by input deltas (advance). It refuses inputs whose snapshot texts it could not assemble
 * from per-position fragments the way JSON.stringify writes the whole objects (a liquidity or
 * position hash twice, or a hash JSON would not keep in insertion order): runLiquidityJob computes
 * those from scratch.
 */
import type { Arbitrage } from '../domain/arbitrage.js';
import type { PositionDefinition } from '../domain/catalog.js';
import type { SerializedSignal } from '../domain/signals.js';
import { groupArbitrage } from './arbitrage.js';
import { entryChanged, removalEntry, toChangedEntry } from './changes.js';
import { arbitrageContest, arbitrageSide, positionInput, contestCutoffs, membersConsensus, positionEdges, positionFlags, positionQuotes, seriesFit, seriesKey, type PositionFlags, type PositionQuotes } from './contest.js';
import { ContestText, emptyPatch, Part, put, distributionText, endText, headText, middleText, num, quotesText, type TextPatch } from './contest-text.js';
import { positionDepth } from './depth.js';
import { combineDigests, liquidityDigest } from './digest.js';
import type { ChangedEntry, ConsensusPoint, LiquidityFindings } from './job-types.js';
import {
  arbitrageSignal,
  liveQuotes,
  priceMoveSignal,
  SignalText,
  signalsDigest,
  signalSchedule,
  PRICE_MOVE_WINDOW_MS,
  SAMPLE_SPACING_MS,
  takeSample,
  type ConsensusSample,
  type ContestFacts,
  type LiveQuotes,
} from './market-signals.js';
import { round6 } from './precision.js';
import { DEFAULT_MAX_QUOTE_AGE_MS, isStaleAt, staleInstant } from './quotes.js';
import { InputMirror, type InputDelta } from './input-delta.js';
import { newRunId, type StoredSnapshot } from './snapshot.js';
import { removalTick, shouldSendTick } from './ticks.js';
import type { ContestInput, PositionInput, TickEntry, VenueQuote } from './types.js';


/** One run's findings and what it changed in the texts. */
export interface RunStep {
  findings: LiquidityFindings;
  patch: TextPatch;
}

/** What the run before left, as a step reads it: a stored snapshot, or the run's own memory. */
interface Before {
  entry(hash: string): TickEntry | undefined;
  consensus(i: number): number | null | undefined;
  samples(i: number): readonly ConsensusSample[];
  arbs: Readonly<Record<string, string>>;
  moves: Readonly<Record<string, string>>;
  answerDigest: number | undefined;
  arbitragesDigest: number | undefined;
  signals: { signals_digest?: number; signals_refresh_ms?: number } | undefined;
}

const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;
/** A key JSON.stringify writes where it was inserted: not an array index (those come first), not __proto__. */
const plainKey = (k: unknown): k is string => typeof k === 'string' && k !== '__proto__' && !(ARRAY_INDEX.test(k) && Number(k) < 4294967295);

const NULL_DIGEST = liquidityDigest('null');
const ISO = (ms: number) => new Date(ms).toISOString();

export class ContestRun {
  readonly contestId: string;
  /** The input the last run computed (positions carry their quotes as of it). */
  input: ContestInput;
  /** The id of the last run (its snapshot's `run`). */
  runId = '';
  /**
   * The texts as of the last run, on a thread that assembles them (its own runs' outputs); null on a
   * compute thread, whose texts the calling thread assembles from the patches (a mirror): there the
   * run keeps no second copy of them.
   */
  readonly text: ContestText | null;
  /** Text held by its ContestText (UTF-16 units), for its size. */
  private textChars = 0;

  private readonly n: number;
  private readonly positions: PositionInput[];
  private readonly facts: ContestFacts;
  private readonly arbContest: Arbitrage['contest'];
  private readonly defs: Map<string, PositionDefinition>;
  /** Group of each position, members of each group (position order), and the groups of two (arbitrage), in group order. */
  private readonly groupOf: Int32Array;
  private readonly groups: number[][];
  private readonly pairs: number[];
  /** Ladder side of each position (-1: none) and members of each side. */
  private readonly sideOf: Int32Array;
  private readonly sides: number[][];
  /** The input as kept for comparing the next one with. */
  private readonly inputs: InputMirror;
  /**
   * Per position, while the clock stays in (staleSince, freshUntil] no quote of it turns stale or
   * fresh (staleInstant); `exact` positions have a quote that needs isStaleAt on every run.
   */
  private readonly staleSince: Float64Array;
  private readonly freshUntil: Float64Array;
  private readonly exact: Uint8Array;
  /** Which position holds each liquidity hash (all quotes, withheld ones too). */
  private readonly owner = new Map<string, number>();
  /** `"position_hash":` per position (keys of the snapshot's maps). */
  private readonly keys: string[];

  // Per position.
  private readonly flags: PositionFlags[];
  private readonly out: PositionQuotes[];
  private readonly live: LiveQuotes[];
  private readonly outliers: string[][];
  private readonly raw: (number | null)[];
  private readonly weight: number[];
  private readonly consensus: (number | null)[];
  private readonly consensusNum: string[];
  private readonly liquiditiesJson: string[];
  private readonly depthNow: Uint8Array;
  private readonly samples: (ConsensusSample[] | undefined)[];
  /** Per position, its samples' text up to the newest one's time, and that text and the newest's rest as last patched. */
  private readonly samplesPrefix: string[];
  private readonly sentPrefix: string[];
  private readonly sentNewest: string[];
  private readonly samplesHeadOf: ConsensusSample[][];
  /** The oldest time among the samples before the newest, and whether the last run found a price move. */
  private readonly samplesFrom: Float64Array;
  private readonly moved: Uint8Array;
  /** Positions with one sample (their next takes a second: not quiet). */
  private readonly fewSamples: Uint8Array;
  /** The last run's clock: the time of every position's newest sample (see the samples pass in step). */
  private lastNow = Number.NaN;
  /** Digests of the answer's fragments: A, C, D (its side's, or null's), E per position. */
  private readonly parts: Float64Array;

  // Per ladder side.
  private readonly sideLine: (number | null)[];
  private readonly sideText: string[];
  private readonly sideDigest: number[];

  // Per group of two.
  private readonly arbs: (Arbitrage | null)[];
  private readonly arbTexts: string[];
  private readonly arbSignals: (SignalText | null)[];

  // The contest.
  private readonly entries = new Map<string, TickEntry>();
  private detected: Record<string, string> = {};
  private detectedText = '{}';
  private arbitragesJson = '[]';
  private arbitragesDigest = liquidityDigest('[]');
  private answerDigest = 0;
  private moves: Record<string, string> = {};
  private signalTexts: string[] = [];
  private signalsDigest = 0;
  private signalsRefreshMs: number | undefined;

  private constructor(input: ContestInput, keepText: boolean) {
    this.text = keepText ? new ContestText() : null;
    const n = input.positions.length;
    this.contestId = input.contest_id;
    this.n = n;
    this.positions = input.positions.map((p) => positionInput(p, p.quotes));
    this.input = { ...input, positions: this.positions };
    this.facts = { contest_id: input.contest_id, label: input.label ?? null, league_id: input.league_id ?? null };
    this.arbContest = arbitrageContest(input);
    this.defs = new Map(this.positions.map((p) => [p.position_hash, p]));
    this.groupOf = new Int32Array(n);
    this.sideOf = new Int32Array(n);
    const groups = new Map<string, number>();
    const sides = new Map<string, number>();
    this.groups = [];
    this.sides = [];
    for (let i = 0; i < n; i++) {
      const p = this.positions[i]!;
      let g = groups.get(p.group_key);
      if (g === undefined) {
        groups.set(p.group_key, (g = this.groups.length));
        this.groups.push([]);
      }
      this.groupOf[i] = g;
      this.groups[g]!.push(i);
      const key = seriesKey(p);
      if (key === null) this.sideOf[i] = -1;
      else {
        let s = sides.get(key);
        if (s === undefined) {
          sides.set(key, (s = this.sides.length));
          this.sides.push([]);
        }
        this.sideOf[i] = s;
        this.sides[s]!.push(i);
      }
    }
    this.pairs = [];
    for (let g = 0; g < this.groups.length; g++) if (this.groups[g]!.length === 2) this.pairs.push(g);
    this.keys = this.positions.map((p) => JSON.stringify(p.position_hash) + ':');
    this.inputs = new InputMirror(input);
    this.staleSince = new Float64Array(n);
    this.freshUntil = new Float64Array(n);
    this.exact = new Uint8Array(n);
    this.flags = new Array<PositionFlags>(n);
    this.out = new Array<PositionQuotes>(n);
    this.live = new Array<LiveQuotes>(n);
    this.outliers = new Array<string[]>(n);
    this.raw = new Array<number | null>(n).fill(null);
    this.weight = new Array<number>(n).fill(0);
    this.consensus = new Array<number | null>(n).fill(null);
    this.consensusNum = new Array<string>(n).fill('null');
    this.liquiditiesJson = new Array<string>(n).fill('');
    this.depthNow = new Uint8Array(n);
    this.samples = new Array<ConsensusSample[] | undefined>(n);
    this.samplesPrefix = this.keys.map((k) => k + '[[');
    this.sentPrefix = new Array<string>(n).fill('');
    this.sentNewest = new Array<string>(n).fill('');
    this.samplesHeadOf = new Array<ConsensusSample[]>(n).fill([]);
    this.samplesFrom = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    this.moved = new Uint8Array(n);
    this.fewSamples = new Uint8Array(n);
    this.parts = new Float64Array(4 * n);
    this.sideLine = new Array<number | null>(this.sides.length).fill(null);
    this.sideText = new Array<string>(this.sides.length).fill('');
    this.sideDigest = new Array<number>(this.sides.length).fill(NULL_DIGEST);
    this.arbs = new Array<Arbitrage | null>(this.pairs.length).fill(null);
    this.arbTexts = new Array<string>(this.pairs.length).fill('');
    this.arbSignals = new Array<SignalText | null>(this.pairs.length).fill(null);
  }

  /**
   * Computes `input` from scratch against `prev` (the stored snapshot of this contest, or undefined),
   * or null when the input is one this run refuses (see the module comment).
   */
  static start(input: ContestInput, prev: StoredSnapshot | undefined, keepText = true): { run: ContestRun; step: RunStep } | null {
    const run = new ContestRun(input, keepText);
    if (!run.regular()) return null;
    const quotes = prev?.quotes;
    const before: Before = {
      entry: (h) => (quotes !== undefined && Object.hasOwn(quotes, h) ? quotes[h] : undefined),
      consensus: (i) => prev?.consensus?.[run.positions[i]!.position_hash],
      samples: (i) => prev?.samples?.[run.positions[i]!.position_hash] ?? [],
      arbs: prev?.arbs ?? {},
      moves: prev?.moves ?? {},
      answerDigest: prev?.answer_digest,
      arbitragesDigest: prev?.arbitrages_digest,
      signals: prev,
    };
    const all = new Uint8Array(run.n).fill(1);
    return { run, step: run.step(all, before, quotes ? Object.values(quotes) : [], true) };
  }

  /** The quotes position `i` has as of the last run (undefined past the last position). */
  quotesOf(i: number): readonly VenueQuote[] | undefined {
    return this.positions[i]?.quotes;
  }

  /** The change from the input of the last run to `next`, or null when more than quotes and the clock changed. */
  delta(next: ContestInput): InputDelta | null {
    return this.inputs.delta(next);
  }

  /**
   * The next run: `delta` applied to the input of the last one. Null (and nothing changed) when
   * the new quotes would make the input one this run refuses.
   */
  advance(delta: InputDelta): RunStep | null {
    const changed = new Uint8Array(this.n);
    for (const [i] of delta.positions) {
      if (!(Number.isInteger(i) && i >= 0 && i < this.n)) return null;
      changed[i] = 1;
    }
    if (!this.rehome(delta.positions)) return null;
    for (const [i, quotes] of delta.positions) this.positions[i] = positionInput(this.positions[i]!, quotes);
    this.inputs.apply(delta);
    this.input = { ...this.input, now_ms: delta.now_ms };
    // A quote that turned stale (or fresh) with the clock changes its position as much as a new price.
    const now = delta.now_ms;
    const cutoffs = contestCutoffs(this.input);
    for (let i = 0; i < this.n; i++) {
      if (changed[i]) continue;
      if (this.exact[i]) {
        const quotes = this.positions[i]!.quotes;
        const stale = this.flags[i]!.stale;
        for (let j = 0; j < quotes.length; j++) {
          if (isStaleAt(quotes[j]!, cutoffs) !== stale[j]) {
            changed[i] = 1;
            break;
          }
        }
      } else if (!(this.staleSince[i]! < now && now <= this.freshUntil[i]!)) changed[i] = 1;
    }
    // The entries the recomputed positions had, in snapshot order: the candidates for removal.
    const gone: TickEntry[] = [];
    for (let i = 0; i < this.n; i++) if (changed[i]) for (const t of this.out[i]!.entries) gone.push(t);
    const entries = this.entries;
    const before: Before = {
      entry: (h) => entries.get(h),
      consensus: (i) => this.consensus[i],
      samples: (i) => this.samples[i] ?? [],
      arbs: this.detected,
      moves: this.moves,
      answerDigest: this.answerDigest,
      arbitragesDigest: this.arbitragesDigest,
      signals: { signals_digest: this.signalsDigest, signals_refresh_ms: this.signalsRefreshMs },
    };
    return this.step(changed, before, gone, false);
  }

  /** Whether `json` is the snapshot text of the last run (never, without its texts). */
  holds(json: string | null): boolean {
    return this.text !== null && this.text.holds(json);
  }

  /** The snapshot text this run last handed out (null when it keeps no texts, or handed none out since its last step). */
  heldSnapshot(): string | null {
    return this.text?.handedOut() ?? null;
  }

  /**
   * An estimate of the memory the run holds (bytes): its texts (when it keeps them) and its objects,
   * per quote (flags, entries, partner_liquidities and their JSON) and per position.
   */
  size(): number {
    return 2 * this.textChars + 1_500 * this.owner.size + 1_000 * this.n;
  }

  /** Unique position hashes and liquidity hashes, all of them plain keys; fills `owner`. */
  private regular(): boolean {
    if (this.defs.size !== this.n) return false;
    for (let i = 0; i < this.n; i++) {
      const p = this.positions[i]!;
      if (!plainKey(p.position_hash)) return false;
      for (const q of p.quotes) {
        if (!plainKey(q.liquidity_hash) || this.owner.has(q.liquidity_hash)) return false;
        this.owner.set(q.liquidity_hash, i);
      }
    }
    return true;
  }

  /** Moves the changed positions' quotes in `owner` to their new hashes, unless a hash would be held twice (then nothing changes). */
  private rehome(changes: InputDelta['positions']): boolean {
    const leaving = new Set<string>();
    for (const [i] of changes) for (const q of this.positions[i]!.quotes) leaving.add(q.liquidity_hash);
    const arriving = new Set<string>();
    for (const [, quotes] of changes) {
      for (const q of quotes) {
        const h = q.liquidity_hash;
        if (!plainKey(h) || arriving.has(h) || (this.owner.has(h) && !leaving.has(h))) return false;
        arriving.add(h);
      }
    }
    for (const h of leaving) this.owner.delete(h);
    for (const [i, quotes] of changes) for (const q of quotes) this.owner.set(q.liquidity_hash, i);
    return true;
  }

  /**
   * One run: recomputes the positions flagged in `dirty` and whatever depends on them, reads the
   * rest from the last run. `gone` are the previous entries of the recomputed positions (all of the
   * stored snapshot's from scratch), in snapshot order.
   */
  private step(dirty: Uint8Array, before: Before, gone: readonly TickEntry[], full: boolean): RunStep {
    const n = this.n;
    const positions = this.positions;
    const nowMs = this.input.now_ms;
    const nowIso = ISO(nowMs);
    const cutoffs = contestCutoffs(this.input);
    const patch = emptyPatch(newRunId(), nowMs);

    // Flags and quote outputs of the recomputed positions; their groups are recomputed next.
    const groupDirty = new Uint8Array(this.groups.length);
    const policy = this.input.max_quote_age_ms ?? DEFAULT_MAX_QUOTE_AGE_MS;
    for (let i = 0; i < n; i++) {
      if (!dirty[i]) continue;
      const p = positions[i]!;
      const flags = positionFlags(p.quotes, cutoffs);
      let since = Number.NEGATIVE_INFINITY;
      let until = Number.POSITIVE_INFINITY;
      let exact = 0;
      for (let j = 0; j < p.quotes.length; j++) {
        const t = staleInstant(p.quotes[j]!, policy);
        if (t !== t) exact = 1;
        else if (flags.stale[j]) since = Math.max(since, t);
        else until = Math.min(until, t);
      }
      this.staleSince[i] = since;
      this.freshUntil[i] = until;
      this.exact[i] = exact;
      const out = positionQuotes(p, flags);
      this.flags[i] = flags;
      this.out[i] = out;
      this.live[i] = liveQuotes(out.liquidities);
      this.outliers[i] = out.entries.filter((t) => t.outlier).map((t) => t.liquidity_hash);
      this.liquiditiesJson[i] = JSON.stringify(out.liquidities);
      groupDirty[this.groupOf[i]!] = 1;
    }

    // Consensus of those groups; a member whose consensus or weight moved refits its ladder side.
    const consensusMoved = new Uint8Array(n);
    const lastConsensus = full ? null : this.consensus.slice();
    const sideDirty = new Uint8Array(this.sides.length);
    for (let g = 0; g < this.groups.length; g++) {
      if (!groupDirty[g]) continue;
      const members = this.groups[g]!;
      const result = membersConsensus(members.map((i) => [positions[i]!, this.flags[i]!] as const));
      for (let m = 0; m < members.length; m++) {
        const i = members[m]!;
        const { price, weight } = result[m]!;
        if (full || price !== this.raw[i] || weight !== this.weight[i]) {
          this.raw[i] = price;
          this.weight[i] = weight;
          if (this.sideOf[i]! >= 0) sideDirty[this.sideOf[i]!] = 1;
        }
        const rounded = price === null ? null : round6(price);
        if (full || rounded !== this.consensus[i]) {
          this.consensus[i] = rounded;
          consensusMoved[i] = 1;
        }
      }
    }

    // Ladder sides: one distribution text per side, and the line its positions carry.
    const lineMoved = new Uint8Array(n);
    for (let s = 0; s < this.sides.length; s++) {
      if (!sideDirty[s]) continue;
      const members = this.sides[s]!;
      const fit = seriesFit(members.map((i) => [positions[i]!.variable, this.raw[i]!, this.weight[i]!] as const));
      const text = distributionText(fit.distribution);
      if (full || text !== this.sideText[s]) {
        this.sideText[s] = text;
        this.sideDigest[s] = liquidityDigest(text);
        put(patch, Part.D, s, text);
        for (const i of members) this.parts[4 * i + 2] = this.sideDigest[s]!;
      }
      if (full || fit.line !== this.sideLine[s]) {
        this.sideLine[s] = fit.line;
        for (const i of members) lineMoved[i] = 1;
      }
    }

    // The answer's fragments of the positions that changed, and the depth.
    for (let i = 0; i < n; i++) {
      const p = positions[i]!;
      if (full) {
        const head = headText(p);
        this.parts[4 * i] = liquidityDigest(head);
        if (this.sideOf[i]! < 0) this.parts[4 * i + 2] = NULL_DIGEST;
      }
      const c = this.consensus[i] ?? null;
      if (dirty[i] || consensusMoved[i]) {
        const e = endText(positionEdges(p, this.flags[i]!, c), this.out[i]!.paperBettable, this.liquiditiesJson[i]!);
        this.parts[4 * i + 3] = liquidityDigest(e);
        put(patch, Part.E, i, e);
      }
      if (consensusMoved[i] || lineMoved[i]) {
        const side = this.sideOf[i]!;
        const middle = middleText(c, side < 0 ? null : (this.sideLine[side] ?? null));
        this.parts[4 * i + 1] = liquidityDigest(middle);
        put(patch, Part.C, i, middle);
      }
      if (consensusMoved[i]) {
        this.consensusNum[i] = num(c);
        put(patch, Part.K, i, this.keys[i] + this.consensusNum[i]);
      }
      if (dirty[i]) put(patch, Part.Q, i, quotesText(this.out[i]!.entries));
      if (dirty[i] || this.depthNow[i]) {
        const d = positionDepth(p.position_hash, p.quotes, this.flags[i]!.withheld, nowIso);
        // A position no venue shows is stamped with the clock: its depth changes on every run.
        this.depthNow[i] = d.partners.length === 0 ? 1 : 0;
        put(patch, Part.Depth, i, JSON.stringify(d));
      }
    }
    const answerDigest = combineDigests(this.parts);

    // Ticks and changed entries: the recomputed positions' entries against the last ones, then the removals.
    const ticks: TickEntry[] = [];
    const changed: ChangedEntry[] = [];
    for (let i = 0; i < n; i++) {
      if (!dirty[i]) continue;
      for (const t of this.out[i]!.entries) {
        const last = before.entry(t.liquidity_hash);
        if (shouldSendTick(last, t)) ticks.push(t);
        if (entryChanged(last, t)) changed.push(toChangedEntry(t));
      }
    }
    for (const t of gone) this.entries.delete(t.liquidity_hash);
    for (let i = 0; i < n; i++) if (dirty[i]) for (const t of this.out[i]!.entries) this.entries.set(t.liquidity_hash, t);
    for (const t of gone) {
      if (this.entries.has(t.liquidity_hash)) continue;
      ticks.push(removalTick(t, nowMs, nowIso));
      const entry = removalEntry(t, nowIso);
      if (entry) changed.push(entry);
    }

    // Consensus history points: every consensus that moved, against the stored one.
    const consensus: ConsensusPoint[] = [];
    for (let i = 0; i < n; i++) {
      const c = this.consensus[i] ?? null;
      if (c !== null && (lastConsensus === null ? before.consensus(i) : lastConsensus[i]) !== c) consensus.push({ position_hash: positions[i]!.position_hash, price: c });
    }

    // Arbitrage of the groups of two with a recomputed member.
    const ctx = { contest: this.arbContest, nowIso, detectedBefore: before.arbs };
    let arbsMoved = full;
    for (let k = 0; k < this.pairs.length; k++) {
      const members = this.groups[this.pairs[k]!]!;
      const a = members[0]!;
      const b = members[1]!;
      if (!full && !dirty[a] && !dirty[b]) continue;
      const arb = groupArbitrage(arbitrageSide(positions[a]!, this.flags[a]!), arbitrageSide(positions[b]!, this.flags[b]!), ctx);
      const text = arb === null ? '' : JSON.stringify(arb);
      if (full || text !== this.arbTexts[k]) {
        this.arbs[k] = arb;
        this.arbTexts[k] = text;
        this.arbSignals[k] = null;
        if (arb !== null) {
          const s = arbitrageSignal(arb, this.defs, this.facts, nowMs);
          if (s) this.arbSignals[k] = new SignalText(s, nowMs);
        }
        arbsMoved = true;
      }
    }
    if (arbsMoved) {
      const texts: string[] = [];
      const detected: Record<string, string> = {};
      for (const a of this.arbs) {
        if (a === null) continue;
        detected[a.arbitrage_id] = a.detected_at;
      }
      for (const t of this.arbTexts) if (t) texts.push(t);
      const json = `[${texts.join(',')}]`;
      this.detected = detected;
      const detectedText = JSON.stringify(detected);
      if (full || detectedText !== this.detectedText) patch.detected = this.detectedText = detectedText;
      if (json !== this.arbitragesJson || full) {
        this.arbitragesJson = json;
        this.arbitragesDigest = liquidityDigest(json);
        patch.arbitrages = json;
      }
    }
    const arbitrageCount = this.detectedCount();

    // Samples and price moves of every position with a consensus, then the arbitrage signals.
    // Every run takes a sample of every such position, so the newest sample of each is the last
    // run's (kept implicit: lastNow). When this run is within the sample spacing of the last and no
    // sample leaves the window, a position whose consensus and venues stayed as they were only has
    // that newest sample's time move to now (sampleInPlace below, which holds for all of them at
    // once then), and has no price move unless it had one: those positions are not visited.
    const found: SignalText[] = [];
    const moves: Record<string, string> = {};
    let from = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) if (this.samplesFrom[i]! < from) from = this.samplesFrom[i]!;
    const quiet = !full && nowMs >= this.lastNow && nowMs - this.lastNow < SAMPLE_SPACING_MS && from >= nowMs - PRICE_MOVE_WINDOW_MS;
    for (let i = 0; i < n; i++) {
      if (quiet && !dirty[i] && !consensusMoved[i] && !this.moved[i] && !this.fewSamples[i]) continue;
      const c = this.consensus[i] ?? null;
      const kept = this.samples[i];
      if (kept !== undefined) kept[kept.length - 1]![0] = this.lastNow;
      if (c === null) {
        this.samples[i] = undefined;
        this.samplesFrom[i] = Number.POSITIVE_INFINITY;
        this.fewSamples[i] = 0;
        this.moved[i] = 0;
        this.sampleText(patch, i, '', '');
        continue;
      }
      const live = this.live[i]!;
      const newest = `,${this.consensusNum[i]},${live.venues}]]`;
      if (!full && this.sampleInPlace(i, nowMs, c, live.venues)) {
        // takeSample would replace the newest sample with this run's, which only moves its time: no
        // sample before it changed and the newest price is the last run's, so the largest move
        // from an earlier sample is the last run's too, and with none found then there is none now.
        this.sampleText(patch, i, this.samplesPrefix[i]!, newest);
        if (!this.moved[i]) continue;
      } else {
        const taken = takeSample(before.samples(i), [nowMs, c, live.venues]);
        this.samples[i] = taken;
        this.fewSamples[i] = taken.length < 2 ? 1 : 0;
        this.sampleText(patch, i, this.samplesHeadText(i, taken), newest);
      }
      const move = priceMoveSignal({ def: positions[i]!, consensus: c, venues: live.venues, available: live.available, venueList: live.venueList }, this.samples[i]!, this.facts, nowMs, before.moves);
      this.moved[i] = move ? 1 : 0;
      if (move) {
        found.push(new SignalText(move, nowMs));
        moves[move.dedupe_key] = move.detected_at;
      }
    }
    this.lastNow = nowMs;
    for (const t of this.arbSignals) if (t !== null) found.push(t);
    const bare = found.map((t) => t.bare);
    if (full || !sameStrings(bare, this.signalTexts)) {
      this.signalTexts = bare;
      this.signalsDigest = signalsDigest(bare);
    }
    const soonest = found.reduce((m, t) => Math.min(m, t.expiresMs(nowMs)), Number.POSITIVE_INFINITY);
    const schedule = signalSchedule(this.signalsDigest, soonest, nowMs, before.signals);
    // Serialized only when they are to be written (the job output carries them then only).
    const signals: SerializedSignal[] = schedule.due ? found.map((t) => t.serialized(nowMs)) : [];
    this.signalsRefreshMs = schedule.refreshMs;
    this.moves = moves;

    const outliers: string[] = [];
    for (let i = 0; i < n; i++) {
      const o = this.outliers[i]!;
      for (let k = 0; k < o.length; k++) outliers.push(o[k]!);
    }

    patch.digests = `,"answer_digest":${answerDigest},"arbitrages_digest":${this.arbitragesDigest}`;
    patch.tail = `,"moves":${JSON.stringify(moves)},"signals_digest":${this.signalsDigest}` + (schedule.refreshMs === undefined ? '}' : `,"signals_refresh_ms":${num(schedule.refreshMs)}}`);

    if (full) {
      patch.full = {
        contestId: this.contestId,
        heads: positions.map((p) => headText(p)),
        hashes: positions.map((p) => p.position_hash),
        sideOf: Array.from(this.sideOf),
        sides: this.sides.length,
      };
      patch.arbitrages = this.arbitragesJson;
      patch.detected = this.detectedText;
    }
    this.runId = patch.run;
    if (this.text) {
      this.text.apply(patch);
      this.textChars = this.text.chars;
    }
    const answerChanged = before.answerDigest !== answerDigest;
    this.answerDigest = answerDigest;
    return {
      patch,
      findings: {
        ticks,
        changed,
        refreshRequired: answerChanged && changed.length === 0,
        consensus,
        outliers,
        positions: n,
        // A first run with no arbitrage has nothing to clear; after a snapshot without the digest, any set is news.
        arbitragesChanged: before.arbitragesDigest === undefined ? arbitrageCount > 0 : before.arbitragesDigest !== this.arbitragesDigest,
        signals,
        signalsDue: schedule.due,
      },
    };
  }

  private detectedCount(): number {
    let k = 0;
    for (const a of this.arbs) if (a !== null) k++;
    return k;
  }

  /**
   * takeSample's answer when it only replaces the newest sample (the last run's, same price and
   * venues, closer than the spacing; every sample still in the window; the clock not gone back),
   * done in place: the newest sample's time set to now. False (nothing changed) otherwise.
   */
  private sampleInPlace(i: number, nowMs: number, price: number, venues: number): boolean {
    const samples = this.samples[i];
    if (samples === undefined || samples.length < 2) return false;
    const last = samples[samples.length - 1]!;
    const from = nowMs - PRICE_MOVE_WINDOW_MS;
    if (last[1] !== price || last[2] !== venues || !(nowMs >= last[0] && nowMs - last[0] < SAMPLE_SPACING_MS && last[0] >= from)) return false;
    if (!(this.samplesFrom[i]! >= from) || this.samplesHeadOf[i]!.length !== samples.length - 1) return false;
    last[0] = nowMs;
    return true;
  }

  /**
   * The text of a position's samples before the newest one's time (`"hash":[[…],…,[`), from its
   * samples now. The samples before the newest are the last run's as a rule, and so is their text.
   */
  private samplesHeadText(i: number, taken: readonly ConsensusSample[]): string {
    const headOf = this.samplesHeadOf[i]!;
    let same = headOf.length === taken.length - 1;
    for (let k = 0; same && k < headOf.length; k++) same = headOf[k] === taken[k];
    if (!same) {
      const head = taken.slice(0, -1);
      this.samplesHeadOf[i] = head;
      this.samplesFrom[i] = head.reduce((m, x) => Math.min(m, x[0]), Number.POSITIVE_INFINITY);
      this.samplesPrefix[i] = this.keys[i] + (head.length ? JSON.stringify(head).slice(0, -1) + ',[' : '[[');
    }
    return this.samplesPrefix[i]!;
  }

  /** Records a position's samples text (prefix, then this run's time, then `newest`; none: both empty), patching what changed. */
  private sampleText(patch: TextPatch, i: number, prefix: string, newest: string): void {
    if (prefix !== this.sentPrefix[i]) put(patch, Part.SP, i, (this.sentPrefix[i] = prefix));
    if (newest !== this.sentNewest[i]) put(patch, Part.SS, i, (this.sentNewest[i] = newest));
  }
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
