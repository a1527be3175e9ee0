/**
 * Models (spec "Model", "Models"): one account's labels for its orders. Never deleted; archived
 * instead. Every read and write names the owning account, so another account's model is simply
 * not found (the API cannot tell "missing" from "not yours").
 *
 * The active-model cap holds under concurrency: a create or unarchive takes the account's lock
 * (lockAccount) before counting, so two requests at 49 active cannot both see room.
 */
import { MAX_ACTIVE_MODELS, type Model, type ModelStatus } from '../../domain/models.js';
import { newId } from '../../ids.js';
import { lockAccount } from './accounts.js';
import type { Pool, PoolClient } from './pool.js';
import { isoUtc } from './sql.js';

type Queryable = Pool | PoolClient;

/** Why a model write did not happen; the API maps each to its error. */
export type ModelRefusal = 'model_not_found' | 'model_limit_reached' | 'league_not_found' | 'account_not_found';
export type ModelResult = { ok: true; model: Model } | { ok: false; refusal: ModelRefusal };

const refused = (refusal: ModelRefusal): ModelResult => ({ ok: false, refusal });

/** The Model of the rows of `source` (a table or a CTE with the models columns), with its league's name. */
const selectModels = (source: string) =>
  `SELECT m.model_id, m.model_name, m.model_description, m.league_id, l.name AS league_name, m.status,
          ${isoUtc('m.created_at')} AS created_at, ${isoUtc('m.updated_at')} AS updated_at
     FROM ${source} m LEFT JOIN leagues l ON l.id = m.league_id`;

async function leagueExists(db: Queryable, leagueId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM leagues WHERE id = $1', [leagueId]);
  return Boolean(rowCount);
}

async function activeCount(client: PoolClient, routerAccountId: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM models WHERE router_account_id = $1 AND status = 'active'", [routerAccountId]);
  return rows[0]!.n;
}

export interface NewModel {
  model_name: string;
  model_description: string;
  league_id: string | null;
}

/** Creates an active model; call inside a transaction (the account lock is held until it ends). */
export async function createModel(client: PoolClient, routerAccountId: string, input: NewModel): Promise<ModelResult> {
  if (!(await lockAccount(client, routerAccountId))) return refused('account_not_found');
  if (input.league_id !== null && !(await leagueExists(client, input.league_id))) return refused('league_not_found');
  if ((await activeCount(client, routerAccountId)) >= MAX_ACTIVE_MODELS) return refused('model_limit_reached');
  const { rows } = await client.query<Model>(
    `WITH m AS (
       INSERT INTO models (model_id, router_account_id, model_name, model_description, league_id, status)
       VALUES ($1, $2, $3, $4, $5, 'active') RETURNING *)
     ${selectModels('m')}`,
    [newId('mdl'), routerAccountId, input.model_name, input.model_description, input.league_id],
  );
  return { ok: true, model: rows[0]! };
}

/** The account's model, archived or not; null when it has none of that id. */
export async function getModel(db: Queryable, routerAccountId: string, modelId: string): Promise<Model | null> {
  const { rows } = await db.query<Model>(`${selectModels('models')} WHERE m.model_id = $1 AND m.router_account_id = $2`, [modelId, routerAccountId]);
  return rows[0] ?? null;
}

export interface ModelListQuery {
  statuses: readonly ModelStatus[];
  limit: number;
  /** The last model_id of the previous page. */
  after?: string;
}

/** Newest first (created_at, then model_id). The cursor is a model id: models are never deleted, so it always resolves. */
export async function listModels(db: Queryable, routerAccountId: string, q: ModelListQuery): Promise<Model[]> {
  const { rows } = await db.query<Model>(
    `${selectModels('models')}
      WHERE m.router_account_id = $1 AND m.status = ANY($2::text[])
        AND ($3::text IS NULL OR (m.created_at, m.model_id) < (SELECT created_at, model_id FROM models WHERE model_id = $3 AND router_account_id = $1))
      ORDER BY m.created_at DESC, m.model_id DESC
      LIMIT $4`,
    [routerAccountId, q.statuses, q.after ?? null, q.limit],
  );
  return rows;
}

