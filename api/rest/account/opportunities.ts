/**
 * Opportunities (spec "Account positions and history"; the single read's path is the operator
 * interface's): the list and one opportunity. Nothing opens one over REST: the buy does
 * (openOpportunity). One that is missing and one that is another account's answer the same 404
 * opportunity_not_found.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { ApiError } from '../../../src/errors.js';
import { getOpportunity, listOpportunities } from '../../../src/store/pg/opportunities.js';
import type { AppContext } from '../context.js';
import { Ok, OkPage } from '../openapi/responses.js';
import { page } from '../paging.js';
import { sendEnvelope } from '../reply.js';
import { Cursor, Id, Limit } from '../schemas.js';
import { ACCOUNT_READ, actingAccount } from './acting.js';
import { Opportunity, readErrors } from './shapes.js';

export const opportunityNotFound = (opportunityId: string) =>
  new ApiError(404, 'opportunity_not_found', `no opportunity ${JSON.stringify(opportunityId)} on this account`, { opportunity_id: opportunityId });

const ListQuery = Type.Object({
  model_id: Type.Optional({ ...Id, description: 'only this model’s opportunities (a model that is not the account’s has none here)' }),
  limit: Limit(),
  cursor: Type.Optional(Cursor),
});
const OpportunityParams = Type.Object({ opportunity_id: Id });

export function opportunityRoutes(app: FastifyInstance, ctx: AppContext): void {
  const now = () => ctx.clock.now();

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/flow/v1/auth/opportunities',
    {
      schema: {
        querystring: ListQuery,
        tags: ['account'],
        summary: 'The account’s opportunities, newest first',
        operationId: 'listOpportunities',
        response: { 200: OkPage(Opportunity, 'A page of opportunities'), ...readErrors() },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const { model_id: modelId, limit, cursor } = req.query;
      // Bound to the account and the filter: another list's cursor is refused, never misapplied.
      const scope = `opportunities|${account}|${modelId ?? ''}`;
      const after = cursor ? String(ctx.cursors.decode(scope, cursor)[0]) : undefined;
      const rows = await listOpportunities(ctx.pool, account, { modelId, limit: limit + 1, after });
      const { items, pagination } = page(rows, limit, (o) => ctx.cursors.encode(scope, [o.opportunity_id]));
      return sendEnvelope(reply, now(), items, { pagination });
    },
  );

  app.get<{ Params: Static<typeof OpportunityParams> }>(
    '/flow/v1/auth/opportunities/:opportunity_id',
    {
      schema: {
        params: OpportunityParams,
        tags: ['account'],
        summary: 'One opportunity',
        operationId: 'getOpportunity',
        response: { 200: Ok(Opportunity, 'The opportunity'), ...readErrors({ 404: ['opportunity_not_found'] }) },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const opportunity = await getOpportunity(ctx.pool, account, req.params.opportunity_id);
      if (!opportunity) throw opportunityNotFound(req.params.opportunity_id);
      return sendEnvelope(reply, now(), opportunity);
    },
  );
}
