/**
 * Opportunities (issue 10 item 6): openOpportunity as the buy will call it inside its transaction
 * (opens one, refuses an archived or foreign model, holds off a concurrent archive), and the REST
 * reads: list newest first with the model_id filter and paging, one opportunity, and tenant
 * isolation on both.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Currency } from '../../../src/domain/account.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { openOpportunity } from '../../../src/store/pg/opportunities.js';
import { inTransaction } from '../../../src/store/pg/pool.js';
import { accountKey, keyHeaders as H } from '../../support/accounts.js';
import { get, send, type JsonResponse } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
const app = () => s.built.app;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => s?.close());

const key = (keyType: 'data' | 'execution' = 'execution') => accountKey(s, keyType);
const O = '/flow/v1/auth/opportunities';
const codeOf = (r: JsonResponse) => r.body?.error?.code;
const ids = (r: JsonResponse): string[] => r.body.data.map((o: { opportunity_id: string }) => o.opportunity_id);

async function model(k: CreatedKey, name = 'm') {
  const r = await send(app(), 'POST', '/flow/v1/auth/models', { model_name: name, model_description: '' }, H(k, { 'idempotency-key': randomUUID() }));
  expect(r.status).toBe(201);
  return r.body.data as { model_id: string; model_name: string };
}

/** openOpportunity in a transaction of its own, as the buy will run it in its. */
const open = (k: CreatedKey, modelId: string | null, currency: Currency = 'USD') =>
  inTransaction(s.rt.pool, (c) => openOpportunity(c, { routerAccountId: k.router_account_id, modelId, currency }));

async function opened(k: CreatedKey, modelId: string | null, currency: Currency = 'USD') {
  const r = await open(k, modelId, currency);
  if (!r.ok) throw new Error(`refused: ${r.refusal}`);
  return r.opportunity;
}

async function countOf(account: string): Promise<number> {
  const { rows } = await s.rt.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM opportunities WHERE router_account_id = $1', [account]);
  return rows[0]!.n;
}

