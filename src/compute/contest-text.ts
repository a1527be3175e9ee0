/**
 * The texts a liquidity run stores (the REST answer `liq`, the snapshot `snap`, the depth hash), kept
 * as fragments so a run that changes a few positions rebuilds a few fragments and reuses the rest
 * verbatim:
 *
 *   answer    [ A0 C0 D(s0) E0 , A1 C1 D(s1) E1 , … ]       one Position per position i:
 *             A  its catalog fields (fixed while the catalog is)
 *             C  consensus_price and consensus_line
 *             D  distribution_prices of its ladder side s (shared by the side's positions), or null
 *             E  edges, paper_bettable and partner_liquidities
 *   snapshot  {"run":…,"contest_id":…,"quotes":{ Q0 , Q1 , … },"arbs":ARBS,"consensus":{ K0 , K1 , … }
 *             DIGESTS,"samples":{ SP0 now SS0 , … } TAIL
 *             Q  the tick entries of a position's visible quotes; ARBS the arbitrages' detected_at;
 *             K  a position's consensus price; SP, SS its samples before and after the newest
 *             sample's time, which is the run's clock (so a position's samples text changes on
 *             every run, but its fragments rarely); DIGESTS and TAIL (moves, signal state) small
 *   depth     one [position_hash, Depth JSON] per position
 *
 * Every fragment is exactly what JSON.stringify writes for that part, so the assembled texts equal
 * JSON.stringify of the whole objects (test/unit/compute/contest-run.test.ts holds them to it).
 *
 * A run produces a TextPatch (the fragments it changed, or all of them); ContestText applies it.
 * The run keeps one ContestText, and a thread that hands runs to a worker keeps a mirror fed by the
 * same patches (pipelines/compute-pool.ts), so only changed fragments cross between threads. The
 * big texts are assembled with `+` (V8 rope strings, no copy): a 500 KB string allocated per change
 * costs more in page faults than the whole computation, and the texts are copied once anyway, when
 * written to Redis. Fragments are grouped in blocks of BLOCK positions, each block's rope cached,
 * so assembling costs a few dozen concatenations, not one per fragment.
 */
import type { PositionDefinition } from '../domain/catalog.js';
import { combineDigests, liquidityDigest } from './digest.js';
import { snapshotRun } from './snapshot.js';
import type { DistributionPoint, Edge, PositionLiquidity, TickEntry } from './types.js';

/** Positions per cached block of the assembled texts. */
const BLOCK = 16;

/**
 * Changed fragments: the position (or ladder side) of each, and its text. Two flat arrays rather
 * than a pair per fragment: a patch crosses threads on every change, and each object costs more
 * to clone than its text.
 */
export interface Fragments {
  at: number[];
  text: string[];
}

export const fragments = (): Fragments => ({ at: [], text: [] });

/** What one run changed in the texts. */
export interface TextPatch {
  /** The run that produced the texts (the snapshot's `run`). */
  run: string;
  /** Set when the patch carries every fragment (a run from scratch): the mirror starts over. */
  full?: {
    contestId: string;
    /** A of every position, its hash (the depth field) and its ladder side (-1: none). */
    heads: string[];
    hashes: string[];
    sideOf: number[];
    sides: number;
  };
  c: Fragments;
  d: Fragments;
  e: Fragments;
  q: Fragments;
  depth: Fragments;
  /** The snapshot's `consensus` members, one per position (`"hash":price`). */
  k: Fragments;
  /** The snapshot's `samples` member of each position, around the newest sample's time (this run's):
   *  `sp` up to it (empty: the position has no samples), `ss` after it. */
  sp: Fragments;
  ss: Fragments;
  now: number;
  /** The snapshot's answer_digest and arbitrages_digest members; `tail` the members after `samples`. */
  digests: string;
  tail: string;
  /** The arbitrages as JSON and the snapshot's `arbs` member (detected_at by id), when they changed (or on a full patch). */
  arbitrages?: string;
  detected?: string;

}

/** The catalog fields a Position carries, in its order. */
const HEAD_FIELDS = ['position_hash', 'contest_id', 'title', 'market_key', 'side_key', 'variable', 'participant_id', 'participant_name', 'participant_image_url'] as const;

