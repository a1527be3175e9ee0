/**
 * Venues and balances through the real app, PostgreSQL and the simulator's venue adapters (issue 10
 * items 1 and 2): the sim connect recorded in PostgreSQL, every Account partner field, expected
 * balance from the ledger in numeric, is_stale both ways, a venue with no balance, the refresh
 * (versions, outbox events, never back in time), the scheduler's bounded claims, USD and ATLAS
 * never summed, entitlements and tenant isolation on every route.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BalanceRefresher } from '../../../pipelines/balances/refresher.js';
import { BalanceScheduler } from '../../../pipelines/balances/scheduler.js';
import { BALANCE_STALE_AFTER_MS, practiceAccountPartnerId } from '../../../src/domain/account.js';
import { newId } from '../../../src/ids.js';
import { signPlayerJwt } from '../../../src/jwt.js';
import { seedCatalog } from '../../../src/store/pg/catalog.js';
import { createKey } from '../../../src/store/pg/keys.js';
import { recordSnapshot } from '../../../src/store/pg/partners.js';
import { SimVenueAdapter } from '../../../src/venues/sim/index.js';
import { simPartners } from '../../../src/sim/index.js';
import type { VenueBalance } from '../../../src/venues/types.js';
import { startFullStack, type FullStack } from '../../support/full-stack.js';
import { get, send } from '../../support/http.js';

let f: FullStack;
const app = () => f.stack.built.app;
const pool = () => f.stack.rt.pool;
beforeAll(async () => {
  f = await startFullStack();
  // The simulator's venues, as `flow` seeds them: names, logos, internal_book.
  await seedCatalog(pool(), { leagues: [], participants: [], contests: [], markets: [], contest_markets: [], positions: [], partners: simPartners() });
}, 60_000);
afterAll(async () => f?.close());

type Key = Awaited<ReturnType<typeof createKey>>;
const key = (extra: object = {}): Promise<Key> =>
  createKey(pool(), f.stack.rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000, ...extra });
const H = (k: Key | string, extra: Record<string, string> = {}) => ({ ...(typeof k === 'string' ? { authorization: `Bearer ${k}` } : { 'x-api-key': k.api_key }), ...extra });

const partners = (k: Key | string, extra: Record<string, string> = {}) => get(app(), '/flow/v1/auth/account/partners', H(k, extra));
const balances = (k: Key | string, extra: Record<string, string> = {}) => get(app(), '/flow/v1/auth/account/balances', H(k, extra));
const refresh = (k: Key | string, body: unknown = {}, extra: Record<string, string> = {}) => send(app(), 'POST', '/flow/v1/auth/account/partners/balance/update', body, H(k, extra));
const connect = (account: string, body: object) => send(app(), 'POST', `/sim/v1/accounts/${encodeURIComponent(account)}/connect`, body, f.admin);

/** The simulator's clock, moved by hand: a venue's balance reading carries it as ts_event. */
let simNow = 0;
function advanceSim(ms = 1_000): number {
  simNow = Math.max(simNow, Date.now()) + ms;
  f.market.tick(simNow);
  return simNow;
}

const logoOf = (id: string) => simPartners().find((p) => p.partner_id === id)!.logo_url;
const venue = (body: any, partnerId: string) => body.data.account_partners.find((p: any) => p.partner_id === partnerId);

