/**
 * An Ingester over the simulator's venues on a test stack, flushed only when a test says so
 * (autoFlush off), with its producer; stop() stops both.
 */
import { pino } from 'pino';
import { Ingester, type IngesterDeps } from '../../pipelines/ingest/ingester.js';
import { LiquidityProducer } from '../../pipelines/producers/liquidity.js';
import { ComputePool } from '../../pipelines/compute-pool.js';
import { HotState } from '../../src/store/redis/hot.js';
import { createSimAdapters } from '../../src/venues/sim/index.js';
import { SimMarket } from '../../src/sim/index.js';
import { testProcessor } from './pipeline.js';
import type { TestStack } from './stack.js';

export function simIngester(s: TestStack, market: SimMarket, hot: HotState, now: () => number, opts: Partial<IngesterDeps> = {}): { ingester: Ingester; stop(): Promise<void> } {
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
    ...opts,
  });
  return {
    ingester,
    async stop() {
      await ingester.stop();
      await producer.close();
    },
  };
}

/**
 * A frozen simulator feeding an ingester (flushed when the test says) and a liquidity processor on
 * the test stack, with the clock `now`; stop() closes all of it.
 */
export function frozenSimPipeline(s: TestStack, seed: number, startMs: number, now: () => number, ingesterOpts: Partial<IngesterDeps> = {}) {
  const market = new SimMarket({ seed, now: startMs });
  market.freeze(true);
  const hot = new HotState(s.rt.redis, s.rt.ks);
  const { ingester, stop } = simIngester(s, market, hot, now, ingesterOpts);
  const compute = new ComputePool(1);
  const processor = testProcessor(s, hot, compute, now);
  return {
    market,
    hot,
    ingester,
    processor,
    compute,
    async stop() {
      await stop();
      await processor.close();
      await compute.close();
    },
  };
}
