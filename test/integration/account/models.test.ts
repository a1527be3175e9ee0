/**
 * Models through the real app and PostgreSQL (issue 10 item 5): create with its Idempotency-Key,
 * the 50-active cap (also under concurrent creates and unarchives), list order, filters and paging,
 * read, PATCH (no status), archive and unarchive (idempotent, the cap), who may write, and tenant
 * isolation on every route.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPlayerJwt } from '../../../src/jwt.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { accountKey, expectOneEffect, keyHeaders as H, organizationUser } from '../../support/accounts.js';
import { get, send, type JsonResponse } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
const app = () => s.built.app;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => s?.close());

const key = (keyType: 'data' | 'execution' = 'execution') => accountKey(s, keyType);
const M = '/flow/v1/auth/models';

const create = (k: CreatedKey, body: unknown, idem: string | null = randomUUID(), extra: Record<string, string> = {}) =>
  send(app(), 'POST', M, body, H(k, idem === null ? extra : { 'idempotency-key': idem, ...extra }));
const rawCreate = async (k: CreatedKey, payload: string, idem: string) => {
  const r = await app().inject({ method: 'POST', url: M, headers: H(k, { 'content-type': 'application/json', 'idempotency-key': idem }), payload });
  return { status: r.statusCode, body: r.body };
};
const patch = (k: CreatedKey, id: string, body: unknown, extra: Record<string, string> = {}) => send(app(), 'PATCH', `${M}/${id}`, body, H(k, extra));
const archive = (k: CreatedKey, id: string, extra: Record<string, string> = {}) => send(app(), 'POST', `${M}/${id}/archive`, {}, H(k, extra));
const unarchive = (k: CreatedKey, id: string, extra: Record<string, string> = {}) => send(app(), 'POST', `${M}/${id}/unarchive`, {}, H(k, extra));
const list = (k: CreatedKey, query = '', extra: Record<string, string> = {}) => get(app(), `${M}${query ? `?${query}` : ''}`, H(k, extra));
const one = (k: CreatedKey, id: string, extra: Record<string, string> = {}) => get(app(), `${M}/${id}`, H(k, extra));

/** Creates a model and returns it. */
async function model(k: CreatedKey, name = `m-${randomUUID().slice(0, 8)}`, extra: object = {}) {
  const r = await create(k, { model_name: name, model_description: 'd', ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data;
}

/** Inserts `n` models straight into the table (the cap tests need many quickly). */
async function seedModels(account: string, n: number, status: 'active' | 'archived'): Promise<string[]> {
  const { rows } = await s.rt.pool.query<{ model_id: string }>(
    `INSERT INTO models (model_id, router_account_id, model_name, model_description, status)
     SELECT 'mdl_seed_' || md5(random()::text || g), $1, 'seeded ' || g, '', $3 FROM generate_series(1, $2) g RETURNING model_id`,
    [account, n, status],
  );
  return rows.map((r) => r.model_id);
}

async function countOf(account: string, status?: 'active' | 'archived'): Promise<number> {
  const { rows } = await s.rt.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM models WHERE router_account_id = $1 AND ($2::text IS NULL OR status = $2)', [account, status ?? null]);
  return rows[0]!.n;
}

const codeOf = (r: JsonResponse) => r.body?.error?.code;
const ids = (r: JsonResponse): string[] => r.body.data.map((m: { model_id: string }) => m.model_id);

describe('creating a model', () => {
  it('201 with the Model: active, no league unless given, the league’s name from the catalog', async () => {
    const k = await key();
    const r = await create(k, { model_name: 'Late favourites', model_description: 'fade the public' });
    expect(r.status).toBe(201);
    const m = r.body.data;
    expect(m).toEqual({
      model_id: expect.stringMatching(/^mdl_/),
      model_name: 'Late favourites',
      model_description: 'fade the public',
      league_id: null,
      league_name: null,
      status: 'active',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: m.created_at,
    });
    const withLeague = await model(k, 'football', { league_id: 'lg_fb' });
    expect(withLeague).toMatchObject({ league_id: 'lg_fb', league_name: 'Pro Football' });
    expect((await model(k, 'explicit none', { league_id: null })).league_id).toBeNull();
    expect(await countOf(k.router_account_id)).toBe(3);
  });

  it('refuses bad bodies with 400 and writes nothing: unknown fields, missing or blank fields, over-long text', async () => {
    const k = await key();
    const cases: [unknown, string][] = [
      [{ model_name: 'a', model_description: 'b', status: 'archived' }, 'unknown_parameter'],
      [{ model_name: 'a', model_description: 'b', extra: 1 }, 'unknown_parameter'],
      [{ model_description: 'b' }, 'invalid_parameter'],
      [{ model_name: 'a' }, 'invalid_parameter'],
      [{ model_name: '', model_description: 'b' }, 'invalid_parameter'],
      [{ model_name: '   ', model_description: 'b' }, 'invalid_parameter'],
      [{ model_name: 'x'.repeat(101), model_description: 'b' }, 'invalid_parameter'],
      [{ model_name: 'a', model_description: 'x'.repeat(2001) }, 'invalid_parameter'],
      [{ model_name: 'a\u0000', model_description: 'b' }, 'invalid_parameter'],
      [{ model_name: 5, model_description: 'b' }, 'invalid_parameter'],
      [{ model_name: 'a', model_description: 'b', league_id: 7 }, 'invalid_parameter'],
    ];
    for (const [body, code] of cases) {
      const r = await create(k, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(codeOf(r), JSON.stringify(body)).toBe(code);
    }
    // The bounds themselves pass.
    expect((await create(k, { model_name: 'x'.repeat(100), model_description: 'y'.repeat(2000) })).status).toBe(201);
    expect((await create(k, { model_name: 'z', model_description: '' })).status).toBe(201);
    expect(await countOf(k.router_account_id)).toBe(2);
  });

  it('a league_id that names no league is 404 not_found, and nothing is written', async () => {
    const k = await key();
    const r = await create(k, { model_name: 'a', model_description: 'b', league_id: 'lg_nowhere' });
    expect(r.status).toBe(404);
    expect(codeOf(r)).toBe('not_found');
    expect(r.body.error.details).toEqual({ league_id: 'lg_nowhere' });
    expect(await countOf(k.router_account_id)).toBe(0);
  });
});

describe('Idempotency-Key on a create', () => {
  it('missing or not a UUID → 400 idempotency_key_required, nothing written', async () => {
    const k = await key();
    for (const idem of [null, '', 'not-a-uuid']) {
      const r = await create(k, { model_name: 'a', model_description: 'b' }, idem);
      expect(r.status).toBe(400);
      expect(codeOf(r)).toBe('idempotency_key_required');
    }
    expect(await countOf(k.router_account_id)).toBe(0);
  });

  it('the same key and body replays the first response byte for byte; one model', async () => {
    const k = await key();
    const idem = randomUUID();
    const first = await rawCreate(k, '{"model_name":"once","model_description":"d"}', idem);
    expect(first.status).toBe(201);
    const again = await rawCreate(k, '{ "model_description": "d", "model_name": "once" }', idem);
    expect(again).toEqual(first);
    expect(await countOf(k.router_account_id)).toBe(1);
  });

  it('the same key with another body → 422 idempotency_key_reused; a refused create keeps no record', async () => {
    const k = await key();
    const idem = randomUUID();
    expect((await create(k, { model_name: 'a', model_description: 'b' }, idem)).status).toBe(201);
    const r = await create(k, { model_name: 'other', model_description: 'b' }, idem);
    expect(r.status).toBe(422);
    expect(codeOf(r)).toBe('idempotency_key_reused');

    const idem2 = randomUUID();
    expect((await create(k, { model_name: 'c', model_description: 'b', league_id: 'lg_nowhere' }, idem2)).status).toBe(404);
    expect((await create(k, { model_name: 'c', model_description: 'b', league_id: 'lg_tn' }, idem2)).status).toBe(201);
    expect(await countOf(k.router_account_id)).toBe(2);
  });

  it('20 concurrent creates with one key → one model; the others replay it or are told it is in use', async () => {
    const k = await key();
    const idem = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => rawCreate(k, '{"model_name":"race","model_description":""}', idem)));
    const first = expectOneEffect(answers);
    expect(await countOf(k.router_account_id)).toBe(1);
  });
});

describe('the 50-active cap', () => {
  it('the 51st active model is 409 model_limit_reached; archived ones do not count; archiving frees a place', async () => {
    const k = await key();
    await seedModels(k.router_account_id, 30, 'archived');
    const ids = await seedModels(k.router_account_id, 49, 'active');
    const fiftieth = await model(k, 'fiftieth');
    const over = await create(k, { model_name: 'one too many', model_description: '' });
    expect(over.status).toBe(409);
    expect(codeOf(over)).toBe('model_limit_reached');
    expect(over.body.error.details).toEqual({ limit: 50 });
    expect(await countOf(k.router_account_id, 'active')).toBe(50);

    expect((await archive(k, ids[0]!)).status).toBe(200);
    expect((await create(k, { model_name: 'fits now', model_description: '' })).status).toBe(201);
    expect(await countOf(k.router_account_id, 'active')).toBe(50);
    expect(fiftieth.status).toBe('active');
  });

  it('unarchive counts toward the cap: 409 model_limit_reached at 50 active, and the model stays archived', async () => {
    const k = await key();
    const [archived] = await seedModels(k.router_account_id, 1, 'archived');
    const active = await seedModels(k.router_account_id, 50, 'active');
    const r = await unarchive(k, archived!);
    expect(r.status).toBe(409);
    expect(codeOf(r)).toBe('model_limit_reached');
    expect((await one(k, archived!)).body.data.status).toBe('archived');
    // Unarchiving an active model at the cap is a no-op, not a second place.
    const again = await unarchive(k, active[0]!);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('active');
    await archive(k, active[1]!);
    expect((await unarchive(k, archived!)).body.data.status).toBe('active');
    expect(await countOf(k.router_account_id, 'active')).toBe(50);
  });

  it('20 concurrent creates at 45 active → exactly 5 land, 15 are 409 model_limit_reached, 50 active', async () => {
    const k = await key();
    await seedModels(k.router_account_id, 45, 'active');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(k, { model_name: `c${i}`, model_description: '' })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(15);
    for (const a of refused) expect([a.status, codeOf(a)]).toEqual([409, 'model_limit_reached']);
    expect(await countOf(k.router_account_id, 'active')).toBe(50);
  });

  it('concurrent creates and unarchives at 45 active → never more than 50 active', async () => {
    const k = await key();
    await seedModels(k.router_account_id, 45, 'active');
    const archived = await seedModels(k.router_account_id, 10, 'archived');
    const answers = await Promise.all([
      ...archived.map((id) => unarchive(k, id)),
      ...Array.from({ length: 10 }, (_, i) => create(k, { model_name: `c${i}`, model_description: '' })),
    ]);
    const landed = answers.filter((a) => a.status === 200 || a.status === 201);
    expect(landed).toHaveLength(5);
    for (const a of answers.filter((x) => !landed.includes(x))) expect([a.status, codeOf(a)]).toEqual([409, 'model_limit_reached']);
    expect(await countOf(k.router_account_id, 'active')).toBe(50);
  });
});

describe('listing models', () => {
  /** Five models with fixed creation times, two of them sharing one (the tie breaks by model_id). */
  async function fixture(k: CreatedKey) {
    const times = ['2026-01-01T00:00:01Z', '2026-01-01T00:00:02Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:04Z'];
    const made: { model_id: string; at: string }[] = [];
    for (const at of times) {
      const m = await model(k);
      await s.rt.pool.query('UPDATE models SET created_at = $2 WHERE model_id = $1', [m.model_id, at]);
      made.push({ model_id: m.model_id, at });
    }
    await archive(k, made[1]!.model_id);
    await archive(k, made[3]!.model_id);
    // Newest first: created_at descending, then model_id descending.
    const newest = [...made].sort((a, b) => b.at.localeCompare(a.at) || (b.model_id > a.model_id ? 1 : -1)).map((m) => m.model_id);
    return { made, newest };
  }

  it('newest first; archived hidden unless include_archived=true or status names them', async () => {
    const k = await key();
    const { made, newest } = await fixture(k);
    const archivedIds = new Set([made[1]!.model_id, made[3]!.model_id]);
    const active = newest.filter((id) => !archivedIds.has(id));
    const archivedOnly = newest.filter((id) => archivedIds.has(id));

    const plain = await list(k);
    expect(plain.status).toBe(200);
    expect(ids(plain)).toEqual(active);
    expect(plain.body.pagination).toEqual({ next_cursor: null, has_more: false, limit: 50 });
    expect(ids(await list(k, 'include_archived=true'))).toEqual(newest);
    expect(ids(await list(k, 'include_archived=false'))).toEqual(active);
    expect(ids(await list(k, 'status=archived'))).toEqual(archivedOnly);
    expect(ids(await list(k, 'status=active'))).toEqual(active);
    // status is exact: include_archived does not widen it.
    expect(ids(await list(k, 'status=active&include_archived=true'))).toEqual(active);
    for (const q of ['status=open', 'status=', 'include_archived=maybe', 'limit=0', 'limit=201']) {
      const r = await list(k, q);
      expect(r.status, q).toBe(400);
      expect(codeOf(r), q).toBe('invalid_parameter');
    }
  });

  it('pages with limit and cursor through ties, with no model twice or missed', async () => {
    const k = await key();
    const { newest } = await fixture(k);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: JsonResponse = await list(k, `include_archived=true&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(r));
      cursor = r.body.pagination.next_cursor;
      expect(r.body.pagination.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(seen).toEqual(newest);
    expect(pages).toBe(3);
  });

  it('a cursor of another filter or another account is 400 invalid_cursor', async () => {
    const k = await key();
    const other = await key();
    await fixture(k);
    await fixture(other);
    const cursor = (await list(k, 'limit=1')).body.pagination.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect((await list(k, `limit=1&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    const refusals = [
      await list(k, `status=archived&limit=1&cursor=${encodeURIComponent(cursor)}`),
      await list(k, `include_archived=true&limit=1&cursor=${encodeURIComponent(cursor)}`),
      await list(other, `limit=1&cursor=${encodeURIComponent(cursor)}`),
      await list(k, `limit=1&cursor=${encodeURIComponent(`${cursor}x`)}`),
    ];
    for (const r of refusals) expect([r.status, codeOf(r)]).toEqual([400, 'invalid_cursor']);
  });
});

describe('reading, changing and archiving one model', () => {
  it('GET returns the model, archived or not; an unknown id is 404 model_not_found', async () => {
    const k = await key();
    const m = await model(k);
    expect((await one(k, m.model_id)).body.data).toEqual(m);
    const archived = (await archive(k, m.model_id)).body.data;
    expect((await one(k, m.model_id)).body.data).toEqual(archived);
    const r = await one(k, 'mdl_nothing');
    expect(r.status).toBe(404);
    expect(codeOf(r)).toBe('model_not_found');
    expect(r.body.error.details).toEqual({ model_id: 'mdl_nothing' });
  });

  it('PATCH changes name, description and league (null clears it); updated_at moves only on a change', async () => {
    const k = await key();
    const m = await model(k, 'before');
    const r = await patch(k, m.model_id, { model_name: 'after', league_id: 'lg_tn' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ model_id: m.model_id, model_name: 'after', model_description: 'd', league_id: 'lg_tn', league_name: 'Tennis Tour', status: 'active', created_at: m.created_at });
    expect(r.body.data.updated_at > m.updated_at).toBe(true);
    const changed = r.body.data;

    // The same values, or nothing at all: nothing changes, not even updated_at.
    expect((await patch(k, m.model_id, { model_name: 'after', league_id: 'lg_tn' })).body.data).toEqual(changed);
    expect((await patch(k, m.model_id, {})).body.data).toEqual(changed);

    const cleared = await patch(k, m.model_id, { league_id: null, model_description: 'new words' });
    expect(cleared.body.data).toMatchObject({ model_name: 'after', model_description: 'new words', league_id: null, league_name: null });
    expect((await one(k, m.model_id)).body.data).toEqual(cleared.body.data);
  });

  it('PATCH refuses a status field (400 unknown_parameter, pointing at archive and unarchive), unknown fields and bad values', async () => {
    const k = await key();
    const m = await model(k, 'kept');
    for (const body of [{ status: 'archived' }, { status: 'active', model_name: 'x' }, { status: null }]) {
      const r = await patch(k, m.model_id, body);
      expect(r.status).toBe(400);
      expect(codeOf(r)).toBe('unknown_parameter');
      expect(r.body.error.message).toMatch(/archive/);
      expect(r.body.error.details).toMatchObject({ parameter: '/status' });
    }
    for (const [body, code] of [
      [{ model_id: 'x' }, 'unknown_parameter'],
      [{ created_at: 'x' }, 'unknown_parameter'],
      [{ model_name: '' }, 'invalid_parameter'],
      [{ model_name: '  ' }, 'invalid_parameter'],
      [{ model_description: 5 }, 'invalid_parameter'],
    ] as const) {
      const r = await patch(k, m.model_id, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(codeOf(r), JSON.stringify(body)).toBe(code);
    }
    const league = await patch(k, m.model_id, { model_name: 'renamed', league_id: 'lg_nowhere' });
    expect(league.status).toBe(404);
    expect(codeOf(league)).toBe('not_found');
    expect((await one(k, m.model_id)).body.data).toEqual(m);
    // A league on a model that is not there: the model is what is missing.
    const missing = await patch(k, 'mdl_nothing', { league_id: 'lg_nowhere' });
    expect([missing.status, codeOf(missing)]).toEqual([404, 'model_not_found']);
    expect(codeOf(await patch(k, 'mdl_nothing', { model_name: 'x' }))).toBe('model_not_found');
  });

  it('archive is idempotent: archiving an archived model answers 200 with it unchanged; unarchive likewise', async () => {
    const k = await key();
    const m = await model(k);
    const a1 = await archive(k, m.model_id);
    expect(a1.status).toBe(200);
    expect(a1.body.data).toMatchObject({ model_id: m.model_id, status: 'archived' });
    expect(a1.body.data.updated_at > m.updated_at).toBe(true);
    const a2 = await archive(k, m.model_id);
    expect(a2.status).toBe(200);
    expect(a2.body.data).toEqual(a1.body.data);
    // Concurrent archives all answer archived.
    const many = await Promise.all(Array.from({ length: 5 }, () => archive(k, m.model_id)));
    for (const r of many) expect(r.body.data).toEqual(a1.body.data);

    // An archived model can still be renamed; the status stays.
    expect((await patch(k, m.model_id, { model_name: 'retired' })).body.data).toMatchObject({ model_name: 'retired', status: 'archived' });

    const u1 = await unarchive(k, m.model_id);
    expect(u1.status).toBe(200);
    expect(u1.body.data.status).toBe('active');
    expect((await unarchive(k, m.model_id)).body.data).toEqual(u1.body.data);
    for (const r of [await archive(k, 'mdl_nothing'), await unarchive(k, 'mdl_nothing')]) expect([r.status, codeOf(r)]).toEqual([404, 'model_not_found']);
    // No Idempotency-Key needed, and one sent is ignored; no body needed either.
    expect((await archive(k, m.model_id, { 'idempotency-key': 'not-a-uuid' })).status).toBe(200);
    const bare = await app().inject({ method: 'POST', url: `${M}/${m.model_id}/unarchive`, headers: H(k) });
    expect([bare.statusCode, JSON.parse(bare.body).data.status]).toEqual([200, 'active']);
  });

  it('models are never deleted: no DELETE route', async () => {
    const k = await key();
    const m = await model(k);
    const r = await app().inject({ method: 'DELETE', url: `${M}/${m.model_id}`, headers: H(k) });
    expect(r.statusCode).toBe(404);
    expect(await countOf(k.router_account_id)).toBe(1);
  });
});

describe('who may read and write models', () => {
  it('a data key lists and reads but cannot create, change, archive or unarchive (403 entitlement_required)', async () => {
    const data = await key('data');
    const [mine] = await seedModels(data.router_account_id, 1, 'active');
    expect((await list(data)).status).toBe(200);
    expect((await one(data, mine!)).status).toBe(200);
    for (const r of [
      await create(data, { model_name: 'a', model_description: 'b' }),
      await patch(data, mine!, { model_name: 'x' }),
      await archive(data, mine!),
      await unarchive(data, mine!),
    ]) {
      expect([r.status, codeOf(r)]).toEqual([403, 'entitlement_required']);
    }
    expect((await one(data, mine!)).body.data).toMatchObject({ model_name: 'seeded 1', status: 'active' });
    expect(await countOf(data.router_account_id)).toBe(1);
  });

  it('a player JWT acts on its own account', async () => {
    const k = await key();
    const auth = { authorization: `Bearer ${signPlayerJwt(s.rt.config.jwtSecret, k.router_account_id, 600)}` };
    const r = await send(app(), 'POST', M, { model_name: 'jwt', model_description: '' }, { ...auth, 'idempotency-key': randomUUID() });
    expect(r.status).toBe(201);
    expect(ids(await list(k))).toEqual([r.body.data.model_id]);
  });
});

describe('tenant isolation', () => {
  it('another account’s model is 404 model_not_found on every route, and stays as it was', async () => {
    const a = await key();
    const b = await key();
    const am = await model(a, 'A’s', { league_id: 'lg_fb' });
    await model(b, 'B’s');
    for (const r of [
      await one(b, am.model_id),
      await patch(b, am.model_id, { model_name: 'stolen' }),
      await patch(b, am.model_id, { league_id: 'lg_nowhere' }),
      await archive(b, am.model_id),
      await unarchive(b, am.model_id),
    ]) {
      expect([r.status, codeOf(r)]).toEqual([404, 'model_not_found']);
    }
    expect(ids(await list(b, 'include_archived=true'))).not.toContain(am.model_id);
    expect((await one(a, am.model_id)).body.data).toEqual(am);
  });

  it('X-Service-Account naming another account from a non-organization key is 403 account_forbidden on every route', async () => {
    const a = await key();
    const b = await key();
    const am = await model(a);
    const as = { 'x-service-account': a.router_account_id };
    for (const r of [
      await list(b, '', as),
      await one(b, am.model_id, as),
      await create(b, { model_name: 'x', model_description: '' }, randomUUID(), as),
      await patch(b, am.model_id, { model_name: 'stolen' }, as),
      await archive(b, am.model_id, as),
      await unarchive(b, am.model_id, as),
    ]) {
      expect([r.status, codeOf(r)]).toEqual([403, 'account_forbidden']);
    }
    expect(await countOf(a.router_account_id)).toBe(1);
    expect((await one(a, am.model_id)).body.data).toEqual(am);
  });

  it('an organization key acts for its own users only; a user’s models are not the organization’s', async () => {
    const org = await accountKey(s, 'execution', { plan: 'organization' });
    const otherOrg = await accountKey(s, 'execution', { plan: 'organization' });
    const user = await organizationUser(s, org, `user-${randomUUID()}`);
    const asUser = { 'x-service-account': user };
    const r = await create(org, { model_name: 'for the user', model_description: '' }, randomUUID(), asUser);
    expect(r.status).toBe(201);
    const um = r.body.data;
    expect(await countOf(user)).toBe(1);
    expect(ids(await list(org, '', asUser))).toEqual([um.model_id]);
    expect((await patch(org, um.model_id, { model_name: 'renamed' }, asUser)).status).toBe(200);
    // Without the header the organization acts on its own account, which has no such model.
    expect(ids(await list(org))).toEqual([]);
    expect(codeOf(await one(org, um.model_id))).toBe('model_not_found');
    expect(codeOf(await archive(org, um.model_id))).toBe('model_not_found');
    // Another organization may not name the user.
    for (const res of [await list(otherOrg, '', asUser), await archive(otherOrg, um.model_id, asUser)]) expect([res.status, codeOf(res)]).toEqual([403, 'account_forbidden']);
    expect((await one(org, um.model_id, asUser)).body.data).toMatchObject({ model_name: 'renamed', status: 'active' });
  });
});
