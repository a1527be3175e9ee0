import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packEvent, unpackEvent } from '../../../src/store/redis/eventlog.js';

/** Event-like JSON: ticks of a few hundred bytes up to contest-wide updates of tens of KB. */
const eventText = fc
  .array(fc.record({ liquidity_hash: fc.string({ minLength: 1, maxLength: 40 }), price: fc.double({ min: 0, max: 1, noNaN: true }), available: fc.nat(), name: fc.string({ unit: 'binary', maxLength: 30 }) }), { minLength: 1, maxLength: 400 })
  .map((ticks) => JSON.stringify({ type: 'ticks', contest_id: 'ct_x', ticks }));

describe('packed events (the contest logs keep large events deflated)', () => {
  it('read back byte for byte, whatever the text (any code point, 0 to ~80 KB)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 5_000 }), eventText), (text) => {
        expect(unpackEvent(packEvent(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});
