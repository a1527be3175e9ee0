/**
 * The two ways a practice buy is written (api/rest/orders/practice-buy.ts), against real PostgreSQL
 * and Redis: the one statement (flow_paper_buy, migration 13) answers exactly what the transaction
 * answers and writes exactly its rows (ledger entries, orders, events, opportunity, Idempotency-Key
 * record), ids and instants apart; whatever it cannot answer (a wallet short on a later leg, a
 * refused model, a catalog fact its copy got wrong, a leg that does not plan, a joined opportunity)
 * it hands back having written nothing, and the transaction answers; its copies of catalog facts are
 * dropped when the statement finds them stale; a replay, a reused key and 50 concurrent requests with
 * one key behave as the transaction's do; its events' NOTIFY comes after its commit, not in it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUY_OPERATION } from '../../../api/rest/orders/buy.js';
import { resolvedLegs, type BuyBodyT } from '../../../api/rest/orders/body.js';
import { PracticeBuys, type PracticeBuyRequest } from '../../../api/rest/orders/practice-buy.js';
import { canonicalFingerprint } from '../../../src/store/pg/idempotency.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { accountKey, expectOneEffect, keyHeaders as H } from '../../support/accounts.js';
import { send } from '../../support/http.js';
import { orderCatalog, orderMarket, paperLeg, type OrderMarket } from '../../support/orders.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let m: OrderMarket;
let buys: PracticeBuys;
let metrics: Registry;
beforeAll(async () => {
  const catalog = orderCatalog();
  s = await startStack({ catalog });
  m = await orderMarket(s, catalog);
  await m.quote(m.home, [
    { partner: 'sim_exchange', price: 0.55, available: 500 },
    { partner: 'sim_book01', price: 0.52, available: 300 },
  ]);
  await m.quote(m.away, [{ partner: 'sim_exchange', price: 0.47, available: 500 }]);
  await m.quote(m.other, [{ partner: 'sim_exchange', price: 0.8, available: 1000 }]);
  metrics = new Registry();
  buys = new PracticeBuys({ pool: s.rt.pool, hot: m.hot, metrics });
}, 90_000);
afterAll(async () => {
  await m?.close();
  await s?.close();
});

const key = () => accountKey(s);

function request(k: CreatedKey, body: BuyBodyT, idem = randomUUID(), atMs = Date.now()): PracticeBuyRequest {
  const legs = resolvedLegs(body, { environment: 'test' });
  const currency = legs.some((l) => l.mode === 'paper') ? 'ATLAS' : null;
  return {
    account: k.router_account_id,
    scope: { routerAccountId: k.router_account_id, key: idem, operation: BUY_OPERATION, fingerprint: canonicalFingerprint(body) },
    body,
    legs,
    currency,
    atMs,
  };
}

/** Everything a buy writes for an account, in write order, as JSON. */
async function written(account: string) {
  const q = async (sql: string) => (await s.rt.pool.query<{ r: unknown }>(sql, [account])).rows.map((x) => x.r);
  return {
    ledger: await q(`SELECT jsonb_build_object('seq', seq, 'type', type, 'amount', amount::text, 'balance_after', balance_after::text, 'router_order_id', router_order_id, 'description', description) AS r
                       FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq`),
    // As PostgreSQL's text: a number stored with another scale (989.500000 for 989.5) would differ.
    orders: await q(`SELECT (to_jsonb(o) - 'created_at' - 'updated_at')::text AS r FROM orders o WHERE router_account_id = $1 ORDER BY created_at, leg_index`),
    events: await q(`SELECT channel || ' ' || event::text AS r FROM account_outbox WHERE router_account_id = $1 ORDER BY seq`),
    opportunities: await q(`SELECT (to_jsonb(o) - 'created_at')::text AS r FROM opportunities o WHERE router_account_id = $1 ORDER BY created_at`),
    // The fingerprint apart (checked on its own: the bodies name each account's model).
    keys: await q(`SELECT jsonb_build_object('key', idempotency_key, 'operation', operation, 'state', state, 'status', status_code, 'response', response) AS r
                     FROM idempotency_keys WHERE router_account_id = $1 AND operation = 'orders.buy'`),
  };
}