async function row(account: string, partnerId: string) {
  const { rows } = await pool().query<{ account_partner_id: string; balance: string | null; venue_held: string | null; balance_version: number; balance_as_of: Date | null; balance_source: string | null }>(
    'SELECT account_partner_id, balance::text, venue_held::text, balance_version, balance_as_of, balance_source FROM account_partners WHERE router_account_id = $1 AND partner_id = $2',
    [account, partnerId],
  );
  return rows[0];
}
async function events(account: string) {
  const { rows } = await pool().query<{ event: any }>("SELECT event FROM account_outbox WHERE router_account_id = $1 AND channel = 'balance' ORDER BY seq", [account]);
  return rows.map((r) => r.event);
}
async function ledger(accountPartnerId: string, kind: 'hold' | 'release' | 'settlement', amount: string, at: string) {
  await pool().query('INSERT INTO balance_ledger (account_partner_id, kind, amount, created_at) VALUES ($1, $2, $3::numeric, $4::timestamptz)', [accountPartnerId, kind, amount, at]);
}
/** A connection the hosted flow recorded without the simulator (another venue, a pending link). */
async function insertConnection(account: string, partnerId: string, fields: { balance?: string | null; balance_source?: string | null; credential_status?: string; balance_as_of?: string | null } = {}) {
  const id = newId('ap');
  await pool().query(
    `INSERT INTO account_partners (account_partner_id, router_account_id, partner_id, credential_status, balance, balance_as_of, balance_source)
     VALUES ($1, $2, $3, $4, $5::numeric, $6::timestamptz, $7)`,
    [id, account, partnerId, fields.credential_status ?? 'connected', fields.balance ?? null, fields.balance_as_of ?? null, fields.balance_source === undefined ? 'venue_api' : fields.balance_source],
  );
  return id;
}

describe('GET partners', () => {
  it('a new account lists the practice wallet alone, with every field; USD totals are 0', async () => {
    const k = await key();
    const r = await partners(k);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      router_account_id: k.router_account_id,
      total_balance: 0,
      expected_total_balance: 0,
      account_partners: [
        {
          account_partner_id: practiceAccountPartnerId(k.router_account_id),
          partner_id: 'practice',
          partner_name: 'Practice (ATLAS)',
          status: 'active',
          credential_status: 'connected',
          currency: 'ATLAS',
          balance: 1000,
          expected_balance: 1000,
          pending: 0,
          balance_as_of: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          is_stale: false,
          balance_source: 'svc_wallet',
          logo_url: logoOf('practice'),
        },
      ],
    });
  });

  it('a sim connect records the connection and its snapshot in PostgreSQL, with its event; totals are USD only', async () => {
    const k = await key();
    const t = advanceSim();
    const c = await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 250 });
    expect(c.status).toBe(200);
    expect(c.body.data).toEqual({ router_account_id: k.router_account_id, partner_id: 'sim_exchange', balance: 250, held: 0, credential_status: 'connected', scopes: ['balance:read', 'history:read', 'trade:execute'] });
    const r = await partners(k);
    const ex = venue(r.body, 'sim_exchange');
    expect(ex).toEqual({
      account_partner_id: expect.stringMatching(/^ap_/),
      partner_id: 'sim_exchange',
      partner_name: 'Sim Exchange',
      status: 'active',
      credential_status: 'connected',
      currency: 'USD',
      balance: 250,
      expected_balance: 250,
      pending: 0,
      balance_as_of: new Date(t).toISOString(),
      is_stale: false,
      balance_source: 'venue_api',
      logo_url: logoOf('sim_exchange'),
    });
    const stored = (await row(k.router_account_id, 'sim_exchange'))!;
    expect(stored).toMatchObject({ account_partner_id: ex.account_partner_id, balance: '250.000000', venue_held: '0.000000', balance_version: 1, balance_source: 'venue_api' });
    expect(await events(k.router_account_id)).toEqual([
      {
        type: 'balance.update',
        account_partner_id: ex.account_partner_id,
        partner_id: 'sim_exchange',
        currency: 'USD',
        balance: 250,
        venue_balance: 250,
        pending: 0,
        balance_version: 1,
        balance_as_of: new Date(t).toISOString(),
        cause: 'refresh',
        router_order_id: null,
        timestamp: expect.any(String),
      },
    ]);
    // A second venue; the practice wallet's 1,000 ATLAS is never added to the USD totals.
    advanceSim();
    expect((await connect(k.router_account_id, { partner_id: 'sim_book01', balance: 100.55 })).status).toBe(200);
    const both = await partners(k);
    expect(both.body.data.total_balance).toBe(350.55);
    expect(both.body.data.expected_total_balance).toBe(350.55);
    // Catalog order, the practice wallet last.
    expect(both.body.data.account_partners.map((p: any) => p.partner_id)).toEqual(['sim_exchange', 'sim_book01', 'practice']);
    expect(venue(both.body, 'practice').balance).toBe(1000);
  });

  it('connecting again updates the same connection: credential status, a new snapshot, the next version', async () => {
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_sportsbook', balance: 40 });
    const first = (await row(k.router_account_id, 'sim_sportsbook'))!;
    // Same venue time, another figure: the later reading lands (never an older one, below).
    expect((await connect(k.router_account_id, { partner_id: 'sim_sportsbook', balance: 41, credential_status: 'failed' })).status).toBe(200);
    const again = (await row(k.router_account_id, 'sim_sportsbook'))!;
    expect(again.account_partner_id).toBe(first.account_partner_id);
    expect(again).toMatchObject({ balance: '41.000000', balance_version: 2 });
    const p = venue((await partners(k)).body, 'sim_sportsbook');
    expect(p).toMatchObject({ credential_status: 'failed', balance: 41 });
    expect((await events(k.router_account_id)).map((e) => e.balance_version)).toEqual([1, 2]);
  });

  it('connect to an account that does not exist is 404 account_not_found, and neither the simulator nor PostgreSQL changes', async () => {
    const ghost = `acct_${randomUUID()}`;
    const r = await connect(ghost, { partner_id: 'sim_exchange', balance: 5 });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('account_not_found');
    expect(f.market.balance('sim_exchange', ghost)).toBeUndefined();
    expect((await pool().query('SELECT 1 FROM account_partners WHERE router_account_id = $1', [ghost])).rowCount).toBe(0);
  });
});

