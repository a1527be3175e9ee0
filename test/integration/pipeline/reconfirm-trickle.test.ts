/**
 * A write that only re-confirms quotes (nothing moved) queues its contest's recomputation at a
 * trickle, not at once, so a venue snapshot that re-confirms every contest does not delay the
 * recomputation a real change needs; a real change is queued with its write.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingester, RECONFIRM_RECOMPUTE_MS } from '../../../pipelines/ingest/ingester.js';
import { LiquidityProducer } from '../../../pipelines/producers/liquidity.js';
import { HotState } from '../../../src/store/redis/hot.js';
import type { NormalizedQuote, VenueAdapter } from '../../../src/venues/types.js';
import { eventually } from '../../support/e2e.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { venueQuote } from '../../support/pipeline.js';

let s: TestStack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => s?.close());

/** A producer that counts the recomputations it queues. */
function countingProducer(): { producer: LiquidityProducer; queued: () => number } {
  const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
  let n = 0;
  const enqueue = producer.enqueue.bind(producer);
  producer.enqueue = async (c: string) => {
    n++;
    return enqueue(c);
  };
  return { producer, queued: () => n };
}

/** An ingester on `now`, writing through `producer`; `adapters` only lend it their freshness bounds unless started. */
const ingesterWith = (producer: LiquidityProducer, now: () => number, adapters: VenueAdapter[] = []): Ingester =>
  new Ingester({ adapters, hot: new HotState(s.rt.redis, s.rt.ks), producer, log: pino({ level: 'silent' }), now, leagueOf: () => null, marketOf: () => null, partnerName: (p) => p });

const quote = (price: number, tsInit: number): NormalizedQuote => venueQuote('sim_exchange', 'ct_r:ml:home:0:p1:ft', price, 100, tsInit);

