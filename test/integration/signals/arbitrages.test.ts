/**
 * Issue 12 items 1, 2 and 5 (arbitrage): books set on two simulated venues through /sim/v1/quotes
 * flow through ingest and the liquidity computation into the detection cache; GET /arbitrages
 * serves them with every filter, sort and limit and the RFC 8594 headers; the arbitrage channel's
 * arbitrage.update goes through the event log when the set changes (not when it stays the same);
 * a set that expires without a newer computation is cleared by the sweep with an empty update.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Arbitrage } from '../../../src/domain/arbitrage.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { ArbitrageStore } from '../../../src/store/redis/arbitrages.js';
import { arbitrageIndexKey, arbitrageKey } from '../../../src/store/redis/contest-index.js';
import { logKeys, toLogEvent } from '../../../src/store/redis/eventlog.js';
import { keyHeaders as H } from '../../support/accounts.js';
import { get } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

let o: OrderStack;
let pro: CreatedKey;
let free: CreatedKey;
/** Moneylines of open contests: [contest, home, away]. */
let lines: { contest: string; home: string; away: string }[];

beforeAll(async () => {
  o = await startOrderStack(31);
  pro = await o.key('data');
  free = await o.key('data', { plan: 'free' });
  const open = new Set(o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  lines = [...open].flatMap((contest) => {
    const ml = o.market.catalog.positions.filter((p) => p.contest_id === contest && p.market_key === 'moneyline');
    return ml.length === 2 ? [{ contest, home: ml[0]!.position_hash, away: ml[1]!.position_hash }] : [];
  });
}, 120_000);
afterAll(async () => o?.close());

const arbs = (query = '', k = pro) => get(o.s.built.app, `/flow/v1/arbitrages${query}`, H(k));
/** The contest's arbitrage.update events in the event log, oldest first. */
async function arbEvents(contest: string) {
  const raw = (await o.s.rt.redis.xrange(logKeys(o.s.rt.ks).events(contest), '-', '+')) as [string, string[]][];
  return raw.map((e) => toLogEvent(contest, e)).filter((e) => e.channel === 'arbitrage').map((e) => JSON.parse(e.event));
}
/** The contest's signal.update events in the event log, oldest first. */
async function signalEvents(contest: string) {
  const raw = (await o.s.rt.redis.xrange(logKeys(o.s.rt.ks).events(contest), '-', '+')) as [string, string[]][];
  return raw.map((e) => toLogEvent(contest, e)).filter((e) => e.channel === 'signal').map((e) => JSON.parse(e.event));
}
/** Which venue each position of an arbitrage is selected on. */
const selected = (a: Arbitrage) => Object.fromEntries(a.sides.map((s) => [s.options[0]!.position_hash, s.options[0]!.partner_id]));

describe('arbitrage detection, GET /arbitrages and the arbitrage channel', () => {
  it('a cross-venue pair under 1.0 is detected, served with the deprecation headers, and announced once per change', async () => {
    const { contest, home, away } = lines[0]!;
    await o.setBook('sim_exchange', home, [{ price: 0.45, available: 900 }]);
    await o.setBook('sim_book01', away, [{ price: 0.5, available: 500 }]);
    const r = await arbs(`?contest_id=${contest}`);
    expect(r.status).toBe(200);
    expect(r.headers['deprecation']).toBe('true');
    expect(r.headers['link']).toContain('rel="successor-version"');
    expect(r.body.meta.total).toBe(1);
    const a: Arbitrage = r.body.data[0];
    expect(a).toMatchObject({ contest: { id: contest }, combined_price: 0.95, roi_pct: 5.263158, max_investment: 950 });
    expect(selected(a)).toEqual({ [home]: 'sim_exchange', [away]: 'sim_book01' });
    expect(a.contest.label).toEqual(expect.any(String));
    expect(a.contest.league_id).toEqual(expect.any(String));

    const events = await arbEvents(contest);
    expect(events.at(-1)).toMatchObject({ type: 'arbitrage.update', contest_id: contest, arbitrages: [{ arbitrage_id: a.arbitrage_id }] });
    const count = events.length;

    // A change elsewhere in the contest that leaves the set as it is sends no arbitrage.update.
    const other = o.market.catalog.positions.find((p) => p.contest_id === contest && p.market_key !== 'moneyline')!.position_hash;
    await o.setBook('sim_book01', other, [{ price: 0.7, available: 100 }]);
    expect((await arbEvents(contest)).length).toBe(count);

    // A repricing keeps the id and the first detection time, and is announced.
    await o.setBook('sim_book01', away, [{ price: 0.52, available: 520 }]);
    const again = (await arbs(`?contest_id=${contest}`)).body.data[0] as Arbitrage;
    expect(again).toMatchObject({ arbitrage_id: a.arbitrage_id, detected_at: a.detected_at, combined_price: 0.97 });
    expect((await arbEvents(contest)).length).toBe(count + 1);

    // The same arbitrage as a signal of type arbitrage, on the signal channel through the log.
    const sig = (await signalEvents(contest)).at(-1)!;
    const arbSignal = sig.signals.find((x: { signal_type: string }) => x.signal_type === 'arbitrage');
    expect(arbSignal).toMatchObject({ dedupe_key: `arbitrage:${a.arbitrage_id}`, status: 'active', detected_at: a.detected_at, evidence: { arbitrage_id: a.arbitrage_id, best_combined_price: 0.97 } });
    expect(arbSignal.venues.map((v: { partner_id: string }) => v.partner_id).sort()).toEqual(['sim_book01', 'sim_exchange']);

    // Gone: an empty update clears it, the read no longer serves it, and its signal is withdrawn.
    await o.setBook('sim_book01', away, [{ price: 0.6, available: 520 }]);
    expect((await arbEvents(contest)).at(-1)).toMatchObject({ type: 'arbitrage.update', contest_id: contest, arbitrages: [] });
    expect((await arbs(`?contest_id=${contest}`)).body.meta.total).toBe(0);
    expect((await signalEvents(contest)).at(-1)!.signals.filter((x: { signal_type: string }) => x.signal_type === 'arbitrage')).toEqual([]);
  }, 60_000);

  it('filters (AND), sorts, limits, and refuses bad values with 400; arbitrage:read is required', async () => {
    // Two arbitrages: 0.90 (11.1 % gross) and 0.96 (4.2 %).
    const [x, y] = [lines[1]!, lines[2]!];
    await o.setBook('sim_exchange', x.home, [{ price: 0.4, available: 400 }]);
    await o.setBook('sim_book01', x.away, [{ price: 0.5, available: 1_000 }]);
    await o.setBook('sim_exchange', y.home, [{ price: 0.46, available: 4_600 }]);
    await o.setBook('sim_book01', y.away, [{ price: 0.5, available: 5_000 }]);
    const both = `contest_id=${x.contest},${y.contest}`;
    const all = (await arbs(`?${both}`)).body;
    expect(all.meta.total).toBe(2);
    expect(all.data.map((a: Arbitrage) => a.contest.id)).toEqual([x.contest, y.contest]);
    expect((await arbs(`?${both}&min_roi=5`)).body.data.map((a: Arbitrage) => a.contest.id)).toEqual([x.contest]);
    expect((await arbs(`?${both}&min_investment=5000`)).body.data.map((a: Arbitrage) => a.contest.id)).toEqual([y.contest]);
    expect((await arbs(`?${both}&partner_id=sim_book01`)).body.meta.total).toBe(2);
    expect((await arbs(`?${both}&partner_id=sim_p2p`)).body.meta.total).toBe(0);
    const limited = (await arbs(`?${both}&limit=1`)).body;
    expect(limited.data).toHaveLength(1);
    expect(limited.meta.total).toBe(2);
    for (const bad of ['min_roi=abc', 'min_investment=1e999', 'limit=501', 'sort=best', 'after_fee=yes', 'unknown=1']) {
      const r = await arbs(`?${bad}`);
      expect(r.status, bad).toBe(400);
    }
    expect((await arbs('', free)).status).toBe(403);
  }, 60_000);

  it('an arbitrage not recomputed within its lifetime is cleared by the sweep with an empty update', async () => {
    const { contest, home, away } = lines[3]!;
    await o.setBook('sim_exchange', home, [{ price: 0.45, available: 900 }]);
    await o.setBook('sim_book01', away, [{ price: 0.5, available: 500 }]);
    expect((await arbs(`?contest_id=${contest}`)).body.meta.total).toBe(1);
    // Its lifetime passes (as if 120 s went by without a liquidity change).
    const redis = o.s.rt.redis;
    const member = (await redis.zrange(arbitrageIndexKey(o.s.rt.ks), '0', '-1')).find((m) => m.startsWith(`${contest}\n`))!;
    await redis.zadd(arbitrageIndexKey(o.s.rt.ks), Date.now() - 1, member);
    await redis.del(arbitrageKey(o.s.rt.ks, contest));
    const store = new ArbitrageStore(redis, o.s.rt.ks);
    expect(await store.sweepExpired(Date.now())).toBeGreaterThanOrEqual(1);
    expect((await arbEvents(contest)).at(-1)).toMatchObject({ type: 'arbitrage.update', contest_id: contest, arbitrages: [] });
    expect(await store.sweepExpired(Date.now())).toBe(0);
    expect((await arbs(`?contest_id=${contest}`)).body.meta.total).toBe(0);
  }, 60_000);
});
