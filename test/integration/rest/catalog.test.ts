import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../../src/store/pg/keys.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let H: Record<string, string>;

beforeAll(async () => {
  s = await startStack();
  const k = await createKey(s.rt.pool, s.rt.gate, { plan: 'free', keyType: 'data', environment: 'test', rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 });
  H = { 'x-api-key': k.api_key };
});
afterAll(async () => s?.close());

const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((x) => x.id);
const app = () => s.built.app;

describe('envelope', () => {
  it('wraps data with meta.timestamp and api_version v1', async () => {
    const r = await get(app(), '/flow/v1/leagues', H);
    expect(r.status).toBe(200);
    expect(r.body.meta.api_version).toBe('v1');
    expect(Date.parse(r.body.meta.timestamp)).not.toBeNaN();
    expect(r.body.pagination).toEqual({ next_cursor: null, has_more: false, limit: 50 });
  });
});

describe('leagues', () => {
  it('lists participant_type team, athlete and null', async () => {
    const r = await get(app(), '/flow/v1/leagues', H);
    expect(r.body.data.map((l: any) => l.participant_type)).toEqual(['team', 'athlete', null]);
    expect(r.body.data[0]).toEqual({ id: 'lg_fb', name: 'Pro Football', participant_type: 'team', status: 'active' });
  });
  it('pages with an opaque cursor', async () => {
    const p1 = await get(app(), '/flow/v1/leagues?limit=2', H);
    expect(ids(p1)).toEqual(['lg_fb', 'lg_tn']);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await get(app(), `/flow/v1/leagues?limit=2&cursor=${encodeURIComponent(p1.body.pagination.next_cursor)}`, H);
    expect(ids(p2)).toEqual(['lg_aw']);
    expect(p2.body.pagination).toEqual({ next_cursor: null, has_more: false, limit: 2 });
  });
  it('reads one league and 404s an unknown id', async () => {
    expect((await get(app(), '/flow/v1/leagues/lg_tn', H)).body.data.participant_type).toBe('athlete');
    const r = await get(app(), '/flow/v1/leagues/nope', H);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });
});

describe('participants', () => {
  it('requires league_id', async () => {
    const r = await get(app(), '/flow/v1/participants', H);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_parameter');
  });
  it('lists a league by name and pages', async () => {
    const r = await get(app(), '/flow/v1/participants?league_id=lg_fb&limit=2', H);
    expect(ids(r)).toEqual(['pt_bos', 'pt_chi']);
    const r2 = await get(app(), `/flow/v1/participants?league_id=lg_fb&limit=2&cursor=${encodeURIComponent(r.body.pagination.next_cursor)}`, H);
    expect(ids(r2)).toEqual(['pt_nyc']);
  });
  it('refuses a cursor from another league', async () => {
    const r = await get(app(), '/flow/v1/participants?league_id=lg_fb&limit=1', H);
    const foreign = await get(app(), `/flow/v1/participants?league_id=lg_tn&cursor=${encodeURIComponent(r.body.pagination.next_cursor)}`, H);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
  });
  it('404s an unknown participant', async () => {
    expect((await get(app(), '/flow/v1/participants/pt_ana', H)).body.data.country).toBe('ES');
    expect((await get(app(), '/flow/v1/participants/zzz', H)).status).toBe(404);
  });
});

