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
import type { Pagination } from '../../../src/domain/envelope.js';
import type { AppContext } from '../context.js';
import { Ok, OkPage } from '../openapi/responses.js';
import { page } from '../paging.js';
import { sendEnvelope } from '../reply.js';
import { Cursor, Id, Limit } from '../schemas.js';
import { ACCOUNT_READ, actingAccount, actingAccountOf } from './acting.js';
import { idArg, toolInput, toolsOf, twin } from '../tools.js';
import { Opportunity, readErrors } from './shapes.js';

export const opportunityNotFound = (opportunityId: string) =>
  new ApiError(404, 'opportunity_not_found', `no opportunity ${JSON.stringify(opportunityId)} on this account`, { opportunity_id: opportunityId });

const ListQuery = Type.Object({
  model_id: Type.Optional({ ...Id, description: 'only this model’s opportunities (a model that is not the account’s has none here)' }),
  limit: Limit(),
  cursor: Type.Optional(Cursor),
});
const OpportunityParams = Type.Object({ opportunity_id: Id });

/** A page of the account's opportunities, newest first. */
export async function readOpportunities(ctx: AppContext, account: string, q: Static<typeof ListQuery>): Promise<{ data: unknown[]; pagination: Pagination }> {
  const { model_id: modelId, limit, cursor } = q;
  // Bound to the account and the filter: another list's cursor is refused, never misapplied.
  const scope = `opportunities|${account}|${modelId ?? ''}`;
  const after = cursor ? String(ctx.cursors.decode(scope, cursor)[0]) : undefined;
  const rows = await listOpportunities(ctx.pool, account, { modelId, limit: limit + 1, after });
  const { items, pagination } = page(rows, limit, (o) => ctx.cursors.encode(scope, [o.opportunity_id]));
  return { data: items, pagination };
}

/** One of the account's opportunities; 404 opportunity_not_found for one that is missing or another account's. */
export async function readOpportunity(ctx: AppContext, account: string, opportunityId: string): Promise<unknown> {
  const opportunity = await getOpportunity(ctx.pool, account, opportunityId);
  if (!opportunity) throw opportunityNotFound(opportunityId);
  return opportunity;
}

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
      const { data, pagination } = await readOpportunities(ctx, await actingAccount(req, ctx.pool), req.query);
      return sendEnvelope(reply, now(), data, { pagination });
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
    async (req, reply) => sendEnvelope(reply, now(), await readOpportunity(ctx, await actingAccount(req, ctx.pool), req.params.opportunity_id)),
  );

  const tools = toolsOf(app);
  tools.add({
    name: 'list_opportunities',
    description: 'The key’s account’s opportunities (groups of related orders inside a model), newest first, optionally of one model; a page.',
    rest: 'GET /flow/v1/auth/opportunities',
    ...twin(ACCOUNT_READ),
    metered: true,
    input: toolInput({}, ListQuery),
    call: async (a, caller) => readOpportunities(ctx, await actingAccountOf(caller.principal, caller.serviceAccount, ctx.pool), a as Static<typeof ListQuery>),
  });
  tools.add({
    name: 'get_opportunity',
    description: 'One of the key’s account’s opportunities with its legs; opportunity_not_found when it is missing or another account’s.',
    rest: 'GET /flow/v1/auth/opportunities/:opportunity_id',
    ...twin(ACCOUNT_READ),
    metered: true,
    input: toolInput({ opportunity_id: idArg(Id, 'the opportunity’s id') }),
    call: async (a, caller) => ({ data: await readOpportunity(ctx, await actingAccountOf(caller.principal, caller.serviceAccount, ctx.pool), a.opportunity_id as string) }),
  });
}
