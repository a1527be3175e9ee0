/**
 * The co-located fast path (ingest and compute in one process): a moved contest is computed at
 * once, with no queued job, the venue-state write marking it taken and the stored computation
 * clearing the mark; a fast path that never finishes (its process died) is queued once its mark is
 * older than the grace, and that job computes the change. Real Redis and BullMQ, the simulator frozen.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logKeys, toLogEvent } from '../../../src/store/redis/eventlog.js';
import { snapshotRunPrefix } from '../../../src/store/redis/hot.js';
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

/** A pipeline with its queue drained and paused, and a streaming entry of an open contest to move. */
async function ready(p: ReturnType<typeof frozenSimPipeline>, prices: [number, number]) {
  const { market, hot, ingester, processor } = p;
  await ingester.start();
  await ingester.flush();
  const contest = market.catalog.contests.find((c) => c.status === 'open')!.id;
  const quoted = await eventually(() => hot.liquidity(contest), (j) => entries(j).some((e) => e.liquidity_hash.startsWith('sim_exchange')), 15_000);
  const target = entries(quoted).find((e) => e.liquidity_hash.startsWith('sim_exchange'))!;
  const position = (JSON.parse(quoted!) as { position_hash: string; partner_liquidities: Entry[] }[]).find((x) => x.partner_liquidities.some((e) => e.liquidity_hash === target.liquidity_hash))!.position_hash;
  await eventually(() => s.rt.redis.exists(`${s.rt.ks.prefix}:liquidity:wait`), (n) => n === 0, 10_000);
  await processor.worker.pause();
  const logKey = logKeys(s.rt.ks).events(contest);
  const before = (await s.rt.redis.xrevrange(logKey, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
  const changes = async () =>
    (await s.rt.redis.xrange(logKey, `(${before}`, '+'))
      .map((e) => JSON.parse(toLogEvent(contest, e as [string, string[]]).event) as { type: string; changed_entries?: Entry[] })
      .filter((e) => e.type === 'liquidity.update')
      .flatMap((e) => e.changed_entries ?? [])
      .filter((e) => e.liquidity_hash === target.liquidity_hash);
  // The worker is paused: a job added waits in this list.
  const jobsWaiting = () => s.rt.redis.llen(`${s.rt.ks.prefix}:liquidity:wait`);
  const mark = () => s.rt.redis.zscore(`${s.rt.ks.prefix}:fastp`, contest);
  // Away from the price the entry has now (an earlier test may have moved it).
  const price = target.price > 0.5 ? prices[0] : prices[1];
  const priced = (j: string | null) => entries(j).some((e) => e.liquidity_hash === target.liquidity_hash && e.price === price);
  return { contest, target, position, price, priced, changes, jobsWaiting, mark };
}

describe('depth and snapshot quote fields written since the run a computation continued from', () => {
  it('changes of one entry write only the fields they changed, and the stored depth and snapshot are the computation\'s whole', async () => {
    const p = frozenSimPipeline(s, 7, NOW, () => NOW);
    try {
      const r = await ready(p, [0.23, 0.77]);
      p.ingester.fastPath = p.processor.fastPath;
      // Changes that come while the fast path computes wait for it (or go to the queue).
      p.processor.worker.resume();
      const writes = vi.spyOn(p.hot, 'writeComputed');
      for (const [k, price] of [0.31, 0.32, 0.33, 0.34].entries()) {
        p.market.setQuote({ partner_id: 'sim_exchange', position_hash: r.position, price, available: 400 + k });
        await p.ingester.flush();
        const stored = await eventually(() => p.hot.liquidity(r.contest), (j) => entries(j).some((e) => e.liquidity_hash === r.target.liquidity_hash && e.price === price), 5_000);
        expect(entries(stored).find((e) => e.liquidity_hash === r.target.liquidity_hash)?.price).toBe(price);
      }
      const mine = writes.mock.calls.filter((c) => c[0] === r.contest);
      // After the first (which may start from the stored snapshot), each continued the previous run
      // and wrote the moved position's field among a few (its group's), not the contest's every field.
      const partial = mine.filter((c) => c[5]?.since !== undefined);
      expect(partial.length).toBeGreaterThanOrEqual(3);
      for (const c of partial) {
        expect(c[5]!.since!.depth.map(([h]) => h)).toContain(r.position);
        expect(c[5]!.since!.depth.length).toBeLessThan(c[4].length);
        expect(c[5]!.since!.quotes.length).toBeGreaterThan(0);
        expect(c[5]!.since!.quotes.length).toBeLessThan(c[5]!.snapshotParts!.quotes.length);
      }
      const last = mine[mine.length - 1]!;
      expect(await s.rt.redis.hgetall(`${s.rt.ks.prefix}:depth:${r.contest}`)).toEqual(Object.fromEntries(last[4]));
      // The snapshot read back from its parts is the text the computation assembled.
      expect((await p.hot.readVenueState(r.contest)).snapshot).toBe(last[3]);
    } finally {
      await p.stop();
    }
  });
});

describe('the co-located fast path', () => {
  it('computes a moved contest at once with no job queued, and its stored computation clears the mark', async () => {
    const p = frozenSimPipeline(s, 7, NOW, () => NOW);
    try {
      const r = await ready(p, [0.21, 0.79]);
      p.ingester.fastPath = p.processor.fastPath;
      const reads = vi.spyOn(p.hot, 'readVenueStateToCompute');
      p.market.setQuote({ partner_id: 'sim_exchange', position_hash: r.position, price: r.price, available: 500 });
      await p.ingester.flush();
      await eventually(() => p.hot.liquidity(r.contest), r.priced, 5_000);
      // Computed from the venue state its write answered: no read of its own.
      expect(reads).not.toHaveBeenCalled();
      expect(p.processor.fastPathRuns).toBeGreaterThanOrEqual(1);
      expect(p.ingester.fastPathTaken).toBeGreaterThanOrEqual(1);
      expect(await r.changes()).toHaveLength(1);
      // No job was added (it would wait: the worker is paused).
      expect(await r.jobsWaiting()).toBe(0);
      expect(await r.mark()).toBeNull();
      // Nothing left for the sweep to queue.
      expect(await p.ingester.queueUnfinishedFastPaths()).toBe(0);
    } finally {
      await p.stop();
    }
  });

  it('takes a change that comes while it computes for later: marked, no job, computed from the state then once the running one is stored', async () => {
    const p = frozenSimPipeline(s, 7, NOW, () => NOW);
    try {
      // Prices no other test here sets, so neither can be the entry's price already.
      const r = await ready(p, [0.36, 0.64]);
      const first = r.price;
      const second = Number((first + 0.03).toFixed(2));
      const move = (price: number) => p.market.setQuote({ partner_id: 'sim_exchange', position_hash: r.position, price, available: 500 });
      p.ingester.fastPath = p.processor.fastPath;
      // The first computation's store waits until released: the fast path is busy meanwhile.
      let release!: () => void;
      const gate = new Promise<void>((res) => (release = res));
      const store = p.hot.writeComputed.bind(p.hot);
      const writes = vi.spyOn(p.hot, 'writeComputed').mockImplementationOnce(async (...args) => {
        await gate;
        return store(...args);
      });
      move(first);
      await p.ingester.flush();
      await eventually(async () => writes.mock.calls.length, (n) => n === 1, 5_000);
      move(second);
      await p.ingester.flush();
      expect(p.ingester.fastPathLater).toBe(1);
      expect(await r.mark()).not.toBeNull();
      expect(p.processor.fastPathLaterRuns).toBe(0);
      release();
      await eventually(() => p.hot.liquidity(r.contest), (j) => entries(j).some((e) => e.liquidity_hash === r.target.liquidity_hash && e.price === second), 5_000);
      expect(p.processor.fastPathLaterRuns).toBe(1);
      expect((await r.changes()).map((e) => e.price)).toEqual([first, second]);
      // No job was added (the worker is paused: it would wait), and the later computation's store cleared the mark.
      expect(await r.jobsWaiting()).toBe(0);
      expect(await r.mark()).toBeNull();
      expect(await p.ingester.queueUnfinishedFastPaths()).toBe(0);
    } finally {
      await p.stop();
    }
  });

  it('a read offered the snapshot text this process handed out does not bring it back; another writer’s is read whole', async () => {
    const p = frozenSimPipeline(s, 7, NOW, () => NOW);
    try {
      const r = await ready(p, [0.27, 0.73]);
      const prices = [r.price, r.price + 0.01, r.price + 0.02].map((x) => Number(x.toFixed(2)));
      const move = (price: number) => p.market.setQuote({ partner_id: 'sim_exchange', position_hash: r.position, price, available: 500 });
      p.ingester.fastPath = p.processor.fastPath;
      move(prices[0]!);
      await p.ingester.flush();
      await eventually(() => p.hot.liquidity(r.contest), (j) => entries(j).some((e) => e.liquidity_hash === r.target.liquidity_hash && e.price === prices[0]), 5_000);
      const key = s.rt.ks.k('snap', r.contest);
      // The stored snapshot is the last this process handed out (once no computation is in flight).
      p.ingester.fastPath = null;
      const { stored, held } = await eventually(
        async () => {
          await new Promise((res) => setTimeout(res, 100));
          return { stored: (await p.hot.readVenueState(r.contest)).snapshot!, held: p.compute.heldSnapshots(r.contest) };
        },
        (q) => q.held.includes(q.stored),
        5_000,
      );

      // A change not computed yet (no fast path, the worker paused): the read names the text in hand.
      expect(held).toContain(stored);
      move(prices[1]!);
      await p.ingester.flush();
      const before = p.hot.heldSnapshotReads;
      const warm = await p.hot.readVenueStateToCompute(r.contest, held);
      expect(warm!.snapshot).toBe(held[held.indexOf(stored)]);
      expect(p.hot.heldSnapshotReads).toBe(before + 1);
      // Texts without a run id are not offered; none held reads the snapshot whole.
      expect((await p.hot.readVenueStateToCompute(r.contest, ['{"contest_id":"x"}']))!.snapshot).toBe(stored);
      expect((await p.hot.readVenueStateToCompute(r.contest))!.snapshot).toBe(stored);

      // Another writer's snapshot (the same content under another run id, stored whole) is read whole.
      const other = stored.replace(/^\{"run":"[^"]*"/, '{"run":"elsewhere.1"');
      await s.rt.redis.multi().set(key, other).del(s.rt.ks.k('snapq', r.contest)).exec();
      const cold = await p.hot.readVenueStateToCompute(r.contest, held);
      expect(cold!.snapshot).toBe(other);
      expect(p.hot.heldSnapshotReads).toBe(before + 1);

      // Computed from the state as it is then (the second change was folded into the third, as
      // changes that come faster than they are computed are), each change reaches the log once.
      p.ingester.fastPath = p.processor.fastPath;
      move(prices[2]!);
      await p.ingester.flush();
      await eventually(() => p.hot.liquidity(r.contest), (j) => entries(j).some((e) => e.liquidity_hash === r.target.liquidity_hash && e.price === prices[2]), 5_000);
      expect((await r.changes()).map((e) => e.price)).toEqual([prices[0], prices[2]]);
      expect(snapshotRunPrefix((await s.rt.redis.get(key))!)).not.toBe('{"run":"elsewhere.1"');
    } finally {
      await p.stop();
    }
  });

  it('queues a contest whose fast path took its change and never stored it (its process died); the job computes the change', async () => {
    // The ingester's own sweep is off: the test runs it, so the sweep cannot queue the contest first.
    const p = frozenSimPipeline(s, 7, NOW, () => NOW, { fastPathGraceMs: 300, fastPathSweepMs: 0 });
    try {
      const r = await ready(p, [0.34, 0.66]);
      // A fast path that takes the change and dies before computing it.
      let taken = 0;
      p.ingester.fastPath = { reserve: () => true, release: () => undefined, roomLater: () => false, later: () => false, held: () => [], compute: () => void taken++ };
      p.market.setQuote({ partner_id: 'sim_exchange', position_hash: r.position, price: r.price, available: 500 });
      await p.ingester.flush();
      expect(taken).toBe(1);
      expect(await r.mark()).not.toBeNull();
      expect(await r.jobsWaiting()).toBe(0);
      // Within its grace the mark is left alone.
      expect(await p.ingester.queueUnfinishedFastPaths()).toBe(0);
      await new Promise((res) => setTimeout(res, 400));
      expect(await p.ingester.queueUnfinishedFastPaths()).toBe(1);
      expect(await r.jobsWaiting()).toBe(1);
      expect(await r.mark()).toBeNull();
      p.processor.worker.resume();
      await eventually(() => p.hot.liquidity(r.contest), r.priced, 10_000);
      expect(await r.changes()).toHaveLength(1);
    } finally {
      await p.stop();
    }
  });
});
