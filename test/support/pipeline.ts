/**
 * Pipeline pieces tests build by hand: a venue quote as an adapter would emit it, and a liquidity
 * processor on a test stack (silent, with the given hot state, pool and clock).
 */
import { pino } from 'pino';
import type { ComputePool } from '../../pipelines/compute-pool.js';
import { SignalStore } from '../../src/store/redis/signals.js';
import { LiquidityProcessor, type LiquidityProcessorDeps } from '../../pipelines/processors/liquidity.js';
import type { HotState } from '../../src/store/redis/hot.js';
import type { NormalizedQuote } from '../../src/venues/types.js';
import type { TestStack } from './stack.js';

/** A streaming venue's one-level quote of a position (`partner:position` as its liquidity hash). */
export function venueQuote(partner: string, positionHash: string, price: number, available: number, tsInit: number, over: Partial<NormalizedQuote> = {}): NormalizedQuote {
  return {
    partner_id: partner,
    liquidity_hash: `${partner}:${positionHash}`,
    position_hash: positionHash,
    venue_market_id: positionHash,
    venue_side_key: positionHash.split(':')[2]!,
    price,
    available,
    levels: [{ price, available }],
    fee: { kind: 'none' },
    real_book: true,
    source: 'streaming',
    ts_event: tsInit,
    ts_init: tsInit,
    ...over,
  };
}

export function testProcessor(s: TestStack, hot: HotState, compute: ComputePool, now: () => number, extra: Partial<LiquidityProcessorDeps> = {}): LiquidityProcessor {
  return new LiquidityProcessor({ redisUrl: s.env.REDIS_URL!, ks: s.rt.ks, pool: s.rt.pool, hot, signals: new SignalStore(s.rt.redis, s.rt.ks), compute, log: pino({ level: 'silent' }), now, ...extra });
}