/** JSON of a finite or non-finite number (JSON.stringify writes null for NaN and ±Infinity). */
export const num = (x: number | null): string => (x === null || !Number.isFinite(x) ? 'null' : String(x));

/** A: the catalog fields of a Position, open for C (so the object's `}` comes at the end of E). */
export function headText(p: Pick<PositionDefinition, (typeof HEAD_FIELDS)[number]>): string {
  const text = JSON.stringify({
    position_hash: p.position_hash,
    contest_id: p.contest_id,
    title: p.title,
    market_key: p.market_key,
    side_key: p.side_key,
    variable: p.variable,
    participant_id: p.participant_id,
    participant_name: p.participant_name,
    participant_image_url: p.participant_image_url,
  });
  return text === '{}' ? '{' : text.slice(0, -1) + ',';
}

/** C: consensus_price and consensus_line, up to the distribution's value. */
export const middleText = (consensus: number | null, line: number | null): string =>
  `"consensus_price":${num(consensus)},"consensus_line":${num(line)},"distribution_prices":`;

/** D: one ladder side's distribution_prices. */
export const distributionText = (d: readonly DistributionPoint[] | null): string => JSON.stringify(d);

/** E: edges, paper_bettable and partner_liquidities (the last given as its JSON), closing the Position. */
export const endText = (edges: readonly Edge[], paperBettable: boolean, liquiditiesJson: string): string =>
  `,"edges":${JSON.stringify(edges)},"paper_bettable":${paperBettable},"partner_liquidities":${liquiditiesJson}}`;

/** Q: the snapshot members of a position's visible quotes (`"hash":{entry},…`), empty when none. */
export function quotesText(entries: readonly TickEntry[]): string {
  let s = '';
  for (let k = 0; k < entries.length; k++) {
    const t = entries[k]!;
    s += (k ? ',' : '') + JSON.stringify(t.liquidity_hash) + ':' + JSON.stringify(t);
  }
  return s;
}

/**
 * The digest of a REST answer, its as_of values aside: the digests of its fragments (A, C, D, E of
 * every position), combined. An incremental run keeps the fragments' digests and rehashes only the
 * ones it rebuilt; this computes the same from the whole answer.
 */
export function answerDigest(positions: readonly PositionLiquidity[]): number {
  const parts = new Float64Array(4 * positions.length);
  positions.forEach((p, i) => {
    parts[4 * i] = liquidityDigest(headText(p));
    parts[4 * i + 1] = liquidityDigest(middleText(p.consensus_price, p.consensus_line));
    parts[4 * i + 2] = liquidityDigest(distributionText(p.distribution_prices));
    parts[4 * i + 3] = liquidityDigest(endText(p.edges, p.paper_bettable, JSON.stringify(p.partner_liquidities)));
  });
  return combineDigests(parts);
}

const every = (texts: string[]): Fragments => ({ at: texts.map((_, i) => i), text: texts.slice() });

/** The snapshot's opening, up to the first quote. */
const snapshotHead = (run: string, contestId: string): string => `{"run":${JSON.stringify(run)},"contest_id":${JSON.stringify(contestId)},"quotes":{`;

/**
 * The fragments of one contest's texts, and their assembly. Built from a full patch, then advanced
 * by each later run's patch.
 */
export class ContestText {
  run = '';
  contestId = '';
  private heads: string[] = [];
  private hashes: string[] = [];
  private sideOf: number[] = [];
  private c: string[] = [];
  private d: string[] = [];
  private e: string[] = [];
  private q: string[] = [];
  private depthPairs: [string, string][] = [];
  private tail = '';
  private digests = '';
  private detected = '{}';
  private k: string[] = [];
  private sp: string[] = [];
  private ss: string[] = [];
  private now = 0;
  arbitrages = '[]';
  /**
   * Per position, A C D E as one rope (null: a part changed); per block, the ropes joined (null:
   * a member changed). Built when the texts are assembled, not when a patch comes: a compute
   * thread applies every patch but never assembles (the calling thread does).
   */
  private positionRope: (string | null)[] = [];
  private answerBlocks: (string | null)[] = [];
  private quoteBlocks: (string | null)[] = [];
  private consensusBlocks: (string | null)[] = [];
  private sideMembers: number[][] = [];
  /** The snapshot text last assembled (for its length and identity). */
  private lastSnapshot: string | null = null;
  private lastAnswer: string | null = null;
  /** Sum of the fragments' lengths (UTF-16 code units): with the texts handed out, what the texts hold in memory. */
  chars = 0;

