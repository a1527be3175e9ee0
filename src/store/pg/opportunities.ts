/**
 * Opportunities (spec "Opportunity"): a group of related orders inside a model. Nothing opens one
 * over REST; the buy opens one per request (unless it joins one) with openOpportunity, inside the
 * transaction that writes its orders. Every read names the owning account, so another account's
 * opportunity is simply not found.
 */
import type { Currency } from '../../domain/account.js';
import type { Opportunity } from '../../domain/models.js';
import { newId } from '../../ids.js';
import { ordersOfOpportunities } from './orders.js';
import type { Pool, PoolClient } from './pool.js';
import { isoUtc } from './sql.js';

type Queryable = Pool | PoolClient;

interface OpportunityRow {
  opportunity_id: string;
  model_id: string | null;
  model_name: string | null;
  currency: Currency;
  created_at: string;
}

/** The Opportunity of the rows of `source` (a table or a CTE with the opportunities columns), with its model's current name. */
const selectOpportunities = (source: string) =>
  `SELECT o.opportunity_id, o.model_id, m.model_name, o.currency, ${isoUtc('o.created_at')} AS created_at
     FROM ${source} o LEFT JOIN models m ON m.model_id = o.model_id`;

const toOpportunity = (r: OpportunityRow, legs: Opportunity['legs'] = []): Opportunity => ({ ...r, legs });

/** The rows with their legs: the opportunities' orders, oldest first. */
async function withLegs(db: Queryable, routerAccountId: string, rows: OpportunityRow[]): Promise<Opportunity[]> {
  const legs = await ordersOfOpportunities(db, routerAccountId, rows.map((r) => r.opportunity_id));
  return rows.map((r) => toOpportunity(r, legs.get(r.opportunity_id)));
}

export interface OpenOpportunityInput {
  routerAccountId: string;
  /** The buy's model_id; null when the buy names none. */
  modelId: string | null;
  currency: Currency;
}

export type OpenOpportunityResult = { ok: true; opportunity: Opportunity } | { ok: false; refusal: 'model_not_found' | 'model_archived' };

/**
 * Whether the account's model may take new orders: null when it may, else why not (missing or
 * someone else's: model_not_found; archived: model_archived). The model row is share-locked until
 * the transaction ends, so a concurrent archive waits for the orders and never lands between this
 * check and them.
 */
export async function modelRefusesOrders(client: PoolClient, routerAccountId: string, modelId: string): Promise<'model_not_found' | 'model_archived' | null> {
  const { rows } = await client.query<{ status: string }>('SELECT status FROM models WHERE model_id = $1 AND router_account_id = $2 FOR SHARE', [modelId, routerAccountId]);
  const model = rows[0];
  if (!model) return 'model_not_found';
  return model.status === 'active' ? null : 'model_archived';
}

/**
 * Opens an opportunity; call inside the buy's transaction. The model must be the account's
 * (model_not_found otherwise, whether it is missing or someone else's) and active (model_archived).
 * The model row is share-locked until the transaction ends, so a concurrent archive waits for the
 * buy and never lands between this check and the buy's orders.
 */
export async function openOpportunity(client: PoolClient, input: OpenOpportunityInput): Promise<OpenOpportunityResult> {
  if (input.modelId !== null) {
    const refusal = await modelRefusesOrders(client, input.routerAccountId, input.modelId);
    if (refusal) return { ok: false, refusal };
  }
  const { rows } = await client.query<OpportunityRow>(
    `WITH o AS (
       INSERT INTO opportunities (opportunity_id, router_account_id, model_id, currency)
       VALUES ($1, $2, $3, $4) RETURNING *)
     ${selectOpportunities('o')}`,
    [newId('opp'), input.routerAccountId, input.modelId, input.currency],
  );
  return { ok: true, opportunity: toOpportunity(rows[0]!) };
}

/** The account's opportunity; null when it has none of that id. */
export async function getOpportunity(db: Queryable, routerAccountId: string, opportunityId: string): Promise<Opportunity | null> {
  const { rows } = await db.query<OpportunityRow>(`${selectOpportunities('opportunities')} WHERE o.opportunity_id = $1 AND o.router_account_id = $2`, [
    opportunityId,
    routerAccountId,
  ]);
  return rows[0] ? (await withLegs(db, routerAccountId, rows))[0]! : null;
}

export interface OpportunityListQuery {
  /** Only this model's; another account's model id matches nothing. */
  modelId?: string;
  limit: number;
  /** The last opportunity_id of the previous page. */
  after?: string;
}

/** Newest first (created_at, then opportunity_id). The cursor is an opportunity id: they are never deleted, so it always resolves. */
export async function listOpportunities(db: Queryable, routerAccountId: string, q: OpportunityListQuery): Promise<Opportunity[]> {
  const { rows } = await db.query<OpportunityRow>(
    `${selectOpportunities('opportunities')}
      WHERE o.router_account_id = $1
        AND ($2::text IS NULL OR o.model_id = $2)
        AND ($3::text IS NULL OR (o.created_at, o.opportunity_id) < (SELECT created_at, opportunity_id FROM opportunities WHERE opportunity_id = $3 AND router_account_id = $1))
      ORDER BY o.created_at DESC, o.opportunity_id DESC
      LIMIT $4`,
    [routerAccountId, q.modelId ?? null, q.after ?? null, q.limit],
  );
  return withLegs(db, routerAccountId, rows);
}
