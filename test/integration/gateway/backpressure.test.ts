/**
 * A slow consumer must not slow others: its bounded buffer fills, events are dropped for it alone
 * (counted in flow_stream_dropped_messages_total), and once it drains it gets one backpressure error.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { liquidityEvent, startHarness, ticksEvent, type Harness } from './harness.js';

const BOUND = 64 * 1024;
// Far more than the loopback socket buffers absorb (a few MB), so the gateway's own buffer must fill.
const EVENTS = 400;
const PAD = 50_000;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ maxBackpressureBytes: BOUND });
});
afterEach(async () => h?.closeClients());
afterAll(async () => h?.close());

async function droppedCount(channel: string): Promise<number> {
  const m = (await h.s.rt.metrics.getSingleMetric('flow_stream_dropped_messages_total')?.get()) as { values: { value: number; labels: { channel?: string } }[] } | undefined;
  return m?.values.filter((v) => v.labels.channel === channel).reduce((s, v) => s + v.value, 0) ?? 0;
}

describe('backpressure', () => {
  it('ticks (per-connection path): drops for the slow client only, seq shows the gap, one notice after draining', async () => {
    const k = await h.key('scale');
    const fast = await h.connect(k.api_key);
    const slow = await h.connect(k.api_key);
    for (const c of [fast, slow]) await c.request({ action: 'subscribe', channel: 'ticks', contest_ids: ['BP'] });
    const before = await droppedCount('ticks');
    slow.socket.pause();
    for (let i = 0; i < EVENTS; i++) await h.publish('ticks', 'BP', ticksEvent('BP', `bp${i}`, PAD));
    // The fast client gets every event, in order, while the slow one is stuck.
    for (let i = 1; i <= EVENTS; i++) expect((await fast.next((m) => m.type === 'ticks', 5000)).seq).toBe(i);
    const dropped = (await droppedCount('ticks')) - before;
    expect(dropped).toBeGreaterThan(0);

    slow.socket.resume();
    const notice = await slow.next((m) => m.type === 'error', 10_000);
    expect(notice).toMatchObject({ code: 'backpressure', dropped: expect.any(Number) });
    expect(notice.message).toMatch(/REST/);
    const got = slow.all.filter((m) => m.type === 'ticks');
    expect(got.length).toBeLessThan(EVENTS);
    expect(got.length + notice.dropped).toBe(EVENTS);
    // Delivery resumes after the notice, with a seq that shows what was missed.
    await h.publish('ticks', 'BP', ticksEvent('BP', 'after'));
    const next = await slow.next((m) => m.type === 'ticks' && m.ticks[0].liquidity_hash === 'sim:after', 5000);
    expect(next.seq).toBe(EVENTS + 1);
    const seqs = got.map((m) => m.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // Distinct seqs within 1..EVENTS, fewer than EVENTS of them: the client can see exactly which it missed.
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.every((s) => s >= 1 && s <= EVENTS)).toBe(true);
    expect(slow.all.filter((m) => m.type === 'error')).toHaveLength(1);
  });

  it('liquidity (topic fast path): same policy', async () => {
    const k = await h.key('free');
    const fast = await h.connect(k.api_key);
    const slow = await h.connect(k.api_key);
    for (const c of [fast, slow]) await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: ['BQ'] });
    const before = await droppedCount('liquidity');
    slow.socket.pause();
    const big = (i: number) => ({ ...liquidityEvent('BQ', `bq${i}`), pad: 'x'.repeat(PAD) });
    for (let i = 0; i < EVENTS; i++) await h.publish('liquidity', 'BQ', big(i));
    for (let i = 0; i < EVENTS; i++) await fast.next((m) => m.type === 'liquidity.update', 5000);
    expect((await droppedCount('liquidity')) - before).toBeGreaterThan(0);
    slow.socket.resume();
    const notice = await slow.next((m) => m.type === 'error', 10_000);
    expect(notice.code).toBe('backpressure');
    const got = slow.all.filter((m) => m.type === 'liquidity.update').length;
    expect(got).toBeLessThan(EVENTS);
    expect(got + notice.dropped).toBe(EVENTS);
    await h.publish('liquidity', 'BQ', liquidityEvent('BQ', 'after'));
    await slow.next((m) => m.changed_entries?.[0]?.liquidity_hash === 'sim:BQ:after', 5000);
  });
});
