/**
 * The live signal set on real Redis (src/store/redis/signals.ts): upserts and the owned type's
 * replacement, one signal.update per change of the published set (sorted by dedupe_key, the same
 * set twice appends nothing), expiry on write and by the sweep with a clear, the index, and a
 * closed contest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Signal, SignalType } from '../../../src/domain/signals.js';
import { logKeys, toLogEvent } from '../../../src/store/redis/eventlog.js';
import { SignalStore } from '../../../src/store/redis/signals.js';
import { testSignal } from '../../support/signals.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let store: SignalStore;
beforeAll(async () => {
  s = await startStack();
  store = new SignalStore(s.rt.redis, s.rt.ks);
});
afterAll(async () => s?.close());

const signal = (type: SignalType, key: string, contest: string, lifeMs: number, extra: Partial<Signal> = {}): Signal => testSignal(type, key, contest, lifeMs, extra);

async function updates(contest: string) {
  const raw = (await s.rt.redis.xrange(logKeys(s.rt.ks).events(contest), '-', '+')) as [string, string[]][];
  return raw.map((e) => toLogEvent(contest, e)).filter((e) => e.channel === 'signal').map((e) => JSON.parse(e.event) as { type: string; contest_id: string; league_id: string | null; signals: Signal[] });
}
const ts = () => new Date().toISOString();

describe('SignalStore', () => {
  it('publishes the whole set on each change, sorted by dedupe_key; the same set again appends nothing', async () => {
    const c = 'c-sig-1';
    const w = signal('whale_trade', 't1', c, 60_000);
    const a = signal('arbitrage', 'arb_1', c, 60_000);
    expect(await store.write({ contestId: c, leagueId: 'lg', upserts: [w, a], timestamp: ts() })).toBe(true);
    expect(await store.write({ contestId: c, leagueId: 'lg', upserts: [w], timestamp: ts() })).toBe(false);
    const ev = await updates(c);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: 'signal.update', contest_id: c, league_id: 'lg' });
    expect(ev[0]!.signals.map((x) => x.dedupe_key)).toEqual(['arbitrage:arb_1', 'whale_trade:t1']);
    expect(ev[0]!.signals[1]).toEqual(w);
  });

  it('a write owning a type replaces its signals; other types stay', async () => {
    const c = 'c-sig-2';
    const w = signal('whale_trade', 't1', c, 60_000);
    await store.write({ contestId: c, leagueId: null, upserts: [w, signal('arbitrage', 'a1', c, 60_000), signal('arbitrage', 'a2', c, 60_000)], timestamp: ts() });
    expect(await store.write({ contestId: c, leagueId: null, upserts: [signal('arbitrage', 'a2', c, 60_000)], owns: 'arbitrage', timestamp: ts() })).toBe(true);
    const last = (await updates(c)).at(-1)!;
    expect(last.league_id).toBeNull();
    expect(last.signals.map((x) => x.dedupe_key)).toEqual(['arbitrage:a2', 'whale_trade:t1']);
    const live = (await store.live(Date.now())).find((x) => x.contestId === c)!;
    expect(live.signals.map((x) => x.dedupe_key).sort()).toEqual(['arbitrage:a2', 'whale_trade:t1']);
  });

  it('expired signals are never served; the sweep drops them and clears the stream; nothing left, the contest leaves the index', async () => {
    const c = 'c-sig-3';
    await store.write({ contestId: c, leagueId: 'lg', upserts: [signal('block_trade', 'b1', c, 300), signal('volume_spike', 'v1', c, 60_000)], timestamp: ts() });
    await new Promise((r) => setTimeout(r, 400));
    expect((await store.live(Date.now())).find((x) => x.contestId === c)!.signals.map((x) => x.dedupe_key)).toEqual(['volume_spike:v1']);
    expect(await store.sweepExpired(Date.now())).toBeGreaterThanOrEqual(1);
    expect((await updates(c)).at(-1)!.signals.map((x) => x.dedupe_key)).toEqual(['volume_spike:v1']);
    // A signal written already expired is never stored.
    await store.write({ contestId: c, leagueId: 'lg', upserts: [signal('whale_trade', 'late', c, -1)], timestamp: ts() });
    expect(await s.rt.redis.hexists(s.rt.ks.k('sig', c), 'whale_trade:late')).toBe(0);
    // The last one's life passes: the sweep clears the stream, once.
    await s.rt.redis.zadd(s.rt.ks.k('sigx', c), String(Date.now() - 1), 'volume_spike:v1');
    await s.rt.redis.zadd(s.rt.ks.k('sigidx'), String(Date.now() - 1), `${c}\nlg`);
    await store.sweepExpired(Date.now());
    const all = await updates(c);
    expect(all.at(-1)!.signals).toEqual([]);
    expect(await s.rt.redis.zscore(s.rt.ks.k('sigidx'), `${c}\nlg`)).toBeNull();
    expect(await s.rt.redis.exists(s.rt.ks.k('sig', c))).toBe(0);
    expect(await store.sweepExpired(Date.now())).toBe(0);
    expect((await updates(c)).length).toBe(all.length);
  });

  it('keys expire on their own a minute after their last signal would', async () => {
    const c = 'c-sig-4';
    await store.write({ contestId: c, leagueId: 'lg', upserts: [signal('whale_trade', 't', c, 10_000)], timestamp: ts() });
    const ttl = await s.rt.redis.pttl(s.rt.ks.k('sig', c));
    expect(ttl).toBeGreaterThan(60_000);
    expect(ttl).toBeLessThanOrEqual(70_000);
  });

  it('a closed contest keeps no signals and appends nothing', async () => {
    const c = 'c-sig-5';
    await s.rt.redis.set(s.rt.ks.k('closed', c), String(Date.now() + 60_000));
    expect(await store.write({ contestId: c, leagueId: 'lg', upserts: [signal('whale_trade', 't', c, 10_000)], timestamp: ts() })).toBe(false);
    expect(await updates(c)).toEqual([]);
    expect(await s.rt.redis.exists(s.rt.ks.k('sig', c))).toBe(0);
  });

  it('refuses a dedupe_key that does not start with its type (the owned-type replacement relies on it)', async () => {
    await expect(store.write({ contestId: 'c-sig-6', leagueId: null, upserts: [{ ...signal('whale_trade', 't', 'c-sig-6', 1_000), dedupe_key: 'x' }], timestamp: ts() })).rejects.toThrow(/must start with its type/);
  });
});
