/**
 * A computation that continued from the stored run writes only the depth fields it changed, on
 * real Redis: while the stored snapshot is that run's, the other fields stay as they are; when it
 * is not (another run was stored in between, or nothing was), the script writes nothing and the
 * write goes again with every field, so the hash is always the computation's depth and the events
 * are appended once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logKeys } from '../../../src/store/redis/eventlog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let hot: HotState;
beforeAll(async () => {
  s = await startStack();
  hot = new HotState(s.rt.redis, s.rt.ks);
});
afterAll(async () => {
  await s?.close();
});

const snap = (run: string) => `{"run":${JSON.stringify(run)},"contest_id":"c","quotes":{}}`;
const event = (n: number) => [{ channel: 'liquidity' as const, league_id: null, event: `{"type":"liquidity.update","n":${n}}` }];
const depthOf = async (c: string, hashes: string[]) => Promise.all(hashes.map((h) => hot.depth(c, h)));
const eventsOf = async (c: string) => ((await s.rt.redis.xrange(logKeys(s.rt.ks).events(c), '-', '+')) as [string, string[]][]).map(([, f]) => f[f.indexOf('e') + 1]);

describe('depth fields written since the run a computation continued from', () => {
  it('writes only the changed fields while the stored snapshot is the base run', async () => {
    const c = 'c-since';
    await hot.writeComputed(c, 1, '[]', snap('r1'), [['a', 'A1'], ['b', 'B1'], ['c', 'C1']]);
    // A field the partial write must leave alone, marked so that a write of every field would show.
    await s.rt.redis.hset(s.rt.ks.k('depth', c), 'a', 'untouched');
    const w = await hot.writeComputed(c, 2, '[]', snap('r2'), [['a', 'A1'], ['b', 'B2'], ['c', 'C1']], { depthSince: { base: 'r1', fields: [['b', 'B2']] }, events: event(2) });
    expect(w).not.toBe(false);
    expect(await depthOf(c, ['a', 'b', 'c'])).toEqual(['untouched', 'B2', 'C1']);
    expect(await hot.liquidityVersion(c)).toBe(2);
  });

  it('writes every field, once, when another run is stored than the base (the events appended once)', async () => {
    const c = 'c-since-moved';
    await hot.writeComputed(c, 1, '[]', snap('r1'), [['a', 'A1'], ['b', 'B1']]);
    await s.rt.redis.hset(s.rt.ks.k('depth', c), 'stray', 'x');
    // The computation continued from r0, which is not what is stored.
    const w = await hot.writeComputed(c, 2, '[]', snap('r2'), [['a', 'A2'], ['b', 'B1']], { depthSince: { base: 'r0', fields: [['a', 'A2']] }, events: event(2) });
    expect(w).not.toBe(false);
    expect(await depthOf(c, ['a', 'b', 'stray'])).toEqual(['A2', 'B1', null]);
    expect(await eventsOf(c)).toEqual([event(2)[0]!.event]);
  });

  it('writes every field when nothing is stored yet', async () => {
    const c = 'c-since-fresh';
    const w = await hot.writeComputed(c, 1, '[]', snap('r2'), [['a', 'A2'], ['b', 'B2']], { depthSince: { base: 'r1', fields: [['a', 'A2']] } });
    expect(w).not.toBe(false);
    expect(await depthOf(c, ['a', 'b'])).toEqual(['A2', 'B2']);
  });

  it('a run whose prefix the stored run merely starts with is another run', async () => {
    const c = 'c-since-prefix';
    await hot.writeComputed(c, 1, '[]', snap('r12'), [['a', 'A1'], ['b', 'B1']]);
    await hot.writeComputed(c, 2, '[]', snap('r2'), [['a', 'A2'], ['b', 'B2']], { depthSince: { base: 'r1', fields: [['a', 'A2']] } });
    expect(await depthOf(c, ['a', 'b'])).toEqual(['A2', 'B2']);
  });

  it('an older version writes nothing, with or without a base', async () => {
    const c = 'c-since-cas';
    await hot.writeComputed(c, 5, '[5]', snap('r5'), [['a', 'A5']], { events: event(5) });
    expect(await hot.writeComputed(c, 4, '[4]', snap('r4'), [['a', 'A4']], { depthSince: { base: 'r5', fields: [['a', 'A4']] }, events: event(4) })).toBe(false);
    expect(await hot.writeComputed(c, 4, '[4]', snap('r4'), [['a', 'A4']], { depthSince: { base: 'r3', fields: [['a', 'A4']] }, events: event(4) })).toBe(false);
    expect(await depthOf(c, ['a'])).toEqual(['A5']);
    expect(await eventsOf(c)).toEqual([event(5)[0]!.event]);
  });
});
