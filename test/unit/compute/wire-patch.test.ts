import { describe, expect, it } from 'vitest';
import { packPatch, unpackPatch, type TextPatch } from '../../../src/compute/contest-text.js';
import { packSignals, unpackSignals } from '../../../src/compute/liquidity-task.js';

const patch = (over: Partial<TextPatch> = {}): TextPatch => ({
  run: 'abc.1',
  at: [3, 2 ** 24 + 7, 5 * 2 ** 24],
  text: ['{"x":1}', '', '"é’"'],
  now: 1_795_000_000_123,
  digests: ',"answer_digest":1',
  tail: '}',
  ...over,
});

describe('a text patch across threads (WirePatch)', () => {
  it('reads back as it was, with its lead, whether arbitrages and detected are there or not', () => {
    for (const p of [patch(), patch({ arbitrages: '[]', detected: '{}' }), patch({ arbitrages: '', at: [], text: [] }), patch({ full: { contestId: 'ct', heads: ['{'], hashes: ['h'], sideOf: [-1], sides: 0 } })]) {
      const wire = structuredClone(packPatch(p, '{"ticks":[]}'));
      const back = unpackPatch(wire);
      expect(back.lead).toBe('{"ticks":[]}');
      expect(back.patch).toEqual(p);
      expect(unpackPatch(packPatch(p)).lead).toBe('');
    }
  });

  it('refuses a wire whose lengths do not add up to its text', () => {
    const wire = packPatch(patch());
    expect(() => unpackPatch({ ...wire, s: wire.s + 'x' })).toThrow(/lengths add up/);
  });
});

describe('signals across threads (WireSignals)', () => {
  const signal = (i: number) => ({
    dedupe_key: `arbitrage:ct_${i}:é${'x'.repeat(i)}`,
    signal_type: (i % 2 ? 'arbitrage' : 'price_move') as 'arbitrage' | 'price_move',
    expires_ms: 1_795_000_000_000 + i,
    json: JSON.stringify({ n: i, note: '“quoted” \\ text', nested: { a: [i, null] } }),
  });

  it('read back as they were, in order, through a structured clone', () => {
    for (const list of [[], [signal(0)], Array.from({ length: 12 }, (_, i) => signal(i))]) {
      const wire = structuredClone(packSignals(list));
      expect(wire.n).toBeInstanceOf(Float64Array);
      expect(unpackSignals(wire)).toEqual(list);
    }
  });

  it('refuse a wire whose lengths do not add up, or that is not four numbers a signal', () => {
    const wire = packSignals([signal(1), signal(2)]);
    expect(() => unpackSignals({ ...wire, s: wire.s + 'x' })).toThrow(/add up/);
    expect(() => unpackSignals({ ...wire, s: wire.s.slice(1) })).toThrow(/add up/);
    expect(() => unpackSignals({ s: wire.s, n: wire.n.slice(0, 6) })).toThrow(/four a signal/);
  });
});
