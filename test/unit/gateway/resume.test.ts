/**
 * Resume's merge of replay and live delivery, over every interleaving of appends, the live tail and
 * the replay's reads (issued, executed by Redis, answered): a connection gets each event of its
 * channel after the resume id exactly once, in log order, then stays attached to live delivery.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContestReplay, spliceMembers } from '../../../api/gateway/resume.js';
import type { StreamChannel } from '../../../src/domain/stream.js';
import type { LogEvent } from '../../../src/store/redis/eventlog.js';

const id = (i: number) => `${1_000 + i}-0`;
const ev = (i: number, channel: StreamChannel): LogEvent => ({ id: id(i), contest_id: 'c', channel, league_id: null, event: `{"type":"x","i":${i}}` });

type Step = 'append' | 'tail' | 'exec' | 'answer';

interface Scenario {
  channels: boolean[];
  initial: number;
  from: number;
  gwStart: number;
  tailAt: number;
  page: number;
  bufferMax: number;
  steps: Step[];
}

/** Plays one schedule against ContestReplay the way the gateway drives it; returns what the connection got. */
function play(s: Scenario): { got: string[]; want: string[]; attached: boolean } {
  const chan = (i: number): StreamChannel => (s.channels[i % s.channels.length] ? 'ticks' : 'liquidity');
  const log: LogEvent[] = [];
  for (let i = 0; i < s.initial; i++) log.push(ev(i, chan(i)));
  let tail = s.tailAt; // next index the live tail delivers; it started at gwStart
  let lastLive: string | undefined = tail > s.gwStart ? log[tail - 1]!.id : undefined;
  const r = new ContestReplay('ticks', id(s.from), s.bufferMax);
  const got: string[] = [];
  let attached = false;
  let read: { state: 'issued' } | { state: 'executed'; page: LogEvent[] } | null = { state: 'issued' };

  const append = () => log.push(ev(log.length, chan(log.length)));
  const tailOne = () => {
    if (tail >= log.length) return;
    const e = log[tail++]!;
    lastLive = e.id;
    if (attached) {
      if (e.channel === 'ticks') got.push(e.id);
      return;
    }
    const step = r.live(e);
    if (step.send) got.push(step.send.id);
    if (step.attach) attached = true;
  };
  const exec = () => {
    if (read?.state !== 'issued') return;
    const after = r.after;
    read = { state: 'executed', page: log.filter((e) => e.id > after) /* same-width ids: string order is id order */.slice(0, s.page) };
  };
  const answer = () => {
    if (read?.state !== 'executed') return;
    const page = read.page;
    read = null;
    for (const e of r.page(page)) got.push(e.id);
    if (page.length === s.page) {
      read = { state: 'issued' };
      return;
    }
    const end = r.end(lastLive);
    if (end.more) {
      read = { state: 'issued' };
      return;
    }
    for (const e of end.send) got.push(e.id);
    if (end.attach) attached = true;
  };
  for (const st of s.steps) ({ append, tail: tailOne, exec, answer })[st]();
  while (read) {
    exec();
    answer();
  }
  while (tail < log.length) tailOne();
  // One more event after everything settled: it must arrive once, and live delivery take over.
  log.push(ev(log.length, 'ticks'));
  tailOne();
  const want = log.filter((e, i) => i > s.from && e.channel === 'ticks').map((e) => e.id);
  return { got, want, attached };
}

const scenario = fc
  .record({
    channels: fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
    initial: fc.integer({ min: 1, max: 25 }),
    page: fc.integer({ min: 1, max: 6 }),
    bufferMax: fc.integer({ min: 1, max: 6 }),
    steps: fc.array(fc.constantFrom<Step>('append', 'tail', 'exec', 'answer'), { maxLength: 80 }),
    a: fc.nat(),
    b: fc.nat(),
    c: fc.nat(),
  })
  .map(({ a, b, c, ...rest }): Scenario => {
    const from = a % rest.initial;
    const gwStart = b % (rest.initial + 1);
    const tailAt = gwStart + (c % (rest.initial - gwStart + 1));
    return { ...rest, from, gwStart, tailAt };
  });

describe('ContestReplay', () => {
  it('replay then live: every event of the channel after the resume id, once, in order, whatever the interleaving', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { got, want, attached } = play(s);
        expect(got).toEqual(want);
        expect(attached).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });

  it('an unavailable id sends every buffered live event, then attaches at once', () => {
    const r = new ContestReplay('liquidity', 'nope');
    expect(r.live(ev(1, 'liquidity'))).toEqual({ send: null, attach: false });
    r.live(ev(2, 'ticks'));
    r.live(ev(3, 'liquidity'));
    r.unavailable();
    const end = r.end(undefined);
    expect(end.send.map((e) => e.id)).toEqual([id(1), id(3)]);
    expect(end.attach).toBe(true);
  });

  it('trimmed while reading: what was replayed is not sent again', () => {
    const r = new ContestReplay('liquidity', id(0));
    expect(r.page([ev(1, 'liquidity'), ev(2, 'liquidity')]).map((e) => e.id)).toEqual([id(1), id(2)]);
    r.live(ev(2, 'liquidity'));
    r.live(ev(3, 'liquidity'));
    r.unavailable();
    const end = r.end(id(3));
    expect(end.send.map((e) => e.id)).toEqual([id(3)]);
    expect(end.attach).toBe(true);
  });
});

describe('spliceMembers', () => {
  it('goes right after the type member, or first when there is none', () => {
    expect(spliceMembers('{"type":"ticks","a":1}', '"seq":3,"event_id":"1-0"')).toBe('{"type":"ticks","seq":3,"event_id":"1-0","a":1}');
    expect(spliceMembers('{"type":"x"}', '"event_id":"1-0"')).toBe('{"type":"x","event_id":"1-0"}');
    expect(spliceMembers('{"a":1}', '"event_id":"1-0"')).toBe('{"event_id":"1-0","a":1}');
    expect(spliceMembers('{}', '"event_id":"1-0"')).toBe('{"event_id":"1-0"}');
    for (const e of ['{"type":"trades","trades":[]}', '{"type":"x"}', '{"a":[1,{"b":2}]}', '{}']) {
      expect(JSON.parse(spliceMembers(e, '"event_id":"5-1"'))).toEqual({ ...JSON.parse(e), event_id: '5-1' });
    }
  });
});
