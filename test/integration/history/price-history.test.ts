import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyRoutes } from '../../../api/rest/history/routes.js';
import { ManualClock } from '../../../src/clock.js';
import { prepareHistoryStore } from '../../../src/store/clickhouse/schema.js';
import { HistoryWriter } from '../../../src/store/clickhouse/writer.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { openTestClickHouse, type TestClickHouse, queryString } from './support.js';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const C = 'ct_hist';
// Hash order (the series order of a response): B < A < T.
const A = `${C}:mk_ml:home:0:pt_a:ft`;
const B = `${C}:mk_ml:away:0:pt_b:ft`;
const T = `${C}:mk_tot:over:45.5:pt_o:ft`;
const X = 'ct_other:mk_ml:home:0:pt_x:ft';
// Ids are opaque: quotes, backslashes, slashes and non-ASCII must survive into valid JSON.
const ODD_C = 'ct "odd"/\\é';
const ODD = `${ODD_C}:mk:yes:0:p\t"1":ft`;

const EQ_C = 'ct_eq';
const EQ = [`${EQ_C}:a`, `${EQ_C}:b`, `${EQ_C}:c`];
const EQ_FROM = T0 - 3 * D;

let s: TestStack;
let tch: TestClickHouse;
let PRO: Record<string, string>;
let FREE: Record<string, string>;
const clock = new ManualClock(T0 + 2 * H);

beforeAll(async () => {
  tch = openTestClickHouse();
  await prepareHistoryStore(tch.ch, { retentionDays: 0 });
  s = await startStack({ clock, plugins: [historyRoutes], clickhouse: tch.ch });
  PRO = { 'x-api-key': (await createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'data', environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 })).api_key };
  FREE = { 'x-api-key': (await createKey(s.rt.pool, s.rt.gate, { plan: 'free', keyType: 'data', environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 })).api_key };

  const w = new HistoryWriter(tch.ch, { flushIntervalMs: 60_000 });
  const point = (position_hash: string, at: number, price: number, contest_id = C) => w.writePoint({ ts: T0 + at, contest_id, position_hash, price });
  point(A, 0, 0.5);
  point(A, 30 * S, 0.52);
  point(A, 59_999, 0.53);
  point(A, 60 * S, 0.55);
  point(A, 4 * M, 0.56);
  point(A, 5 * M, 0.6);
  point(A, 7 * M, 0.61);
  point(A, 90 * M, 0.7);
  point(B, 10 * S, 0.48);
  point(B, 2 * M, 0.45);
  point(B, 6 * M, 0.4);
  point(T, 70 * M, 0.33);
  point(X, 1 * M, 0.9, 'ct_other');
  point(ODD, 2 * M, 0.25, ODD_C);
  const tick = (partner_id: string, position_hash: string, at: number, price: number) =>
    w.writeTick({ ts: T0 + at, contest_id: C, position_hash, partner_id, price, available: 100, liquidity_hash: `${partner_id}:${position_hash}` });
  tick('vx', A, 5 * S, 0.51);
  tick('vx', A, 50 * S, 0.54);
  tick('vx', A, 3 * M, 0.57);
  tick('vy', A, 5 * S, 0.49);
  tick('vx', B, 20 * S, 0.47);
  // A dense, irregular series for the rollup equivalence check: unique times per series.
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (const h of EQ) {
    let at = EQ_FROM;
    while (at < EQ_FROM + 5 * H) {
      at += 1 + Math.floor(rnd() * 40 * S);
      const price = Math.round(rnd() * 1000) / 1000;
      w.writePoint({ ts: at, contest_id: EQ_C, position_hash: h, price });
      w.writeTick({ ts: at, contest_id: EQ_C, position_hash: h, partner_id: rnd() < 0.5 ? 'vx' : 'vy', price, available: 1, liquidity_hash: 'x' });
    }
  }
  expect(await w.flush()).toBe(true);
  await w.close();
});

afterAll(async () => {
  await s?.close();
  await tch?.close();
});

const app = () => s.built.app;
const url = (q: Record<string, string | number>, contest = C) =>
  `/flow/v1/contests/${encodeURIComponent(contest)}/price-history?${queryString(q)}`;
const pts = (r: { body: any }) => r.body.data.points.map((p: any) => [p.position_hash, p.t - T0, p.price]);

