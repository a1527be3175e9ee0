/**
 * The arithmetic of bench/stream-latency.ts, kept pure so it can be tested: which tracked change a
 * message carries, and the latency, delivery and loss figures of a run from receipt and send times.
 *
 * A change is one value of `price` on one liquidity_hash, numbered by the bench
 * (price = base + index × step). A change's latency is the first receipt of it or of any later
 * change of the same entry, minus its send time: a pipeline may fold changes that come faster than
 * it computes (it computes from the latest venue state), and the later value is then what tells the
 * client. Folding is not loss; a client missing what the others received is.
 */

/** Histogram resolution and range: 0.1 ms buckets up to 2 s, then an overflow bucket. */
export const HIST_BUCKET_MS = 0.1;
export const HIST_BUCKETS = 20_000;

/** What the clients track: the changes base + i × step (0 ≤ i < count) of `price` on `liquidityHash`. */
export interface Track {
  liquidityHash: string;
  base: number;
  step: number;
  count: number;
}

export interface Score {
  clients: number;
  /** (client, change) pairs received as themselves. */
  exact: number;
  /** (client, change) pairs received as themselves or through a later change. */
  covered: number;
  /** Messages carrying the tracked entry at a price outside the tracked changes. */
  stray: number;
  /** Latencies of the covered pairs. */
  hist: number[];
  over: number;
  max: number;
  /** Per change: how many clients received it as itself. */
  perChange: number[];
  /** Per change: how many clients received it or a later change. */
  perChangeCovered: number[];
}

/** A message's bearing on the tracked entry: the change it carries, `none`, or `stray` (the entry at an untracked price). */
export type Carried = number | 'none' | 'stray';

const PRICE = Buffer.from('"price":');
const OPEN = 0x7b;
const CLOSE = 0x7d;
const COMMA = 0x2c;

/**
 * Reads the change a payload carries from its bytes, without decoding the JSON (a thousand clients
 * read every message). hashBytes is the JSON string of the liquidity_hash, quotes included.
 * The entry's fields may come in any order; entries hold no nested objects.
 */
export function carriedChange(buf: Buffer, track: Track, hashBytes: Buffer): Carried {
  const at = buf.indexOf(hashBytes);
  if (at < 0) return 'none';
  const start = buf.lastIndexOf(OPEN, at);
  const end = buf.indexOf(CLOSE, at);
  const p = start < 0 ? -1 : buf.indexOf(PRICE, start);
  if (end < 0 || p < 0 || p > end) return 'stray';
  let q = p + PRICE.length;
  while (q < end && buf[q] !== COMMA) q++;
  const price = parseFloat(buf.toString('latin1', p + PRICE.length, q));
  const i = Math.round((price - track.base) / track.step);
  if (!(i >= 0 && i < track.count) || Math.abs(price - (track.base + i * track.step)) > track.step / 10) return 'stray';
  return i;
}

/** Figures of some clients: receipts[c][i] is when client c first received change i (NaN: never); sent[i] when it was sent. */
export function scoreReceipts(receipts: Float64Array[], sent: number[], stray = 0): Score {
  const hist = new Array<number>(HIST_BUCKETS).fill(0);
  let over = 0;
  let max = 0;
  let exact = 0;
  let covered = 0;
  const perChange = new Array<number>(sent.length).fill(0);
  const perChangeCovered = new Array<number>(sent.length).fill(0);
  for (const times of receipts) {
    // Walking back from the last change, best is the first receipt of this change or a later one.
    let best = Number.POSITIVE_INFINITY;
    for (let i = sent.length - 1; i >= 0; i--) {
      const t = times[i]!;
      if (!Number.isNaN(t)) {
        exact++;
        perChange[i]!++;
        if (t < best) best = t;
      }
      if (best === Number.POSITIVE_INFINITY) continue;
      covered++;
      perChangeCovered[i]!++;
      const lat = best - sent[i]!;
      if (lat > max) max = lat;
      const b = Math.floor(lat / HIST_BUCKET_MS);
      if (b >= HIST_BUCKETS) over++;
      else hist[b < 0 ? 0 : b]!++;
    }
  }
  return { clients: receipts.length, exact, covered, stray, hist, over, max, perChange, perChangeCovered };
}

/** The figures of several groups of clients (one per client process) as one. */
export function mergeScores(parts: Score[]): Score {
  const n = parts[0]?.perChange.length ?? 0;
  const out = scoreReceipts([], new Array<number>(n).fill(0));
  for (const p of parts) {
    out.clients += p.clients;
    out.exact += p.exact;
    out.covered += p.covered;
    out.stray += p.stray;
    out.over += p.over;
    out.max = Math.max(out.max, p.max);
    for (let i = 0; i < HIST_BUCKETS; i++) out.hist[i]! += p.hist[i]!;
    for (let i = 0; i < n; i++) {
      out.perChange[i]! += p.perChange[i]!;
      out.perChangeCovered[i]! += p.perChangeCovered[i]!;
    }
  }
  return out;
}

/** The figures of one group of clients over two runs of different changes, as one run (b's changes after a's). */
export function appendScores(a: Score, b: Score): Score {
  if (a.clients !== b.clients) throw new Error(`cannot append the figures of ${b.clients} clients to those of ${a.clients}`);
  return {
    clients: a.clients,
    exact: a.exact + b.exact,
    covered: a.covered + b.covered,
    stray: a.stray + b.stray,
    hist: a.hist.map((n, i) => n + b.hist[i]!),
    over: a.over + b.over,
    max: Math.max(a.max, b.max),
    perChange: [...a.perChange, ...b.perChange],
    perChangeCovered: [...a.perChangeCovered, ...b.perChangeCovered],
  };
}

/** The latency below which a share p of the covered pairs fall (bucket upper bound); NaN with none. */
export function percentile(s: Pick<Score, 'hist' | 'over'>, p: number): number {
  const total = s.hist.reduce((a, n) => a + n, 0) + s.over;
  if (total === 0) return Number.NaN;
  const want = Math.ceil(total * p);
  let seen = 0;
  for (let i = 0; i < s.hist.length; i++) {
    seen += s.hist[i]!;
    if (seen >= want) return (i + 1) * HIST_BUCKET_MS;
  }
  return HIST_BUCKETS * HIST_BUCKET_MS;
}

/**
 * (client, change) pairs lost: a client missed a change another client received as itself, or
 * received neither it nor any later change. A change no client received as itself but every
 * client saw superseded was folded, not lost.
 */
export function lostPairs(s: Score): number {
  let lost = 0;
  for (let i = 0; i < s.perChange.length; i++) {
    const got = s.perChange[i]!;
    lost += got > 0 ? s.clients - got : s.clients - s.perChangeCovered[i]!;
  }
  return lost;
}

/** Changes no client received as themselves. */
export function foldedChanges(s: Score): number {
  return s.perChange.filter((n) => n === 0).length;
}
