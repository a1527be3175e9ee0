/**
 * The practice wallet through the real app and PostgreSQL (issue 10 items 3, 4, 8): opening
 * balance, deposits and their bounds, the ledger as the only record, idempotency (replay byte for
 * byte, reuse, in use), key types, the acting account, and races.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPlayerJwt } from '../../../src/jwt.js';
import { purgeExpiredIdempotencyKeys } from '../../../src/store/pg/idempotency.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { accountKey, expectOneEffect, keyHeaders as H } from '../../support/accounts.js';
import { get, send } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
const app = () => s.built.app;
beforeAll(async () => {
  s = await startStack({ catalog: null });
});
afterAll(async () => s?.close());

type Key = CreatedKey;
const key = (keyType: 'data' | 'execution' = 'execution', extra: { entitlements?: string[] } = {}): Promise<Key> => accountKey(s, keyType, extra);
const deposit = (k: Key, body: unknown, idem: string | null = randomUUID(), extra: Record<string, string> = {}) =>
  send(app(), 'POST', '/flow/v1/auth/account/paper/deposit', body, H(k, idem === null ? extra : { 'idempotency-key': idem, ...extra }));
const rawDeposit = async (k: Key, payload: string, idem: string) => {
  const r = await app().inject({ method: 'POST', url: '/flow/v1/auth/account/paper/deposit', headers: { ...H(k), 'content-type': 'application/json', 'idempotency-key': idem }, payload });
  return { status: r.statusCode, body: r.body };
};

async function ledgerOf(account: string) {
  const { rows } = await s.rt.pool.query<{ seq: number; type: string; amount: string; balance_after: string; ledger_id: string }>(
    'SELECT seq, type, amount::text, balance_after::text, ledger_id FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq',
    [account],
  );
  return rows;
}
async function sumOf(account: string): Promise<string> {
  const { rows } = await s.rt.pool.query<{ sum: string; last: string }>(
    `SELECT coalesce(sum(amount), 0)::text AS sum,
            (SELECT balance_after::text FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT 1) AS last
       FROM practice_ledger WHERE router_account_id = $1`,
    [account],
  );
  expect(rows[0]!.sum).toBe(rows[0]!.last);
  return rows[0]!.sum;
}

describe('the practice wallet', () => {
  it('opens at 1,000 ATLAS with an opening_balance entry', async () => {
    const k = await key();
    const w = await get(app(), '/flow/v1/auth/account/paper', H(k));
    expect(w.status).toBe(200);
    expect(w.body.data).toEqual({ currency: 'ATLAS', balance: 1000, max_deposit: 100000, balance_cap: 10000000 });
    const l = await get(app(), '/flow/v1/auth/account/paper/ledger', H(k));
    expect(l.body.data.currency).toBe('ATLAS');
    expect(l.body.data.entries).toHaveLength(1);
    expect(l.body.data.entries[0]).toMatchObject({ type: 'opening_balance', amount: 1000, balance_after: 1000, router_order_id: null });
  });

  it('a deposit is 201, one ledger entry, its balance event in the outbox, and the balance is the ledger sum', async () => {
    const k = await key();
    const r = await deposit(k, { amount: 250.25, description: 'top up' });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ currency: 'ATLAS', amount: 250.25, balance: 1250.25 });
    expect(r.body.data.svc_ledger_id).toMatch(/^svl_/);
    const entries = (await get(app(), '/flow/v1/auth/account/paper/ledger', H(k))).body.data.entries;
    expect(entries.map((e: { type: string }) => e.type)).toEqual(['deposit', 'opening_balance']);
    expect(entries[0]).toMatchObject({ ledger_id: r.body.data.svc_ledger_id, amount: 250.25, balance_after: 1250.25, description: 'top up' });
    expect(await sumOf(k.router_account_id)).toBe('1250.250000');
    const { rows } = await s.rt.pool.query<{ event: Record<string, unknown> }>("SELECT event FROM account_outbox WHERE router_account_id = $1 AND channel = 'balance'", [k.router_account_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.event).toMatchObject({ type: 'balance.update', partner_id: 'practice', currency: 'ATLAS', balance: 1250.25, venue_balance: 1250.25, pending: 0, balance_version: 2, cause: 'wallet', router_order_id: null });
  });

  it('refuses amounts out of bounds with 400 invalid_amount and writes nothing', async () => {
    const k = await key();
    for (const amount of [0, -1, -0.5, 0.001, 1.005, 1e-7, 100000.01, 100001, 1e21, '10', null, true, [5], { v: 1 }]) {
      const r = await deposit(k, { amount });
      expect(r.status, JSON.stringify(amount)).toBe(400);
      expect(r.body.error.code).toBe('invalid_amount');
    }
    const missing = await deposit(k, {});
    expect(missing.status).toBe(400);
    expect(await ledgerOf(k.router_account_id)).toHaveLength(0);
    // The bounds themselves pass.
    expect((await deposit(k, { amount: 100000 })).status).toBe(201);
    expect((await deposit(k, { amount: 0.01 })).status).toBe(201);
    expect(await sumOf(k.router_account_id)).toBe('101000.010000');
  });

  it('409 balance_cap when a deposit would pass 10,000,000, and nothing is written', async () => {
    const k = await key();
    await s.rt.pool.query(
      `INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after) VALUES ($1, 1, $2, 'opening_balance', 9999000, 9999000)`,
      [k.router_account_id, `svl_test_${randomUUID()}`],
    );
    expect((await deposit(k, { amount: 1000 })).status).toBe(201); // exactly the cap
    const over = await deposit(k, { amount: 0.01 });
    expect(over.status).toBe(409);
    expect(over.body.error.code).toBe('balance_cap');
    expect(await ledgerOf(k.router_account_id)).toHaveLength(2);
    expect(await sumOf(k.router_account_id)).toBe('10000000.000000');
  });

  it('unknown fields are 400 unknown_parameter', async () => {
    const k = await key();
    const r = await deposit(k, { amount: 5, currency: 'USD' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('unknown_parameter');
  });
});

describe('Idempotency-Key on a deposit', () => {
  it('missing or not a UUID → 400 idempotency_key_required, nothing written', async () => {
    const k = await key();
    for (const idem of [null, '', 'abc', '123e4567-e89b-12d3-a456-42661417400', `${randomUUID()}x`]) {
      const r = await deposit(k, { amount: 5 }, idem);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('idempotency_key_required');
    }
    expect(await ledgerOf(k.router_account_id)).toHaveLength(0);
  });

  it('the same key and body replays the first response byte for byte; one entry', async () => {
    const k = await key();
    const idem = randomUUID();
    const first = await rawDeposit(k, '{"amount": 10}', idem);
    expect(first.status).toBe(201);
    // The same request with other whitespace and key order is the same request.
    const again = await rawDeposit(k, '{ "amount":10 }', idem.toUpperCase());
    expect(again).toEqual(first);
    expect((await ledgerOf(k.router_account_id)).filter((e) => e.type === 'deposit')).toHaveLength(1);
  });

  it('the same key with another body → 422 idempotency_key_reused; another account may use the same key', async () => {
    const k = await key();
    const other = await key();
    const idem = randomUUID();
    expect((await deposit(k, { amount: 10 }, idem)).status).toBe(201);
    const r = await deposit(k, { amount: 11 }, idem);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('idempotency_key_reused');
    expect((await deposit(other, { amount: 11 }, idem)).status).toBe(201);
  });

  it('a refused deposit keeps no record: the corrected request may use the same key', async () => {
    const k = await key();
    const idem = randomUUID();
    expect((await deposit(k, { amount: 0.001 }, idem)).status).toBe(400);
    expect((await deposit(k, { amount: 1 }, idem)).status).toBe(201);
  });

  it('a key past its 24 hours is forgotten (usable again), and the purge deletes only expired records', async () => {
    const k = await key();
    const idem = randomUUID();
    const live = randomUUID();
    expect((await deposit(k, { amount: 10 }, idem)).status).toBe(201);
    expect((await deposit(k, { amount: 10 }, live)).status).toBe(201);
    await s.rt.pool.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE router_account_id = $1 AND idempotency_key = $2", [k.router_account_id, idem]);
    // Another body under the expired key is a new request, not a reuse.
    expect((await deposit(k, { amount: 11 }, idem)).status).toBe(201);
    await s.rt.pool.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE router_account_id = $1 AND idempotency_key = $2", [k.router_account_id, idem]);
    expect(await purgeExpiredIdempotencyKeys(s.rt.pool)).toBeGreaterThanOrEqual(1);
    const { rows } = await s.rt.pool.query<{ idempotency_key: string }>('SELECT idempotency_key FROM idempotency_keys WHERE router_account_id = $1', [k.router_account_id]);
    expect(rows.map((r) => r.idempotency_key)).toEqual([live]);
    expect((await deposit(k, { amount: 12 }, live)).status).toBe(422);
  });

  it('50 concurrent deposits with one key → exactly one ledger entry; the others replay it or are told it is in use', async () => {
    const k = await key();
    const idem = randomUUID();
    const answers = await Promise.all(Array.from({ length: 50 }, () => rawDeposit(k, '{"amount": 7.5}', idem)));
    const first = expectOneEffect(answers);
    expect((await ledgerOf(k.router_account_id)).filter((e) => e.type === 'deposit')).toHaveLength(1);
    expect(await sumOf(k.router_account_id)).toBe('1007.500000');
    // Once it finished, the key replays.
    expect(await rawDeposit(k, '{"amount": 7.5}', idem)).toEqual(first);
  });
});

describe('who may read and deposit', () => {
  it('a data key reads but cannot deposit (403); not even with trade:execute asked for at creation', async () => {
    const d = await key('data');
    expect((await get(app(), '/flow/v1/auth/account/paper', H(d))).status).toBe(200);
    const r = await deposit(d, { amount: 5 });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('entitlement_required');
    const odd = await key('data', { entitlements: ['reference:read', 'markets:read', 'account:read', 'trade:execute'] });
    const r2 = await deposit(odd, { amount: 5 });
    expect(r2.status).toBe(403);
    expect(r2.body.error.code).toBe('entitlement_required');
    expect(await ledgerOf(odd.router_account_id)).toHaveLength(0);
  });

  it('a player JWT acts on its own account', async () => {
    const k = await key();
    const jwt = signPlayerJwt(s.rt.config.jwtSecret, k.router_account_id, 600);
    const auth = { authorization: `Bearer ${jwt}` };
    const r = await send(app(), 'POST', '/flow/v1/auth/account/paper/deposit', { amount: 3 }, { ...auth, 'idempotency-key': randomUUID() });
    expect(r.status).toBe(201);
    expect((await get(app(), '/flow/v1/auth/account/paper', H(k))).body.data.balance).toBe(1003);
  });

  it('one account never sees or moves another’s wallet', async () => {
    const a = await key();
    const b = await key();
    expect((await deposit(a, { amount: 500 })).status).toBe(201);
    expect((await get(app(), '/flow/v1/auth/account/paper', H(b))).body.data.balance).toBe(1000);
    expect((await get(app(), '/flow/v1/auth/account/paper/ledger', H(b))).body.data.entries).toHaveLength(1);
    // Naming A's account from B's (non-organization) key: account_forbidden, on every wallet route.
    const as = { 'x-service-account': a.router_account_id };
    for (const r of [
      await get(app(), '/flow/v1/auth/account/paper', H(b, as)),
      await get(app(), '/flow/v1/auth/account/paper/ledger', H(b, as)),
      await deposit(b, { amount: 1 }, randomUUID(), as),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('account_forbidden');
    }
    expect(await sumOf(a.router_account_id)).toBe('1500.000000');
  });
});

describe('concurrent deposits and reads (property)', () => {
  it('balance = sum of entries after every step, never above the cap, every 201 has its entry and nothing else does', async () => {
    const k = await key();
    await get(app(), '/flow/v1/auth/account/paper', H(k));
    // Start near the cap so some deposits are refused.
    await s.rt.pool.query("UPDATE practice_ledger SET amount = 9990000, balance_after = 9990000 WHERE router_account_id = $1 AND seq = 1", [k.router_account_id]);
    const landed = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('deposit' as const), cents: fc.integer({ min: -100, max: 600_000 }), reuse: fc.boolean() }),
            fc.record({ kind: fc.constant('read' as const) }),
          ),
          { minLength: 1, maxLength: 12 },
        ),
        async (ops) => {
          let lastKey = randomUUID();
          const answers = await Promise.all(
            ops.map((op) => {
              if (op.kind === 'read') return get(app(), '/flow/v1/auth/account/paper', H(k)).then((r) => ({ op, r }));
              const idem = op.reuse ? lastKey : (lastKey = randomUUID());
              return deposit(k, { amount: op.cents / 100 }, idem).then((r) => ({ op, r }));
            }),
          );
          for (const { op, r } of answers) {
            expect(r.status).toBeLessThan(500);
            if (op.kind === 'read') {
              expect(r.body.data.balance).toBeLessThanOrEqual(10_000_000);
            } else if (r.status === 201) {
              landed.add(r.body.data.svc_ledger_id);
            } else {
              expect(['invalid_amount', 'balance_cap', 'idempotency_key_in_use', 'idempotency_key_reused']).toContain(r.body.error.code);
            }
          }
          const total = await sumOf(k.router_account_id);
          expect(Number(total)).toBeLessThanOrEqual(10_000_000);
          const deposits = (await ledgerOf(k.router_account_id)).filter((e) => e.type === 'deposit');
          expect(new Set(deposits.map((e) => e.ledger_id))).toEqual(landed);
        },
      ),
      { numRuns: 25, seed: 20261124 },
    );
  });
});
