import { describe, expect, it } from 'vitest';
import { packPatch, unpackPatch, type TextPatch } from '../../../src/compute/contest-text.js';

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
