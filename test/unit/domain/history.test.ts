import { describe, expect, it } from 'vitest';
import {
  autoResolution,
  bucketStart,
  effectiveResolution,
  isRequestedResolution,
  parseUnixMs,
  resolveHistoryWindow,
  seriesBudget,
  MAX_UNIX_MS,
} from '../../../src/domain/history.js';

const MIN = 60_000;
const H = 60 * MIN;
const D = 24 * H;

describe('autoResolution', () => {
  it.each([
    [0, 'tick'],
    [6 * H, 'tick'],
    [6 * H + 1, '5m'],
    [24 * H, '5m'],
    [24 * H + 1, '1h'],
    [7 * D, '1h'],
    [7 * D + 1, '4h'],
    [90 * D, '4h'],
    [90 * D + 1, '1d'],
    [400 * D, '1d'],
  ] as const)('span %i ms → %s', (span, res) => {
    expect(autoResolution(span)).toBe(res);
  });
});

describe('effectiveResolution', () => {
  it('auto follows the auto rule', () => {
    expect(effectiveResolution('auto', 2 * H)).toBe('tick');
    expect(effectiveResolution('auto', 3 * D)).toBe('1h');
  });
  it('1m is honoured inside 6 h and degrades to 5m beyond it', () => {
    expect(effectiveResolution('1m', 6 * H)).toBe('1m');
    expect(effectiveResolution('1m', 6 * H + 1)).toBe('5m');
    expect(effectiveResolution('1m', 30 * D)).toBe('5m');
  });
  it('other explicit values are honoured at any span', () => {
    expect(effectiveResolution('tick', 30 * D)).toBe('tick');
    expect(effectiveResolution('1d', H)).toBe('1d');
    expect(effectiveResolution('4h', 10 * MIN)).toBe('4h');
    expect(effectiveResolution('5m', 200 * D)).toBe('5m');
  });
});

describe('isRequestedResolution', () => {
  it('accepts the spec values only', () => {
    for (const r of ['auto', 'tick', '1m', '5m', '1h', '4h', '1d']) expect(isRequestedResolution(r)).toBe(true);
    for (const r of ['', '2m', '1H', 'day', 'ticks', '15m']) expect(isRequestedResolution(r)).toBe(false);
  });
});

describe('bucketStart', () => {
  it('aligns buckets to the UTC epoch grid', () => {
    const t = Date.parse('2026-11-20T13:47:31.250Z');
    expect(bucketStart(t, 'tick')).toBe(t);
    expect(new Date(bucketStart(t, '1m')).toISOString()).toBe('2026-11-20T13:47:00.000Z');
    expect(new Date(bucketStart(t, '5m')).toISOString()).toBe('2026-11-20T13:45:00.000Z');
    expect(new Date(bucketStart(t, '1h')).toISOString()).toBe('2026-11-20T13:00:00.000Z');
    expect(new Date(bucketStart(t, '4h')).toISOString()).toBe('2026-11-20T12:00:00.000Z');
    expect(new Date(bucketStart(t, '1d')).toISOString()).toBe('2026-11-20T00:00:00.000Z');
  });
});

describe('seriesBudget', () => {
  it('splits the limit evenly, rounding down', () => {
    expect(seriesBudget(3, 10)).toEqual({ perSeries: 3, seriesServed: 3, truncated: false });
    expect(seriesBudget(20, 50_000)).toEqual({ perSeries: 2500, seriesServed: 20, truncated: false });
    expect(seriesBudget(1, 7)).toEqual({ perSeries: 7, seriesServed: 1, truncated: false });
  });
  it('exactly as many series as the limit: one point each, not truncated', () => {
    expect(seriesBudget(5, 5)).toEqual({ perSeries: 1, seriesServed: 5, truncated: false });
  });
  it('more series than the limit: the first `limit` series, one point each, truncated', () => {
    expect(seriesBudget(6, 5)).toEqual({ perSeries: 1, seriesServed: 5, truncated: true });
  });
  it('no series: nothing served, not truncated', () => {
    expect(seriesBudget(0, 100)).toEqual({ perSeries: 100, seriesServed: 0, truncated: false });
  });
  it('refuses a limit below 1', () => {
    expect(() => seriesBudget(3, 0)).toThrow(RangeError);
  });
});

describe('parseUnixMs and resolveHistoryWindow', () => {
  it('parses digits only', () => {
    expect(parseUnixMs('0')).toBe(0);
    expect(parseUnixMs('1763640000000')).toBe(1763640000000);
    for (const bad of ['', '-1', '1.5', '1e12', 'abc', ' 12', '0x10', String(MAX_UNIX_MS + 1)]) expect(parseUnixMs(bad)).toBeNull();
  });
  it('defaults: to = now, from = one hour before to', () => {
    expect(resolveHistoryWindow(undefined, undefined, 10 * H)).toEqual({ ok: true, from: 9 * H, to: 10 * H });
    expect(resolveHistoryWindow(undefined, String(5 * H), 10 * H)).toEqual({ ok: true, from: 4 * H, to: 5 * H });
    expect(resolveHistoryWindow(undefined, String(10 * MIN), 10 * H)).toEqual({ ok: true, from: 0, to: 10 * MIN });
  });
  it('from = to is a valid empty-span window; from > to is refused naming from', () => {
    expect(resolveHistoryWindow('5', '5', 0)).toEqual({ ok: true, from: 5, to: 5 });
    const r = resolveHistoryWindow('6', '5', 0);
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.parameter).toBe('from');
  });
  it('names the bad parameter', () => {
    const a = resolveHistoryWindow('x', undefined, 0);
    expect(a.ok === false && a.parameter).toBe('from');
    const b = resolveHistoryWindow(undefined, '-3', 0);
    expect(b.ok === false && b.parameter).toBe('to');
  });
});