describe('expected balance', () => {
  it('is the snapshot plus the ledger rows after it, summed exactly in numeric; pending is their sum; a refresh moving balance_as_of past them folds them in', async () => {
    const k = await key();
    const t = advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 250 });
    const id = (await row(k.router_account_id, 'sim_exchange'))!.account_partner_id;
    const at = (ms: number) => new Date(t + ms).toISOString();
    // Before the snapshot: the venue's figure already reflects it, so it is not counted again.
    await ledger(id, 'hold', '-40.25', at(-1_000));
    // After: ten holds of 0.1 (a float sum would be 0.9999999999999999), a settlement, a release.
    for (let i = 0; i < 10; i++) await ledger(id, 'hold', '-0.1', at(500));
    await ledger(id, 'settlement', '12.345678', at(600));
    await ledger(id, 'release', '5', at(700));
    const r = await partners(k);
    const ex = venue(r.body, 'sim_exchange');
    expect(ex).toMatchObject({ balance: 250, expected_balance: 266.345678, pending: 16.345678 });
    expect(r.body.data.total_balance).toBe(250);
    expect(r.body.data.expected_total_balance).toBe(266.345678);
    // Holds only: negative pending.
    const k2 = await key();
    advanceSim();
    await connect(k2.router_account_id, { partner_id: 'sim_exchange', balance: 10 });
    const r2 = await row(k2.router_account_id, 'sim_exchange');
    for (let i = 0; i < 3; i++) await ledger(r2!.account_partner_id, 'hold', '-0.1', new Date(r2!.balance_as_of!.getTime() + 10).toISOString());
    expect(venue((await partners(k2)).body, 'sim_exchange')).toMatchObject({ balance: 10, expected_balance: 9.7, pending: -0.3 });

    // The venue's next reading is taken after every row above: they are in its figure now.
    advanceSim(2_000);
    const after = await refresh(k);
    expect(after.status).toBe(200);
    expect(venue(after.body, 'sim_exchange')).toMatchObject({ balance: 250, expected_balance: 250, pending: 0 });
    expect(after.body.data.expected_total_balance).toBe(250);
  });
});

