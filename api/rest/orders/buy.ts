/**
 * POST /flow/v1/auth/orders/buy (spec "Orders: place"; docs/orders.md "Buy"). A practice buy is
 * written with its Idempotency-Key record in one transaction (or one statement, practice-buy.ts):
 * the orders, their ledger entries and their events commit together or not at all. A real-money
 * buy waits on venues, so it runs under a leased key record instead (real-legs.ts). Either way the
 * same key and body replay the first answer byte for byte, and request-level refusals (400, 403,
 * 404, 409) write nothing, so a corrected request may reuse the key.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Currency } from '../../../src/domain/account.js';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { currencyOfMode } from '../../../src/domain/router-orders.js';
import { badRequest } from '../../../src/errors.js';
import { canonicalFingerprint } from '../../../src/store/pg/idempotency.js';
import { listPartners } from '../../../src/store/pg/catalog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { noLiveBooks } from '../../../src/venues/live-books.js';
import type { AppContext } from '../context.js';
import { ACCOUNT_WRITE, actingAccount, idempotencyKey } from '../account/acting.js';
import { writeErrors } from '../account/shapes.js';
import { Ok } from '../openapi/responses.js';
import { sendRecorded } from '../reply.js';
import { BUY_REQUEST_CODES, BuyBody, resolvedLegs, type BuyBodyT } from './body.js';
import { PracticeBuys } from './practice-buy.js';
import { RealBuys } from './real-legs.js';
import { checkOrderTypes, ORDER_REQUEST_ERRORS } from './request.js';
import { BuyResponse as BuyResponseShape } from './shapes.js';

export const BUY_OPERATION = 'orders.buy';

/** Rule 1 for practice legs: the internal book takes market orders only. */
function refuseLimitOnPaper(legs: readonly ResolvedLeg[]): void {
  const leg = legs.find((l) => l.mode === 'paper' && l.order_type === 'limit');
  if (leg) {
    throw badRequest('unsupported_order_type', `orders[${leg.index}]: a practice (paper) leg fills at once on the internal book and cannot rest; send order_type market`, {
      parameter: `orders[${leg.index}].order_type`,
      index: leg.index,
      supported_order_types: ['market'],
    });
  }
}

/**
 * The request's one currency: an opportunity holds orders of one currency (spec: currency_mismatch
 * for a real order into a practice opportunity or the reverse), and a buy files every order under
 * one opportunity, so a buy mixing paper and real legs is refused. null when no leg names a mode.
 */
function requestCurrency(legs: readonly ResolvedLeg[]): Currency | null {
  const currencies = new Set(legs.flatMap((l) => (l.mode === null ? [] : [currencyOfMode(l.mode)])));
  if (currencies.size > 1) {
    throw badRequest('currency_mismatch', 'a buy files all its orders under one opportunity, which holds one currency: send paper (ATLAS) and real (USD) legs in separate requests', {
      parameter: 'orders',
    });
  }
  return [...currencies][0] ?? null;
}

export function buyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const hot = new HotState(ctx.redis, ctx.ks);
  const practice = new PracticeBuys({ pool: ctx.pool, hot, metrics: ctx.metrics });
  const real = new RealBuys({
    pool: ctx.pool,
    databaseUrl: ctx.config.databaseUrl,
    redisUrl: ctx.config.redisUrl,
    ks: ctx.ks,
    hot,
    live: ctx.live ?? noLiveBooks,
    log: ctx.log,
    now: () => ctx.clock.now(),
    waitMs: ctx.config.execute.waitMs,
  });
  app.addHook('onClose', async () => real.close());

  app.post<{ Body: BuyBodyT }>(
    '/flow/v1/auth/orders/buy',
    {
      schema: {
        body: BuyBody,
        tags: ['orders'],
        summary: 'Place a buy of one or more legs; Idempotency-Key required',
        description:
          'Practice legs (mode paper) fill on the internal book at the best live price across real venues and debit the practice wallet. Real-money legs run the preflight checks, are written as intents and placed on their venues by the execute role under their client order id; the call returns once each leg is decided, or answers it pending when its decision takes longer than the wait (docs/orders.md).',
        operationId: 'buyOrders',
        response: {
          200: Ok(BuyResponseShape, 'One result per leg, in request order (a replay of the same key answers the first response)'),
          ...writeErrors({
            400: [...BUY_REQUEST_CODES, 'currency_mismatch', 'model_mismatch'],
            403: [...ORDER_REQUEST_ERRORS[403]],
            404: ['model_not_found', 'opportunity_not_found', 'not_found'],
            409: ['model_archived'],
          }),
        },
      },
      config: ACCOUNT_WRITE,
    },
    async (req: FastifyRequest<{ Body: BuyBodyT }>, reply: FastifyReply) => {
      const key = idempotencyKey(req);
      const legs = resolvedLegs(req.body, req.principal);
      refuseLimitOnPaper(legs);
      const currency = requestCurrency(legs);
      const account = await actingAccount(req, ctx.pool);
      const atMs = ctx.clock.now();
      const body = req.body;
      const scope = { routerAccountId: account, key, operation: BUY_OPERATION, fingerprint: canonicalFingerprint(body) };
      if (currency === 'USD') {
        // Rule 1 for real legs: the venue's supported_order_types (400, nothing written).
        const partners = await listPartners(ctx.pool);
        checkOrderTypes(legs, new Map(partners.map((p) => [p.partner_id, p])));
        return sendRecorded(reply, await real.buy({ account, scope, body, legs, partners, atMs }));
      }
      return sendRecorded(reply, await practice.buy({ account, scope, body, legs, currency, atMs }));
    },
  );
}
