/**
 * OutboxWaker (src/store/pg/outbox.ts): every wake is followed by a NOTIFY sent after it; an idle
 * waker sends at once; wakes while one is scheduled or in flight become at most one more; under a
 * burst, at most one NOTIFY per gap.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OutboxWaker } from '../../src/store/pg/outbox.js';
import type { Pool } from '../../src/store/pg/pool.js';

let t = 0;
/** A pool whose queries stay in flight until answered, each noting when it was sent. */
function fakePool() {
  const sent: { at: number; answer: () => void }[] = [];
  const pool = {
    query: (text: string) => {
      expect(text).toBe('SELECT flow_account_outbox_wake()');
      return new Promise<void>((resolve) => sent.push({ at: t, answer: resolve }));
    },
  } as unknown as Pool;
  return { pool, sent };
}
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
  t = 1_000;
});
afterEach(() => vi.useRealTimers());

describe('OutboxWaker', () => {
  it('sends at once when idle, merges the wakes behind one in flight into one more, spaced by the gap', async () => {
    const { pool, sent } = fakePool();
    const w = new OutboxWaker(pool, 5, () => t);
    w.wake();
    expect(sent.map((s) => s.at)).toEqual([1_000]);
    // Three commits while it is in flight: one more NOTIFY, after it and after the gap.
    t = 1_001;
    w.wake();
    w.wake();
    w.wake();
    sent[0]!.answer();
    await settle();
    expect(sent).toHaveLength(1);
    t = 1_005;
    await vi.advanceTimersByTimeAsync(5);
    expect(sent.map((s) => s.at)).toEqual([1_000, 1_005]);
    // A wake while that one is scheduled needs nothing more; idle again after the gap, it sends at once.
    sent[1]!.answer();
    await settle();
    t = 1_020;
    w.wake();
    expect(sent.map((s) => s.at)).toEqual([1_000, 1_005, 1_020]);
  });

  it('a burst of wakes costs at most one NOTIFY per gap, the last after the last wake', async () => {
    const { pool, sent } = fakePool();
    const w = new OutboxWaker(pool, 5, () => t);
    let lastWake = 0;
    for (let i = 0; i < 100; i++) {
      t = 1_000 + i / 10;
      lastWake = t;
      w.wake();
      for (const s of sent) s.answer();
      await settle();
    }
    t = 1_020;
    await vi.advanceTimersByTimeAsync(20);
    for (const s of sent) s.answer();
    await settle();
    expect(sent.length).toBeLessThanOrEqual(3);
    expect(sent.at(-1)!.at).toBeGreaterThanOrEqual(lastWake);
  });
});