describe('is_stale', () => {
  it('false for a fresh snapshot, true once older than the SLA, true when never taken; the practice wallet never', async () => {
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 20 });
    expect(venue((await partners(k)).body, 'sim_exchange').is_stale).toBe(false);
    const setAge = (ms: number) => pool().query("UPDATE account_partners SET balance_as_of = now() - make_interval(secs => $2::float8 / 1000) WHERE router_account_id = $1 AND partner_id = 'sim_exchange'", [k.router_account_id, ms]);
    await setAge(BALANCE_STALE_AFTER_MS - 5_000);
    expect(venue((await partners(k)).body, 'sim_exchange').is_stale).toBe(false);
    await setAge(BALANCE_STALE_AFTER_MS + 1_000);
    const stale = await partners(k);
    expect(venue(stale.body, 'sim_exchange')).toMatchObject({ is_stale: true, balance: 20 });
    expect(venue(stale.body, 'practice').is_stale).toBe(false);
    expect((await balances(k)).body.data.by_currency[0].partners[0].is_stale).toBe(true);
    // A refresh brings it back.
    advanceSim();
    expect(venue((await refresh(k)).body, 'sim_exchange').is_stale).toBe(false);

    // Linked, no snapshot yet: no figure, stale.
    await insertConnection(k.router_account_id, 'sim_book01', { credential_status: 'pending' });
    expect(venue((await partners(k)).body, 'sim_book01')).toMatchObject({ balance: null, expected_balance: null, pending: null, balance_as_of: null, is_stale: true, balance_source: 'venue_api', credential_status: 'pending' });
  });
});

describe('a venue that exposes no balance', () => {
  it('shows null balance, expected and pending, balance_source null; adds nothing to the totals; a refresh does not read it', async () => {
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 30 });
    // A stored figure and ledger rows exist, yet no honest figure does: nothing of it is shown.
    const id = await insertConnection(k.router_account_id, 'sim_quotes', { balance: '99', balance_as_of: new Date().toISOString(), balance_source: null });
    await ledger(id, 'hold', '-5', new Date(Date.now() + 60_000).toISOString());
    const r = await partners(k);
    expect(venue(r.body, 'sim_quotes')).toEqual({
      account_partner_id: id,
      partner_id: 'sim_quotes',
      partner_name: 'Sim Quotes',
      status: 'active',
      credential_status: 'connected',
      currency: 'USD',
      balance: null,
      expected_balance: null,
      pending: null,
      balance_as_of: expect.any(String),
      is_stale: false,
      balance_source: null,
      logo_url: logoOf('sim_quotes'),
    });
    expect(r.body.data.total_balance).toBe(30);
    expect(r.body.data.expected_total_balance).toBe(30);
    const b = await balances(k);
    expect(b.body.data.by_currency[0].partners.find((p: any) => p.partner_id === 'sim_quotes')).toEqual({
      partner_id: 'sim_quotes',
      partner_name: 'Sim Quotes',
      balance: null,
      expected_balance: null,
      pending: null,
      is_stale: false,
      internal_book: false,
    });
    advanceSim();
    const u = await refresh(k);
    expect(u.body.data.refreshed_partner_ids).toEqual(['sim_exchange']);
    expect(f.refresher.partnerIds).not.toContain('sim_quotes');
    expect(f.refresher.partnerIds).not.toContain('practice');
  });
});

