/**
 * Freshness (issue 9 item 3): a venue whose quotes are not confirmed within its freshness bound is
 * marked stale in REST data and the flip reaches the stream, even when nothing else arrives for the
 * contest: the ingester schedules the recomputation itself. Real Redis, the simulator frozen, the
 * clock moved by the test.
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
  partner_id: string;
  liquidity_hash: string;
  is_stale: boolean;
}
const entries = (json: string | null): Entry[] => (json ? (JSON.parse(json) as { partner_liquidities: Entry[] }[]).flatMap((p) => p.partner_liquidities) : []);

describe('a venue that stops confirming its quotes', () => {
  it('is marked stale in REST liquidity and in a liquidity.update, with no other change arriving', async () => {
    let t = NOW;
    const { market, hot, ingester, stop } = frozenSimPipeline(s, 7, NOW, () => t);
    try {
      await ingester.start();
      await ingester.flush();
      const contest = market.catalog.contests.find((c) => c.status === 'open')!.id;
      const streaming = (e: Entry) => e.partner_id === 'sim_exchange';
      const fresh = await eventually(
        () => hot.liquidity(contest),
        (j) => entries(j).some(streaming),
        15_000,
      );
      expect(entries(fresh).filter(streaming).length).toBeGreaterThan(0);
      expect(entries(fresh).filter(streaming).every((e) => !e.is_stale)).toBe(true);
      const lastBefore = await s.rt.redis.xrevrange(logKeys(s.rt.ks).events(contest), '+', '-', 'COUNT', 1);

      // Past sim_exchange's 30 s bound: the frozen venue sent nothing since, so nothing confirmed it.
      t += 31_000;
      const stale = await eventually(
        () => hot.liquidity(contest),
        (j) => entries(j).filter(streaming).every((e) => e.is_stale),
        15_000,
      );
      expect(entries(stale).filter(streaming).every((e) => e.is_stale)).toBe(true);

      // The flip went out as a liquidity.update whose entries say is_stale.
      const after = await s.rt.redis.xrange(logKeys(s.rt.ks).events(contest), lastBefore[0] ? `(${lastBefore[0][0]}` : '-', '+');
      const flips = after
        .map((entry) => JSON.parse(toLogEvent(contest, entry as [string, string[]]).event) as { type: string; changed_entries?: Entry[] })
        .filter((e) => e.type === 'liquidity.update')
        .flatMap((e) => e.changed_entries ?? [])
        .filter(streaming);
      expect(flips.length).toBeGreaterThan(0);
      expect(flips.every((e) => e.is_stale)).toBe(true);
    } finally {
      await stop();
    }
  });
});
