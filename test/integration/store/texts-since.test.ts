/**
 * A computation that continued from the stored run writes only the depth and snapshot quote fields
 * it changed, on real Redis: while the stored snapshot is that run's, the other fields stay as they
 * are; when it is not (another run was stored in between, or nothing was), the script writes
 * nothing and the write goes again with every field, so the stored texts are always the
 * computation's and the events are appended once. The snapshot stored in parts reads back, in the
 * script and in TypeScript, as the text the computation assembled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotText, type SnapshotParts } from '../../../src/domain/quotes.js';
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

/** A snapshot of run `run` whose positions `quotes` have visible quotes (index → members). */
function parts(run: string, quotes: Record<number, string>): SnapshotParts {
  return { rest: `{"run":${JSON.stringify(run)},"contest_id":"c","quotes":{},"arbs":{},"consensus":{}}`, quotes: Object.entries(quotes).map(([i, q]) => [i, q] as [string, string]) };
}
const whole = (p: SnapshotParts) => snapshotText(p.rest, p.quotes.map(([, m]) => m));
const q = (i: number, price: number) => `"h${i}":{"price":${price}}`;
const event = (n: number) => [{ channel: 'liquidity' as const, league_id: null, event: `{"type":"liquidity.update","n":${n}}` }];
const depthOf = async (c: string, hashes: string[]) => Promise.all(hashes.map((h) => hot.depth(c, h)));
/** The quote fields stored (the parts' run aside, checked where it matters). */
const quotesOf = async (c: string) => {
  const { '#': _run, ...fields } = await s.rt.redis.hgetall(s.rt.ks.k('snapq', c));
  return fields;
};
const eventsOf = async (c: string) => ((await s.rt.redis.xrange(logKeys(s.rt.ks).events(c), '-', '+')) as [string, string[]][]).map(([, f]) => f[f.indexOf('e') + 1]);

/** The snapshot as both reads give it: the script's (a compute read, offered nothing held) and readVenueState's. */
async function readBack(c: string): Promise<[string | null, string | null]> {
  await s.rt.redis.set(s.rt.ks.k('vqv', c), '1000000');
  const scripted = await hot.readVenueStateToCompute(c);
  const plain = await hot.readVenueState(c);
  return [scripted?.snapshot ?? null, plain.snapshot];
}

async function store(c: string, version: number, p: SnapshotParts, depth: [string, string][]) {
  return hot.writeComputed(c, version, '[]', whole(p), depth, { snapshotParts: p });
}

describe('the snapshot stored in parts', () => {
  it('reads back as the text, its members in position order (10 after 9), from the script and from TypeScript', async () => {
    const c = 'c-parts';
    const p = parts('r1', { 2: q(2, 0.2), 10: q(10, 0.1), 9: q(9, 0.9), 0: q(0, 0.5) });
    await store(c, 1, p, [['a', 'A1']]);
    const text = `{"run":"r1","contest_id":"c","quotes":{${q(0, 0.5)},${q(2, 0.2)},${q(9, 0.9)},${q(10, 0.1)}},"arbs":{},"consensus":{}}`;
    expect(whole(p)).toBe(text);
    expect(await readBack(c)).toEqual([text, text]);
  });

  it('parts of another run than the stored snapshot are not joined (a snapshot stored whole by an older build)', async () => {
    const c = 'c-parts-older';
    await store(c, 1, parts('r1', { 0: q(0, 0.5), 3: q(3, 0.2) }), [['a', 'A1']]);
    // An older build stores the snapshot whole and knows nothing of the parts.
    const text = '{"run":"r9","contest_id":"c","quotes":{"x":1},"arbs":{}}';
    await s.rt.redis.set(s.rt.ks.k('snap', c), text);
    expect(await readBack(c)).toEqual([text, text]);
    // Its run even starting like theirs: r1 against r12.
    const r12 = '{"run":"r12","contest_id":"c","quotes":{},"arbs":{}}';
    await s.rt.redis.set(s.rt.ks.k('snap', c), r12);
    expect(await readBack(c)).toEqual([r12, r12]);
  });

  it('a snapshot stored whole after parts reads back whole (its parts are gone)', async () => {
    const c = 'c-parts-whole';
    await store(c, 1, parts('r1', { 0: q(0, 0.5) }), [['a', 'A1']]);
    const text = '{"run":"r2","contest_id":"c","quotes":{"x":1},"arbs":{}}';
    await hot.writeComputed(c, 2, '[]', text, [['a', 'A2']]);
    // No parts key at all (not even their run's name).
    expect(await s.rt.redis.exists(s.rt.ks.k('snapq', c))).toBe(0);
    expect(await readBack(c)).toEqual([text, text]);
  });
});

