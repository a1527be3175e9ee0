import { describe, expect, it } from 'vitest';
import { createSimAdapters } from '../../../../src/venues/sim/index.js';
import { SimMarket, buildSimCatalog, type SimQuoteEvent } from '../../../../src/sim/index.js';
import type { NormalizedQuote } from '../../../../src/venues/types.js';
import { NOW } from './support.js';

function firstQuotes(seed: number, n: number): SimQuoteEvent[] {
  const m = new SimMarket({ seed, now: NOW });
  const out: SimQuoteEvent[] = [];
  m.onQuote((ev) => {
    if (out.length < n) out.push(structuredClone(ev));
  });
  let t = NOW;
  while (out.length < n) {
    t += 250;
    m.tick(t);
  }
  return out;
}

describe('determinism', () => {
  it('same seed and now → the same catalog', () => {
    expect(buildSimCatalog(5, new Date(NOW))).toEqual(buildSimCatalog(5, new Date(NOW)));
    expect(JSON.stringify(buildSimCatalog(5, NOW))).toBe(JSON.stringify(buildSimCatalog(5, NOW)));
  });

  it('a different seed → a different world', () => {
    const a = buildSimCatalog(5, NOW);
    const b = buildSimCatalog(6, NOW);
    expect(a.contests.map((c) => c.title)).not.toEqual(b.contests.map((c) => c.title));
  });

  it('same seed → the same first 500 quote changes; another seed differs', () => {
    const a = firstQuotes(11, 500);
    const b = firstQuotes(11, 500);
    expect(a).toEqual(b);
    const c = firstQuotes(12, 500);
    expect(c).not.toEqual(a);
  });

  it('same seed → the same parsed adapter quotes and burst output', async () => {
    const run = async (seed: number) => {
      const m = new SimMarket({ seed, now: NOW });
      const got: NormalizedQuote[] = [];
      const [exchange] = createSimAdapters(m, { clock: () => NOW });
      await exchange!.connect();
      exchange!.subscribeQuotes((q) => got.push(q));
      m.burst(2000);
      const snap = await createSimAdapters(m, { clock: () => NOW })[2]!;
      await snap.connect();
      return { got, snapshot: await snap.fetchQuotes() };
    };
    const x = await run(3);
    const y = await run(3);
    expect(x.got.length).toBeGreaterThan(100);
    expect(y).toEqual(x);
  });

  it('uses no Math.random', () => {
    // Counted rather than thrown: a throw could be swallowed by a catch inside the model.
    const orig = Math.random;
    let calls = 0;
    Math.random = () => {
      calls++;
      return orig();
    };
    let changes = 0;
    try {
      const m = new SimMarket({ seed: 1, now: NOW });
      m.onQuote(() => changes++);
      let t = NOW;
      for (let i = 0; i < 400; i++) m.tick((t += 250));
      m.burst(1000);
    } finally {
      Math.random = orig;
    }
    expect(changes).toBeGreaterThan(0);
    expect(calls).toBe(0);
  });
});