/** Writes with their minted ids numbered in order of appearance, the account named ACCOUNT and the ledger's instants blanked: what must agree between two accounts' buys. */
function normalized(x: unknown, account: string): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(x)
    .replaceAll(account, 'ACCOUNT')
    .replace(/\b(?:(ord|opp|sor|svl|mdl)_[A-Za-z0-9_-]{16}|(fco)_[0-9a-f]{32})(?![A-Za-z0-9_-])/g, (id, a: string | undefined, b: string | undefined) => {
      if (!ids.has(id)) ids.set(id, `${a ?? b}#${ids.size}`);
      return ids.get(id)!;
    })
    .replace(/(\\?"balance_as_of\\?": ?\\?")[^"\\]+/g, '$1AS_OF');
  return JSON.parse(text) as unknown;
}

const served = async () => {
  const values = (await metrics.getSingleMetric('flow_practice_buys_total')!.get()).values;
  return (path: string, reason = '') => values.find((v) => v.labels.path === path && v.labels.reason === reason)?.value ?? 0;
};

async function model(k: CreatedKey) {
  const r = await send(s.built.app, 'POST', '/flow/v1/auth/models', { model_name: 'm', model_description: '' }, H(k, { 'idempotency-key': randomUUID() }));
  return r.body.data.model_id as string;
}

describe('the one statement writes what the transaction writes', () => {
  const cases: [string, (mdl: string) => object][] = [
    ['an amount leg (shares cut to six decimals)', () => ({ orders: [paperLeg(m.home, 10)] })],
    ['an amount with six decimals', () => ({ orders: [paperLeg(m.home, 1.234567)] })],
    ['a shares leg (stake rounded half up to six decimals)', () => ({ orders: [paperLeg(m.home, 0, { amount: undefined, shares: 3.333333 })] })],
    ['a leg naming a liquidity_hash', () => ({ orders: [{ liquidity_hash: m.lh('sim_exchange', m.home), amount: 3, max_price: 0.6, mode: 'paper' }] })],
    ['two legs on two contests, halt, check_all_first, parallel', () => ({ orders: [paperLeg(m.home, 5), paperLeg(m.other, 0, { amount: undefined, shares: 3 })], on_leg_failure: 'halt', check_all_first: true, placement: 'parallel' })],
    ['a leg filed under a model', (mdl) => ({ orders: [paperLeg(m.away, 2.5)], model_id: mdl })],
  ];
  for (const [name, body] of cases) {
    it(name, async () => {
      const [a, b] = [await key(), await key()];
      const [ma, mb] = [await model(a), await model(b)];
      const idem = randomUUID();
      const atMs = Date.now();
      const before = (await served())('one_statement');
      const qa = request(a, JSON.parse(JSON.stringify(body(ma))) as BuyBodyT, idem, atMs);
      const one = await buys.inOneStatement(qa);
      expect(one).not.toBeNull();
      expect((await served())('one_statement')).toBe(before + 1);
      const tx = await buys.inTransaction(request(b, JSON.parse(JSON.stringify(body(mb))) as BuyBodyT, idem, atMs));
      expect(JSON.parse(one!.body).data.results.every((r: { status: string }) => r.status === 'completed')).toBe(true);
      expect(normalized(one, a.router_account_id)).toEqual(normalized(tx, b.router_account_id));
      const [wa, wb] = [await written(a.router_account_id), await written(b.router_account_id)];
      expect(wa.orders.length).toBe(JSON.parse(one!.body).data.results.length);
      const { rows } = await s.rt.pool.query<{ fingerprint: string }>('SELECT fingerprint FROM idempotency_keys WHERE router_account_id = $1 AND idempotency_key = $2', [a.router_account_id, idem]);
      expect(rows).toEqual([{ fingerprint: qa.scope.fingerprint }]);
      expect(normalized(wa, a.router_account_id)).toEqual(normalized(wb, b.router_account_id));
    });
  }

  it('replays its answer byte for byte, and refuses the key with another body (422), as the transaction does', async () => {
    const k = await key();
    const idem = randomUUID();
    const body = { orders: [paperLeg(m.home, 4)] } as BuyBodyT;
    const first = await buys.inOneStatement(request(k, body, idem));
    expect(first?.status).toBe(200);
    expect(await buys.inOneStatement(request(k, body, idem, Date.now() + 5_000))).toEqual(first);
    expect(await buys.inTransaction(request(k, body, idem, Date.now() + 5_000))).toEqual(first);
    await expect(buys.inOneStatement(request(k, { orders: [paperLeg(m.home, 5)] } as BuyBodyT, idem))).rejects.toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect((await written(k.router_account_id)).orders).toHaveLength(1);
  });

  it('50 concurrent buys with one key: one placement and one debit; the others replay it or are told it is in use', async () => {
    const k = await key();
    const idem = randomUUID();
    const body = { orders: [paperLeg(m.home, 7.5)] } as BuyBodyT;
    const before = (await served())('one_statement');
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        buys.buy(request(k, body, idem)).then(
          (r) => r,
          (err: { status: number; code: string; message: string }) => ({ status: err.status, body: JSON.stringify({ error: { code: err.code, message: err.message } }) }),
        ),
      ),
    );
    expectOneEffect(answers, 200);
    const w = await written(k.router_account_id);
    expect(w.orders).toHaveLength(1);
    expect(w.ledger.filter((e) => (e as { type: string }).type === 'bet_debit')).toHaveLength(1);
    expect(w.keys).toHaveLength(1);
    // Every one of them was answered by the statement (a 409 or a replay is its answer too).
    expect((await served())('one_statement')).toBe(before + 50);
  });
});

