/**
 * Reading and cancelling orders (spec "Orders: read and cancel"; docs/orders.md "Reads"): the list,
 * the working (resting) orders, one order's resolution, and the cancel of a resting order. An
 * order that is missing and one that is another account's answer the same 404 not_found.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { ORDER_RESULTS, ORDER_STATUSES, orderUpdateEvent, resolutionOf } from '../../../src/domain/router-orders.js';
import { ApiError } from '../../../src/errors.js';
import { cancelResting, getOrder, listOrders, restingOrders } from '../../../src/store/pg/orders.js';
import { enqueueAccountEvent } from '../../../src/store/pg/outbox.js';
import { inTransaction } from '../../../src/store/pg/pool.js';
import type { AppContext } from '../context.js';
import { ACCOUNT_READ, ACCOUNT_WRITE, actingAccount } from '../account/acting.js';
import { readErrors, writeErrors } from '../account/shapes.js';
import { Ok, OkPage } from '../openapi/responses.js';
import { page } from '../paging.js';
import { sendEnvelope } from '../reply.js';
import { CommaList, Cursor, Id, IsoTime, Limit, splitList } from '../schemas.js';
import { CancelResult, OrderResolution, RestingOrders, RouterOrder } from './shapes.js';

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
const CancelBody = Type.Object({ router_order_id: Id }, { additionalProperties: false });

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
        description: 'Practice orders never rest (they fill at once or not at all): empty until real limit orders exist.',
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

  app.post<{ Body: Static<typeof CancelBody> }>(
    '/flow/v1/auth/orders/cancel',
    {
      schema: {
        body: CancelBody,
        tags: ['orders'],
        summary: 'Cancel a resting order',
        description: 'Only a resting order can be cancelled (409 order_not_resting otherwise); practice orders never rest. An order working at a venue answers 409 venue_cancel_unavailable in this build (the venue-side cancel is not built yet). No Idempotency-Key: repeating a cancel changes nothing (the order is no longer resting: 409).',
        operationId: 'cancelOrder',
        response: { 200: Ok(CancelResult, 'The order is cancelled; its unfilled remainder will never fill'), ...writeErrors({ 404: ['not_found'], 409: ['order_not_resting', 'venue_cancel_unavailable'] }, { idempotencyKey: false }) },
      },
      config: ACCOUNT_WRITE,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const id = req.body.router_order_id;
      const at = now();
      const r = await inTransaction(ctx.pool, async (client) => {
        const c = await cancelResting(client, account, id);
        if (c.outcome === 'cancelled') await enqueueAccountEvent(client, account, 'orders', orderUpdateEvent(c.order, new Date(at).toISOString()));
        return c;
      });
      if (r.outcome !== 'cancelled') {
        if (r.outcome === 'not_found') throw orderNotFound(id);
        if (r.outcome === 'venue_cancel_unavailable') {
          throw new ApiError(409, 'venue_cancel_unavailable', `order ${JSON.stringify(id)} is working at its venue, and cancelling at the venue is not in this build yet: the order keeps working and can still fill`, { router_order_id: id });
        }
        throw new ApiError(409, 'order_not_resting', `order ${JSON.stringify(id)} is not resting: only a working (resting) order can be cancelled`, { router_order_id: id });
      }
      return sendEnvelope(reply, at, { router_order_id: r.order.router_order_id, status: 'cancelled', unfilled_notional: r.order.unfilled_notional });
    },
  );
}