describe('POST partners/balance/update', () => {
  it('re-reads connected venues through their adapters: each landing updates the snapshot, bumps balance_version and writes its event', async () => {
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 100 });
    // The venue's balance moves on its side (the service learns it only by reading).
    f.market.connectAccount(k.router_account_id, { partner_id: 'sim_exchange', balance: 175.5 });
    expect(venue((await partners(k)).body, 'sim_exchange').balance).toBe(100);
    const t2 = advanceSim();
    const r = await refresh(k);
    expect(r.status).toBe(200);
    expect(r.body.data.refreshed_partner_ids).toEqual(['sim_exchange']);
    expect(r.body.data.router_account_id).toBe(k.router_account_id);
    expect(r.body.data.total_balance).toBe(175.5);
    expect(venue(r.body, 'sim_exchange')).toMatchObject({ balance: 175.5, expected_balance: 175.5, balance_as_of: new Date(t2).toISOString() });
    expect(venue(r.body, 'practice').balance).toBe(1000);
    expect((await row(k.router_account_id, 'sim_exchange'))!.balance_version).toBe(2);

    // The same reading again (the venue's clock did not move, nothing changed): read, nothing lands.
    const same = await refresh(k);
    expect(same.body.data.refreshed_partner_ids).toEqual(['sim_exchange']);
    expect((await row(k.router_account_id, 'sim_exchange'))!.balance_version).toBe(2);
    // A newer reading lands even with the same figure (balance_as_of moves on).
    advanceSim();
    await refresh(k);
    expect((await row(k.router_account_id, 'sim_exchange'))!.balance_version).toBe(3);

    const ev = await events(k.router_account_id);
    expect(ev.map((e) => e.balance_version)).toEqual([1, 2, 3]);
    expect(ev.every((e) => e.cause === 'refresh' && e.type === 'balance.update' && e.partner_id === 'sim_exchange')).toBe(true);
    expect(ev.map((e) => e.venue_balance)).toEqual([100, 175.5, 175.5]);
    expect(ev[1].balance_as_of).toBe(new Date(t2).toISOString());
  });

  it('leaves out connections not validated, failed, or unknown to the venue, and touches no credential status', async () => {
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 1 });
    await connect(k.router_account_id, { partner_id: 'sim_book01', balance: 2, credential_status: 'pending' });
    await connect(k.router_account_id, { partner_id: 'sim_sportsbook', balance: 3, credential_status: 'failed' });
    // Recorded, but the venue has never heard of the account: its read fails, the call does not.
    await insertConnection(k.router_account_id, 'sim_p2p', { balance: '4', balance_as_of: new Date().toISOString() });
    advanceSim();
    const r = await refresh(k);
    expect(r.status).toBe(200);
    expect(r.body.data.refreshed_partner_ids).toEqual(['sim_exchange']);
    expect(r.body.data.account_partners.map((p: any) => [p.partner_id, p.credential_status])).toEqual([
      ['sim_exchange', 'connected'],
      ['sim_book01', 'pending'],
      ['sim_sportsbook', 'failed'],
      ['sim_p2p', 'connected'],
      ['practice', 'connected'],
    ]);
    expect(r.body.data.total_balance).toBe(10);
  });

  it('a venue that hangs or reports an impossible figure is left out, logged, and the others still land', async () => {
    class Hanging extends SimVenueAdapter {
      override fetchBalance(): Promise<VenueBalance> {
        return new Promise(() => undefined);
      }
    }
    class Impossible extends SimVenueAdapter {
      override async fetchBalance(accountId: string): Promise<VenueBalance> {
        return { ...(await super.fetchBalance(accountId)), balance: Number.NaN };
      }
    }
    const adapters = [new Hanging(f.market, 'sim_exchange'), new Impossible(f.market, 'sim_book01'), new SimVenueAdapter(f.market, 'sim_sportsbook')];
    for (const a of adapters) await a.connect();
    const lines: any[] = [];
    const log = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const refresher = new BalanceRefresher({ pool: pool(), adapters, log, now: () => Date.now(), readTimeoutMs: 100 });
    const k = await key();
    advanceSim();
    for (const partner_id of ['sim_exchange', 'sim_book01', 'sim_sportsbook']) await connect(k.router_account_id, { partner_id, balance: 5 });
    advanceSim();
    const started = Date.now();
    expect(await refresher.refreshAccount(k.router_account_id)).toEqual(['sim_sportsbook']);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lines.find((l) => l.router_account_id === k.router_account_id)).toMatchObject({ failed: { sim_exchange: { timeout: 1 }, sim_book01: { invalid_balance: 1 } } });
    expect((await row(k.router_account_id, 'sim_exchange'))!.balance_version).toBe(1);
    expect((await row(k.router_account_id, 'sim_book01'))!.balance_version).toBe(1);
    expect((await row(k.router_account_id, 'sim_sportsbook'))!.balance_version).toBe(2);
    for (const a of adapters) await a.close();
  });

  it('never takes a snapshot back to an older ts_event', async () => {
    const k = await key();
    const t = advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 80 });
    const id = (await row(k.router_account_id, 'sim_exchange'))!.account_partner_id;
    // A slow read that started before the connect answers after it.
    expect(await recordSnapshot(pool(), id, { balance: 5, held: 0, ts_event: t - 1 }, Date.now())).toBeNull();
    expect(await row(k.router_account_id, 'sim_exchange')).toMatchObject({ balance: '80.000000', balance_version: 1 });
    // The same instant and the same figures: a copy, nothing lands.
    expect(await recordSnapshot(pool(), id, { balance: 80, held: 0, ts_event: t }, Date.now())).toBeNull();
    // Newer: lands, with its held figure.
    const landed = await recordSnapshot(pool(), id, { balance: 70, held: 10, ts_event: t + 1 }, Date.now());
    expect(landed).toMatchObject({ balance_version: 2, venue_balance: 70, balance: 70, pending: 0 });
    expect(await row(k.router_account_id, 'sim_exchange')).toMatchObject({ balance: '70.000000', venue_held: '10.000000', balance_version: 2 });
    expect((await events(k.router_account_id)).map((e) => e.balance_version)).toEqual([1, 2]);
  });

  it('concurrent readings in any order: the newest wins, versions and snapshot times only go up, one event per landing', async () => {
    const k = await key();
    const t = advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 1 });
    const id = (await row(k.router_account_id, 'sim_exchange'))!.account_partner_id;
    // Twenty readings 1..20 ms after the connect, arriving shuffled and at once.
    const readings = Array.from({ length: 20 }, (_, i) => ({ balance: 100 + i, held: 0, ts_event: t + 1 + i })).sort(() => Math.random() - 0.5);
    const landed = (await Promise.all(readings.map((r) => recordSnapshot(pool(), id, r, Date.now())))).filter((e) => e !== null);
    const ev = await events(k.router_account_id);
    expect(ev).toHaveLength(1 + landed.length);
    expect(ev.map((e) => e.balance_version)).toEqual(ev.map((_, i) => i + 1));
    const times = ev.map((e) => Date.parse(e.balance_as_of));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(times.length);
    expect(await row(k.router_account_id, 'sim_exchange')).toMatchObject({ balance: '119.000000', balance_version: ev.length });
  });

  it('the body is strict: an unknown field is 400 unknown_parameter; a non-object is 400', async () => {
    const k = await key();
    const r = await refresh(k, { partner_id: 'sim_exchange' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('unknown_parameter');
    const bad = await refresh(k, '[]');
    expect(bad.status).toBe(400);
  });
});