  get positions(): number {
    return this.heads.length;
  }

  apply(patch: TextPatch): void {
    const f = patch.full;
    if (f) {
      const n = f.heads.length;
      this.contestId = f.contestId;
      this.heads = f.heads;
      this.hashes = f.hashes;
      this.sideOf = f.sideOf;
      this.c = new Array<string>(n).fill('');
      this.e = new Array<string>(n).fill('');
      this.q = new Array<string>(n).fill('');
      this.k = new Array<string>(n).fill('');
      this.sp = new Array<string>(n).fill('');
      this.ss = new Array<string>(n).fill('');
      this.d = new Array<string>(f.sides).fill('null');
      this.depthPairs = f.hashes.map((h) => [h, ''] as [string, string]);
      this.positionRope = new Array<string | null>(n).fill(null);
      const blocks = Math.ceil(n / BLOCK);
      this.answerBlocks = new Array<string | null>(blocks).fill(null);
      this.quoteBlocks = new Array<string | null>(blocks).fill(null);
      this.consensusBlocks = new Array<string | null>(blocks).fill(null);
      this.sideMembers = Array.from({ length: f.sides }, () => []);
      f.sideOf.forEach((side, i) => side >= 0 && this.sideMembers[side]!.push(i));
      this.arbitrages = '[]';
      this.detected = '{}';
      this.tail = '';
      this.digests = '';
      this.chars = 0;
      for (const h of f.heads) this.chars += h.length + 4;
    }
    this.run = patch.run;
    const { c, d, e, q, depth, k: kk, sp, ss } = patch;
    let chars = this.chars;
    for (let k = 0; k < c.at.length; k++) {
      const i = c.at[k]!;
      chars += c.text[k]!.length - this.c[i]!.length;
      this.c[i] = c.text[k]!;
      this.stale(i);
    }
    for (let k = 0; k < e.at.length; k++) {
      const i = e.at[k]!;
      chars += e.text[k]!.length - this.e[i]!.length;
      this.e[i] = e.text[k]!;
      this.stale(i);
    }
    for (let k = 0; k < d.at.length; k++) {
      const side = d.at[k]!;
      chars += d.text[k]!.length - this.d[side]!.length;
      this.d[side] = d.text[k]!;
      for (const i of this.sideMembers[side]!) this.stale(i);
    }
    for (let k = 0; k < q.at.length; k++) {
      const i = q.at[k]!;
      chars += q.text[k]!.length - this.q[i]!.length;
      this.q[i] = q.text[k]!;
      this.quoteBlocks[(i / BLOCK) | 0] = null;
    }
    for (let k = 0; k < depth.at.length; k++) {
      const i = depth.at[k]!;
      chars += depth.text[k]!.length - this.depthPairs[i]![1].length;
      this.depthPairs[i] = [this.hashes[i]!, depth.text[k]!];
    }
    for (let k = 0; k < kk.at.length; k++) {
      const i = kk.at[k]!;
      chars += kk.text[k]!.length - this.k[i]!.length;
      this.k[i] = kk.text[k]!;
      this.consensusBlocks[(i / BLOCK) | 0] = null;
    }
    for (let k = 0; k < sp.at.length; k++) {
      const i = sp.at[k]!;
      chars += sp.text[k]!.length - this.sp[i]!.length;
      this.sp[i] = sp.text[k]!;
    }
    for (let k = 0; k < ss.at.length; k++) {
      const i = ss.at[k]!;
      chars += ss.text[k]!.length - this.ss[i]!.length;
      this.ss[i] = ss.text[k]!;
    }
    this.now = patch.now;
    chars += patch.tail.length - this.tail.length + patch.digests.length - this.digests.length;
    this.tail = patch.tail;
    this.digests = patch.digests;
    if (patch.arbitrages !== undefined) {
      chars += patch.arbitrages.length - this.arbitrages.length;
      this.arbitrages = patch.arbitrages;
    }
    if (patch.detected !== undefined) {
      chars += patch.detected.length - this.detected.length;
      this.detected = patch.detected;
    }
    this.chars = chars;
    this.lastSnapshot = null;
  }

