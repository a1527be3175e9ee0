/**
 * Reading orders (spec "Orders: read and cancel"; docs/orders.md "Reads"): the list, the working
 * (resting) orders, one order's resolution (the cancel is ./cancel.ts). An order that is missing and
 * one that is another account's answer the same 404 not_found.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { ORDER_RESULTS, ORDER_STATUSES, resolutionOf } from '../../../src/domain/router-orders.js';
import { ApiError } from '../../../src/errors.js';
import { getOrder, listOrders, restingOrders } from '../../../src/store/pg/orders.js';
import type { AppContext } from '../context.js';
import { ACCOUNT_READ, actingAccount } from '../account/acting.js';
import { readErrors } from '../account/shapes.js';
import { Ok, OkPage } from '../openapi/responses.js';
import { page } from '../paging.js';
import { sendEnvelope } from '../reply.js';
import { CommaList, Cursor, Id, IsoTime, Limit, splitList } from '../schemas.js';
import { OrderResolution, RestingOrders, RouterOrder } from './shapes.js';

export const orderNotFound = (routerOrderId: string) =>
  new ApiError(404, 'not_found', `no order ${JSON.stringify(routerOrderId)} on this account`, { router_order_id: routerOrderId });

const ListQuery = Type.Object({
  status: Type.Optional(Type.Enum([...ORDER_STATUSES], { description: 'pending, open (working or awaiting settlement) or closed' })),
  contest_id: Type.Optional({ ...CommaList(), description: 'comma-separated contest ids' }),
  settled: Type.Optional(Type.Boolean({ description: 'true: settled orders only; false: unsettled only' })),
  result: Type.Optional(Type.Enum([...ORDER_RESULTS])),
  currency: Type.Optional(Type.Enum(['USD', 'ATLAS'])),
  mm: Type.Optional(Type.Boolean({ description: 'true: market-making orders only (this build places none, so the list is empty); false or absent: every order' })),
  model_id: Type.Optional(Id),
  opportunity_type: Type.Optional({ ...Id, description: 'accepted; opportunities carry no type in this build, so it narrows nothing' }),
  sort: Type.Optional(Type.Literal('settled', { description: 'settled: newest settlement first, settled orders only; default: newest created first' })),
  from: Type.Optional(IsoTime('inclusive lower bound on the sort column (creation time, or settlement time with sort=settled)')),
  to: Type.Optional(IsoTime('inclusive upper bound on the sort column')),
  settled_after: Type.Optional(IsoTime('settled at or after (whatever the sort)')),
  settled_before: Type.Optional(IsoTime('settled at or before (whatever the sort)')),
  cursor: Type.Optional(Cursor),
  limit: Limit(),
});
type ListQueryT = Static<typeof ListQuery>;

const OrderParams = Type.Object({ router_order_id: Id });

export function orderReadRoutes(app: FastifyInstance, ctx: AppContext): void {
  const now = () => ctx.clock.now();

  app.get<{ Querystring: ListQueryT }>(
    '/flow/v1/auth/orders',
    {
      schema: {
        querystring: ListQuery,
        tags: ['orders'],
        summary: 'The account’s orders, newest first',
        operationId: 'listOrders',
        response: { 200: OkPage(RouterOrder, 'A page of orders'), ...readErrors() },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const { cursor, limit, ...filters } = req.query;
      // Bound to the account and every filter: another list's cursor is refused, never misapplied.
      const scope = `orders|${account}|${JSON.stringify(Object.entries(filters).sort())}`;
      const after = cursor ? String(ctx.cursors.decode(scope, cursor)[0]) : undefined;
      // No order of this build is a market-making order.
      const rows =
        filters.mm === true
          ? []
          : await listOrders(ctx.pool, account, {
              status: filters.status,
              contestIds: splitList('contest_id', filters.contest_id),
              settled: filters.settled,
              result: filters.result,
              currency: filters.currency,
              modelId: filters.model_id,
              sort: filters.sort === 'settled' ? 'settled' : 'created',
              from: filters.from,
              to: filters.to,
              settledAfter: filters.settled_after,
              settledBefore: filters.settled_before,
              after,
              limit: limit + 1,
            });
      const { items, pagination } = page(rows, limit, (o) => ctx.cursors.encode(scope, [o.router_order_id]));
      return sendEnvelope(reply, now(), items, { pagination });
    },
  );

  app.get(
    '/flow/v1/auth/orders/resting/me',
    {
      schema: {
        tags: ['orders'],
        summary: 'The account’s working (unfilled or partially filled) orders',
        description: 'Real limit orders resting on their venue, unfilled or partially filled; a filled or cancelled order drops off. Practice orders never rest (they fill at once or not at all).',
        operationId: 'listRestingOrders',
        response: { 200: Ok(RestingOrders, 'The working orders, newest first'), ...readErrors() },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      return sendEnvelope(reply, now(), { orders: await restingOrders(ctx.pool, account) });
    },
  );

  app.get<{ Params: Static<typeof OrderParams> }>(
    '/flow/v1/auth/orders/:router_order_id/resolution',
    {
      schema: {
        params: OrderParams,
        tags: ['orders'],
        summary: 'How one order resolved (or that it has not yet)',
        operationId: 'getOrderResolution',
        response: { 200: Ok(OrderResolution, 'The order’s resolution'), ...readErrors({ 404: ['not_found'] }) },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const order = await getOrder(ctx.pool, account, req.params.router_order_id);
      if (!order) throw orderNotFound(req.params.router_order_id);
      return sendEnvelope(reply, now(), resolutionOf(order));
    },
  );
}
