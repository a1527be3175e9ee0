/**
 * The one selection rule GET /signals and the `signal` channel share (src/domain/signals.ts), and
 * the REST filter's entitlement rule: a type whose entitlements the key lacks is absent, not an error.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signalFilter } from '../../../api/rest/signals/signals.js';
import { CONFIDENCES, entitledTypes, isServedType, selectsSignal, SIGNAL_STATUSES, SIGNAL_TYPES, type SignalSelection } from '../../../src/domain/signals.js';
import { testSignal } from '../../support/signals.js';

const signal = fc.record({
  signal_type: fc.constantFrom<unknown>(...SIGNAL_TYPES, 'unknown', '__proto__', 'constructor', 7, null),
  status: fc.constantFrom<unknown>(...SIGNAL_STATUSES, 'odd', undefined),
  strength: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constantFrom<unknown>(Number.NaN, '90', null)),
  confidence: fc.constantFrom<unknown>(...CONFIDENCES, 'toString', 3, undefined),
});
const selection: fc.Arbitrary<SignalSelection> = fc.record({
  types: fc.option(fc.uniqueArray(fc.constantFrom<string>(...SIGNAL_TYPES)).map((t) => new Set(t)), { nil: null }),
  includeBeta: fc.boolean(),
  minStrength: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  minConfidence: fc.option(fc.constantFrom(...CONFIDENCES), { nil: null }),
});

describe('served types', () => {
  it('published and not retired; strings the catalog does not know, prototype names included, are not types', () => {
    expect(SIGNAL_TYPES.filter(isServedType)).toEqual(['arbitrage', 'price_move', 'whale_trade', 'block_trade', 'flow_imbalance', 'trade_through', 'volume_spike']);
    for (const t of ['__proto__', 'constructor', 'toString', '', 7, null, undefined]) expect(isServedType(t)).toBe(false);
  });
});

describe('selectsSignal', () => {
  it('keeps only served, non-retired signals of the asked types, with strength and confidence at least the minimums, beta only when asked', () => {
    fc.assert(
      fc.property(selection, signal, (sel, s) => {
        const kept = selectsSignal(sel)(s);
        const confidenceOk = sel.minConfidence === null || (CONFIDENCES.includes(s.confidence as never) && CONFIDENCES.indexOf(s.confidence as never) >= CONFIDENCES.indexOf(sel.minConfidence));
        const expected =
          isServedType(s.signal_type) &&
          s.status !== 'retired' &&
          (sel.types === null || sel.types.has(s.signal_type as string)) &&
          (sel.includeBeta || s.status !== 'beta') &&
          (sel.minStrength === null || (typeof s.strength === 'number' && s.strength >= sel.minStrength)) &&
          confidenceOk;
        expect(kept).toBe(expected);
      }),
    );
  });

  it('a narrower selection never keeps more', () => {
    fc.assert(
      fc.property(selection, signal, fc.integer({ min: 0, max: 100 }), (sel, s, raise) => {
        if (!selectsSignal(sel)(s)) {
          expect(selectsSignal({ ...sel, includeBeta: false })(s)).toBe(false);
          expect(selectsSignal({ ...sel, minStrength: Math.max(sel.minStrength ?? 0, raise) })(s)).toBe(false);
        }
      }),
    );
  });
});

describe('entitlements', () => {
  it('a key sees the types whose entitlements it holds; the REST filter leaves the others out', () => {
    expect([...entitledTypes(new Set(['signals:read']))]).toEqual([...SIGNAL_TYPES]);
    expect([...entitledTypes(new Set(['trades:read']))]).toEqual([]);
    const arb = testSignal('arbitrage', 'x', 'c', 60_000, { status: 'active' });
    expect(signalFilter({}, new Set(['signals:read']))(arb)).toBe(true);
    expect(signalFilter({ type: 'arbitrage' }, new Set(['reference:read']))(arb)).toBe(false);
  });
});
