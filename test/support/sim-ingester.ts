/**
 * An Ingester over the simulator's venues on a test stack, flushed only when a test says so
 * (autoFlush off), with its producer; stop() stops both.
 */
import { pino } from 'pino';
import { Ingester } from '../../pipelines/ingest/ingester.js';
import { LiquidityProducer } from '../../pipelines/producers/liquidity.js';
import type { HotState } from '../../src/store/redis/hot.js';
import { createSimAdapters, type SimMarket } from '../../src/venues/sim/index.js';
import type { TestStack } from './stack.js';

export function simIngester(s: TestStack, market: SimMarket, hot: HotState, now: () => number): { ingester: Ingester; stop(): Promise<void> } {
  const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
  const ingester = new Ingester({
    adapters: createSimAdapters(market, { clock: now }),
    hot,
    producer,
    log: pino({ level: 'silent' }),
    now,
    leagueOf: () => null,
    marketOf: () => null,
    partnerName: (p) => p,
    autoFlush: false,
  });
  return {
    ingester,
    async stop() {
      await ingester.stop();
      await producer.close();
    },
  };
}
