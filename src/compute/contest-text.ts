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
import { positionHead } from './contest.js';
import { combineDigests, liquidityDigest } from './digest.js';
import type { SnapshotParts, TextsSince } from '../domain/quotes.js';
import type { DistributionPoint, Edge, PositionLiquidity, TickEntry } from './types.js';

/** Positions per cached block of the assembled texts. */
const BLOCK = 16;

/** The kinds of fragment a patch carries (see the module comment); each is per position but D, per ladder side. */
export const Part = {
  C: 0,
  D: 1,
  E: 2,
  Q: 3,
  Depth: 4,
  /** The snapshot's `consensus` member of a position (`"hash":price`). */
  K: 5,
  /** The snapshot's `samples` member of a position, up to the newest sample's time (empty: it has no samples). */
  SP: 6,
  /** The same after the newest sample's time. */
  SS: 7,
} as const;
export type Part = (typeof Part)[keyof typeof Part];

/** `at` of a fragment: its kind and its position (or side). */
const KIND = 2 ** 24;

/**
 * What one run changed in the texts. The fragments in two flat arrays (kind and position packed in
 * a number, and the text) rather than an object per fragment or per kind: a patch crosses threads
 * on every change, and each object costs more to clone than its text.
 */
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
  at: number[];
  text: string[];
  /** The run's clock: the newest sample's time of every position. */
  now: number;
  /** The snapshot's answer_digest and arbitrages_digest members; `tail` the members after `samples`. */
  digests: string;
  tail: string;
  /** The arbitrages as JSON and the snapshot's `arbs` member (detected_at by id), when they changed (or on a full patch). */
  arbitrages?: string;
  detected?: string;
}

/**
 * A TextPatch as it crosses threads: every string of it in one string `s`, after `lead` (a text the
 * caller sends along: the run's findings), and the lengths and numbers in `n`. One string and one
 * array of numbers clone as two copies; the patch's strings and arrays as a dozen objects, several
 * times that (measured per change of a 200-position contest: packing, cloning and unpacking went
 * from about 50 to 33 µs). The fragments read back are slices of `s`, which V8 keeps alive while
 * any of them lives: the mirror's size counts for it.
 *
 * n: [lead, run, digests, tail, arbitrages (-1: none), detected (-1: none), now, count,
 *     ...at (count), ...fragment lengths (count)], a Float64Array (every one a whole number below
 *     2^53): a typed array clones as one copy, an array of numbers number by number (some fifty
 *     numbers a change: 8.8 → 2.5 µs).
 */
export interface WirePatch {
  s: string;
  n: Float64Array;
  full?: TextPatch['full'];
}

const HEAD = 8;

export function packPatch(patch: TextPatch, lead = ''): WirePatch {
  const c = patch.at.length;
  const n = new Float64Array(HEAD + 2 * c);
  n[0] = lead.length;
  n[1] = patch.run.length;
  n[2] = patch.digests.length;
  n[3] = patch.tail.length;
  n[4] = patch.arbitrages === undefined ? -1 : patch.arbitrages.length;
  n[5] = patch.detected === undefined ? -1 : patch.detected.length;
  n[6] = patch.now;
  n[7] = c;
  const parts = new Array<string>(6 + c);
  parts[0] = lead;
  parts[1] = patch.run;
  parts[2] = patch.digests;
  parts[3] = patch.tail;
  parts[4] = patch.arbitrages ?? '';
  parts[5] = patch.detected ?? '';
  for (let k = 0; k < c; k++) {
    const t = patch.text[k]!;
    n[HEAD + k] = patch.at[k]!;
    n[HEAD + c + k] = t.length;
    parts[6 + k] = t;
  }
  const s = parts.join('');
  return patch.full ? { s, n, full: patch.full } : { s, n };
}

/** The patch of a WirePatch and the lead sent along with it. */
export function unpackPatch(wire: WirePatch): { patch: TextPatch; lead: string } {
  const { s, n } = wire;
  let pos = 0;
  const take = (len: number): string => s.slice(pos, (pos += len));
  const lead = take(n[0]!);
  const run = take(n[1]!);
  const digests = take(n[2]!);
  const tail = take(n[3]!);
  const arbitrages = n[4]! < 0 ? undefined : take(n[4]!);
  const detected = n[5]! < 0 ? undefined : take(n[5]!);
  const c = n[7]!;
  const at = new Array<number>(c);
  const text = new Array<string>(c);
  for (let k = 0; k < c; k++) {
    at[k] = n[HEAD + k]!;
    text[k] = take(n[HEAD + c + k]!);
  }
  if (pos !== s.length) throw new Error(`a text patch of ${s.length} characters whose lengths add up to ${pos}`);
  const patch: TextPatch = { run, at, text, now: n[6]!, digests, tail };
  if (arbitrages !== undefined) patch.arbitrages = arbitrages;
  if (detected !== undefined) patch.detected = detected;
  if (wire.full) patch.full = wire.full;
  return { patch, lead };
}

export function emptyPatch(run: string, now: number): TextPatch {
  return { run, at: [], text: [], now, digests: '', tail: '' };
}

/** Adds a fragment of `kind` for position (or side) `i`. */
export function put(patch: TextPatch, kind: Part, i: number, text: string): void {
  patch.at.push(kind * KIND + i);
  patch.text.push(text);
}