describe('openOpportunity', () => {
  it('opens one under the account’s active model, with its name, the currency and no legs yet', async () => {
    const k = await key();
    const m = await model(k, 'hedges');
    const r = await open(k, m.model_id, 'ATLAS');
    expect(r).toEqual({
      ok: true,
      opportunity: {
        opportunity_id: expect.stringMatching(/^opp_/),
        model_id: m.model_id,
        model_name: 'hedges',
        currency: 'ATLAS',
        legs: [],
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    expect(await countOf(k.router_account_id)).toBe(1);
  });

  it('opens one with no model when the buy names none', async () => {
    const k = await key();
    const o = await opened(k, null);
    expect(o).toMatchObject({ model_id: null, model_name: null, currency: 'USD', legs: [] });
    expect((await get(app(), `${O}/${o.opportunity_id}`, H(k))).body.data).toEqual(o);
  });

  it('refuses an archived model (model_archived) and opens again once it is unarchived', async () => {
    const k = await key();
    const m = await model(k);
    await send(app(), 'POST', `/flow/v1/auth/models/${m.model_id}/archive`, {}, H(k));
    expect(await open(k, m.model_id)).toEqual({ ok: false, refusal: 'model_archived' });
    expect(await countOf(k.router_account_id)).toBe(0);
    await send(app(), 'POST', `/flow/v1/auth/models/${m.model_id}/unarchive`, {}, H(k));
    expect((await open(k, m.model_id)).ok).toBe(true);
  });

  it('refuses another account’s model and a missing one alike (model_not_found)', async () => {
    const a = await key();
    const b = await key();
    const am = await model(a);
    expect(await open(b, am.model_id)).toEqual({ ok: false, refusal: 'model_not_found' });
    expect(await open(b, 'mdl_nothing')).toEqual({ ok: false, refusal: 'model_not_found' });
    expect(await countOf(b.router_account_id)).toBe(0);
    expect(await countOf(a.router_account_id)).toBe(0);
  });

  it('an archive while a buy’s transaction is open waits for it, so no order lands under an archived model', async () => {
    const k = await key();
    const m = await model(k);
    const client = await s.rt.pool.connect();
    try {
      await client.query('BEGIN');
      const r = await openOpportunity(client, { routerAccountId: k.router_account_id, modelId: m.model_id, currency: 'USD' });
      expect(r.ok).toBe(true);
      let archivedAt = 0;
      const archiving = send(app(), 'POST', `/flow/v1/auth/models/${m.model_id}/archive`, {}, H(k)).then((res) => {
        archivedAt = Date.now();
        return res;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(archivedAt).toBe(0);
      const committedAt = Date.now();
      await client.query('COMMIT');
      const res = await archiving;
      expect(res.body.data.status).toBe('archived');
      expect(archivedAt).toBeGreaterThanOrEqual(committedAt);
    } finally {
      client.release();
    }
    expect(await open(k, m.model_id)).toEqual({ ok: false, refusal: 'model_archived' });
  });
});

describe('GET opportunities', () => {
  it('lists newest first with the model’s current name; model_id filters; paging walks every one once', async () => {
    const k = await key();
    const m1 = await model(k, 'one');
    const m2 = await model(k, 'two');
    const made = [];
    for (const modelId of [m1.model_id, m2.model_id, m1.model_id, null, m1.model_id]) made.push(await opened(k, modelId));
    // Two share a creation time: the tie breaks by opportunity_id, descending.
    const times = ['2026-01-01T00:00:01Z', '2026-01-01T00:00:02Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:04Z'];
    for (const [i, o] of made.entries()) await s.rt.pool.query('UPDATE opportunities SET created_at = $2 WHERE opportunity_id = $1', [o.opportunity_id, times[i]]);
    const newest = made
      .map((o, i) => ({ o, at: times[i]! }))
      .sort((a, b) => b.at.localeCompare(a.at) || (b.o.opportunity_id > a.o.opportunity_id ? 1 : -1))
      .map((x) => x.o);

    const all = await get(app(), O, H(k));
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual(newest.map((o) => o.opportunity_id));
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false, limit: 50 });

    await send(app(), 'PATCH', `/flow/v1/auth/models/${m1.model_id}`, { model_name: 'one, renamed' }, H(k));
    const ofOne = await get(app(), `${O}?model_id=${m1.model_id}`, H(k));
    expect(ids(ofOne)).toEqual(newest.filter((o) => o.model_id === m1.model_id).map((o) => o.opportunity_id));
    for (const o of ofOne.body.data) expect(o).toMatchObject({ model_id: m1.model_id, model_name: 'one, renamed', currency: 'USD', legs: [] });
    expect(ids(await get(app(), `${O}?model_id=mdl_nothing`, H(k)))).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: JsonResponse = await get(app(), `${O}?model_id=${m1.model_id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, H(k));
      expect(r.status).toBe(200);
      seen.push(...ids(r));
      cursor = r.body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids(ofOne));
    // A cursor of the filtered list does not page the unfiltered one.
    const c = (await get(app(), `${O}?model_id=${m1.model_id}&limit=1`, H(k))).body.pagination.next_cursor as string;
    const wrong = await get(app(), `${O}?limit=1&cursor=${encodeURIComponent(c)}`, H(k));
    expect([wrong.status, codeOf(wrong)]).toEqual([400, 'invalid_cursor']);
  });

  it('GET one answers the opportunity; a missing one is 404 opportunity_not_found; a data key may read', async () => {
    const k = await key();
    const o = await opened(k, (await model(k)).model_id, 'ATLAS');
    const r = await get(app(), `${O}/${o.opportunity_id}`, H(k));
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual(o);
    const missing = await get(app(), `${O}/opp_nothing`, H(k));
    expect([missing.status, codeOf(missing)]).toEqual([404, 'opportunity_not_found']);
    expect(missing.body.error.details).toEqual({ opportunity_id: 'opp_nothing' });
    const data = await key('data');
    expect((await get(app(), O, H(data))).status).toBe(200);
  });
});

describe('tenant isolation', () => {
  it('another account’s opportunity is 404 opportunity_not_found, is never listed, and its model filters to nothing', async () => {
    const a = await key();
    const b = await key();
    const am = await model(a);
    const ao = await opened(a, am.model_id);
    const bo = await opened(b, null);
    const r = await get(app(), `${O}/${ao.opportunity_id}`, H(b));
    expect([r.status, codeOf(r)]).toEqual([404, 'opportunity_not_found']);
    expect(ids(await get(app(), O, H(b)))).toEqual([bo.opportunity_id]);
    expect(ids(await get(app(), `${O}?model_id=${am.model_id}`, H(b)))).toEqual([]);
    expect(ids(await get(app(), `${O}?model_id=${am.model_id}`, H(a)))).toEqual([ao.opportunity_id]);
  });

  it('X-Service-Account naming another account from a non-organization key is 403 account_forbidden on both routes', async () => {
    const a = await key();
    const b = await key();
    const ao = await opened(a, null);
    const as = { 'x-service-account': a.router_account_id };
    for (const r of [await get(app(), O, H(b, as)), await get(app(), `${O}/${ao.opportunity_id}`, H(b, as))]) {
      expect([r.status, codeOf(r)]).toEqual([403, 'account_forbidden']);
    }
  });
});
