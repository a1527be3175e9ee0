import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QuoteInputs } from '../../../pipelines/processors/quote-inputs.js';
import type { VenueQuote } from '../../../src/compute/types.js';
import type { StoredQuote } from '../../../src/venues/types.js';
import { parseEveryQuote } from '../../../bench/support/parse-every-quote.js';

function stored(i: number, price: number, tsInit = 1_700_000_000_000 + i): StoredQuote {
  return {
    partner_id: i % 2 ? 'sim_book01' : 'sim_exchange',
    liquidity_hash: `lh-${i}`,
    position_hash: `ps-${i % 3}`,
    venue_market_id: `m-${i}`,
    venue_side_key: 'home',
    price,
    available: 100 + i,
    levels: [{ price, available: 100 + i }],
    fee: { kind: 'none' },
    real_book: true,
    source: 'streaming',
    ts_event: tsInit - 5,
    ts_init: tsInit,
    stale_after_ms: tsInit + 20_000,
  };
}

const NAMES = new Map([['sim_book01', 'Book 01'], ['sim_exchange', 'Exchange']]);

describe('QuoteInputs', () => {
  it('gives an unchanged text the same quote object and parses only the texts that changed', () => {
    const inputs = new QuoteInputs();
    const texts = [0, 1, 2, 3, 4].map((i) => JSON.stringify(stored(i, 0.4)));
    const first = inputs.byPosition('ct_a', texts, NAMES, 1);
    expect(first).toEqual(parseEveryQuote(texts, NAMES));
    expect(inputs.parsed).toBe(5);

    const next = [...texts];
    next[2] = JSON.stringify(stored(2, 0.41));
    const second = inputs.byPosition('ct_a', next, NAMES, 2);
    expect(second).toEqual(parseEveryQuote(next, NAMES));
    expect(inputs.parsed).toBe(6);
    expect(inputs.reused).toBe(4);
    const q0 = (m: Map<string, VenueQuote[]>, i: number) => m.get(`ps-${i % 3}`)!.find((q) => q.liquidity_hash === `lh-${i}`)!;
    expect(q0(second, 0)).toBe(q0(first, 0));
    expect(q0(second, 2)).not.toBe(q0(first, 2));
    expect(q0(second, 2).price).toBe(0.41);
    // Another contest with the same texts shares nothing with this one.
    inputs.byPosition('ct_b', next, NAMES, 3);
    expect(inputs.parsed).toBe(11);
  });

  it('compares texts place by place: a read in another order is parsed from its moved places on, and answers the same', () => {
    const inputs = new QuoteInputs();
    const texts = [0, 1, 2, 3].map((i) => JSON.stringify(stored(i, 0.6)));
    inputs.byPosition('ct_a', texts, NAMES, 1);
    const moved = [texts[0]!, texts[2]!, texts[1]!, texts[3]!];
    expect(inputs.byPosition('ct_a', moved, NAMES, 2)).toEqual(parseEveryQuote(moved, NAMES));
    expect(inputs.parsed).toBe(4 + 2);
    expect(inputs.reused).toBe(2);
    // A listing gone and one added: the places before the first difference are kept.
    const changed = [moved[0]!, moved[1]!, JSON.stringify(stored(7, 0.6))];
    expect(inputs.byPosition('ct_a', changed, NAMES, 3)).toEqual(parseEveryQuote(changed, NAMES));
    expect(inputs.parsed).toBe(6 + 1);
    expect(inputs.reused).toBe(2 + 2);
  });

  it('maps the quotes again when the partner names are another map, and re-parses a forgotten contest', () => {
    const inputs = new QuoteInputs();
    const texts = [0, 1].map((i) => JSON.stringify(stored(i, 0.5)));
    inputs.byPosition('ct_a', texts, NAMES, 1);
    const renamed = new Map([['sim_book01', 'Book One'], ['sim_exchange', 'Exchange']]);
    const again = inputs.byPosition('ct_a', texts, renamed, 2);
    expect(again).toEqual(parseEveryQuote(texts, renamed));
    expect(again.get('ps-1')![0]!.partner_name).toBe('Book One');
    expect(inputs.parsed).toBe(4);
    inputs.forget('ct_a');
    inputs.byPosition('ct_a', texts, renamed, 3);
    expect(inputs.parsed).toBe(6);
  });

  it('keeps within its bounds: contests, and a contest idle past the lifetime is parsed again', () => {
    const inputs = new QuoteInputs({ maxEntries: 2, maxBytes: 2 ** 30, idleMs: 1_000 });
    const texts = [JSON.stringify(stored(0, 0.3))];
    for (const c of ['a', 'b', 'c']) inputs.byPosition(c, texts, NAMES, 10);
    expect(inputs.size).toBe(2);
    inputs.byPosition('a', texts, NAMES, 20); // evicted: parsed again
    expect(inputs.parsed).toBe(4);
    inputs.byPosition('a', texts, NAMES, 2_000); // idle 1,980 ms > 1,000: parsed again
    expect(inputs.parsed).toBe(5);
    inputs.byPosition('a', texts, NAMES, 2_500);
    expect(inputs.parsed).toBe(5);
  });

  it('answers what parsing every text answers, whatever the reads (property)', () => {
    const read = fc.array(fc.record({ i: fc.integer({ min: 0, max: 9 }), price: fc.integer({ min: 1, max: 99 }), t: fc.integer({ min: 0, max: 3 }) }), { maxLength: 12 });
    fc.assert(
      fc.property(fc.array(read, { minLength: 1, maxLength: 6 }), fc.boolean(), (reads, rename) => {
        const inputs = new QuoteInputs();
        let names: ReadonlyMap<string, string> = NAMES;
        reads.forEach((r, k) => {
          // One text per listing in a read, as the venue-state hash holds them.
          const byHash = new Map(r.map((x) => [x.i, JSON.stringify(stored(x.i, x.price / 100, 1_700_000_000_000 + x.t))]));
          const texts = [...byHash.values()];
          if (rename && k === 2) names = new Map([['sim_book01', 'Renamed']]);
          expect(inputs.byPosition('ct_p', texts, names, k)).toEqual(parseEveryQuote(texts, names));
        });
      }),
    );
  });
});