/** JSON of a finite or non-finite number (JSON.stringify writes null for NaN and ±Infinity). */
export const num = (x: number | null): string => (x === null || !Number.isFinite(x) ? 'null' : String(x));

/** A: the catalog fields of a Position, open for C (so the object's `}` comes at the end of E). */
export function headText(p: Parameters<typeof positionHead>[0]): string {
  const text = JSON.stringify(positionHead(p));
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
  /** The depth and quote fields the last patch changed and the run it was applied to (null after a full patch). */
  private since: TextsSince | null = null;
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
  /** The snapshot text last assembled (for its length and identity), and its part after the quotes. */
  private lastSnapshot: string | null = null;
  private lastAfterQuotes: string | null = null;
  private lastAnswer: string | null = null;
  /** Sum of the fragments' lengths (UTF-16 code units): with the texts handed out, what the texts hold in memory. */
  chars = 0;

  get positions(): number {
    return this.heads.length;
  }

  apply(patch: TextPatch): void {
    // Nothing handed out before stands for these texts, even if the patch fails halfway.
    this.lastSnapshot = null;
    this.lastAfterQuotes = null;
    this.lastAnswer = null;
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
    const since: TextsSince | null = f ? null : { base: this.run, depth: [], quotes: [] };
    this.since = null;
    this.run = patch.run;
    let chars = this.chars;
    const { at, text } = patch;
    for (let k = 0; k < at.length; k++) {
      const kind = (at[k]! / KIND) | 0;
      const i = at[k]! - kind * KIND;
      const t = text[k]!;
      switch (kind) {
        case Part.C:
          chars += t.length - this.c[i]!.length;
          this.c[i] = t;
          this.stale(i);
          break;
        case Part.D:
          chars += t.length - this.d[i]!.length;
          this.d[i] = t;
          for (const m of this.sideMembers[i]!) this.stale(m);
          break;
        case Part.E:
          chars += t.length - this.e[i]!.length;
          this.e[i] = t;
          this.stale(i);
          break;
        case Part.Q:
          chars += t.length - this.q[i]!.length;
          this.q[i] = t;
          this.quoteBlocks[(i / BLOCK) | 0] = null;
          since?.quotes.push([String(i), t]);
          break;
        case Part.Depth:
          chars += t.length - this.depthPairs[i]![1].length;
          this.depthPairs[i] = [this.hashes[i]!, t];
          since?.depth.push(this.depthPairs[i]!);
          break;
        case Part.K:
          chars += t.length - this.k[i]!.length;
          this.k[i] = t;
          this.consensusBlocks[(i / BLOCK) | 0] = null;
          break;
        case Part.SP:
          chars += t.length - this.sp[i]!.length;
          this.sp[i] = t;
          break;
        case Part.SS:
          chars += t.length - this.ss[i]!.length;
          this.ss[i] = t;
          break;
        default:
          throw new Error(`unknown text fragment kind ${kind}`);
      }
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
    this.lastAfterQuotes = null;
    this.since = since !== null && since.base !== '' ? since : null;
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

  /** The snapshot text snapshotJson last handed out, if no patch came since (null otherwise). */
  handedOut(): string | null {
    return this.lastSnapshot;
  }

  /** The stored snapshot as JSON (the same string until the next patch). */
  snapshotJson(): string {
    return (this.lastSnapshot ??= this.assembleSnapshot());
  }

  /**
   * Whether `json` is the snapshot text snapshotJson last handed out: the same string, or an equal
   * copy as read back from Redis. A string compared with itself costs nothing; a copy is compared
   * in full once written (the write flattened the text, a rope until then), and a text of another
   * run differs in its first bytes (the run id).
   */
  holds(json: string | null): boolean {
    const last = this.lastSnapshot;
    return json !== null && last !== null && json.length === last.length && json === last;
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
    return s + this.afterQuotes();
  }

  /** The snapshot after its quotes' members: from the `quotes` object's close to the end (the same string until the next patch). */
  private afterQuotes(): string {
    if (this.lastAfterQuotes !== null) return this.lastAfterQuotes;
    let s = '},"arbs":' + this.detected + ',"consensus":{';
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
    return (this.lastAfterQuotes = s + '}' + this.tail);
  }

  /** The depth hash's fields: [position_hash, Depth JSON] per position (a new array each time). */
  depth(): [string, string][] {
    return this.depthPairs.slice();
  }

  /**
   * The depth and quote fields the last patch changed, and the run whose texts it changed (the
   * previous run): null when the patch carried every fragment (a run from scratch). A patch
   * carries a fragment for every position whose text changed, so base's fields with these written
   * over them are depth() and snapshotParts().quotes (a quote field '' is one to delete).
   */
  textsSince(): TextsSince | null {
    return this.since;
  }

  /** The snapshot as stored in parts (SnapshotParts): snapshotJson() is its rest with its quote fields joined in. */
  snapshotParts(): SnapshotParts {
    const quotes: [string, string][] = [];
    for (let i = 0; i < this.q.length; i++) if (this.q[i]) quotes.push([String(i), this.q[i]!]);
    return { rest: snapshotHead(this.run, this.contestId) + this.afterQuotes(), quotes };
  }

}