describe('GET balances', () => {
  it('one bucket per currency: USD (real) holds the venues, ATLAS (practice) the wallet, never summed together', async () => {
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 120.1 });
    await connect(k.router_account_id, { partner_id: 'sim_book01', balance: 0.2 });
    const ex = (await row(k.router_account_id, 'sim_exchange'))!;
    await ledger(ex.account_partner_id, 'hold', '-20.05', new Date(ex.balance_as_of!.getTime() + 10).toISOString());
    const dep = await send(app(), 'POST', '/flow/v1/auth/account/paper/deposit', { amount: 250.25 }, H(k, { 'idempotency-key': randomUUID() }));
    expect(dep.status).toBe(201);
    const r = await balances(k);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      router_account_id: k.router_account_id,
      by_currency: [
        {
          currency: 'USD',
          is_real_money: true,
          symbol: '$',
          label: 'US dollars',
          total: 120.3,
          expected_total: 100.25,
          partners: [
            { partner_id: 'sim_exchange', partner_name: 'Sim Exchange', balance: 120.1, expected_balance: 100.05, pending: -20.05, is_stale: false, internal_book: false },
            { partner_id: 'sim_book01', partner_name: 'Sim Book01', balance: 0.2, expected_balance: 0.2, pending: 0, is_stale: false, internal_book: false },
          ],
        },
        {
          currency: 'ATLAS',
          is_real_money: false,
          symbol: 'ATLAS',
          label: 'Practice money (ATLAS)',
          total: 1250.25,
          expected_total: 1250.25,
          partners: [{ partner_id: 'practice', partner_name: 'Practice (ATLAS)', balance: 1250.25, expected_balance: 1250.25, pending: 0, is_stale: false, internal_book: true }],
        },
      ],
      real_money_total: 120.3,
      real_money_expected_total: 100.25,
      atlas_balance: 1250.25,
    });
    // The partners read agrees, and neither read blends the currencies.
    const p = await partners(k);
    expect(p.body.data.total_balance).toBe(120.3);
    expect(p.body.data.expected_total_balance).toBe(100.25);
    expect(venue(p.body, 'practice')).toMatchObject({ currency: 'ATLAS', balance: 1250.25 });
  });
});

