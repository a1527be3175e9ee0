import { describe, expect, it } from 'vitest';
import { appendScores, carriedChange, foldedChanges, lostPairs, mergeScores, percentile, scoreReceipts, type Track } from '../../bench/support/latency-score.js';

const track: Track = { liquidityHash: 'sim_exchange:SX-1', base: 0.3, step: 0.00001, count: 10 };
const hash = Buffer.from(JSON.stringify(track.liquidityHash));
const event = (entries: object[]) => Buffer.from(JSON.stringify({ type: 'liquidity.update', contest_id: 'c1', changed_entries: entries, refresh_required: false, timestamp: 'x' }));
const N = Number.NaN;
const receipts = (...rows: number[][]) => rows.map((r) => Float64Array.from(r));

describe('stream-latency scoring: which change a message carries', () => {
  it('reads the price of the tracked entry, whatever the field order and the other entries', () => {
    const other = { liquidity_hash: 'sim_book01:9', partner_id: 'sim_book01', price: 0.30003, available: 5 };
    expect(carriedChange(event([other, { liquidity_hash: 'sim_exchange:SX-1', partner_id: 'sim_exchange', price: 0.30004, available: 1000 }]), track, hash)).toBe(4);
    expect(carriedChange(event([{ price: 0.30009, available: 1000, liquidity_hash: 'sim_exchange:SX-1' }, other]), track, hash)).toBe(9);
  });

  it('tells a message without the entry from one with the entry at an untracked price', () => {
    expect(carriedChange(event([{ liquidity_hash: 'sim_exchange:SX-10', price: 0.30001 }]), track, hash)).toBe('none');
    expect(carriedChange(event([{ liquidity_hash: 'sim_exchange:SX-1', price: 0.7 }]), track, hash)).toBe('stray');
    expect(carriedChange(event([{ liquidity_hash: 'sim_exchange:SX-1', price: 0.3001 }]), track, hash)).toBe('stray'); // index 10, past the band
    expect(carriedChange(event([{ liquidity_hash: 'sim_exchange:SX-1', price: 0.300015 }]), track, hash)).toBe('stray'); // between two changes
  });
});

describe('stream-latency scoring: latency, folding and loss', () => {
  const sent = [0, 10, 20, 30];

  it('measures a folded change to the receipt of the later change that carried it', () => {
    // Change 1 never arrived as itself; change 2 arrived at 25, so change 1 took 15 ms.
    const s = scoreReceipts(receipts([2, N, 25, 31], [3, N, 24, 33]), sent);
    expect(s).toMatchObject({ clients: 2, exact: 6, covered: 8 });
    expect(foldedChanges(s)).toBe(1);
    expect(lostPairs(s)).toBe(0);
    expect(s.max).toBeCloseTo(15, 9);
    // Latencies 1, 2, 3, 3, 4, 5, 14, 15: a percentile is the upper bound of its 0.1 ms bucket.
    expect(percentile(s, 0.5)).toBeCloseTo(3.1, 9);
    expect(percentile(s, 1)).toBeCloseTo(15.1, 9);
  });

  it('counts as lost a change one client missed that another received, and a client left behind', () => {
    const missedByOne = scoreReceipts(receipts([2, 12, 22, 32], [2, N, 22, 32]), sent);
    expect(lostPairs(missedByOne)).toBe(1);
    expect(foldedChanges(missedByOne)).toBe(0);
    // The second client received nothing after change 1: changes 2 and 3 are lost to it.
    const leftBehind = scoreReceipts(receipts([2, 12, 22, 32], [2, 12, N, N]), sent);
    expect(lostPairs(leftBehind)).toBe(2);
  });

  it('scores clients split over processes as if they were one group', () => {
    const a = receipts([2, N, 25, 31]);
    const b = receipts([3, 14, 24, 33], [1, 11, N, 35]);
    const merged = mergeScores([scoreReceipts(a, sent, 1), scoreReceipts(b, sent, 2)]);
    const whole = scoreReceipts([...a, ...b], sent, 3);
    expect(merged).toEqual(whole);
    expect(lostPairs(merged)).toBe(2); // change 1 missed by the first client, change 2 by the third
  });

  it('pools rounds of the same clients: counts add up, losses stay attributed to their change', () => {
    const first = scoreReceipts(receipts([2, 12, 22, 32], [2, N, 22, 32]), sent);
    const second = scoreReceipts(receipts([1, N, 21, 31], [1, N, 22, 33]), sent);
    const both = appendScores(first, second);
    expect(both).toMatchObject({ clients: 2, exact: first.exact + second.exact, covered: 16, max: Math.max(first.max, second.max) });
    expect(both.perChange).toHaveLength(8);
    expect(lostPairs(both)).toBe(1);
    expect(foldedChanges(both)).toBe(1);
    expect(both.hist.reduce((a, n) => a + n, 0)).toBe(16);
    expect(() => appendScores(first, scoreReceipts(receipts([1, 2, 3, 4]), sent))).toThrow(/cannot append/);
  });

  it('has no percentile without a covered pair', () => {
    expect(percentile(scoreReceipts(receipts([N, N, N, N]), sent), 0.99)).toBeNaN();
  });
});