describe('re-confirmations', () => {
  it('are written at once but recomputed at a trickle; a change is recomputed with its write', async () => {
    const { producer, queued } = countingProducer();
    let clock = Date.now();
    const ingester = ingesterWith(producer, () => clock);
    await ingester.start();
    try {
      const t = clock;
      ingester.accept(quote(0.5, t));
      expect(await ingester.flush()).toBe(true);
      expect(queued()).toBe(1); // new: queued with its write

      // Unchanged, 21 s later: due for re-confirmation, stored at once, recomputed later.
      clock = t + 21_000;
      ingester.accept(quote(0.5, t + 21_000));
      expect(await ingester.flush()).toBe(true);
      const stored = JSON.parse((await s.rt.redis.hget(s.rt.ks.k('vq', 'ct_r'), quote(0.5, t).liquidity_hash))!) as NormalizedQuote;
      expect(stored.ts_init).toBe(t + 21_000);
      expect(queued()).toBe(1);
      expect((await eventually(async () => queued(), (n) => n === 2, 3_000))).toBe(2);

      // A price change: queued with its write.
      clock = t + 22_000;
      ingester.accept(quote(0.52, t + 22_000));
      expect(await ingester.flush()).toBe(true);
      expect(queued()).toBe(3);
    } finally {
      await ingester.stop();
      await producer.close();
    }
  });

  it('wait RECONFIRM_RECOMPUTE_MS from the contest’s last recomputation; a quote that read stale is recomputed with its write', async () => {
    const { producer, queued } = countingProducer();
    let clock = Date.now();
    const ingester = ingesterWith(producer, () => clock);
    await ingester.start();
    const a = (price: number, ts: number) => venueQuote('sim_exchange', 'ct_d:ml:home:0:p1:ft', price, 100, ts);
    const b = (price: number, ts: number) => venueQuote('sim_book01', 'ct_d:ml:home:0:p1:ft', price, 100, ts);
    try {
      const t = clock;
      ingester.accept(a(0.5, t));
      ingester.accept(b(0.4, t));
      expect(await ingester.flush()).toBe(true);
      expect(queued()).toBe(1);
      clock = t + 21_000;
      ingester.accept(a(0.51, t + 21_000));
      expect(await ingester.flush()).toBe(true);
      expect(queued()).toBe(2); // a change: with its write
      // b re-confirmed a second after that recomputation: stored at once, recomputed only 10 s after it.
      clock = t + 22_000;
      ingester.accept(b(0.4, t + 22_000));
      expect(await ingester.flush()).toBe(true);
      expect(JSON.parse((await s.rt.redis.hget(s.rt.ks.k('vq', 'ct_d'), b(0.4, t).liquidity_hash))!).ts_init).toBe(t + 22_000);
      await new Promise((r) => setTimeout(r, 600));
      expect(queued()).toBe(2);
      clock = t + 21_000 + RECONFIRM_RECOMPUTE_MS + 1_000;
      expect(await eventually(async () => queued(), (n) => n === 3, 3_000)).toBe(3);
    } finally {
      await ingester.stop();
      await producer.close();
    }

    // A venue with a 30 s freshness bound (the ingester reads it from its adapters; this one is never started).
    const { producer: producer2, queued: queued2 } = countingProducer();
    const venue = { id: 'fresh30', describe: () => ({ partner: { partner_id: 'sim_exchange' }, capabilities: { quotes: { freshness_ms: 30_000 } } }) } as unknown as VenueAdapter;
    const lone = ingesterWith(producer2, () => clock, [venue]);
    try {
      const t = clock;
      const c = (ts: number) => venueQuote('sim_exchange', 'ct_e:ml:home:0:p1:ft', 0.5, 100, ts);
      lone.accept(c(t));
      expect(await lone.flush()).toBe(true);
      expect(queued2()).toBe(1);
      // Re-confirmed within the bound: left to the trickle (which this ingester, never started, does not run).
      lone.accept(c(t + 21_000));
      expect(await lone.flush()).toBe(true);
      expect(queued2()).toBe(1);
      // Re-confirmed 39 s after the last confirmation: the quote read stale, so it is recomputed with its write.
      lone.accept(c(t + 60_000));
      expect(await lone.flush()).toBe(true);
      expect(queued2()).toBe(2);
    } finally {
      await producer2.close();
    }
  });
  it('pass on a change deeper in the book at once (no tick), and drop the same book repeated', async () => {
    const { producer, queued } = countingProducer();
    let clock = Date.now();
    const ingester = ingesterWith(producer, () => clock);
    await ingester.start();
    const book = (second: number, tsInit: number): NormalizedQuote =>
      venueQuote('sim_exchange', 'ct_d:ml:home:0:p1:ft', 0.5, 100, tsInit, { levels: [{ price: 0.5, available: 100 }, { price: 0.52, available: second }] });
    const stored = async () => JSON.parse((await s.rt.redis.hget(s.rt.ks.k('vq', 'ct_d'), book(0, 0).liquidity_hash))!) as NormalizedQuote;
    try {
      const t = clock;
      ingester.accept(book(200, t));
      expect(await ingester.flush()).toBe(true);
      expect(queued()).toBe(1);
      const ticks = ingester.pendingTickRows();

      // The same book again a second later: not a change, not due for re-confirmation, not written.
      clock = t + 1_000;
      ingester.accept(book(200, t + 1_000));
      expect(await ingester.flush()).toBe(true);
      expect((await stored()).ts_init).toBe(t);
      expect(queued()).toBe(1);

      // Best level unchanged, the second level's size moved: written and queued with its write, no tick.
      clock = t + 2_000;
      ingester.accept(book(350, t + 2_000));
      expect(ingester.pendingTickRows()).toBe(ticks);
      expect(await ingester.flush()).toBe(true);
      expect((await stored()).levels[1]).toEqual({ price: 0.52, available: 350 });
      expect(queued()).toBe(2);
    } finally {
      await ingester.stop();
      await producer.close();
    }
  });
});