describe('fields written since the run a computation continued from', () => {
  it('writes only the changed fields while the stored snapshot is the base run; an emptied position loses its field', async () => {
    const c = 'c-since';
    await store(c, 1, parts('r1', { 0: q(0, 0.5), 1: q(1, 0.4), 2: q(2, 0.3) }), [['a', 'A1'], ['b', 'B1'], ['c', 'C1']]);
    // Fields the partial write must leave alone, marked so that a write of every field would show.
    await s.rt.redis.hset(s.rt.ks.k('depth', c), 'a', 'untouched');
    await s.rt.redis.hset(s.rt.ks.k('snapq', c), '0', 'untouched');
    const next = parts('r2', { 0: q(0, 0.5), 1: q(1, 0.45) });
    const w = await hot.writeComputed(c, 2, '[]', whole(next), [['a', 'A1'], ['b', 'B2'], ['c', 'C1']], {
      snapshotParts: next,
      since: { base: 'r1', depth: [['b', 'B2']], quotes: [['1', q(1, 0.45)], ['2', '']] },
      events: event(2),
    });
    expect(w).not.toBe(false);
    expect(await depthOf(c, ['a', 'b', 'c'])).toEqual(['untouched', 'B2', 'C1']);
    expect(await quotesOf(c)).toEqual({ 0: 'untouched', 1: q(1, 0.45) });
    expect(await hot.liquidityVersion(c)).toBe(2);
  });

  it('writes every field, once, when another run is stored than the base (the events appended once)', async () => {
    const c = 'c-since-moved';
    await store(c, 1, parts('r1', { 0: q(0, 0.5), 5: q(5, 0.1) }), [['a', 'A1'], ['b', 'B1']]);
    await s.rt.redis.hset(s.rt.ks.k('depth', c), 'stray', 'x');
    // The computation continued from r0, which is not what is stored.
    const next = parts('r2', { 0: q(0, 0.6) });
    const w = await hot.writeComputed(c, 2, '[]', whole(next), [['a', 'A2'], ['b', 'B1']], {
      snapshotParts: next,
      since: { base: 'r0', depth: [['a', 'A2']], quotes: [['0', q(0, 0.6)]] },
      events: event(2),
    });
    expect(w).not.toBe(false);
    expect(await depthOf(c, ['a', 'b', 'stray'])).toEqual(['A2', 'B1', null]);
    expect(await quotesOf(c)).toEqual({ 0: q(0, 0.6) });
    expect(await readBack(c)).toEqual([whole(next), whole(next)]);
    expect(await eventsOf(c)).toEqual([event(2)[0]!.event]);
  });

  it('writes every field when nothing is stored yet', async () => {
    const c = 'c-since-fresh';
    const next = parts('r2', { 0: q(0, 0.6), 1: q(1, 0.3) });
    const w = await hot.writeComputed(c, 1, '[]', whole(next), [['a', 'A2'], ['b', 'B2']], { snapshotParts: next, since: { base: 'r1', depth: [['a', 'A2']], quotes: [['0', q(0, 0.6)]] } });
    expect(w).not.toBe(false);
    expect(await depthOf(c, ['a', 'b'])).toEqual(['A2', 'B2']);
    expect(await readBack(c)).toEqual([whole(next), whole(next)]);
  });

  it('a run whose id the stored run merely starts with is another run', async () => {
    const c = 'c-since-prefix';
    await store(c, 1, parts('r12', { 0: q(0, 0.5) }), [['a', 'A1'], ['b', 'B1']]);
    const next = parts('r2', { 0: q(0, 0.5), 1: q(1, 0.2) });
    await hot.writeComputed(c, 2, '[]', whole(next), [['a', 'A2'], ['b', 'B2']], { snapshotParts: next, since: { base: 'r1', depth: [['a', 'A2']], quotes: [] } });
    expect(await depthOf(c, ['a', 'b'])).toEqual(['A2', 'B2']);
    expect(await readBack(c)).toEqual([whole(next), whole(next)]);
  });

  it('an older version writes nothing, with or without a base', async () => {
    const c = 'c-since-cas';
    const p5 = parts('r5', { 0: q(0, 0.5) });
    await hot.writeComputed(c, 5, '[5]', whole(p5), [['a', 'A5']], { snapshotParts: p5, events: event(5) });
    const p4 = parts('r4', { 0: q(0, 0.4) });
    expect(await hot.writeComputed(c, 4, '[4]', whole(p4), [['a', 'A4']], { snapshotParts: p4, since: { base: 'r5', depth: [['a', 'A4']], quotes: [['0', q(0, 0.4)]] }, events: event(4) })).toBe(false);
    expect(await hot.writeComputed(c, 4, '[4]', whole(p4), [['a', 'A4']], { snapshotParts: p4, since: { base: 'r3', depth: [['a', 'A4']], quotes: [] }, events: event(4) })).toBe(false);
    expect(await depthOf(c, ['a'])).toEqual(['A5']);
    expect(await readBack(c)).toEqual([whole(p5), whole(p5)]);
    expect(await eventsOf(c)).toEqual([event(5)[0]!.event]);
  });
});
