/**
 * POST /flow/v1/auth/orders/buy (spec "Orders: place"; docs/orders.md "Buy"). A practice buy is one
 * PostgreSQL transaction with its Idempotency-Key record: the orders, their ledger entries and
 * their events commit together or not at all. A real-money buy waits on venues, so it runs under a
 * leased key record instead (real-legs.ts). Either way the same key and body replay the first
 * answer byte for byte, and request-level refusals (400, 404, 409) write nothing, so a corrected
 * request may reuse the key.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Currency } from '../../../src/domain/account.js';
import { envelope } from '../../../src/domain/envelope.js';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { currencyOfMode, sequenceLegs, type BuyResponse } from '../../../src/domain/router-orders.js';
import { ApiError, badRequest } from '../../../src/errors.js';
import { lockAccount } from '../../../src/store/pg/accounts.js';
import { canonicalFingerprint, runIdempotent } from '../../../src/store/pg/idempotency.js';
import { listPartners } from '../../../src/store/pg/catalog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { noLiveBooks } from '../../../src/venues/live-books.js';
import type { AppContext } from '../context.js';
import { ACCOUNT_WRITE, actingAccount, idempotencyKey } from '../account/acting.js';
import { writeErrors } from '../account/shapes.js';
import { Ok } from '../openapi/responses.js';
import { sendRecorded } from '../reply.js';
import { BUY_REQUEST_CODES, BuyBody, resolvedLegs, type BuyBodyT } from './body.js';
import { BuyRun } from './execution.js';
import { RealBuys } from './real-legs.js';
import { checkOrderTypes, orderTargets } from './request.js';
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
      const at = new Date(atMs).toISOString();
      const body = req.body;
      const scope = { routerAccountId: account, key, operation: BUY_OPERATION, fingerprint: canonicalFingerprint(body) };
      if (currency === 'USD') {
        // Rule 1 for real legs: the venue's supported_order_types (400, nothing written).
        const partners = await listPartners(ctx.pool);
        checkOrderTypes(legs, new Map(partners.map((p) => [p.partner_id, p])));
        return sendRecorded(reply, await real.buy({ account, scope, body, legs, partners, atMs }));
      }
      const { response } = await runIdempotent(ctx.pool, scope, async (client) => {
        // The account first, then the model: the order every writer takes them in (an unarchive
        // holds the account while it locks the model), so a buy and an unarchive never deadlock.
        // A buy's legs serialize on the account's wallet anyway.
        if (!(await lockAccount(client, account))) throw new ApiError(404, 'not_found', 'the acting account does not exist');
        const targets = await orderTargets(client, account, body, currency);
        const run = new BuyRun({ client, hot, account, idempotencyKey: key, at, modelId: targets.modelId, joinedOpportunityId: targets.opportunityId, currency }, legs);
        const { outcomes, haltedAt } = await sequenceLegs(
          legs,
          { halt: body.on_leg_failure === 'halt', checkAllFirst: body.check_all_first === true, parallel: body.placement === 'parallel' },
          { checkAll: (l) => run.checkAll(l), place: (l) => run.place(l) },
        );
        const results = [];
        for (const [i, o] of outcomes.entries()) results.push(await run.result(legs[i]!, o));
        const data: BuyResponse = { results, halted_at_index: haltedAt, opportunity_id: run.opportunity, model_id: targets.modelId };
        return { status: 200, body: JSON.stringify(envelope(data, atMs)) };
      });
      return sendRecorded(reply, response);
    },
  );
}
