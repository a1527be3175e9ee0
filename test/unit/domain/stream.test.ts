import { describe, expect, it } from 'vitest';
import { MAX_ENTRIES_PER_EVENT, liquidityUpdateEvents, type LiquidityChangedEntry } from '../../../src/domain/stream.js';

const T = '2026-03-01T12:00:00.000Z';
const entry = (i: number): LiquidityChangedEntry => ({ liquidity_hash: `v:${i}`, partner_id: 'v', price: 0.5, available: i, as_of: T, is_stale: false });
const entries = (n: number) => Array.from({ length: n }, (_, i) => entry(i));

describe('liquidityUpdateEvents', () => {
  it('sends nothing when nothing changed and no refresh is required', () => {
    expect(liquidityUpdateEvents('ct1', [], false, T)).toEqual([]);
  });

  it('sends one event without entries when only a refresh is required', () => {
    expect(liquidityUpdateEvents('ct1', [], true, T)).toEqual([{ type: 'liquidity.update', contest_id: 'ct1', changed_entries: [], refresh_required: true, timestamp: T }]);
  });

  it('sends the entries in one event when they fit', () => {
    const [only, ...rest] = liquidityUpdateEvents('ct1', entries(3), false, T);
    expect(rest).toEqual([]);
    expect(only).toEqual({ type: 'liquidity.update', contest_id: 'ct1', changed_entries: entries(3), refresh_required: false, timestamp: T });
  });

  it('splits a large update, every entry once and in order, the refresh hint on the last event only', () => {
    const all = entries(2 * MAX_ENTRIES_PER_EVENT + 1);
    const events = liquidityUpdateEvents('ct1', all, true, T);
    expect(events.map((e) => e.changed_entries.length)).toEqual([MAX_ENTRIES_PER_EVENT, MAX_ENTRIES_PER_EVENT, 1]);
    expect(events.flatMap((e) => e.changed_entries)).toEqual(all);
    expect(events.map((e) => e.refresh_required)).toEqual([false, false, true]);
    expect(liquidityUpdateEvents('ct1', all, false, T).every((e) => !e.refresh_required)).toBe(true);
  });
});
