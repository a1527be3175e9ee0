/**
 * Bounded hot state: when a contest closes, its Redis keys get the documented retention as TTL (and
 * keep it through late writes), and the ingester forgets its quotes. Real Redis, the simulator as
 * the venues.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComputePool } from '../../../pipelines/compute-pool.js';
import { LiquidityProducer } from '../../../pipelines/producers/liquidity.js';
import { arbitrageIndexKey, arbitrageKey, contestMember } from '../../../src/store/redis/contest-index.js';
import { HOT_KINDS, HotState } from '../../../src/store/redis/hot.js';
import { buildSimCatalog, SimMarket } from '../../../src/sim/index.js';
import type { NormalizedQuote } from '../../../src/venues/types.js';
import { simIngester } from '../../support/sim-ingester.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { testProcessor, venueQuote } from '../../support/pipeline.js';

const NOW = Date.UTC(2026, 0, 10, 18, 0, 0);
const RETENTION_MS = 120_000;

let s: TestStack;
beforeAll(async () => {
  // The catalog of the simulated world the tests run, so the compute worker finds its positions.
  s = await startStack({ catalog: buildSimCatalog(7, NOW) });
});
afterAll(async () => s?.close());

async function ttls(contestId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const kind of HOT_KINDS) out[kind] = await s.rt.redis.pttl(s.rt.ks.k(kind, contestId));
  return out;
}

describe('hot state of a closed contest', () => {
  it('expires after the retention once the contest closes, late writes included; the ingester forgets its quotes', async () => {
    const market = new SimMarket({ seed: 7, now: NOW });
    market.freeze(true);
    let t = NOW;
    const hot = new HotState(s.rt.redis, s.rt.ks, { closedRetentionMs: RETENTION_MS });
    const { ingester, stop } = simIngester(s, market, hot, () => t);
    try {
      await ingester.start();
      await ingester.flush();
      const open = market.catalog.contests.filter((c) => c.status === 'open' && market.gameState(c.id)!.state.game_status === 'scheduled');
      const [closing, staying] = [open[0]!.id, open[1]!.id];
      await hot.setContestState(closing, JSON.stringify({ contest_id: closing, state: { game_status: 'scheduled' } }));
      // Every kind of key exists: an event (log and last liquidity id) and an outlier flag too.
      const logged = {
        events: [{ channel: 'liquidity' as const, league_id: null, event: '{}' }],
        outliers: ['h'],
        snapshotParts: { rest: '{"run":"r1","quotes":{}}', quotes: [['0', '"q":{}']] as [string, string][] },
      };
      await hot.writeComputed(closing, 1, '[]', '{}', [['h', '{}']], logged);
      await hot.writeComputed(staying, 1, '[]', '{}', [['h', '{}']]);
      const seenBefore = ingester.seenSize();
      const contestsBefore = ingester.seenContests();
      expect(seenBefore).toBeGreaterThan(0);

      // Open: no key of either contest expires.
      for (const v of Object.values(await ttls(closing))) expect(v).toBe(-1);

      t += 1_000;
      const winner = market.catalog.contest_participants.find((p) => p.contest_id === closing && p.role === 'home')!.participant_id;
      market.settle(closing, { winner_participant_id: winner });
      // The final state reaches the ingester through the venue feed; wait for the close to land.
      const until = Date.now() + 5_000;
      while ((await hot.closedUntil(closing)) === null && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      await ingester.flush();

      const closedTtls = await ttls(closing);
      for (const [kind, v] of Object.entries(closedTtls)) {
        expect(v, kind).toBeGreaterThan(RETENTION_MS - 10_000);
        expect(v, kind).toBeLessThanOrEqual(RETENTION_MS);
      }
      for (const [kind, v] of Object.entries(await ttls(staying))) if (v !== -2) expect(v, kind).toBe(-1);
      expect(ingester.seenContests()).toBe(contestsBefore - 1);
      expect(ingester.seenSize()).toBeLessThan(seenBefore);

      // Late writes (a job that was running, a repeated state) neither drop the TTL nor push it out.
      const at = (await hot.closedUntil(closing))!;
      await hot.writeComputed(closing, 1_000, '[]', '{}', [['h2', '{}']], logged);
      await hot.setContestState(closing, JSON.stringify({ contest_id: closing, state: { game_status: 'final' } }));
      await hot.writeQuotes(closing, [{ liquidity_hash: 'sim_exchange:late' }]);
      expect(await hot.closeContest(closing)).toBe(at);
      for (const kind of HOT_KINDS) {
        const v = await s.rt.redis.pexpiretime(s.rt.ks.k(kind, closing));
        expect(v, kind).toBe(at);
      }
      // The marker outlives the state so stragglers still expire with it.
      const markerTtl = await s.rt.redis.pttl(s.rt.ks.k('closed', closing));
      expect(markerTtl).toBeGreaterThan(RETENTION_MS);
      expect(markerTtl).toBeLessThanOrEqual(2 * RETENTION_MS);
    } finally {
      await stop();
    }
  });

  it('a closed contest keeps no arbitrages: a late computation that found some clears them', async () => {
    const hot = new HotState(s.rt.redis, s.rt.ks, { closedRetentionMs: RETENTION_MS });
    const c = 'ct_arb_closing';
    const found = { json: '[{"arbitrage_id":"a1"}]', leagueId: null, ttlMs: 60_000 };
    const member = contestMember(c, null);
    await hot.writeComputed(c, 1, '[1]', '{}', [['h', '{}']], { arbitrages: found });
    expect(await s.rt.redis.get(arbitrageKey(s.rt.ks, c))).toBe(found.json);
    expect(await s.rt.redis.zscore(arbitrageIndexKey(s.rt.ks), member)).not.toBeNull();
    await hot.closeContest(c);
    await hot.writeComputed(c, 2, '[2]', '{}', [['h', '{}']], { arbitrages: found });
    expect(await s.rt.redis.get(arbitrageKey(s.rt.ks, c))).toBeNull();
    expect(await s.rt.redis.zscore(arbitrageIndexKey(s.rt.ks), member)).toBeNull();
  });

  it('a write after the retention has passed does not revive the state', async () => {
    const hot = new HotState(s.rt.redis, s.rt.ks, { closedRetentionMs: 200 });
    const c = 'ct_gone';
    await hot.writeComputed(c, 1, '[1]', '{}', [['h', '{}']]);
    await hot.closeContest(c);
    await new Promise((r) => setTimeout(r, 300));
    expect(await hot.liquidity(c)).toBeNull();
    await hot.writeComputed(c, 2, '[2]', '{}', [['h', '{}']]);
    await hot.writeQuotes(c, [{ liquidity_hash: 'x' }]);
    await hot.setContestState(c, '{}');
    for (const kind of HOT_KINDS) expect(await s.rt.redis.exists(s.rt.ks.k(kind, c)), kind).toBe(0);
  });
});

describe('the liquidity_hash → position index', () => {
  it('is written with the quotes, dropped when the contest closes, and not brought back by a late quote', async () => {
    const hot = new HotState(s.rt.redis, s.rt.ks, { closedRetentionMs: RETENTION_MS });
    const [open, closing] = ['ct_idx_open', 'ct_idx_closing'];
    await hot.writeQuotes(open, [{ liquidity_hash: 'sim_exchange:o1', position_hash: `${open}:ml:home:0:p:ft` }]);
    await hot.writeQuotes(closing, [
      { liquidity_hash: 'sim_exchange:c1', position_hash: `${closing}:ml:home:0:p:ft` },
      { liquidity_hash: 'sim_book01:c2', position_hash: `${closing}:ml:away:0:q:ft` },
      // A quote written without its position (as some callers do) is stored but not indexed.
      { liquidity_hash: 'sim_book01:c3' },
    ]);
    expect(await hot.positionOfLiquidityHash('sim_exchange:c1')).toBe(`${closing}:ml:home:0:p:ft`);
    expect(await hot.positionOfLiquidityHash('sim_book01:c2')).toBe(`${closing}:ml:away:0:q:ft`);
    expect(await hot.positionOfLiquidityHash('sim_book01:c3')).toBeNull();
    await hot.closeContest(closing);
    expect(await hot.positionOfLiquidityHash('sim_exchange:c1')).toBeNull();
    expect(await hot.positionOfLiquidityHash('sim_book01:c2')).toBeNull();
    await hot.writeQuotes(closing, [{ liquidity_hash: 'sim_exchange:c1', position_hash: `${closing}:ml:home:0:p:ft` }]);
    expect(await hot.positionOfLiquidityHash('sim_exchange:c1')).toBeNull();
    // The index itself never expires with a contest: the open contest's entry stays.
    expect(await hot.positionOfLiquidityHash('sim_exchange:o1')).toBe(`${open}:ml:home:0:p:ft`);
    expect(await s.rt.redis.pttl(s.rt.ks.k('lqp'))).toBe(-1);
  });
});

describe("the compute worker's contest facts", () => {
  it('are bounded by contest count and dropped once a contest stops being computed (as a closed one does)', async () => {
    const catalog = buildSimCatalog(7, NOW);
    const contests = [...new Set(catalog.positions.filter((p) => p.market_key === 'moneyline').map((p) => p.contest_id))].slice(0, 3);
    let t = Date.now();
    const hot = new HotState(s.rt.redis, s.rt.ks);
    const quote = (positionHash: string): NormalizedQuote => venueQuote('sim_exchange', positionHash, 0.5, 100, t, { venue_side_key: 'home' });
    const compute = new ComputePool(1);
    const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
    const processor = testProcessor(s, hot, compute, () => t, { maxContests: 2 });
    try {
      for (const c of contests) {
        const pos = catalog.positions.find((p) => p.contest_id === c && p.market_key === 'moneyline')!;
        await hot.writeQuotes(c, [quote(pos.position_hash)]);
        await producer.enqueue(c);
      }
      const until = Date.now() + 30_000;
      const computed = async () => (await Promise.all(contests.map((c) => hot.liquidity(c)))).every((x) => x !== null);
      while (!(await computed()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await computed()).toBe(true);
      expect(processor.metaSize()).toBe(2);
      t += 61_000;
      processor.pruneMeta();
      expect(processor.metaSize()).toBe(0);
    } finally {
      await processor.close();
      await compute.close();
      await producer.close();
    }
  }, 60_000);
});