describe('contests', () => {
  it('defaults to status open, ordered by start time then id', async () => {
    const r = await get(app(), '/flow/v1/contests', H);
    expect(ids(r)).toEqual(['ct_t', 'ct_1', 'ct_2', 'ct_3', 'ct_t1', 'ct_4', 'ct_t2', 'ct_aw']);
  });
  it('filters by status (comma list)', async () => {
    expect(ids(await get(app(), '/flow/v1/contests?status=closed', H))).toEqual(['ct_5']);
    expect(ids(await get(app(), '/flow/v1/contests?status=closed,open&limit=2', H))).toEqual(['ct_5', 'ct_t']);
  });
  it('q is a case-insensitive substring that composes with filters and keeps start order', async () => {
    expect(ids(await get(app(), '/flow/v1/contests?q=boston', H))).toEqual(['ct_1', 'ct_2']);
    expect(ids(await get(app(), '/flow/v1/contests?q=BOSTON&status=open,closed', H))).toEqual(['ct_5', 'ct_1', 'ct_2']);
    expect(ids(await get(app(), '/flow/v1/contests?q=kim&league_id=lg_tn&parent_contest_id=ct_t', H))).toEqual(['ct_t1', 'ct_t2']);
  });
  it('q treats % and _ literally', async () => {
    expect(ids(await get(app(), '/flow/v1/contests?q=100%25', H))).toEqual(['ct_t']);
    expect(ids(await get(app(), '/flow/v1/contests?q=__', H))).toEqual([]);
  });
  it('q shorter than 2 or longer than 100 characters is a 400', async () => {
    expect((await get(app(), '/flow/v1/contests?q=a', H)).body.error.code).toBe('invalid_parameter');
    expect((await get(app(), `/flow/v1/contests?q=${'x'.repeat(101)}`, H)).status).toBe(400);
    expect((await get(app(), `/flow/v1/contests?q=${'x'.repeat(100)}`, H)).status).toBe(200);
  });
  it('start_after and start_before are inclusive', async () => {
    const t2 = '2026-11-20T14:00:00.000Z';
    expect(ids(await get(app(), `/flow/v1/contests?start_after=${t2}&start_before=${t2}`, H))).toEqual(['ct_2', 'ct_3']);
    expect(ids(await get(app(), `/flow/v1/contests?start_after=2026-11-20T14:00:00.001Z&start_before=2026-11-20T17:00:00Z`, H))).toEqual([
      'ct_t1',
      'ct_4',
    ]);
  });
  it('rejects malformed times and an inverted window', async () => {
    expect((await get(app(), '/flow/v1/contests?start_after=yesterday', H)).status).toBe(400);
    const r = await get(app(), '/flow/v1/contests?start_after=2026-11-21T00:00:00Z&start_before=2026-11-20T00:00:00Z', H);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_parameter');
  });
  it('filters by league_id (several) and parent_contest_id', async () => {
    expect(ids(await get(app(), '/flow/v1/contests?league_id=lg_aw,lg_tn', H))).toEqual(['ct_t', 'ct_t1', 'ct_4', 'ct_t2', 'ct_aw']);
    expect(ids(await get(app(), '/flow/v1/contests?parent_contest_id=ct_t', H))).toEqual(['ct_t1', 'ct_t2']);
    expect(ids(await get(app(), '/flow/v1/contests?league_id=lg_xx', H))).toEqual([]);
  });
  it('pages through every contest exactly once, ties broken by id', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await get(app(), `/flow/v1/contests?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, H);
      expect(r.status).toBe(200);
      seen.push(...ids(r));
      cursor = r.body.pagination.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['ct_t', 'ct_1', 'ct_2', 'ct_3', 'ct_t1', 'ct_4', 'ct_t2', 'ct_aw']);
  });
  it('refuses tampered and foreign cursors with 400 invalid_cursor', async () => {
    const r = await get(app(), '/flow/v1/contests?limit=1', H);
    const c: string = r.body.pagination.next_cursor;
    const tampered = c.slice(0, 5) + (c[5] === 'A' ? 'B' : 'A') + c.slice(6);
    for (const bad of [tampered, 'garbage', 'a.b', '.', c + 'x']) {
      const x = await get(app(), `/flow/v1/contests?limit=1&cursor=${encodeURIComponent(bad)}`, H);
      expect(x.status, bad).toBe(400);
      expect(x.body.error.code).toBe('invalid_cursor');
    }
    const otherFilter = await get(app(), `/flow/v1/contests?limit=1&league_id=lg_fb&cursor=${encodeURIComponent(c)}`, H);
    expect(otherFilter.body.error.code).toBe('invalid_cursor');
    const otherList = await get(app(), `/flow/v1/leagues?cursor=${encodeURIComponent(c)}`, H);
    expect(otherList.body.error.code).toBe('invalid_cursor');
  });
  it('limit over 200, zero or non-numeric is a 400', async () => {
    for (const l of ['201', '0', '-1', 'ten', '1.5']) {
      const r = await get(app(), `/flow/v1/contests?limit=${l}`, H);
      expect(r.status, l).toBe(400);
      expect(r.body.error.code).toBe('invalid_parameter');
    }
    expect((await get(app(), '/flow/v1/contests?limit=200', H)).body.pagination.limit).toBe(200);
  });
  it('carries tags with home/away objects, has_markets and tournaments with children', async () => {
    const r = await get(app(), '/flow/v1/contests/ct_1', H);
    expect(r.body.data.tags.home_team).toEqual({ abbr: 'NYK', name: 'New York Knights', full_label: 'New York Knights (NYK)', market_name: 'New York Knights' });
    expect(r.body.data.has_markets).toBe(true);
    expect((await get(app(), '/flow/v1/contests/ct_2', H)).body.data.has_markets).toBe(false);
    const t = await get(app(), '/flow/v1/contests/ct_t1', H);
    expect(t.body.data.parent_contest_id).toBe('ct_t');
    expect((await get(app(), '/flow/v1/contests/ct_404', H)).status).toBe(404);
  });
});

describe('markets and partners', () => {
  it('lists a contest\'s markets and 404s an unknown contest', async () => {
    const r = await get(app(), '/flow/v1/contests/ct_1/markets', H);
    expect(r.body.data.map((m: any) => m.key)).toEqual(['moneyline', 'total']);
    expect(r.body.data[1]).toMatchObject({ variable_required: true, allow_multiple_participants: false });
    expect((await get(app(), '/flow/v1/contests/nope/markets', H)).status).toBe(404);
  });
  it('lists and reads market definitions', async () => {
    expect((await get(app(), '/flow/v1/markets', H)).body.data).toHaveLength(3);
    expect((await get(app(), '/flow/v1/markets/mk_win', H)).body.data.allow_multiple_participants).toBe(true);
    expect((await get(app(), '/flow/v1/markets/none', H)).body.error.code).toBe('not_found');
  });
  it('partners carry order_config, credential_fields and the practice book', async () => {
    const r = await get(app(), '/flow/v1/partners', H);
    expect(r.body.data.map((p: any) => p.partner_id)).toEqual(['fx_book', 'practice']);
    expect(r.body.data[0].order_config.supported_order_types).toEqual(['market', 'limit']);
    expect(r.body.data[0].credential_fields[0]).toEqual({ key: 'api_key', label: 'API key', type: 'password', required: true });
    expect((await get(app(), '/flow/v1/partners/practice', H)).body.data.internal_book).toBe(true);
    expect((await get(app(), '/flow/v1/partners/nope', H)).status).toBe(404);
  });
});