describe('access', () => {
  const routes = (k: Key | string, extra: Record<string, string> = {}) => Promise.all([partners(k, extra), balances(k, extra), refresh(k, {}, extra)]);

  it('each account sees only its own connections; the refresh reads only its own', async () => {
    const a = await key();
    const b = await key();
    advanceSim();
    await connect(a.router_account_id, { partner_id: 'sim_exchange', balance: 500 });
    await connect(b.router_account_id, { partner_id: 'sim_book01', balance: 7 });
    for (const r of await routes(b)) {
      expect(r.status).toBe(200);
      expect(r.body.data.router_account_id).toBe(b.router_account_id);
    }
    const [pb, bb, ub] = await routes(b);
    expect(pb!.body.data.account_partners.map((p: any) => p.partner_id)).toEqual(['sim_book01', 'practice']);
    expect(pb!.body.data.total_balance).toBe(7);
    expect(bb!.body.data.by_currency[0].partners.map((p: any) => p.partner_id)).toEqual(['sim_book01']);
    expect(ub!.body.data.refreshed_partner_ids).toEqual(['sim_book01']);
    expect((await row(a.router_account_id, 'sim_exchange'))!.balance_version).toBe(1);
    expect(await events(b.router_account_id)).not.toContainEqual(expect.objectContaining({ partner_id: 'sim_exchange' }));
  });

  it('X-Service-Account from a key that is not an organization’s is 403 account_forbidden on every route', async () => {
    const a = await key();
    const b = await key();
    advanceSim();
    await connect(a.router_account_id, { partner_id: 'sim_exchange', balance: 500 });
    for (const r of await routes(b, { 'x-service-account': a.router_account_id })) {
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('account_forbidden');
    }
    expect((await row(a.router_account_id, 'sim_exchange'))!.balance_version).toBe(1);
  });

  it('an organization key acts for its own sub-account with X-Service-Account, never for another workspace’s', async () => {
    const org = await key({ plan: 'organization' });
    const outsider = await key();
    const sub = newId('acct');
    await pool().query("INSERT INTO accounts (router_account_id, workspace_id, environment, external_user_id) VALUES ($1, $2, 'test', 'user-9')", [sub, org.workspace_id]);
    advanceSim();
    await connect(sub, { partner_id: 'sim_exchange', balance: 64 });
    await connect(org.router_account_id, { partner_id: 'sim_book01', balance: 1 });
    for (const r of await routes(org, { 'x-service-account': 'user-9' })) {
      expect(r.status).toBe(200);
      expect(r.body.data.router_account_id).toBe(sub);
    }
    const p = await partners(org, { 'x-service-account': sub });
    expect(p.body.data.account_partners.map((x: any) => x.partner_id)).toEqual(['sim_exchange', 'practice']);
    expect(p.body.data.total_balance).toBe(64);
    for (const r of await routes(org, { 'x-service-account': outsider.router_account_id })) {
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('account_forbidden');
    }
  });

  it('a key without account:read is 403 entitlement_required on every route; a player JWT reads its own account', async () => {
    // Every plan grants account:read; a key stored without it (an operator's narrowing) is refused.
    const narrow = await key();
    await pool().query("UPDATE api_keys SET entitlements = ARRAY['reference:read', 'markets:read'] WHERE key_id = $1", [narrow.key_id]);
    for (const r of await routes(narrow)) {
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('entitlement_required');
    }
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 3 });
    const jwt = signPlayerJwt(f.stack.rt.config.jwtSecret, k.router_account_id, 600);
    for (const r of await routes(jwt)) {
      expect(r.status).toBe(200);
      expect(r.body.data.router_account_id).toBe(k.router_account_id);
    }
  });
});

