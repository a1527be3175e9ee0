/**
 * The co-located fast path (ingest and compute in one process): a stored change is computed at once,
 * without waiting for the queue, and the queued job that follows (the durable path) appends no
 * second copy of its events. Real Redis and BullMQ, the simulator frozen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logKeys, toLogEvent } from '../../../src/store/redis/eventlog.js';
import { buildSimCatalog } from '../../../src/sim/index.js';
import { eventually } from '../../support/e2e.js';
import { frozenSimPipeline } from '../../support/sim-ingester.js';
import { startStack, type TestStack } from '../../support/stack.js';

const NOW = Date.now();
let s: TestStack;
beforeAll(async () => {
  s = await startStack({ catalog: buildSimCatalog(7, NOW) });
});
afterAll(async () => s?.close());

interface Entry {
  liquidity_hash: string;
  price: number;
}
const entries = (json: string | null): Entry[] => (json ? (JSON.parse(json) as { partner_liquidities: Entry[] }[]).flatMap((p) => p.partner_liquidities) : []);

describe('the co-located fast path', () => {
  it('computes a stored change with the queue stopped, and the queued job then appends nothing more', async () => {
    const { market, hot, ingester, processor, stop } = frozenSimPipeline(s, 7, NOW, () => NOW);
    try {
      await ingester.start();
      await ingester.flush();
      const contest = market.catalog.contests.find((c) => c.status === 'open')!.id;
      const quoted = await eventually(() => hot.liquidity(contest), (j) => entries(j).some((e) => e.liquidity_hash.startsWith('sim_exchange')), 15_000);
      const target = entries(quoted).find((e) => e.liquidity_hash.startsWith('sim_exchange'))!;
      const position = (JSON.parse(quoted!) as { position_hash: string; partner_liquidities: Entry[] }[]).find((p) => p.partner_liquidities.some((e) => e.liquidity_hash === target.liquidity_hash))!.position_hash;
      // Let the queue drain, then stop it: only the fast path can compute from here.
      await eventually(() => s.rt.redis.exists(`${s.rt.ks.prefix}:bull:liquidity:wait`), (n) => n === 0, 10_000);
      await processor.worker.pause();
      const logKey = logKeys(s.rt.ks).events(contest);
      const before = (await s.rt.redis.xrevrange(logKey, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';

      ingester.onStored = (c) => processor.computeNow(c);
      const price = target.price > 0.5 ? 0.21 : 0.79;
      market.setQuote({ partner_id: 'sim_exchange', position_hash: position, price, available: 500 });
      await ingester.flush();
      const after = await eventually(() => hot.liquidity(contest), (j) => entries(j).some((e) => e.liquidity_hash === target.liquidity_hash && e.price === price), 5_000);
      expect(entries(after).find((e) => e.liquidity_hash === target.liquidity_hash)!.price).toBe(price);
      expect(processor.fastPathRuns).toBeGreaterThanOrEqual(1);

      // The queue had the job all along; once it runs it finds the state computed.
      const changes = async () =>
        (await s.rt.redis.xrange(logKey, `(${before}`, '+'))
          .map((e) => JSON.parse(toLogEvent(contest, e as [string, string[]]).event) as { type: string; changed_entries?: Entry[] })
          .filter((e) => e.type === 'liquidity.update')
          .flatMap((e) => e.changed_entries ?? [])
          .filter((e) => e.liquidity_hash === target.liquidity_hash);
      expect(await changes()).toHaveLength(1);
      const skipped = processor.skipped;
      processor.worker.resume();
      // It sees the venue state computed from its version alone: no read of the quotes, no computation.
      await eventually(async () => processor.skipped, (n) => n > skipped, 10_000);
      expect(await changes()).toHaveLength(1);
    } finally {
      await stop();
    }
  });
});
