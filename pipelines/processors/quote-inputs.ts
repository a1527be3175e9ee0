/**
 * The compute inputs of each contest's venue quotes, kept from one computation of the contest to
 * the next. A computation reads every stored quote of its contest (their JSON texts, as Redis holds
 * them); most did not change since the last read, so a text equal to the one read last time in the
 * same place stands for the same VenueQuote object, neither parsed nor mapped again (the
 * confirmation time formatted as ISO, the partner's display name looked up). Being the same object
 * also lets the run's input comparison (src/compute/input-delta.ts) pass an unchanged quote by
 * identity instead of field by field. A contest of 1,000 quotes whose change reprices one parses
 * one quote instead of 1,000.
 *
 * Texts are compared place by place, not looked up by content: Redis answers a hash's values in the
 * same order from one read to the next while its fields stay the same (a field rewritten keeps its
 * place), and comparing two texts is a length check and a memcmp where a lookup would hash every
 * text of every read. A read in another order (fields added, removed, or the hash rehashed) is
 * parsed from its first moved place on, as every read was before.
 *
 * Bounded like the runs (src/compute/run-cache.ts): by contests, by the characters held and by
 * idleness on the jobs' clock. Losing a contest's entry costs one read parsed whole, never a
 * different input: a kept quote is the parse of the very text read.
 */
import type { VenueQuote } from '../../src/compute/types.js';
import { RunCache, type RunCacheLimits } from '../../src/compute/run-cache.js';
import type { StoredQuote } from '../../src/venues/types.js';

/** A quote as the contest's input carries it, and the position it quotes. */
interface Kept {
  positionHash: string;
  quote: VenueQuote;
}

/** One contest's last read: its texts in order, what each stands for, and the partner names they were mapped with. */
interface ContestQuotes {
  texts: readonly string[];
  kept: Kept[];
  names: ReadonlyMap<string, string>;
  chars: number;
}

/** About what a mapped quote object with its book adds to its text (bytes), for the size bound. */
const QUOTE_OVERHEAD_BYTES = 600;

export const DEFAULT_QUOTE_INPUT_LIMITS: RunCacheLimits = { maxEntries: 2_000, maxBytes: 64 * 2 ** 20, idleMs: 600_000 };

/** A stored quote as a computation's input takes it. */
export function venueQuoteOf(q: StoredQuote, names: ReadonlyMap<string, string>): VenueQuote {
  return {
    partner_id: q.partner_id,
    partner_name: names.get(q.partner_id) ?? q.partner_id,
    liquidity_hash: q.liquidity_hash,
    price: q.price,
    available: q.available,
    levels: q.levels,
    fee: q.fee,
    venue_side_key: q.venue_side_key,
    source: q.source,
    as_of: new Date(q.ts_init).toISOString(),
    ts_event: q.ts_event,
    real_book: q.real_book,
    stale_after_ms: q.stale_after_ms,
  };
}

export class QuoteInputs {
  private readonly contests: RunCache<ContestQuotes>;
  /** Quotes parsed and mapped, and quotes taken as kept (metrics, tests). */
  parsed = 0;
  reused = 0;

  constructor(limits: RunCacheLimits = DEFAULT_QUOTE_INPUT_LIMITS) {
    this.contests = new RunCache<ContestQuotes>(limits, (c) => 2 * c.chars + QUOTE_OVERHEAD_BYTES * c.kept.length);
  }

  /**
   * The contest's quotes by position, from the stored texts just read. `names` is the partner
   * display names now: a contest kept with other names is mapped again whole. `nowMs` is the jobs'
   * clock (for idleness).
   */
  byPosition(contestId: string, texts: readonly string[], names: ReadonlyMap<string, string>, nowMs: number): Map<string, VenueQuote[]> {
    const last = this.contests.get(contestId, nowMs);
    const before = last !== undefined && last.names === names ? last : null;
    const kept = new Array<Kept>(texts.length);
    const out = new Map<string, VenueQuote[]>();
    let chars = 0;
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i]!;
      let k: Kept;
      if (before !== null && i < before.texts.length && before.texts[i] === text) {
        k = before.kept[i]!;
        this.reused++;
      } else {
        const q = JSON.parse(text) as StoredQuote;
        k = { positionHash: q.position_hash, quote: venueQuoteOf(q, names) };
        this.parsed++;
      }
      kept[i] = k;
      chars += text.length;
      let list = out.get(k.positionHash);
      if (!list) out.set(k.positionHash, (list = []));
      list.push(k.quote);
    }
    this.contests.set(contestId, { texts, kept, names, chars }, nowMs);
    return out;
  }

  /** Drops what is kept of a contest. */
  forget(contestId: string): void {
    this.contests.delete(contestId);
  }

  /** Contests kept (metrics, tests). */
  get size(): number {
    return this.contests.size;
  }
}