describe('what the statement cannot answer, it hands back with nothing written', () => {
  const nothing = { ledger: [], orders: [], events: [], opportunities: [], keys: [] };

  it('a wallet that covers the first leg but not the second: the first leg’s writes are undone too; the transaction places one and fails the other', async () => {
    const k = await key();
    const body = { orders: [paperLeg(m.home, 600), paperLeg(m.other, 600)] } as BuyBodyT;
    const before = (await served())('transaction', 'wallet');
    expect(await buys.inOneStatement(request(k, body))).toBeNull();
    expect((await served())('transaction', 'wallet')).toBe(before + 1);
    expect(await written(k.router_account_id)).toEqual(nothing);
    const r = await buys.buy(request(k, body));
    expect(JSON.parse(r.body).data.results.map((x: { status: string; rejected_code: string | null }) => [x.status, x.rejected_code])).toEqual([
      ['completed', null],
      ['failed', 'insufficient_balance'],
    ]);
  });

  it('a model that is archived, or none of the account’s: the transaction answers 409 or 404', async () => {
    const k = await key();
    const mdl = await model(k);
    await s.rt.pool.query("UPDATE models SET status = 'archived' WHERE model_id = $1", [mdl]);
    expect(await buys.inOneStatement(request(k, { orders: [paperLeg(m.home, 1)], model_id: mdl } as BuyBodyT))).toBeNull();
    expect(await buys.inOneStatement(request(k, { orders: [paperLeg(m.home, 1)], model_id: 'mdl_nobodys' } as BuyBodyT))).toBeNull();
    expect(await written(k.router_account_id)).toEqual(nothing);
    await expect(buys.buy(request(k, { orders: [paperLeg(m.home, 1)], model_id: mdl } as BuyBodyT))).rejects.toMatchObject({ status: 409, code: 'model_archived' });
    await expect(buys.buy(request(k, { orders: [paperLeg(m.home, 1)], model_id: 'mdl_nobodys' } as BuyBodyT))).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('a position whose title changed after its copy was taken: the copy is dropped, the transaction writes the new title, and the next statement plans with it', async () => {
    const k = await key();
    const body = { orders: [paperLeg(m.away, 1)] } as BuyBodyT;
    expect(await buys.inOneStatement(request(k, body))).not.toBeNull();
    const { rows } = await s.rt.pool.query<{ title: string }>("SELECT definition->>'title' AS title FROM positions WHERE position_hash = $1", [m.away]);
    const title = rows[0]!.title;
    await s.rt.pool.query(`UPDATE positions SET definition = jsonb_set(definition, '{title}', to_jsonb($2::text)) WHERE position_hash = $1`, [m.away, `${title} (renamed)`]);
    try {
      const k2 = await key();
      const before = (await served())('transaction', 'catalog');
      expect(await buys.inOneStatement(request(k2, body))).toBeNull();
      expect((await served())('transaction', 'catalog')).toBe(before + 1);
      expect(await written(k2.router_account_id)).toEqual(nothing);
      expect(await buys.inOneStatement(request(k2, body))).not.toBeNull();
      const w = await written(k2.router_account_id);
      expect(w.orders.map((o) => (JSON.parse(o as string) as { title: string }).title)).toEqual([`${title} (renamed)`]);
      expect(w.ledger.at(-1)).toMatchObject({ description: `Practice order: ${title} (renamed)` });
    } finally {
      await s.rt.pool.query(`UPDATE positions SET definition = jsonb_set(definition, '{title}', to_jsonb($2::text)) WHERE position_hash = $1`, [m.away, title]);
    }
  });

  it('a partner that became an internal book after the copy was taken: the transaction prices without it', async () => {
    const k = await key();
    const body = { orders: [paperLeg(m.home, 1)] } as BuyBodyT;
    expect(await buys.inOneStatement(request(k, body))).not.toBeNull();
    // sim_book01's 0.52 is the best price of home: as an internal book it no longer counts.
    await s.rt.pool.query("UPDATE partners SET internal_book = true WHERE partner_id = 'sim_book01'");
    try {
      const k2 = await key();
      expect(await buys.inOneStatement(request(k2, body))).toBeNull();
      expect(await written(k2.router_account_id)).toEqual(nothing);
      const r = await buys.buy(request(k2, body));
      expect(JSON.parse(r.body).data.results[0]).toMatchObject({ status: 'completed', avg_price: 0.55 });
    } finally {
      await s.rt.pool.query("UPDATE partners SET internal_book = false WHERE partner_id = 'sim_book01'");
      // The copy now holds sim_book01 as internal: the next statement would hand back once more.
      buys.catalog.drop([]);
    }
  });

  it('a leg that does not plan (above max_price), a joined opportunity, an account that does not exist', async () => {
    const k = await key();
    expect(await buys.inOneStatement(request(k, { orders: [paperLeg(m.home, 1, { max_price: 0.3 })] } as BuyBodyT))).toBeNull();
    expect(await buys.inOneStatement(request(k, { orders: [paperLeg(m.home, 1)], opportunity_id: 'opp_whatever' } as BuyBodyT))).toBeNull();
    const ghost = { ...k, router_account_id: 'acct_ghost_account' };
    expect(await buys.inOneStatement(request(ghost, { orders: [paperLeg(m.home, 1)] } as BuyBodyT))).toBeNull();
    expect(await written(k.router_account_id)).toEqual(nothing);
    await expect(buys.buy(request(ghost, { orders: [paperLeg(m.home, 1)] } as BuyBodyT))).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('the relay’s wake-up', () => {
  it('an outbox insert whose transaction leaves the wake-up to its caller notifies nothing at commit; the buy sends it after its commit', async () => {
    const listener = new pg.Client({ connectionString: s.databaseUrl });
    await listener.connect();
    try {
      const got: string[] = [];
      let woken: () => void = () => undefined;
      listener.on('notification', (n) => {
        got.push(n.channel);
        woken();
      });
      await listener.query('LISTEN account_outbox');
      const k = await key();
      const insert = (deferred: boolean) =>
        s.rt.pool.query(
          `WITH w AS (SELECT set_config('flow.outbox_wake', $2, true)) INSERT INTO account_outbox (router_account_id, channel, event) SELECT $1, 'balance', '{}' FROM w`,
          [k.router_account_id, deferred ? 'after_commit' : ''],
        );
      // A notification committed before a query on the listening session is delivered before its answer.
      await insert(true);
      await listener.query('SELECT 1');
      expect(got).toEqual([]);
      await insert(false);
      await listener.query('SELECT 1');
      expect(got).toEqual(['account_outbox']);
      await s.rt.pool.query('DELETE FROM account_outbox WHERE router_account_id = $1', [k.router_account_id]);

      got.length = 0;
      const notified = new Promise<void>((r) => (woken = r));
      expect(await buys.inOneStatement(request(k, { orders: [paperLeg(m.home, 1)] } as BuyBodyT))).not.toBeNull();
      await notified;
      expect(got[0]).toBe('account_outbox');
    } finally {
      await listener.end();
    }
  });
});
