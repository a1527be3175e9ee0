/**
 * Performance (spec "Caller context, performance, kits"; docs/performance.md): the account's, and one
 * model's. Per-currency buckets computed in PostgreSQL from settled orders (src/store/pg/performance.ts).
 *
 * Who: the acting account, as every /auth read (an organization names its user in X-Service-Account).
 * An organization key without the header is a key with no account of its own to measure: 403
 * scope_required (spec "Errors"). A model that is missing and one that is another account's answer
 * the same 404 model_not_found.
 *
 * Budget: counted against the day window too; the spec exempts only /auth/me and /auth/account/*.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { GROUP_BYS, performanceWindow, type Performance as PerformanceT } from '../../../src/domain/performance.js';
import { ApiError, badRequest } from '../../../src/errors.js';
import { getModel } from '../../../src/store/pg/models.js';
import { accountPerformance } from '../../../src/store/pg/performance.js';
import type { AppContext } from '../context.js';
import { Ok } from '../openapi/responses.js';
import { sendEnvelope } from '../reply.js';
import { Id, IsoTime } from '../schemas.js';
import { actingAccount, isOrganizationKey, SERVICE_ACCOUNT_HEADER } from './acting.js';
import { Performance } from './attribution-shapes.js';
import { modelNotFound } from './models.js';
import { readErrors } from './shapes.js';

export const scopeRequired = () =>
  new ApiError(
    403,
    'scope_required',
    'this key has no account of its own to measure: an organization key names the user it reads for in the X-Service-Account header (external_user_id or svc_account_id)',
    { header: 'X-Service-Account' },
  );

const PerformanceQuery = Type.Object({
  from: Type.Optional(IsoTime('start of the window, inclusive, on the settlement time (default: 90 days before to)')),
  to: Type.Optional(IsoTime('end of the window, inclusive (default: now)')),
  group_by: Type.Enum([...GROUP_BYS], { default: 'none', description: 'how each currency’s bucket is split into groups: none (no groups), league, model, day (UTC day of settlement), partner (the venue; practice for ATLAS), opportunity_type' }),
});
type PerformanceQueryT = Static<typeof PerformanceQuery>;
const ModelParams = Type.Object({ model_id: Id });

/** Performance's account: the acting one, refused for a key that has none (an organization's, without the header). */
async function measuredAccount(req: FastifyRequest, ctx: AppContext): Promise<string> {
  if (req.headers[SERVICE_ACCOUNT_HEADER] === undefined && isOrganizationKey(req.principal)) throw scopeRequired();
  return actingAccount(req, ctx.pool);
}

/** The performance of `account` (of one of its models when `modelId` is given) over the query's window. */
export async function readPerformance(ctx: AppContext, account: string, q: PerformanceQueryT, modelId?: string): Promise<PerformanceT> {
  const w = performanceWindow(ctx.clock.now(), q.from, q.to);
  if (!w.ok) throw badRequest('invalid_parameter', w.message, { in: 'query', parameter: w.parameter });
  const from = new Date(w.from).toISOString();
  const to = new Date(w.to).toISOString();
  const by_currency = await accountPerformance(ctx.pool, { routerAccountId: account, modelId, from, to, groupBy: q.group_by });
  return { by_currency, from, to, group_by: q.group_by };
}

export function performanceRoutes(app: FastifyInstance, ctx: AppContext): void {
  const now = () => ctx.clock.now();
  const config = { entitlements: ['account:read'] };

  app.get<{ Querystring: PerformanceQueryT }>(
    '/flow/v1/auth/performance',
    {
      schema: {
        querystring: PerformanceQuery,
        tags: ['account'],
        summary: 'How the account’s settled orders did, per currency (USD and ATLAS never blended), optionally grouped',
        description: 'staked, net_pl, roi and counts per currency over orders settled in the window; see docs/performance.md for the definitions and a worked example.',
        operationId: 'getPerformance',
        response: { 200: Ok(Performance, 'Per-currency performance'), ...readErrors({ 403: ['scope_required'] }) },
      },
      config,
    },
    async (req, reply) => {
      const account = await measuredAccount(req, ctx);
      return sendEnvelope(reply, now(), await readPerformance(ctx, account, req.query));
    },
  );

  app.get<{ Params: Static<typeof ModelParams>; Querystring: PerformanceQueryT }>(
    '/flow/v1/auth/models/:model_id/performance',
    {
      schema: {
        params: ModelParams,
        querystring: PerformanceQuery,
        tags: ['account'],
        summary: 'How one model’s settled orders did, per currency, optionally grouped',
        operationId: 'getModelPerformance',
        response: { 200: Ok(Performance, 'Per-currency performance of the model’s orders'), ...readErrors({ 403: ['scope_required'], 404: ['model_not_found'] }) },
      },
      config,
    },
    async (req, reply) => {
      const account = await measuredAccount(req, ctx);
      if (!(await getModel(ctx.pool, account, req.params.model_id))) throw modelNotFound(req.params.model_id);
      return sendEnvelope(reply, now(), await readPerformance(ctx, account, req.query, req.params.model_id));
    },
  );
}
