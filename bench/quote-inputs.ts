/**
 * bench quote-inputs: what a liquidity computation's read of its contest's venue quotes costs the
 * pipeline thread, with QuoteInputs (pipelines/processors/quote-inputs.ts: a text equal to the one
 * read last time in the same place is the quote object already built) against the baseline, in
 * the same run, of what the processor did before it: every text parsed and mapped on every read.
 *
 * The load: a contest of --quotes stored quotes (200 positions' worth of five venues with books of
 * three levels, as the simulator stores them); each read changes --changed of them (a repricing,
 * a new confirmation time) and hands both sides fresh strings, as a Redis reply decoded by the
 * client is. The sides alternate read by read; each side's figure is the median of its reads.
 * Targets: QuoteInputs ≤ 0.25 × the baseline at the default load, and both sides answer the same
 * quotes (every read compared field by field).
 *   npm run bench -- quote-inputs [--quotes 1000] [--changed 1] [--reads 400] [--warmup 100]
 */
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { QuoteInputs } from '../pipelines/processors/quote-inputs.js';
import type { VenueQuote } from '../src/compute/types.js';
import type { StoredQuote } from '../src/venues/types.js';
import { quantile } from './support/closed-loop.js';
import { runIfMain } from './support/main.js';
import { parseEveryQuote } from './support/parse-every-quote.js';
import { Verdict } from './support/verdict.js';

const RATIO_TARGET = 0.25;
const NAMES: ReadonlyMap<string, string> = new Map(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes'].map((p) => [p, p.replace('sim_', 'Sim ')]));

function storedQuote(i: number, price: number, confirmedAt: number): StoredQuote {
  const partner = [...NAMES.keys()][i % 5]!;
  const p = Number(price.toFixed(4));
  return {
    partner_id: partner,
    liquidity_hash: `${partner}:mk-${i}`,
    position_hash: `ct_bench:player_points:p${Math.floor(i / 5)}:over:${(i % 7) + 10.5}:ft`,
    venue_market_id: `mk-${i}`,
    venue_side_key: 'over',
    price: p,
    available: 1_000 + i,
    levels: [
      { price: p, available: 1_000 + i },
      { price: Number((p + 0.01).toFixed(4)), available: 700 },
      { price: Number((p + 0.02).toFixed(4)), available: 1_200 },
    ],
    fee: i % 2 ? { kind: 'pq', taker_rate: 0.07, maker_rate: 0 } : { kind: 'none' },
    real_book: true,
    source: i % 3 ? 'streaming' : 'polling',
    ts_event: confirmedAt - 40,
    ts_init: confirmedAt,
    stale_after_ms: confirmedAt + 30_000,
  };
}

/** Fresh strings of the same texts, as a client decodes a reply. */
const fresh = (texts: readonly string[]): string[] => texts.map((t) => Buffer.from(t).toString());

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      quotes: { type: 'string', default: '1000' },
      changed: { type: 'string', default: '1' },
      reads: { type: 'string', default: '400' },
      warmup: { type: 'string', default: '100' },
    },
  });
  const n = Number(values.quotes);
  const changed = Number(values.changed);
  const reads = Number(values.reads);
  const warmup = Number(values.warmup);
  if (![n, changed, reads].every((x) => Number.isInteger(x) && x > 0) || !(changed <= n) || !(Number.isInteger(warmup) && warmup >= 0)) {
    throw new Error('--quotes, --changed and --reads take positive integers (--changed at most --quotes), --warmup a whole number');
  }
  console.log(`bench quote-inputs: a contest of ${n} stored quotes, ${changed} changed a read, ${reads} reads per side (after ${warmup} not counted), alternating read by read`);

  const t0 = 1_800_000_000_000;
  const stored = Array.from({ length: n }, (_, i) => JSON.stringify(storedQuote(i, 0.3 + (i % 40) / 100, t0)));
  const inputs = new QuoteInputs();
  const base: number[] = [];
  const kept: number[] = [];
  let same = 0;
  for (let r = 0; r < warmup + reads; r++) {
    for (let k = 0; k < changed; k++) {
      const i = (r * 7919 + k * 104729) % n;
      stored[i] = JSON.stringify(storedQuote(i, 0.3 + ((r + k) % 50) / 100, t0 + 1_000 * (r + 1)));
    }
    const a = fresh(stored);
    const b = fresh(stored);
    // Alternate which side reads first, so neither always finds the other's garbage to collect.
    let x: Map<string, VenueQuote[]>;
    let y: Map<string, VenueQuote[]>;
    let tBase: number;
    let tKept: number;
    if (r % 2 === 0) {
      const s0 = performance.now();
      x = parseEveryQuote(a, NAMES);
      const s1 = performance.now();
      y = inputs.byPosition('ct_bench', b, NAMES, r);
      tBase = s1 - s0;
      tKept = performance.now() - s1;
    } else {
      const s0 = performance.now();
      y = inputs.byPosition('ct_bench', b, NAMES, r);
      const s1 = performance.now();
      x = parseEveryQuote(a, NAMES);
      tKept = s1 - s0;
      tBase = performance.now() - s1;
    }
    if (r < warmup) continue;
    base.push(tBase);
    kept.push(tKept);
    if (isDeepStrictEqual(x, y)) same++;
  }
  const med = (xs: number[]) => quantile(Float64Array.from(xs).sort(), 0.5);
  const p99 = (xs: number[]) => quantile(Float64Array.from(xs).sort(), 0.99);
  const ratio = med(kept) / med(base);
  console.log(`  baseline, every text parsed   p50 ${(med(base) * 1000).toFixed(0)} µs, p99 ${(p99(base) * 1000).toFixed(0)} µs a read`);
  console.log(`  QuoteInputs                   p50 ${(med(kept) * 1000).toFixed(0)} µs, p99 ${(p99(kept) * 1000).toFixed(0)} µs a read (${inputs.parsed} parsed, ${inputs.reused} reused over all reads)`);
  console.log(`  ratio QuoteInputs / baseline  ${ratio.toFixed(3)}`);

  const v = new Verdict('bench quote-inputs');
  v.atMost('QuoteInputs / every text parsed (median read)', ratio, RATIO_TARGET);
  v.atLeast('reads answered the same as parsing every text', (same / reads) * 100, 100, '%');
  v.print();
}

runIfMain(import.meta.url, run);
