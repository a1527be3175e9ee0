/**
 * The event log's atomic appends and reads on real Redis: state and events land together or not at
 * all, ids order a contest's events, resume reads exactly what follows an id, and retention keeps
 * "at least N events or the last T ms, whichever is more".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, type Redis } from '../../../src/store/redis/client.js';
import { compareStreamIds, EventLogReader, logKeys, PACK_MIN_BYTES, toHistEntries, type LogAppend } from '../../../src/store/redis/eventlog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let hot: HotState;
let reader: EventLogReader;
let blocking: Redis;
beforeAll(async () => {
  s = await startStack();
  hot = new HotState(s.rt.redis, s.rt.ks);
  blocking = createRedis(s.rt.config.redisUrl);
  reader = new EventLogReader(blocking, s.rt.ks);
});
afterAll(async () => {
  blocking?.disconnect();
  await s?.close();
});

const liq = (n: number): LogAppend => ({ channel: 'liquidity', league_id: 'lg1', event: `{"type":"liquidity.update","n":${n}}` });
const ticks = (n: number): LogAppend => ({ channel: 'ticks', league_id: null, event: `{"type":"ticks","n":${n}}` });

describe('computed writes append their events in the same step', () => {
  it('stores state, events, the feed pointer, history rows and the last liquidity event id together', async () => {
    const c = 'c-atomic';
    const head = await reader.feedHead();
    const w = await hot.writeComputed(c, 1, '[1]', '{}', [['p', '{}']], { events: [liq(1), ticks(1), liq(2)], hist: [{ table: 'points', rows: '[{"x":1}]' }] });
    expect(w).not.toBe(false);
    const batch = await reader.readFeed(head, 100);
    const mine = batch.events.filter((e) => e.contest_id === c);
    expect(mine.map((e) => [e.channel, e.event])).toEqual([
      ['liquidity', liq(1).event],
      ['ticks', ticks(1).event],
      ['liquidity', liq(2).event],
    ]);
    expect(mine[0]!.league_id).toBe('lg1');
    expect(mine[1]!.league_id).toBeNull();
    // Ids increase within the contest, and the REST snapshot names the last liquidity event.
    expect(compareStreamIds(mine[0]!.id, mine[1]!.id)).toBe(-1);
    expect(w && w.lastLiquidityEventId).toBe(mine[2]!.id);
    const snap = await hot.liquidityWithVersion(c);
    expect(snap).toEqual({ version: 1, json: '[1]', eventId: mine[2]!.id });
    const hist = toHistEntries((await s.rt.redis.xrange(logKeys(s.rt.ks).hist, '-', '+')) as [string, string[]][]);
    expect(hist.some((h) => h.table === 'points' && h.rows === '[{"x":1}]')).toBe(true);
  });

  it('a write refused by compare-and-set appends nothing', async () => {
    const c = 'c-cas';
    await hot.writeComputed(c, 5, '[5]', '{}', [], { events: [liq(5)] });
    const before = await reader.lastEventId(c);
    const w = await hot.writeComputed(c, 4, '[4]', '{}', [], { events: [liq(4)] });
    expect(w).toBe(false);
    expect(await reader.lastEventId(c)).toBe(before);
    expect((await hot.liquidityWithVersion(c))?.json).toBe('[5]');
  });
});

describe('large events', () => {
  it('are kept deflated in the contest log, plain in the feed, and read back byte for byte', async () => {
    const c = 'c-packed';
    const big: LogAppend = { channel: 'ticks', league_id: null, event: JSON.stringify({ type: 'ticks', ticks: Array.from({ length: 40 }, (_, i) => ({ liquidity_hash: `h${i}`, partner_name: 'Simulated Exchange', price: 0.5 + i / 1000 })) }) };
    expect(big.event.length).toBeGreaterThanOrEqual(PACK_MIN_BYTES);
    const head = await reader.feedHead();
    await hot.writeComputed(c, 1, '[]', '{}', [], { events: [liq(0), big, liq(1)] });
    const raw = (await s.rt.redis.xrange(logKeys(s.rt.ks).events(c), '-', '+')) as [string, string[]][];
    expect(raw.map(([, f]) => f[4])).toEqual(['e', 'z', 'e']);
    expect(raw[1]![1][5]!.length).toBeLessThan(big.event.length / 2);
    const fed = (await reader.readFeed(head, 100)).events.filter((e) => e.contest_id === c).map((e) => e.event);
    expect(fed).toEqual([liq(0).event, big.event, liq(1).event]);
    const replay = await reader.eventsAfter(c, raw[0]![0]);
    expect((replay as { event: string }[]).map((e) => e.event)).toEqual([big.event, liq(1).event]);
  });
});

describe('resume reads', () => {
  it('returns exactly the events after a held id, and unavailable for an id never issued', async () => {
    const c = 'c-resume';
    for (let i = 0; i < 5; i++) await hot.writeComputed(c, i + 1, `[${i}]`, '{}', [], { events: [liq(i)] });
    const all = await reader.eventsAfter(c, '0-1');
    // '0-1' was never issued by this contest's log.
    expect(all).toBe('unavailable');
    const first = (await s.rt.redis.xrange(logKeys(s.rt.ks).events(c), '-', '+', 'COUNT', 1))[0]![0];
    const after = await reader.eventsAfter(c, first);
    expect(after).not.toBe('unavailable');
    expect((after as { event: string }[]).map((e) => e.event)).toEqual([1, 2, 3, 4].map((n) => liq(n).event));
    expect(await reader.eventsAfter(c, 'not-an-id')).toBe('unavailable');
  });
});

describe('retention', () => {
  it('keeps at least minEvents, drops older-than-minAge heads beyond them, and never exceeds maxEvents', async () => {
    const r = s.rt.redis;
    {
      const small = new HotState(r, s.rt.ks, { logLimits: { minEvents: 5, minAgeMs: 0, maxEvents: 50, feedMax: 1000, histMax: 1000 } });
      const c = 'c-retention';
      for (let i = 0; i < 12; i++) {
        await small.append(c, [ticks(i)]);
        // A new millisecond: an event of the same one as the cutoff is not older than 0 ms.
        await new Promise((r) => setTimeout(r, 2));
      }
      // Every event is older than 0 ms by the next append: only the floor of 5 (plus at most the one just added) stays.
      const len = await r.xlen(logKeys(s.rt.ks).events(c));
      expect(len).toBeGreaterThanOrEqual(5);
      expect(len).toBeLessThanOrEqual(6);

      const young = new HotState(r, s.rt.ks, { logLimits: { minEvents: 5, minAgeMs: 3_600_000, maxEvents: 20, feedMax: 1000, histMax: 1000 } });
      const c2 = 'c-retention-young';
      for (let i = 0; i < 15; i++) await young.append(c2, [ticks(i)]);
      // All within the age window: none dropped below maxEvents.
      expect(await r.xlen(logKeys(s.rt.ks).events(c2))).toBe(15);
      for (let i = 0; i < 40; i++) await young.append(c2, [ticks(i)]);
      expect(await r.xlen(logKeys(s.rt.ks).events(c2))).toBe(20);
    }
  });
});

describe('ticks from ingest carry the outlier flags compute set last', () => {
  it('marks exactly the flagged hashes', async () => {
    const c = 'c-outl';
    await hot.writeComputed(c, 1, '[]', '{}', [], { outliers: ['h2'] });
    await hot.writeQuotes(c, [{ liquidity_hash: 'h1' }, { liquidity_hash: 'h2' }], [{ table: 'ticks', rows: '[]', hashes: ['h1', 'h2'] }]);
    const hist = toHistEntries((await s.rt.redis.xrevrange(logKeys(s.rt.ks).hist, '+', '-', 'COUNT', 1)) as [string, string[]][]);
    expect(hist[0]!.outliers).toEqual(['h2']);
  });
});
