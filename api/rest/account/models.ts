/**
 * Models (spec "Models"): create, list, read, rename, archive, unarchive. Records in PostgreSQL
 * (src/store/pg/models.ts). A model that is missing and one that is another account's answer the
 * same 404 model_not_found.
 *
 * Only the create takes an Idempotency-Key: it is the one write that would do something twice.
 * PATCH sets values, archive and unarchive set a status, so repeating one changes nothing more.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { envelope } from '../../../src/domain/envelope.js';
import { MAX_ACTIVE_MODELS, MODEL_DESCRIPTION_MAX, MODEL_NAME_MAX, MODEL_STATUSES, type Model as ModelT, type ModelStatus } from '../../../src/domain/models.js';
import { ApiError, badRequest, notFound } from '../../../src/errors.js';
import { canonicalFingerprint, runIdempotent } from '../../../src/store/pg/idempotency.js';
import { archiveModel, createModel, getModel, listModels, unarchiveModel, updateModel, type ModelRefusal, type ModelResult } from '../../../src/store/pg/models.js';
import { inTransaction } from '../../../src/store/pg/pool.js';
import type { AppContext } from '../context.js';
import { Ok, OkPage } from '../openapi/responses.js';
import { page } from '../paging.js';
import { sendEnvelope, sendRecorded } from '../reply.js';
import { Cursor, Id, Limit, Text } from '../schemas.js';
import { ACCOUNT_READ, ACCOUNT_WRITE, actingAccount, idempotencyKey } from './acting.js';
import { Model, readErrors, writeErrors } from './shapes.js';

export const modelNotFound = (modelId: string) =>
  new ApiError(404, 'model_not_found', `no model ${JSON.stringify(modelId)} on this account`, { model_id: modelId });

/** The error of a refused model write, or of a buy naming a model it may not use (openOpportunity). */
export function modelError(refusal: ModelRefusal | 'model_archived', ids: { model_id?: string; league_id?: string | null }): ApiError {
  switch (refusal) {
    case 'model_not_found':
      return modelNotFound(ids.model_id ?? '');
    case 'model_archived':
      return new ApiError(409, 'model_archived', `model ${JSON.stringify(ids.model_id)} is archived and takes no new orders; unarchive it first`, { model_id: ids.model_id });
    case 'model_limit_reached':
      return new ApiError(409, 'model_limit_reached', `an account may have at most ${MAX_ACTIVE_MODELS} active models; archive one first`, { limit: MAX_ACTIVE_MODELS });
    case 'league_not_found':
      return notFound('league', ids.league_id ?? '');
    case 'account_not_found':
      return new ApiError(404, 'not_found', 'the acting account does not exist');
  }
}

const modelOf = (r: ModelResult, ids: { model_id?: string; league_id?: string | null }): ModelT => {
  if (!r.ok) throw modelError(r.refusal, ids);
  return r.model;
};

const ModelName = Text({ minLength: 1, maxLength: MODEL_NAME_MAX, description: `1-${MODEL_NAME_MAX} characters, not only spaces` });
const ModelDescription = Text({ maxLength: MODEL_DESCRIPTION_MAX, description: `at most ${MODEL_DESCRIPTION_MAX} characters` });
const LeagueRef = Type.Union([Id, Type.Null()], { description: 'a league_id of GET /flow/v1/leagues, or null for none; an unknown league is 404 not_found' });

/** A name of spaces only would list as a blank line: refused like any other invalid value. */
function checkName(name: string | undefined): void {
  if (name !== undefined && name.trim() === '') {
    throw badRequest('invalid_parameter', 'body model_name must contain a character other than a space', { in: 'body', parameter: 'model_name' });
  }
}

const CreateBody = Type.Object(
  { model_name: ModelName, model_description: ModelDescription, league_id: Type.Optional(LeagueRef) },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  { model_name: Type.Optional(ModelName), model_description: Type.Optional(ModelDescription), league_id: Type.Optional(LeagueRef) },
  { additionalProperties: false },
);
const ModelParams = Type.Object({ model_id: Id });
const ListQuery = Type.Object({
  status: Type.Optional(Type.Enum([...MODEL_STATUSES], { description: 'only models of this status (archived ones included when archived)' })),
  include_archived: Type.Optional(Type.Boolean({ description: 'true: active and archived; ignored when status is given' })),
  limit: Limit(),
  cursor: Type.Optional(Cursor),
});

/** Which statuses a list shows: archived models only when asked for. */
const listedStatuses = (q: Static<typeof ListQuery>): ModelStatus[] => (q.status ? [q.status] : q.include_archived ? ['active', 'archived'] : ['active']);

/**
 * A status in a PATCH body is refused with its own message (the strict body would say only that the
 * field is not part of the contract): the status changes through archive and unarchive.
 */
async function refuseStatusChange(req: FastifyRequest): Promise<void> {
  const body = req.body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'status')) {
    throw badRequest('unknown_parameter', 'a model’s status is not changed by PATCH: POST /flow/v1/auth/models/{model_id}/archive or /unarchive', { in: 'body', parameter: '/status' });
  }
}