describe('envelope and defaults', () => {
  it('answers the spec envelope with the effective window and resolution', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M }), PRO);
    expect(r.status).toBe(200);
    expect(r.body.meta.api_version).toBe('v1');
    expect(Object.keys(r.body.data).sort()).toEqual(['contest_id', 'from', 'points', 'resolution', 'to']);
    expect(r.body.data).toMatchObject({ contest_id: C, resolution: 'tick', from: T0, to: T0 + 10 * M });
    expect(r.body.data.points[0]).toEqual({ t: T0 + 10 * S, position_hash: B, price: 0.48 });
  });
  it('defaults to = now and from = one hour before to', async () => {
    const r = await get(app(), url({}), PRO);
    expect(r.body.data).toMatchObject({ from: T0 + H, to: T0 + 2 * H, resolution: 'tick' });
    expect(pts(r)).toEqual([
      [A, 90 * M, 0.7],
      [T, 70 * M, 0.33],
    ]);
    const onlyTo = await get(app(), url({ to: T0 + 10 * M }), PRO);
    expect(onlyTo.body.data).toMatchObject({ from: T0 + 10 * M - H, to: T0 + 10 * M });
  });
  it('an unknown contest is 200 with empty points', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + H }, 'no_such_contest'), PRO);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ contest_id: 'no_such_contest', resolution: 'tick', from: T0, to: T0 + H, points: [] });
  });
});

describe('opaque ids', () => {
  it('round-trips a contest id and position hash with JSON-special characters', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M }, ODD_C), PRO);
    expect(r.status).toBe(200);
    expect(r.body.data.contest_id).toBe(ODD_C);
    expect(r.body.data.points).toEqual([{ t: T0 + 2 * M, position_hash: ODD, price: 0.25 }]);
    // Output escaping is ClickHouse's; as a filter, a control character (the tab) is refused at the
    // edge like any value no store should see (issue 8 item 4), while the other odd characters pass.
    const tabbed = await get(app(), url({ from: T0, to: T0 + 10 * M, position_hash: ODD }, ODD_C), PRO);
    expect(tabbed.status).toBe(400);
    expect(tabbed.body.error.code).toBe('invalid_parameter');
    const one = await get(app(), url({ from: T0, to: T0 + 10 * M, position_hash: `${ODD_C}:x` }, ODD_C), PRO);
    expect(one.status).toBe(200);
    expect(one.body.data.points).toHaveLength(0);
  });
});

describe('consensus series (no partner_id)', () => {
  it('tick: every row in [from, to], both bounds inclusive, series in hash order', async () => {
    const r = await get(app(), url({ from: T0 + 30 * S, to: T0 + 60 * S, position_hash: `${A},${B}` }), PRO);
    expect(pts(r)).toEqual([
      [A, 30 * S, 0.52],
      [A, 59_999, 0.53],
      [A, 60 * S, 0.55],
    ]);
  });
  it('1m: t = bucket start, price = last row of the bucket', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M, resolution: '1m', position_hash: `${A},${B}` }), PRO);
    expect(r.body.data.resolution).toBe('1m');
    expect(pts(r)).toEqual([
      [B, 0, 0.48],
      [B, 2 * M, 0.45],
      [B, 6 * M, 0.4],
      [A, 0, 0.53],
      [A, 1 * M, 0.55],
      [A, 4 * M, 0.56],
      [A, 5 * M, 0.6],
      [A, 7 * M, 0.61],
    ]);
  });
  it('5m closes', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M, resolution: '5m', position_hash: A }), PRO);
    expect(pts(r)).toEqual([
      [A, 0, 0.56],
      [A, 5 * M, 0.61],
    ]);
  });
  it('a partial first bucket keeps its aligned start and counts only rows inside the window', async () => {
    const r = await get(app(), url({ from: T0 + 4 * M + 1, to: T0 + 10 * M, resolution: '5m', position_hash: A }), PRO);
    expect(pts(r)).toEqual([[A, 5 * M, 0.61]]);
    const r2 = await get(app(), url({ from: T0 + 30 * S, to: T0 + 10 * M, resolution: '5m', position_hash: A }), PRO);
    expect(pts(r2)).toEqual([
      [A, 0, 0.56],
      [A, 5 * M, 0.61],
    ]);
  });
  it('without position_hash: every series of the contest, never another contest', async () => {
    const r = await get(app(), url({ from: T0 - D, to: T0 + D, resolution: '1h' }), PRO);
    expect(pts(r)).toEqual([
      [B, 0, 0.4],
      [A, 0, 0.61],
      [A, H, 0.7],
      [T, H, 0.33],
    ]);
  });
  it('1h and 1d buckets are aligned to UTC', async () => {
    const r = await get(app(), url({ from: T0 - 200 * D, to: T0 + D, resolution: '1d', position_hash: A }), PRO);
    expect(r.body.data.resolution).toBe('1d');
    expect(r.body.data.points).toEqual([{ t: Date.parse('2026-11-20T00:00:00Z'), position_hash: A, price: 0.7 }]);
  });
});

