/**
 * The request-level checks a buy and a preflight share, after the body's own rules (body.ts) and
 * before anything looks at a venue's book (spec "Orders: place" rules 1 and 8): each leg's order
 * type against its venue's supported_order_types (400 unsupported_order_type; a practice leg takes
 * market orders only), then the model (404 model_not_found, 409 model_archived), then the
 * opportunity (404 opportunity_not_found, 400 currency_mismatch, 400 model_mismatch), then the
 * user's trade grant on every venue a real leg names (403 scope_not_granted). A bad one costs no
 * orderbook read and no balance move.
 */
import type { Partner } from '../../../src/domain/catalog.js';
import type { Opportunity } from '../../../src/domain/models.js';
import type { Currency } from '../../../src/domain/account.js';
import { TRADE_GRANT } from '../../../src/domain/execution-limits.js';
import type { BuyRequest, ResolvedLeg } from '../../../src/domain/orders.js';
import { ApiError, badRequest } from '../../../src/errors.js';
import { getModel } from '../../../src/store/pg/models.js';
import { getOpportunity, modelRefusesOrders } from '../../../src/store/pg/opportunities.js';
import { venuesWithoutGrant } from '../../../src/store/pg/policy.js';
import type { Pool, PoolClient } from '../../../src/store/pg/pool.js';
import { modelError, modelNotFound } from '../account/models.js';
import { opportunityNotFound } from '../account/opportunities.js';

/** The 400, 403, 404 and 409 codes these checks answer (for the routes' response schemas). */
export const ORDER_REQUEST_ERRORS = {
  400: ['unsupported_order_type', 'currency_mismatch', 'model_mismatch'],
  403: ['scope_not_granted'],
  404: ['model_not_found', 'opportunity_not_found'],
  409: ['model_archived'],
} as const;

/**
 * The user's grants (spec "Organization (Connect) endpoints"): every venue a real-money leg names
 * and the account is connected to must hold trade:execute, whoever acts (a player JWT, the key's
 * own account, an organization acting for its user: connect:trade overrides nothing). Else 403
 * scope_not_granted naming the first such venue in leg order (details.partner_id; partner_ids
 * lists them all), and nothing is placed. A venue without a connection is the leg's own
 * venue_disabled, not this. Practice legs need no grant: the practice book is no user's venue.
 */
export async function checkTradeGrants(db: Pool | PoolClient, routerAccountId: string, legs: readonly ResolvedLeg[]): Promise<void> {
  const real = legs.filter((l) => l.mode === 'real');
  const missing = await venuesWithoutGrant(db, routerAccountId, [...new Set(real.map((l) => l.partner_id))], TRADE_GRANT);
  if (missing.size === 0) return;
  const refused = real.filter((l) => missing.has(l.partner_id));
  const first = refused[0]!;
  throw new ApiError(
    403,
    'scope_not_granted',
    `the user has not granted ${TRADE_GRANT} for ${first.partner_id} (orders[${first.index}]); they change their grants on the hosted connect page (mode manage). Nothing was placed.`,
    { partner_id: first.partner_id, index: first.index, scope: TRADE_GRANT, partner_ids: [...new Set(refused.map((l) => l.partner_id))] },
  );
}

/** 400 unsupported_order_type for the first leg whose venue does not take its order type. */
export function checkOrderTypes(legs: readonly ResolvedLeg[], partners: ReadonlyMap<string, Partner>): void {
  for (const leg of legs) {
    const at = { parameter: `orders[${leg.index}].order_type`, index: leg.index, order_type: leg.order_type };
    if (leg.mode === 'paper') {
      if (leg.order_type !== 'market') throw badRequest('unsupported_order_type', `orders[${leg.index}]: a practice (paper) leg fills at once on the internal book; it takes market orders only`, { ...at, supported_order_types: ['market'] });
      continue;
    }
    // An unknown venue is the leg's own refusal (no viable venue), not the request's.
    const venue = partners.get(leg.partner_id);
    if (venue && !venue.order_config.supported_order_types.includes(leg.order_type)) {
      throw badRequest('unsupported_order_type', `orders[${leg.index}]: ${venue.partner_id} does not take ${leg.order_type} orders (it takes ${venue.order_config.supported_order_types.join(', ') || 'none'})`, {
        ...at,
        partner_id: venue.partner_id,
        supported_order_types: venue.order_config.supported_order_types,
      });
    }
  }
}

