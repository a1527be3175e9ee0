/**
 * POST /flow/v1/auth/orders/cancel (spec "Orders: read and cancel"; docs/orders.md "Cancel"): ends
 * a resting order's unfilled remainder.
 *
 * An order resting at its venue is cancelled by the venue: the request is marked on the order
 * (one transaction, the order locked), a cancel job goes onto the venue's execute queue (the same
 * per-(account, venue) lock as placements: pipelines/processors/execute.ts), and the call waits for
 * it as a buy waits for its legs (FLOW_EXECUTE_WAIT_MS). The job records the venue's answer: the
 * remainder released, any fill that raced the cancel booked. Then:
 *   - cancelled at the venue → 200 {router_order_id, status: cancelled, unfilled_notional};
 *   - the order ended before the cancel reached it (filled) → 409 order_not_resting;
 *   - the venue refused the cancel (it does not know the order, say) → 409 venue_cancel_unavailable;
 *   - not answered within the wait → 200 {…, status: pending} (as a buy's leg answers pending): the
 *     job still runs, and its outcome arrives on the orders channel (order.update) and in GET orders.
 * A venue that cannot cancel at all (partner order_config.cancel_supported false) is 409
 * venue_cancel_unavailable at once: the order keeps working there.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { orderUpdateEvent } from '../../../src/domain/router-orders.js';
import { ApiError } from '../../../src/errors.js';
import type { Logger } from '../../../src/log.js';
import { OrderWaits } from '../../../src/store/pg/executions.js';
import { cancelsDoneAmong, cancelState, ORDER_CANCEL_NOTIFY, requestCancel, type CancelRequest } from '../../../src/store/pg/order-updates.js';
import { enqueueAccountEvent } from '../../../src/store/pg/outbox.js';
import { inTransaction, type Pool } from '../../../src/store/pg/pool.js';
import type { Keyspace } from '../../../src/store/redis/client.js';
import { ExecuteProducer } from '../../../pipelines/producers/execute.js';
import type { AppContext } from '../context.js';
import { ACCOUNT_WRITE, actingAccount } from '../account/acting.js';
import { writeErrors } from '../account/shapes.js';
import { Ok } from '../openapi/responses.js';
import { sendEnvelope } from '../reply.js';
import { Id } from '../schemas.js';
import { orderNotFound } from './reads.js';
import { CancelResult } from './shapes.js';

const CancelBody = Type.Object({ router_order_id: Id }, { additionalProperties: false });

const notResting = (id: string, why: string) => new ApiError(409, 'order_not_resting', `order ${JSON.stringify(id)} is not resting: ${why}`, { router_order_id: id });
const venueCannot = (id: string, why: string) => new ApiError(409, 'venue_cancel_unavailable', `order ${JSON.stringify(id)} cannot be cancelled at its venue: ${why}; it keeps working there and can still fill`, { router_order_id: id });

interface VenueCancelDeps {
  pool: Pool;
  databaseUrl: string;
  redisUrl: string;
  ks: Keyspace;
  log: Pick<Logger, 'warn'>;
  waitMs: number;
}

/** One app's venue-side cancels: the execute queues and the waiter, opened on first use and closed with the app. */
class VenueCancels {
  private producerOf: ExecuteProducer | null = null;
  private waitsOf: OrderWaits | null = null;

  constructor(private readonly d: VenueCancelDeps) {}

  /** Queues the order's cancel job (the sweep of the execute role queues it should this fail) and waits for it, within the wait. */
  async run(partnerId: string, routerOrderId: string): Promise<void> {
    this.producerOf ??= new ExecuteProducer(this.d.redisUrl, this.d.ks);
    this.waitsOf ??= new OrderWaits(this.d.pool, this.d.databaseUrl, { channel: ORDER_CANCEL_NOTIFY, done: cancelsDoneAmong }, { log: this.d.log });
    try {
      await this.producerOf.enqueueCancel(partnerId, routerOrderId);
    } catch (err) {
      this.d.log.warn({ err, router_order_id: routerOrderId }, 'enqueueing a venue-side cancel failed; the execute role’s sweep will');
    }
    await this.waitsOf.wait(routerOrderId, this.d.waitMs);
  }

  async close(): Promise<void> {
    await this.waitsOf?.close();
    await this.producerOf?.close();
  }
}

export function cancelRoute(app: FastifyInstance, ctx: AppContext): void {
  const cancels = new VenueCancels({ pool: ctx.pool, databaseUrl: ctx.config.databaseUrl, redisUrl: ctx.config.redisUrl, ks: ctx.ks, log: ctx.log, waitMs: ctx.config.execute.waitMs });
  app.addHook('onClose', async () => cancels.close());

  app.post<{ Body: Static<typeof CancelBody> }>(
    '/flow/v1/auth/orders/cancel',
    {
      schema: {
        body: CancelBody,
        tags: ['orders'],
        summary: 'Cancel a resting order',
        description:
          'Only a resting order can be cancelled (409 order_not_resting otherwise, also for one that filled before the cancel reached its venue); practice orders never rest. An order resting at a venue is cancelled there, through the venue’s execute queue: the call waits for the venue’s answer (FLOW_EXECUTE_WAIT_MS) and books any fill that raced the cancel; status pending when the venue takes longer (the cancel still happens; its outcome arrives on the orders channel). A venue that cannot cancel orders (cancel_supported false), or that refused this cancel, answers 409 venue_cancel_unavailable: the order keeps working there. No Idempotency-Key: repeating a cancel changes nothing (the order is no longer resting: 409).',
        operationId: 'cancelOrder',
        response: {
          200: Ok(CancelResult, 'The order is cancelled (its unfilled remainder will never fill), or its cancel is still pending at the venue'),
          ...writeErrors({ 404: ['not_found'], 409: ['order_not_resting', 'venue_cancel_unavailable'] }, { idempotencyKey: false }),
        },
      },
      config: ACCOUNT_WRITE,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const id = req.body.router_order_id;
      const at = ctx.clock.now();
      const r: CancelRequest = await inTransaction(ctx.pool, async (client) => {
        const c = await requestCancel(client, account, id);
        if (c.outcome === 'cancelled') await enqueueAccountEvent(client, account, 'orders', orderUpdateEvent(c.order, new Date(at).toISOString()));
        return c;
      });
      switch (r.outcome) {
        case 'not_found':
          throw orderNotFound(id);
        case 'not_resting':
          throw notResting(id, 'only a working (resting) order can be cancelled');
        case 'venue_cancel_unavailable':
          throw venueCannot(id, 'the venue does not support cancelling orders');
        case 'cancelled':
          return sendEnvelope(reply, at, { router_order_id: id, status: 'cancelled', unfilled_notional: r.order.unfilled_notional });
        case 'requested':
          break;
      }
      await cancels.run(r.partner_id, id);
      const s = await cancelState(ctx.pool, account, id);
      if (!s) throw orderNotFound(id);
      const now = ctx.clock.now();
      if (s.order.cancelled_at !== null) return sendEnvelope(reply, now, { router_order_id: id, status: 'cancelled', unfilled_notional: s.order.unfilled_notional });
      if (s.waiting) return sendEnvelope(reply, now, { router_order_id: id, status: 'pending', unfilled_notional: s.order.unfilled_notional });
      if (s.error !== null) throw venueCannot(id, `the venue refused the cancel (${s.error})`);
      throw notResting(id, `it ended at its venue before the cancel reached it (${s.order.fill_status}, ${s.order.filled_notional} booked)`);
    },
  );
}