describe('per-minute rollups', () => {
  // Bucketed series read per-minute closes for whole minutes and raw rows at the edges; the answer
  // must equal bucketing the raw rows directly, for any window.
  const reference = async (from: number, to: number, width: number, partner?: string) => {
    const rs = await tch.ch.query({
      query: `SELECT toInt64(intDiv(toUnixTimestamp64Milli(ts), {w:Int64}) * {w:Int64}) AS t, position_hash, argMax(price, ts) AS price
              FROM ${partner ? 'ticks' : 'price_points'}
              WHERE contest_id = {c:String} ${partner ? 'AND partner_id = {p:String}' : ''}
                AND ts >= fromUnixTimestamp64Milli({f:Int64}, 'UTC') AND ts <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')
              GROUP BY position_hash, t ORDER BY position_hash, t SETTINGS output_format_json_quote_64bit_integers = 0`,
      query_params: { w: width, c: EQ_C, p: partner ?? '', f: from, to },
      format: 'JSONEachRow',
    });
    return rs.json();
  };
  let seed = 99;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const cases = Array.from({ length: 24 }, (_, i) => {
    const from = EQ_FROM + Math.floor(rnd() * 4 * H);
    const span = Math.floor(rnd() * 3 * H) + (i % 4 === 0 ? 0 : 1);
    const res = (['1m', '5m', '1h', '4h'] as const)[i % 4]!;
    return { from, to: from + span, res, partner: i % 3 === 0 ? 'vy' : undefined };
  });
  it.each(cases)('window %#: equals bucketing the raw rows', async ({ from, to, res, partner }) => {
    const width = { '1m': M, '5m': 5 * M, '1h': H, '4h': 4 * H }[res];
    const r = await get(app(), url({ from, to, resolution: res, ...(partner ? { partner_id: partner } : {}) }, EQ_C), PRO);
    expect(r.status).toBe(200);
    expect(r.body.data.resolution).toBe(res);
    expect(r.body.data.points).toEqual(await reference(from, to, width, partner));
  });
  it('the edge minutes exclude rows outside the window', async () => {
    // Window starts 1 ms after a row at the start of minute 4 and ends 1 ms before minute 7's row.
    const r = await get(app(), url({ from: T0 + 4 * M + 1, to: T0 + 7 * M - 1, resolution: '1m', position_hash: A }), PRO);
    expect(pts(r)).toEqual([[A, 5 * M, 0.6]]);
  });
});

describe('resolution choice', () => {
  it.each([
    [10 * M, 'tick'],
    [6 * H, 'tick'],
    [7 * H, '5m'],
    [24 * H, '5m'],
    [2 * D, '1h'],
    [7 * D, '1h'],
    [30 * D, '4h'],
    [90 * D, '4h'],
    [91 * D, '1d'],
  ])('auto over %i ms is %s', async (span, res) => {
    const r = await get(app(), url({ from: T0 + H - span, to: T0 + H }), PRO);
    expect(r.status).toBe(200);
    expect(r.body.data.resolution).toBe(res);
  });
  it('auto over 24 h serves 5m buckets', async () => {
    const r = await get(app(), url({ from: T0 + 10 * M - D, to: T0 + 10 * M, position_hash: B }), PRO);
    expect(r.body.data.resolution).toBe('5m');
    expect(pts(r)).toEqual([
      [B, 0, 0.45],
      [B, 5 * M, 0.4],
    ]);
  });
  it('1m inside 6 h is honoured; beyond 6 h it degrades to 5m, with 5m buckets', async () => {
    const inside = await get(app(), url({ from: T0, to: T0 + 6 * H, resolution: '1m', position_hash: A }), PRO);
    expect(inside.body.data.resolution).toBe('1m');
    expect(inside.body.data.points).toHaveLength(6);
    const beyond = await get(app(), url({ from: T0, to: T0 + 6 * H + 1, resolution: '1m', position_hash: A }), PRO);
    expect(beyond.body.data.resolution).toBe('5m');
    expect(pts(beyond)).toEqual([
      [A, 0, 0.56],
      [A, 5 * M, 0.61],
      [A, 90 * M, 0.7],
    ]);
  });
  it('explicit tick is honoured beyond 6 h', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 2 * D, resolution: 'tick', position_hash: T }), PRO);
    expect(r.body.data.resolution).toBe('tick');
    expect(pts(r)).toEqual([[T, 70 * M, 0.33]]);
  });
});

