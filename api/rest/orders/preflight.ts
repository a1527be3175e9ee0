/**
 * POST /flow/v1/auth/orders/preflight (spec "Orders: preflight"): the buy's body and checks,
 * nothing placed, nothing written. Needs account:read only and no Idempotency-Key. Each leg comes
 * back as a Preflight result: accepted or the per-leg code with a fix, the order normalized to the
 * venue grid, the expected fill from the cached book (or the live one under verify_liquidity), fees
 * for this amount. It counts against the day budget like any order call (the exemption is for reads
 * of the own account), since verify_liquidity can cost venue calls.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listPartners } from '../../../src/store/pg/catalog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import type { LiveBookReader } from '../../../src/domain/order-checks.js';
import { BAD_REQUEST_CODES, errorsWith, Ok } from '../openapi/responses.js';
import type { AppContext } from '../context.js';
import { sendEnvelope } from '../reply.js';
import { actingAccount } from '../account/acting.js';
import { BUY_REQUEST_CODES, BuyBody, resolvedLegs, type BuyBodyT } from './body.js';
import { runLegChecks } from './checks.js';
import { checkModelAndOpportunity, checkOrderTypes, checkTradeGrants, ORDER_REQUEST_ERRORS } from './request.js';
import { PreflightData } from './shapes.js';

/** account:read, counted against the minute and the day budget. */
const PREFLIGHT = { entitlements: ['account:read'] };

export function preflightRoute(live: LiveBookReader) {
  return (app: FastifyInstance, ctx: AppContext): void => {
    const hot = new HotState(ctx.redis, ctx.ks);
    // Who the call acts for is settled before the body is looked at: naming an account the key may
    // not act for is 403 account_forbidden whatever the body says.
    const acting = new WeakMap<FastifyRequest, string>();
    app.post<{ Body: BuyBodyT }>(
      '/flow/v1/auth/orders/preflight',
      {
        schema: {
          body: BuyBody,
          tags: ['orders'],
          summary: 'Check a buy without placing it: per leg, accepted or why not, the order on the venue grid, the expected fill and fees',
          description:
            'Same body as POST /flow/v1/auth/orders/buy; places nothing and writes nothing; needs account:read only (no trade:execute, no Idempotency-Key). With verify_liquidity, a venue whose cached quote is stale or whose book holds less than about three times the order is read live. Fee values are estimates.',
          operationId: 'preflightOrders',
          response: {
            200: Ok(PreflightData, 'One result per leg; HTTP 200 whatever the legs’ outcome'),
            400: errorsWith([...BAD_REQUEST_CODES, ...BUY_REQUEST_CODES, ...ORDER_REQUEST_ERRORS[400].filter((c) => !(BUY_REQUEST_CODES as readonly string[]).includes(c))], 'Invalid input: a field outside the contract, a rule between fields, an order type the venue does not take, an opportunity in another currency or model'),
            403: errorsWith(['entitlement_required', 'account_forbidden', ...ORDER_REQUEST_ERRORS[403]], 'The key may not act for this account, or the user has not granted trade:execute on a venue a real-money leg names (the buy would be refused the same way)'),
            404: errorsWith([...ORDER_REQUEST_ERRORS[404]], 'The model or opportunity is not this account’s'),
            409: errorsWith([...ORDER_REQUEST_ERRORS[409]], 'The model is archived and takes no orders'),
          },
        },
        config: PREFLIGHT,
        preValidation: async (req) => {
          acting.set(req, await actingAccount(req, ctx.pool));
        },
      },
      async (req, reply) => {
        const account = acting.get(req)!;
        const legs = resolvedLegs(req.body, req.principal);
        const partners = await listPartners(ctx.pool);
        checkOrderTypes(legs, new Map(partners.map((p) => [p.partner_id, p])));
        await checkModelAndOpportunity(ctx.pool, account, req.body, legs);
        // The buy would answer 403 for this: preflight says so the same way (docs/decisions.md).
        await checkTradeGrants(ctx.pool, account, legs);
        const checked = await runLegChecks(
          { pool: ctx.pool, hot, live, now: () => ctx.clock.now() },
          {
            routerAccountId: account,
            legs,
            verifyLiquidity: req.body.verify_liquidity === true,
            checkAllFirst: req.body.check_all_first === true,
            onLegFailure: req.body.on_leg_failure ?? 'continue',
            partners,
          },
        );
        return sendEnvelope(reply, ctx.clock.now(), { results: checked.results, halted_at_index: checked.halted_at_index });
      },
    );
  };
}
