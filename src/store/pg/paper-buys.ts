/**
 * A practice buy in one statement and so one round trip (flow_paper_buy, migration 13), for a buy
 * whose every leg was planned before it: the Idempotency-Key's claim, the account's lock, the
 * model's share lock, each leg's wallet debit, order row and events, the opportunity, and the key's
 * record of the response the caller built from the plan. It writes what the buy's transaction
 * (runIdempotent + BuyRun) writes, in that order, under those locks. When that transaction would
 * answer anything else (a missing account, a model that refuses orders, a catalog fact the plan took
 * from a copy that no longer holds, a leg the wallet cannot cover), the statement writes nothing and
 * answers `transaction` with the reason: the caller runs the transaction, which answers it.
 */
import { newId } from '../../ids.js';
import type { IdempotencyScope, IdempotentResponse, KeyClaim } from './idempotency.js';
import type { NewOrder } from './orders.js';
import type { Pool, PoolClient } from './pool.js';
import { PRACTICE_BALANCE_CAP, PRACTICE_OPENING_BALANCE } from './wallet.js';

/** One leg as the statement writes it. */
export interface PaperBuyLeg {
  /** The order row (insertOrder's columns). */
  order: NewOrder;
  /** Exact decimal text: what the wallet is debited. */
  stake: string;
  /** The debit's description. */
  description: string;
  /** The order.update event, whole. */
  orderEvent: object;
  /** The order_hold balance event's fixed fields; the statement fills in balance, venue_balance, balance_version and balance_as_of from the debit. */
  balanceEvent: object;
}

export interface PaperBuyInput {
  scope: IdempotencyScope;
  modelId: string | null;
  /** The opportunity the first order opens. */
  opportunityId: string;
  /** The internal-book partners the plan priced without (checked against the catalog). */
  internalBooks: readonly string[];
  legs: readonly PaperBuyLeg[];
  /** The answer when every leg is placed, recorded under the key. */
  response: IdempotentResponse;
  ttlMs: number;
}

/** Why the buy has to run its transaction instead (flow_paper_buy's FL001 detail). */
export type PaperBuyFallback = 'no_account' | 'model' | 'catalog' | 'wallet';

export type PaperBuyOutcome = ({ outcome: 'created' } | KeyClaim) | { outcome: 'transaction'; reason: PaperBuyFallback };

/** The SQLSTATE flow_paper_buy raises when the buy has to run its transaction (the reason is the error's detail). */
export const PAPER_BUY_REFUSED = 'FL001';

/** Named: prepared once per connection. */
const STATEMENT = { name: 'flow_paper_buy', text: 'SELECT * FROM flow_paper_buy($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)' };

export async function paperBuy(db: Pool | PoolClient, b: PaperBuyInput): Promise<PaperBuyOutcome> {
  const legs = b.legs.map((l) => ({
    order: l.order,
    stake: l.stake,
    ledger_id: newId('svl'),
    opening_ledger_id: newId('svl'),
    description: l.description,
    order_event: l.orderEvent,
    balance_event: l.balanceEvent,
  }));
  const { scope: s } = b;
  try {
    const { rows } = await db.query<Omit<KeyClaim, 'outcome'> & { outcome: KeyClaim['outcome'] | 'created' }>({
      ...STATEMENT,
      values: [s.routerAccountId, s.key, s.operation, s.fingerprint, b.modelId, b.opportunityId, b.internalBooks, JSON.stringify(legs), String(PRACTICE_BALANCE_CAP), PRACTICE_OPENING_BALANCE, b.response.status, b.response.body, b.ttlMs],
    });
    const r = rows[0]!;
    return r.outcome === 'created' ? { outcome: 'created' } : { ...r, outcome: r.outcome };
  } catch (err) {
    const e = err as { code?: string; detail?: string };
    if (e.code === PAPER_BUY_REFUSED) return { outcome: 'transaction', reason: e.detail as PaperBuyFallback };
    throw err;
  }
}