describe('venue series (partner_id)', () => {
  it("switches to that venue's quoted prices", async () => {
    const vx = await get(app(), url({ from: T0, to: T0 + 10 * M, partner_id: 'vx', position_hash: A }), PRO);
    expect(pts(vx)).toEqual([
      [A, 5 * S, 0.51],
      [A, 50 * S, 0.54],
      [A, 3 * M, 0.57],
    ]);
    const vy = await get(app(), url({ from: T0, to: T0 + 10 * M, partner_id: 'vy' }), PRO);
    expect(pts(vy)).toEqual([[A, 5 * S, 0.49]]);
  });
  it('buckets a venue series too', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M, partner_id: 'vx', resolution: '1m' }), PRO);
    expect(pts(r)).toEqual([
      [B, 0, 0.47],
      [A, 0, 0.54],
      [A, 3 * M, 0.57],
    ]);
  });
  it('an unknown venue has no points', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M, partner_id: 'nobody' }), PRO);
    expect(r.body.data.points).toEqual([]);
  });
});

describe('limit budget', () => {
  const all = { from: T0, to: T0 + 2 * H, resolution: 'tick', position_hash: `${A},${B},${T}` };
  it('splits the limit evenly: each series keeps its oldest floor(limit / series) points', async () => {
    const r = await get(app(), url({ ...all, limit: 7 }), PRO);
    expect(pts(r)).toEqual([
      [B, 10 * S, 0.48],
      [B, 2 * M, 0.45],
      [A, 0, 0.5],
      [A, 30 * S, 0.52],
      [T, 70 * M, 0.33],
    ]);
    expect(r.body.data.series_truncated).toBeUndefined();
  });
  it('as many series as the limit: one point each, not truncated', async () => {
    const r = await get(app(), url({ ...all, limit: 3 }), PRO);
    expect(pts(r)).toEqual([
      [B, 10 * S, 0.48],
      [A, 0, 0.5],
      [T, 70 * M, 0.33],
    ]);
    expect('series_truncated' in r.body.data).toBe(false);
  });
  it('more series than the limit: the first series in hash order, and series_truncated', async () => {
    const r = await get(app(), url({ ...all, limit: 2 }), PRO);
    expect(pts(r)).toEqual([
      [B, 10 * S, 0.48],
      [A, 0, 0.5],
    ]);
    expect(r.body.data.series_truncated).toBe(true);
  });
  it('counts only series with rows in the window', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M, position_hash: `${A},${B},${T}`, limit: 2 }), PRO);
    expect(r.body.data.series_truncated).toBeUndefined();
    expect(r.body.data.points).toHaveLength(2);
  });
  it('a duplicate hash in the list is one series', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + 10 * M, position_hash: `${A},${A}`, limit: 2 }), PRO);
    expect(pts(r)).toEqual([
      [A, 0, 0.5],
      [A, 30 * S, 0.52],
    ]);
  });
});

describe('bad input is a 400 invalid_parameter naming the parameter', () => {
  const many = Array.from({ length: 101 }, (_, i) => `${C}:mk:x:0:p${i}:ft`).join(',');
  it.each([
    [{ from: T0 + 1, to: T0 }, 'from'],
    [{ from: 'abc' }, 'from'],
    [{ from: '-5' }, 'from'],
    [{ from: '1.5' }, 'from'],
    [{ from: '' }, 'from'],
    [{ to: 'tomorrow' }, 'to'],
    [{ to: '99999999999999999' }, 'to'],
    [{ resolution: '2m' }, 'resolution'],
    [{ resolution: 'AUTO' }, 'resolution'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 50_001 }, 'limit'],
    [{ limit: 'lots' }, 'limit'],
    [{ position_hash: many }, 'position_hash'],
    [{ position_hash: `${A},,${B}` }, 'position_hash'],
  ] as [Record<string, string | number>, string][])('%o → %s', async (q, parameter) => {
    const r = await get(app(), url(q), PRO);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_parameter');
    expect(r.body.error.details.parameter).toBe(parameter);
    expect(typeof r.body.error.message).toBe('string');
  });
  it('100 hashes and limit 50000 are accepted', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => `${C}:mk:x:0:p${i}:ft`).join(',');
    const r = await get(app(), url({ from: T0, to: T0 + H, position_hash: hundred, limit: 50_000 }), PRO);
    expect(r.status).toBe(200);
  });
});

describe('entitlement', () => {
  it('a free key is refused with 403 entitlement_required', async () => {
    const r = await get(app(), url({ from: T0, to: T0 + H }), FREE);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('entitlement_required');
    expect(r.body.error.details.missing).toEqual(['pricing:history']);
  });
  it('no key is 401', async () => {
    expect((await get(app(), url({}))).status).toBe(401);
  });
});