  private stale(i: number): void {
    this.positionRope[i] = null;
    this.answerBlocks[(i / BLOCK) | 0] = null;
    this.lastAnswer = null;
  }

  /** The REST answer: the Position[] as JSON. */
  answerJson(): string {
    if (this.lastAnswer !== null) return this.lastAnswer;
    let s = '[';
    for (let b = 0; b < this.answerBlocks.length; b++) {
      let block = this.answerBlocks[b];
      if (block == null) {
        block = '';
        const end = Math.min(this.heads.length, (b + 1) * BLOCK);
        for (let i = b * BLOCK; i < end; i++) {
          let rope = this.positionRope[i];
          if (rope == null) {
            const side = this.sideOf[i]!;
            rope = this.positionRope[i] = this.heads[i]! + this.c[i]! + (side < 0 ? 'null' : this.d[side]!) + this.e[i]!;
          }
          block = i === b * BLOCK ? rope : block + ',' + rope;
        }
        this.answerBlocks[b] = block;
      }
      s = b ? s + ',' + block : s + block;
    }
    return (this.lastAnswer = s + ']');
  }

  /** The stored snapshot as JSON (the same string until the next patch). */
  snapshotJson(): string {
    return (this.lastSnapshot ??= this.assembleSnapshot());
  }

  /**
   * Whether `json` is this run's snapshot text: the text snapshotJson handed out (the same string,
   * or an equal copy as read back from Redis), or where none was handed out (a worker thread, whose
   * texts the calling thread assembles), a text naming this run, of its length. Never reads more of
   * a string than that: the texts are ropes, and reading one copies it whole.
   */
  holds(json: string | null): boolean {
    if (json === null || this.run === '') return false;
    const last = this.lastSnapshot;
    if (last !== null) return json.length === last.length && json === last;
    return json.length === this.assembleSnapshot().length && snapshotRun(json) === this.run;
  }

  private assembleSnapshot(): string {
    let s = snapshotHead(this.run, this.contestId);
    let any = false;
    for (let b = 0; b < this.quoteBlocks.length; b++) {
      let block = this.quoteBlocks[b];
      if (block == null) {
        block = '';
        const end = Math.min(this.heads.length, (b + 1) * BLOCK);
        for (let i = b * BLOCK; i < end; i++) {
          const q = this.q[i]!;
          if (q) block = block ? block + ',' + q : q;
        }
        this.quoteBlocks[b] = block;
      }
      if (block) {
        s = any ? s + ',' + block : s + block;
        any = true;
      }
    }
    s = s + '},"arbs":' + this.detected + ',"consensus":{';
    for (let b = 0; b < this.consensusBlocks.length; b++) {
      let block = this.consensusBlocks[b];
      if (block == null) {
        block = '';
        const end = Math.min(this.heads.length, (b + 1) * BLOCK);
        for (let i = b * BLOCK; i < end; i++) block = i === b * BLOCK ? this.k[i]! : block + ',' + this.k[i]!;
        this.consensusBlocks[b] = block;
      }
      s = b ? s + ',' + block : s + block;
    }
    s = s + '}' + this.digests + ',"samples":{';
    // Every position's newest sample is this run's: no block of them lasts from one run to the next.
    const now = num(this.now);
    let first = true;
    for (let i = 0; i < this.sp.length; i++) {
      const prefix = this.sp[i]!;
      if (!prefix) continue;
      s = (first ? s : s + ',') + prefix + now + this.ss[i]!;
      first = false;
    }
    return s + '}' + this.tail;
  }

  /** Every fragment, as a patch that starts a mirror over (for a thread that has none). */
  fullPatch(): TextPatch {
    return {
      run: this.run,
      full: { contestId: this.contestId, heads: this.heads, hashes: this.hashes, sideOf: this.sideOf, sides: this.d.length },
      c: every(this.c),
      d: every(this.d),
      e: every(this.e),
      q: every(this.q),
      depth: every(this.depthPairs.map(([, s]) => s)),
      tail: this.tail,
      arbitrages: this.arbitrages,
      detected: this.detected,
      k: every(this.k),
      sp: every(this.sp),
      ss: every(this.ss),
      now: this.now,
      digests: this.digests,
    };
  }

  /** The depth hash's fields: [position_hash, Depth JSON] per position (a new array each time). */
  depth(): [string, string][] {
    return this.depthPairs.slice();
  }
}