describe('the scheduled refresh', () => {
  it('claims a bounded batch of due connections, tried longest ago first, split between concurrent rounds, each re-read once per period', async () => {
    // Everything the other tests connected counts as just tried: only this test's connections are due.
    await pool().query('UPDATE account_partners SET balance_checked_at = now()');
    const accounts = await Promise.all(Array.from({ length: 5 }, () => key()));
    advanceSim();
    for (const k of accounts) await connect(k.router_account_id, { partner_id: 'sim_exchange', balance: 10 });
    advanceSim();
    const [r1, r2] = await Promise.all([f.refresher.refreshDue(2), f.refresher.refreshDue(2)]);
    const ids = [...r1!.read, ...r2!.read].map((t) => t.account_partner_id);
    expect(r1!.read).toHaveLength(2);
    expect(r2!.read).toHaveLength(2);
    expect(new Set(ids).size).toBe(4);
    expect(r1!.landed + r2!.landed).toBe(4);
    const r3 = await f.refresher.refreshDue(10);
    expect(r3.read).toHaveLength(1);
    expect(ids).not.toContain(r3.read[0]!.account_partner_id);
    // All five were tried within the period: nothing is due until it passes.
    expect((await f.refresher.refreshDue(10)).read).toHaveLength(0);
    // Once the period has passed for them (here: a period of 0), every one is due again.
    advanceSim();
    const again = await f.refresher.refreshDue(100, 0);
    const mine = new Set(accounts.map((k) => k.router_account_id));
    expect(again.read.filter((t) => mine.has(t.router_account_id))).toHaveLength(5);
    for (const k of accounts) expect((await events(k.router_account_id)).map((e) => e.balance_version)).toEqual([1, 2, 3]);
  });

  it('the scheduler runs rounds on its timer, never two at once, and logs each round', async () => {
    await pool().query('UPDATE account_partners SET balance_checked_at = now()');
    const k = await key();
    advanceSim();
    await connect(k.router_account_id, { partner_id: 'sim_book01', balance: 9 });
    f.market.connectAccount(k.router_account_id, { partner_id: 'sim_book01', balance: 19 });
    advanceSim();
    const lines: any[] = [];
    const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const s = new BalanceScheduler(f.refresher, log, { tickMs: 60_000, batch: 50 });
    const [a, b] = [s.tick(), s.tick()];
    expect(a).toBe(b);
    await a;
    expect(s.rounds).toBe(1);
    expect((await row(k.router_account_id, 'sim_book01'))!.balance).toBe('19.000000');
    expect(lines.find((l) => l.msg === 'balance refresh round')).toMatchObject({ task: 'balance_refresh', claimed: 1, read: 1, landed: 1, failed: {}, full: false });
    await s.stop();
  });
});