export function modelRoutes(app: FastifyInstance, ctx: AppContext): void {
  const now = () => ctx.clock.now();

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/flow/v1/auth/models',
    {
      schema: {
        body: CreateBody,
        tags: ['account'],
        summary: `Create a model (at most ${MAX_ACTIVE_MODELS} active per account); Idempotency-Key required`,
        operationId: 'createModel',
        response: {
          201: Ok(Model, 'The model, active (a replay of the same key answers the first response)'),
          ...writeErrors({ 404: ['not_found'], 409: ['model_limit_reached'] }),
        },
      },
      config: ACCOUNT_WRITE,
    },
    async (req, reply) => {
      const key = idempotencyKey(req);
      checkName(req.body.model_name);
      const account = await actingAccount(req, ctx.pool);
      const input = { model_name: req.body.model_name, model_description: req.body.model_description, league_id: req.body.league_id ?? null };
      const { response } = await runIdempotent(ctx.pool, { routerAccountId: account, key, operation: 'models.create', fingerprint: canonicalFingerprint(req.body) }, async (client) => {
        const model = modelOf(await createModel(client, account, input), input);
        return { status: 201, body: JSON.stringify(envelope(model, now())) };
      });
      return sendRecorded(reply, response);
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/flow/v1/auth/models',
    {
      schema: {
        querystring: ListQuery,
        tags: ['account'],
        summary: 'The account’s models, newest first (archived ones only when asked for)',
        operationId: 'listModels',
        response: { 200: OkPage(Model, 'A page of models'), ...readErrors() },
      },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const statuses = listedStatuses(req.query);
      // Bound to the account and the filter: another list's cursor is refused, never misapplied.
      const scope = `models|${account}|${statuses.join(',')}`;
      const after = req.query.cursor ? String(ctx.cursors.decode(scope, req.query.cursor)[0]) : undefined;
      const rows = await listModels(ctx.pool, account, { statuses, limit: req.query.limit + 1, after });
      const { items, pagination } = page(rows, req.query.limit, (m) => ctx.cursors.encode(scope, [m.model_id]));
      return sendEnvelope(reply, now(), items, { pagination });
    },
  );

  app.get<{ Params: Static<typeof ModelParams> }>(
    '/flow/v1/auth/models/:model_id',
    {
      schema: { params: ModelParams, tags: ['account'], summary: 'One model, archived or not', operationId: 'getModel', response: { 200: Ok(Model, 'The model'), ...readErrors({ 404: ['model_not_found'] }) } },
      config: ACCOUNT_READ,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const model = await getModel(ctx.pool, account, req.params.model_id);
      if (!model) throw modelNotFound(req.params.model_id);
      return sendEnvelope(reply, now(), model);
    },
  );

  app.patch<{ Params: Static<typeof ModelParams>; Body: Static<typeof PatchBody> }>(
    '/flow/v1/auth/models/:model_id',
    {
      schema: {
        params: ModelParams,
        body: PatchBody,
        tags: ['account'],
        summary: 'Change a model’s name, description or league (not its status: archive, unarchive)',
        operationId: 'updateModel',
        response: { 200: Ok(Model, 'The model as changed'), ...writeErrors({ 404: ['model_not_found', 'not_found'] }, { idempotencyKey: false }) },
      },
      config: ACCOUNT_WRITE,
      preValidation: refuseStatusChange,
    },
    async (req, reply) => {
      checkName(req.body.model_name);
      const account = await actingAccount(req, ctx.pool);
      const model = modelOf(await updateModel(ctx.pool, account, req.params.model_id, req.body), { model_id: req.params.model_id, league_id: req.body.league_id });
      return sendEnvelope(reply, now(), model);
    },
  );

  app.post<{ Params: Static<typeof ModelParams> }>(
    '/flow/v1/auth/models/:model_id/archive',
    {
      schema: {
        params: ModelParams,
        tags: ['account'],
        summary: 'Archive a model: it takes no new orders, its history stays (idempotent)',
        operationId: 'archiveModel',
        response: { 200: Ok(Model, 'The model, archived'), ...writeErrors({ 404: ['model_not_found'] }, { idempotencyKey: false }) },
      },
      config: ACCOUNT_WRITE,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const model = modelOf(await archiveModel(ctx.pool, account, req.params.model_id), req.params);
      return sendEnvelope(reply, now(), model);
    },
  );

  app.post<{ Params: Static<typeof ModelParams> }>(
    '/flow/v1/auth/models/:model_id/unarchive',
    {
      schema: {
        params: ModelParams,
        tags: ['account'],
        summary: `Make an archived model active again; counts toward the ${MAX_ACTIVE_MODELS}-active cap (idempotent)`,
        operationId: 'unarchiveModel',
        response: { 200: Ok(Model, 'The model, active'), ...writeErrors({ 404: ['model_not_found'], 409: ['model_limit_reached'] }, { idempotencyKey: false }) },
      },
      config: ACCOUNT_WRITE,
    },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const model = modelOf(await inTransaction(ctx.pool, (client) => unarchiveModel(client, account, req.params.model_id)), req.params);
      return sendEnvelope(reply, now(), model);
    },
  );
}
