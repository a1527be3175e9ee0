/**
 * A write that only re-confirms quotes (nothing moved) queues its contest's recomputation at a
 * trickle, not at once, so a venue snapshot that re-confirms every contest does not delay the
 * recomputation a real change needs; a real change is queued with its write.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingester } from '../../../pipelines/ingest/ingester.js';
import { LiquidityProducer } from '../../../pipelines/producers/liquidity.js';
import { HotState } from '../../../src/store/redis/hot.js';
import type { NormalizedQuote } from '../../../src/venues/types.js';
import { eventually } from '../../support/e2e.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { venueQuote } from '../../support/pipeline.js';

let s: TestStack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => s?.close());

const quote = (price: number, tsInit: number): NormalizedQuote => venueQuote('sim_exchange', 'ct_r:ml:home:0:p1:ft', price, 100, tsInit);

describe('re-confirmations', () => {
  it('are written at once but recomputed at a trickle; a change is recomputed with its write', async () => {
    const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
    const queued: number[] = [];
    const enqueue = producer.enqueue.bind(producer);
    producer.enqueue = async (c: string) => {
      queued.push(performance.now());
      return enqueue(c);
    };
    const hot = new HotState(s.rt.redis, s.rt.ks);
    const ingester = new Ingester({ adapters: [], hot, producer, log: pino({ level: 'silent' }), now: Date.now, leagueOf: () => null, marketOf: () => null, partnerName: (p) => p });
    await ingester.start();
    try {
      const t = Date.now();
      ingester.accept(quote(0.5, t));
      expect(await ingester.flush()).toBe(true);
      expect(queued.length).toBe(1); // new: queued with its write

      // Unchanged, 21 s later: due for re-confirmation, stored at once, recomputed later.
      ingester.accept(quote(0.5, t + 21_000));
      expect(await ingester.flush()).toBe(true);
      const stored = JSON.parse((await s.rt.redis.hget(s.rt.ks.k('vq', 'ct_r'), quote(0.5, t).liquidity_hash))!) as NormalizedQuote;
      expect(stored.ts_init).toBe(t + 21_000);
      expect(queued.length).toBe(1);
      expect((await eventually(async () => queued.length, (n) => n === 2, 3_000))).toBe(2);

      // A price change: queued with its write.
      ingester.accept(quote(0.52, t + 22_000));
      expect(await ingester.flush()).toBe(true);
      expect(queued.length).toBe(3);
    } finally {
      await ingester.stop();
      await producer.close();
    }
  });
});