/** A PATCH: absent fields are kept; league_id null clears the league. */
export interface ModelChanges {
  model_name?: string;
  model_description?: string;
  league_id?: string | null;
}

/** Applies the changes; updated_at moves only when a value changes. */
export async function updateModel(db: Queryable, routerAccountId: string, modelId: string, changes: ModelChanges): Promise<ModelResult> {
  const league = changes.league_id;
  if (typeof league === 'string' && !(await leagueExists(db, league))) {
    // A model that is not the caller's is not found, whatever the body says: check it first.
    return (await getModel(db, routerAccountId, modelId)) ? refused('league_not_found') : refused('model_not_found');
  }
  const { rows } = await db.query<Model>(
    `WITH m AS (
       UPDATE models SET
         model_name = coalesce($3::text, model_name),
         model_description = coalesce($4::text, model_description),
         league_id = CASE WHEN $5::boolean THEN $6::text ELSE league_id END,
         updated_at = CASE
           WHEN (coalesce($3::text, model_name), coalesce($4::text, model_description), CASE WHEN $5::boolean THEN $6::text ELSE league_id END)
                IS DISTINCT FROM (model_name, model_description, league_id)
           THEN clock_timestamp() ELSE updated_at END
        WHERE model_id = $1 AND router_account_id = $2
        RETURNING *)
     ${selectModels('m')}`,
    [modelId, routerAccountId, changes.model_name ?? null, changes.model_description ?? null, league !== undefined, league ?? null],
  );
  return rows[0] ? { ok: true, model: rows[0] } : refused('model_not_found');
}

/**
 * Sets the status in one statement; updated_at moves only when the status changes. Under a
 * concurrent change of the same row PostgreSQL re-reads the row before applying the CASE, so two
 * archives both answer "archived" and only the first moves updated_at.
 */
async function setStatus(db: Queryable, routerAccountId: string, modelId: string, status: ModelStatus): Promise<Model | null> {
  const { rows } = await db.query<Model>(
    `WITH m AS (
       UPDATE models SET status = $3, updated_at = CASE WHEN status = $3 THEN updated_at ELSE clock_timestamp() END
        WHERE model_id = $1 AND router_account_id = $2
        RETURNING *)
     ${selectModels('m')}`,
    [modelId, routerAccountId, status],
  );
  return rows[0] ?? null;
}

/** Archives the model (it stops taking new orders; its history stays); archiving an archived model changes nothing. */
export async function archiveModel(db: Queryable, routerAccountId: string, modelId: string): Promise<ModelResult> {
  const model = await setStatus(db, routerAccountId, modelId, 'archived');
  return model ? { ok: true, model } : refused('model_not_found');
}

/**
 * Makes an archived model active again, within the cap; an active model is answered as it is.
 * Call inside a transaction (the account lock is held until it ends).
 */
export async function unarchiveModel(client: PoolClient, routerAccountId: string, modelId: string): Promise<ModelResult> {
  // An account that does not exist owns no models.
  if (!(await lockAccount(client, routerAccountId))) return refused('model_not_found');
  const { rows } = await client.query<{ status: ModelStatus }>('SELECT status FROM models WHERE model_id = $1 AND router_account_id = $2 FOR UPDATE', [modelId, routerAccountId]);
  const current = rows[0];
  if (!current) return refused('model_not_found');
  if (current.status === 'archived' && (await activeCount(client, routerAccountId)) >= MAX_ACTIVE_MODELS) return refused('model_limit_reached');
  const model = await setStatus(client, routerAccountId, modelId, 'active');
  return model ? { ok: true, model } : refused('model_not_found');
}
