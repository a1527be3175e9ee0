/**
 * The lqp index (liquidity_hash → position_hash, how an order naming a liquidity_hash finds its
 * position) is written with a listing's first write and not re-sent with every later change; it
 * is written again when the listing's position changes and after Redis lost its data.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingester } from '../../../pipelines/ingest/ingester.js';
import { LiquidityProducer } from '../../../pipelines/producers/liquidity.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { eventually } from '../../support/e2e.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { venueQuote } from '../../support/pipeline.js';

let s: TestStack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => s?.close());

/** Every key of this test's keyspace gone, as when Redis restarts empty (the shared Redis is never flushed). */
async function loseData(): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await s.rt.redis.scan(cursor, 'MATCH', s.rt.ks.k('*'), 'COUNT', 500);
    cursor = next;
    if (keys.length) await s.rt.redis.del(...keys);
  } while (cursor !== '0');
}

describe('the liquidity_hash → position index', () => {
  it('goes with a listing’s first write only, again when its position changes, and again after Redis lost its data', async () => {
    const hot = new HotState(s.rt.redis, s.rt.ks);
    const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
    const ingester = new Ingester({ adapters: [], hot, producer, log: pino({ level: 'silent' }), now: () => Date.now(), leagueOf: () => null, marketOf: () => null, partnerName: (p) => p });
    await ingester.start();
    const home = 'ct_px:ml:home:0:p1:ft';
    const q = (price: number, over: Parameters<typeof venueQuote>[5] = {}) => venueQuote('sim_exchange', home, price, 100, Date.now(), over);
    const lqp = s.rt.ks.k('lqp');
    try {
      const first = q(0.5);
      ingester.accept(first);
      expect(await ingester.flush()).toBe(true);
      expect(await hot.positionOfLiquidityHash(first.liquidity_hash)).toBe(home);

      // Removed behind the ingester's back: a later change does not send the pair again.
      await s.rt.redis.hdel(lqp, first.liquidity_hash);
      ingester.accept(q(0.51));
      expect(await ingester.flush()).toBe(true);
      const stored = JSON.parse((await s.rt.redis.hget(s.rt.ks.k('vq', 'ct_px'), first.liquidity_hash))!) as { price: number };
      expect(stored.price).toBe(0.51);
      expect(await hot.positionOfLiquidityHash(first.liquidity_hash)).toBeNull();

      // The listing now quotes another position of the contest: the new pair is written.
      const away = 'ct_px:ml:away:0:p2:ft';
      ingester.accept({ ...q(0.52), position_hash: away });
      expect(await ingester.flush()).toBe(true);
      expect(await hot.positionOfLiquidityHash(first.liquidity_hash)).toBe(away);

      // Redis comes back empty: the ingester notices (its marker is gone) and forgets what it wrote,
      // so the listing's next change brings its pair back.
      await loseData();
      await eventually(async () => ingester.seenSize(), (n) => n === 0, 3_000);
      ingester.accept({ ...q(0.53), position_hash: away });
      expect(await ingester.flush()).toBe(true);
      expect(await hot.positionOfLiquidityHash(first.liquidity_hash)).toBe(away);
    } finally {
      await ingester.stop();
      await producer.close();
    }
  });
});
