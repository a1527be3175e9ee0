/**
 * Venues and balances (spec "Venues and balances", docs/balances.md): the account's venue
 * connections with their snapshot, expected and pending balances, the per-currency view, and the
 * refresh call. Reads come from PostgreSQL alone; the refresh needs the venue adapters, so it is a
 * route plugin mounted where a refresher runs (cli/roles/start.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { FUNDING, type AccountPartner, type Funding } from '../../../src/domain/account.js';
import type { Pool } from '../../../src/store/pg/pool.js';
import { practiceConnection, venueConnections } from '../../../src/store/pg/partners.js';
import type { AppContext } from '../context.js';
import { Ok } from '../openapi/responses.js';
import { sendEnvelope } from '../reply.js';
import { actingAccount, actingAccountOf } from './acting.js';
import { toolInput, toolsOf, twin } from '../tools.js';
import { AccountBalances, AccountPartners, readErrors, RefreshedAccountPartners } from './shapes.js';

const READ = { entitlements: ['account:read'], dayExempt: true };
// A refresh moves no money, so account:read; it costs venue calls, so it counts against the day budget.
const REFRESH = { entitlements: ['account:read'] };

/** Re-reads an account's connected venue balances; the partner ids it read. */
export interface BalanceRefresh {
  refreshAccount(routerAccountId: string): Promise<string[]>;
}

/** Account partner as served (internal_book belongs to the balances view). */
const served = ({ internal_book: _internal, ...p }: AccountPartner) => p;

async function partnersOf(pool: Pool, account: string, nowMs: number) {
  const venues = await venueConnections(pool, account, nowMs);
  const practice = await practiceConnection(pool, account);
  return { venues, practice };
}

async function partnersEnvelope(pool: Pool, account: string, nowMs: number) {
  const { venues, practice } = await partnersOf(pool, account, nowMs);
  return {
    router_account_id: account,
    // USD only: ATLAS is play money and is never summed with it (the practice row carries its own).
    total_balance: venues.usd_total,
    account_partners: [...venues.connections, practice].map(served),
    expected_total_balance: venues.usd_expected_total,
  };
}

export function partnerRoutes(app: FastifyInstance, ctx: AppContext): void {
  const now = () => ctx.clock.now();

  app.get(
    '/flow/v1/auth/account/partners',
    {
      schema: { tags: ['account'], summary: 'The account’s venue connections and their balances', operationId: 'getAccountPartners', response: { 200: Ok(AccountPartners, 'The connections, the practice wallet last'), ...readErrors() } },
      config: READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      return sendEnvelope(reply, now(), await partnersEnvelope(ctx.pool, account, now()));
    },
  );

  app.get(
    '/flow/v1/auth/account/balances',
    { schema: { tags: ['account'], summary: 'Balances per currency (USD and ATLAS never summed)', operationId: 'getAccountBalances', response: { 200: Ok(AccountBalances, 'The balances'), ...readErrors() } }, config: READ },
    async (req, reply) => sendEnvelope(reply, now(), await readBalances(ctx.pool, await actingAccount(req, ctx.pool), now())),
  );

  toolsOf(app).add({
    name: 'get_account_balances',
    description: 'The key’s account balances per currency: USD (real money) and ATLAS (practice) buckets, never summed, with each venue’s balance, expected balance and staleness.',
    rest: 'GET /flow/v1/auth/account/balances',
    ...twin(READ),
    metered: true,
    input: toolInput({}),
    call: async (_a, caller) => ({ data: await readBalances(ctx.pool, await actingAccountOf(caller.principal, caller.serviceAccount, ctx.pool), now()) }),
  });
}

/** The account's balances per currency (GET /auth/account/balances's data). */
export async function readBalances(pool: Pool, account: string, nowMs: number) {
  const { venues, practice } = await partnersOf(pool, account, nowMs);
  const row = (p: AccountPartner) => ({
    partner_id: p.partner_id,
    partner_name: p.partner_name,
    balance: p.balance,
    expected_balance: p.expected_balance,
    pending: p.pending,
    is_stale: p.is_stale,
    internal_book: p.internal_book,
  });
  const bucket = (f: Funding, total: number, expected: number, partners: AccountPartner[]) => ({
    currency: f.currency,
    is_real_money: f.is_real_money,
    symbol: f.symbol,
    label: f.label,
    total,
    expected_total: expected,
    partners: partners.map(row),
  });
  const atlas = practice.balance!;
  return {
    router_account_id: account,
    by_currency: [bucket(FUNDING.USD, venues.usd_total, venues.usd_expected_total, venues.connections), bucket(FUNDING.ATLAS, atlas, atlas, [practice])],
    real_money_total: venues.usd_total,
    real_money_expected_total: venues.usd_expected_total,
    atlas_balance: atlas,
  };
}

/** POST partners/balance/update, answered by `refresher` (the process must hold the venue adapters). */
export function balanceRefreshRoutes(refresher: BalanceRefresh) {
  return (app: FastifyInstance, ctx: AppContext): void => {
    const Body = Type.Object({}, { additionalProperties: false });
    app.post(
      '/flow/v1/auth/account/partners/balance/update',
      {
        schema: {
          body: Body,
          tags: ['account'],
          summary: 'Re-read the balances of the account’s connected venues (touches no credentials)',
          operationId: 'refreshAccountBalances',
          response: { 200: Ok(RefreshedAccountPartners, 'The connections after the refresh, and the venues read'), ...readErrors() },
        },
        config: REFRESH,
      },
      async (req, reply) => {
        const account = await actingAccount(req, ctx.pool);
        const refreshed = await refresher.refreshAccount(account);
        const at = ctx.clock.now();
        return sendEnvelope(reply, at, { ...(await partnersEnvelope(ctx.pool, account, at)), refreshed_partner_ids: refreshed });
      },
    );
  };
}