/**
 * The request's model and opportunity (rule 8): the model must be the account's and active; the
 * opportunity the account's, in the legs' currency (a real leg books USD, a practice leg ATLAS) and
 * filed under the request's model (none when the request names none). Returns the opportunity.
 */
export async function checkModelAndOpportunity(pool: Pool, routerAccountId: string, req: Pick<BuyRequest, 'model_id' | 'opportunity_id'>, legs: readonly ResolvedLeg[]): Promise<Opportunity | null> {
  if (req.model_id !== undefined) {
    const model = await getModel(pool, routerAccountId, req.model_id);
    if (!model) throw modelError('model_not_found', { model_id: req.model_id });
    if (model.status !== 'active') throw modelError('model_archived', { model_id: req.model_id });
  }
  if (req.opportunity_id === undefined) return null;
  const opportunity = await getOpportunity(pool, routerAccountId, req.opportunity_id);
  if (!opportunity) throw opportunityNotFound(req.opportunity_id);
  const other = legs.find((l) => l.mode !== null && (l.mode === 'paper' ? 'ATLAS' : 'USD') !== opportunity.currency);
  if (other) {
    throw new ApiError(400, 'currency_mismatch', `orders[${other.index}] is a ${other.mode === 'paper' ? 'practice (ATLAS)' : 'real-money (USD)'} order; opportunity ${req.opportunity_id} holds ${opportunity.currency} orders`, {
      opportunity_id: req.opportunity_id,
      currency: opportunity.currency,
      index: other.index,
    });
  }
  if ((req.model_id ?? null) !== opportunity.model_id) {
    throw new ApiError(400, 'model_mismatch', `opportunity ${req.opportunity_id} belongs to ${opportunity.model_id === null ? 'no model' : `model ${opportunity.model_id}`}; send that model_id with it`, {
      opportunity_id: req.opportunity_id,
      opportunity_model_id: opportunity.model_id,
      model_id: req.model_id ?? null,
    });
  }
  return opportunity;
}

/**
 * Rule 8, before anything else (no price looked up, no balance moved): the model must be the
 * account's (404 model_not_found) and active (409 model_archived); a joined opportunity must be the
 * account's (404 opportunity_not_found), of the request's currency (400 currency_mismatch) and of
 * the request's model (400 model_mismatch). A request naming no model files its orders under the
 * joined opportunity's model. The model row stays share-locked for the transaction.
 */
export async function orderTargets(client: PoolClient, account: string, body: Pick<BuyRequest, 'model_id' | 'opportunity_id'>, currency: Currency | null): Promise<{ modelId: string | null; opportunityId: string | null }> {
  let modelId = body.model_id ?? null;
  let refusal = modelId === null ? null : await modelRefusesOrders(client, account, modelId);
  if (refusal === 'model_not_found') throw modelNotFound(modelId!);
  let opportunityId: string | null = null;
  if (body.opportunity_id !== undefined) {
    const opportunity = await getOpportunity(client, account, body.opportunity_id);
    if (!opportunity) throw opportunityNotFound(body.opportunity_id);
    if (currency !== null && opportunity.currency !== currency) {
      throw new ApiError(400, 'currency_mismatch', `opportunity ${JSON.stringify(opportunity.opportunity_id)} holds ${opportunity.currency} orders; these legs are ${currency}`, {
        opportunity_id: opportunity.opportunity_id,
        opportunity_currency: opportunity.currency,
        currency,
      });
    }
    if (modelId !== null && opportunity.model_id !== modelId) {
      throw new ApiError(400, 'model_mismatch', `opportunity ${JSON.stringify(opportunity.opportunity_id)} belongs to ${opportunity.model_id === null ? 'no model' : `model ${JSON.stringify(opportunity.model_id)}`}, not ${JSON.stringify(modelId)}`, {
        opportunity_id: opportunity.opportunity_id,
        opportunity_model_id: opportunity.model_id,
        model_id: modelId,
      });
    }
    if (modelId === null && opportunity.model_id !== null) {
      modelId = opportunity.model_id;
      refusal = await modelRefusesOrders(client, account, modelId);
    }
    opportunityId = opportunity.opportunity_id;
  }
  if (refusal !== null) throw modelError(refusal, { model_id: modelId ?? undefined });
  return { modelId, opportunityId };
}
