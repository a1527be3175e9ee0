/**
 * While Redis is out of reach the ingester keeps what it could not write, within bounds: the latest
 * quote per listing, and tick-history rows up to maxPendingTicks (the oldest dropped and counted).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Ingester } from '../../../pipelines/ingest/ingester.js';
import { LiquidityProducer } from '../../../pipelines/producers/liquidity.js';
import { createRedis, Keyspace } from '../../../src/store/redis/client.js';
import { HotState } from '../../../src/store/redis/hot.js';
import type { NormalizedQuote } from '../../../src/venues/types.js';
import { REDIS_URL } from '../../support/stack.js';
import { venueQuote } from '../../support/pipeline.js';

const quote = (i: number, price: number): NormalizedQuote => venueQuote('sim_exchange', `ct_b:ml:home:0:p${i % 10}:ft`, price, 100, i);

describe('an ingester cut off from Redis', () => {
  it('holds at most maxPendingTicks tick rows and counts the oldest it dropped', async () => {
    // Never connected: the hot state reports itself unavailable, as during an outage.
    const redis = createRedis(REDIS_URL, { lazyConnect: true });
    const producer = new LiquidityProducer(REDIS_URL, new Keyspace('flow-test-bounds'));
    const ingester = new Ingester({
      adapters: [],
      hot: new HotState(redis, new Keyspace('flow-test-bounds')),
      producer,
      log: pino({ level: 'silent' }),
      now: () => 0,
      leagueOf: () => null,
      marketOf: () => null,
      partnerName: (p) => p,
      autoFlush: false,
      maxPendingTicks: 50,
    });
    try {
      for (let i = 0; i < 500; i++) ingester.accept(quote(i, 0.3 + (i % 7) * 0.01 + Math.floor(i / 70) * 0.001));
      expect(await ingester.flush()).toBe(false);
      expect(ingester.ticksDropped).toBe(500 - 50);
      expect(ingester.pendingTickRows()).toBe(50);
    } finally {
      await producer.close();
      redis.disconnect();
    }
  });
});
