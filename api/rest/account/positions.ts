/**
 * Account positions and the history ledger (spec "Account positions and history";
 * docs/performance.md "Positions and history"), rolled up in PostgreSQL (src/store/pg/positions.ts).
 * Own-account reads: account:read, exempt from the day budget, and an organization acts for its user
 * with X-Service-Account, as on /auth/orders.
 *
 * readPositions and readHistory are the reads whole (a page's data and pagination), so another
 * surface serving the same list (an MCP tool) calls them rather than a second copy.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Pagination } from '../../../src/domain/envelope.js';
import { badRequest } from '../../../src/errors.js';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, POSITION_STATUSES, type AccountPositions, type HistoryRecord as HistoryRecordT } from '../../../src/domain/positions.js';
import { listHistory, listPositions, type PositionCursor } from '../../../src/store/pg/positions.js';
import type { AppContext } from '../context.js';
import { OkPage } from '../openapi/responses.js';
import { page } from '../paging.js';
import { sendEnvelope } from '../reply.js';
import { Cursor, Id, Limit } from '../schemas.js';
import { ACCOUNT_READ, actingAccount, actingAccountOf } from './acting.js';
import { toolInput, toolsOf, twin } from '../tools.js';
import { AccountPositionsPage, HistoryRecord } from './attribution-shapes.js';
import { readErrors } from './shapes.js';

export const PositionsQuery = Type.Object({
  status: Type.Optional(Type.Enum([...POSITION_STATUSES], { description: 'open (some order still unsettled) or settled' })),
  partner_id: Type.Optional({ ...Id, description: 'one venue (practice: the ATLAS positions)' }),
  history: Type.Optional(Type.Enum(['1', '0', 'true', 'false'], { description: '1: source history, the venues’ ledger of the account; default: source orders' })),
  cursor: Type.Optional(Cursor),
  limit: Limit(),
});
export type PositionsQueryT = Static<typeof PositionsQuery>;

export const HistoryQuery = Type.Object({
  partner_id: Type.Optional({ ...Id, description: 'one venue' }),
  cursor: Type.Optional(Cursor),
  limit: Limit(HISTORY_MAX_LIMIT, HISTORY_DEFAULT_LIMIT),
});
export type HistoryQueryT = Static<typeof HistoryQuery>;

const cursorOf = (p: unknown[]): PositionCursor | null =>
  p.length === 4 && p.every((x) => typeof x === 'string') ? (p as PositionCursor) : null;

/** A page of the account's positions. */
export async function readPositions(ctx: AppContext, account: string, q: PositionsQueryT): Promise<{ data: AccountPositions; pagination: Pagination }> {
  const source = q.history === '1' || q.history === 'true' ? 'history' : 'orders';
  // Bound to the account, the source and the filters: another list's cursor is refused, never misapplied.
  const scope = `positions|${account}|${source}|${q.status ?? ''}|${q.partner_id ?? ''}`;
  let after: PositionCursor | undefined;
  if (q.cursor) {
    const decoded = cursorOf(ctx.cursors.decode(scope, q.cursor));
    // A signed cursor of this scope is ours; the check keeps a cursor of an older shape out of SQL.
    if (!decoded) throw badRequest('invalid_cursor', 'cursor is invalid or belongs to another list; pass next_cursor back verbatim with the same filters');
    after = decoded;
  }
  const rows = await listPositions(ctx.pool, account, { source, status: q.status, partnerId: q.partner_id, after, limit: q.limit + 1 });
  const { items, pagination } = page(rows, q.limit, (r) => ctx.cursors.encode(scope, r.cursor));
  return { data: { source, positions: items.map((r) => r.position) }, pagination };
}

/** A page of the account's history ledger, newest first. */
export async function readHistory(ctx: AppContext, account: string, q: HistoryQueryT): Promise<{ data: HistoryRecordT[]; pagination: Pagination }> {
  const scope = `history|${account}|${q.partner_id ?? ''}`;
  const after = q.cursor ? String(ctx.cursors.decode(scope, q.cursor)[0]) : undefined;
  const rows = await listHistory(ctx.pool, account, { partnerId: q.partner_id, after, limit: q.limit + 1 });
  const { items, pagination } = page(rows, q.limit, (r) => ctx.cursors.encode(scope, [r.router_order_id]));
  return { data: items, pagination };
}

export function positionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const now = () => ctx.clock.now();

  app.get<{ Querystring: PositionsQueryT }>(
    '/flow/v1/auth/account/positions',
    {
      schema: {
        querystring: PositionsQuery,
        tags: ['account'],
        summary: 'The account’s positions: one row per venue, market and side, newest opened first',
        description:
          'cost_basis, payout and net_pnl per position (payout and net_pnl null while open). source orders (default): the orders placed through the buy endpoint, practice and real money. source history (history=1): the venues’ ledger of the account; no venue of this build reports its own history, so it holds the real-money orders placed through this service.',
        operationId: 'listAccountPositions',
        response: { 200: AccountPositionsPage, ...readErrors() },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const { data, pagination } = await readPositions(ctx, account, req.query);
      return sendEnvelope(reply, now(), data, { pagination });
    },
  );

  app.get<{ Querystring: HistoryQueryT }>(
    '/flow/v1/auth/account/history',
    {
      schema: {
        querystring: HistoryQuery,
        tags: ['account'],
        summary: 'The account’s venue-history ledger, newest first',
        description: 'One record per bet at a venue (the connect-history record fields). No venue of this build reports its own history: the records are the real-money orders placed through this service (placed_via_openmarkets true).',
        operationId: 'listAccountHistory',
        response: { 200: OkPage(HistoryRecord, 'A page of history records'), ...readErrors() },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const { data, pagination } = await readHistory(ctx, account, req.query);
      return sendEnvelope(reply, now(), data, { pagination });
    },
  );

  const tools = toolsOf(app);
  tools.add({
    name: 'list_account_positions',
    description:
      'The key’s account’s positions, one row per venue, market and side, with cost_basis, payout and net_pnl (null while open); filter by status (open, settled) and partner_id; history=1 reads the venues’ own history instead of the orders placed here; a page.',
    rest: 'GET /flow/v1/auth/account/positions',
    ...twin(ACCOUNT_READ),
    metered: true,
    input: toolInput({}, PositionsQuery),
    call: async (a, caller) => readPositions(ctx, await actingAccountOf(caller.principal, caller.serviceAccount, ctx.pool), a as PositionsQueryT),
  });
  tools.add({
    name: 'list_account_history',
    description: 'The key’s account’s venue-history ledger (one record per bet at a venue), newest first, optionally of one venue; a page.',
    rest: 'GET /flow/v1/auth/account/history',
    ...twin(ACCOUNT_READ),
    metered: true,
    input: toolInput({}, HistoryQuery),
    call: async (a, caller) => readHistory(ctx, await actingAccountOf(caller.principal, caller.serviceAccount, ctx.pool), a as HistoryQueryT),
  });
}
