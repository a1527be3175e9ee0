/**
 * A practice (paper) buy, written one of two ways with the same answer and the same rows (docs/orders.md
 * "Buy"):
 *
 * - inTransaction: one PostgreSQL transaction with the key's record (runIdempotent): claim the key,
 *   lock the account, check the model and a joined opportunity, then plan and place each leg as
 *   sequenceLegs orders them (BuyRun), record the answer, commit.
 * - inOneStatement: the legs are planned first, outside any transaction, by the same step
 *   (BuyRun.planLeg), the catalog facts coming from this process's copies. When every leg plans,
 *   every leg is placed whatever on_leg_failure, check_all_first and placement say, provided the
 *   wallet covers them: the answer is known before anything is written. It is built here as the
 *   transaction builds it, and one statement (flow_paper_buy) claims the key, takes the locks in the
 *   transaction's order, checks what the plan took as given, writes every row and event and records
 *   the answer, or answers the key's replay, 409 or 422. The relay's wake-up for its events is sent
 *   right after the commit (OutboxWaker), not in it: a notifying commit holds PostgreSQL's
 *   cluster-wide NOTIFY lock through its WAL flush.
 *
 * buy() tries the statement and runs the transaction when it cannot answer: a leg that does not plan,
 * a request that joins an opportunity, or the statement finding an assumption false (then it wrote
 * nothing). A buy costs the statement one round trip to PostgreSQL (the write; the paper terms are
 * exact decimal arithmetic here, src/domain/paper-terms.ts) where the transaction costs a dozen.
 */
import { Counter, type Registry } from 'prom-client';
import type { Currency } from '../../../src/domain/account.js';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { sequenceLegs } from '../../../src/domain/router-orders.js';
import { ApiError } from '../../../src/errors.js';
import { newId } from '../../../src/ids.js';
import { lockAccount } from '../../../src/store/pg/accounts.js';
import { IDEMPOTENCY_TTL_MS, runIdempotent, settledClaim, type IdempotencyScope, type IdempotentResponse } from '../../../src/store/pg/idempotency.js';
import { OutboxWaker } from '../../../src/store/pg/outbox.js';
import { paperBuy } from '../../../src/store/pg/paper-buys.js';
import type { Pool, PoolClient } from '../../../src/store/pg/pool.js';
import type { HotState } from '../../../src/store/redis/hot.js';
import type { BuyBodyT } from './body.js';
import { ContestQuotes } from './contest-quotes.js';
import { buyAnswer, BuyRun } from './execution.js';
import { CatalogCopies } from './plan-catalog.js';
import { orderTargets } from './request.js';

export interface PracticeBuyRequest {
  account: string;
  scope: IdempotencyScope;
  body: Pick<BuyBodyT, 'model_id' | 'opportunity_id' | 'on_leg_failure' | 'check_all_first' | 'placement'>;
  legs: readonly ResolvedLeg[];
  /** The request's one currency (null when no leg names a mode). */
  currency: Currency | null;
  /** The request's instant (ms). */
  atMs: number;
}

/** How often, and how far apart, the transaction's claim is tried again after its statement handed back. */
const CLAIM_RETRIES = 20;
const CLAIM_RETRY_MS = 2;

export class PracticeBuys {
  /** The copies of catalog facts the statement's plans take as given (it checks them again). */
  readonly catalog = new CatalogCopies();
  readonly quotes: ContestQuotes;
  private readonly served: Counter<'path' | 'reason'>;
  private readonly waker: OutboxWaker;

  constructor(private readonly d: { pool: Pool; hot: HotState; metrics: Registry }) {
    this.quotes = new ContestQuotes(d.hot);
    this.waker = new OutboxWaker(d.pool);
    this.served = new Counter({
      name: 'flow_practice_buys_total',
      help: 'Practice buys by how they were written: path one_statement, or transaction with the reason the statement could not answer (unplanned, opportunity, no_account, model, catalog, wallet)',
      labelNames: ['path', 'reason'] as const,
      registers: [d.metrics],
    });
  }

  async buy(q: PracticeBuyRequest): Promise<IdempotentResponse> {
    const one = await this.inOneStatement(q);
    if (one) return one;
    // The statement that just handed back may still hold the key's claim for a moment: pg rejects the
    // query on the server's error, before the server has ended that statement's transaction (at the
    // following Sync), and the transaction runs on another connection. Its claim would then read our
    // own key as in use; it is tried again briefly (a genuinely concurrent request with this key still
    // gets its 409, a few milliseconds later).
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inTransaction(q);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 'idempotency_key_in_use') || attempt >= CLAIM_RETRIES) throw err;
        await new Promise((r) => setTimeout(r, CLAIM_RETRY_MS));
      }
    }
  }

  /** The buy's answer from one statement, or null when the transaction has to answer it (nothing was written). */
  async inOneStatement(q: PracticeBuyRequest): Promise<IdempotentResponse | null> {
    // Joining an opportunity reads its orders and may take its model: the transaction's work.
    if (q.body.opportunity_id !== undefined) return this.fallback('opportunity');
    const modelId = q.body.model_id ?? null;
    // Planning reads on the pool, so no connection waits on the hot state.
    const run = this.run(q, this.d.pool, modelId, null, this.catalog);
    const opportunityId = newId('opp');
    const placements = await run.placements(q.legs, opportunityId);
    if (placements === null) return this.fallback('unplanned');
    const results = [];
    for (const p of placements) results.push(await run.result(p.leg, { placed: p.view, status: 'completed' }));
    const response = buyAnswer({ results, halted_at_index: null, opportunity_id: run.opportunity, model_id: modelId }, q.atMs);
    const r = await paperBuy(this.d.pool, {
      scope: q.scope,
      modelId,
      opportunityId,
      internalBooks: await run.pricedWithout(),
      legs: placements.map((p) => p.write),
      response,
      ttlMs: IDEMPOTENCY_TTL_MS,
    });
    if (r.outcome === 'transaction') {
      if (r.reason === 'catalog') this.catalog.drop(placements.map((p) => p.write.order.position_hash));
      return this.fallback(r.reason);
    }
    this.served.inc({ path: 'one_statement', reason: '' });
    if (r.outcome !== 'created') return settledClaim(r);
    // Its events are committed: wake the relay now (the statement left the NOTIFY to us).
    this.waker.wake();
    return response;
  }

  /** The buy in its transaction: every case, in the order the rules take them. */
  async inTransaction(q: PracticeBuyRequest): Promise<IdempotentResponse> {
    const { account, body, legs } = q;
    const { response } = await runIdempotent(this.d.pool, q.scope, async (client) => {
      // The account first, then the model: the order every writer takes them in (an unarchive
      // holds the account while it locks the model), so a buy and an unarchive never deadlock.
      // A buy's legs serialize on the account's wallet anyway.
      if (!(await lockAccount(client, account))) throw new ApiError(404, 'not_found', 'the acting account does not exist');
      const targets = await orderTargets(client, account, body, q.currency);
      const run = this.run(q, client, targets.modelId, targets.opportunityId);
      const { outcomes, haltedAt } = await sequenceLegs(
        legs,
        { halt: body.on_leg_failure === 'halt', checkAllFirst: body.check_all_first === true, parallel: body.placement === 'parallel' },
        { checkAll: (l) => run.checkAll(l), place: (l) => run.place(l) },
      );
      const results = [];
      for (const [i, o] of outcomes.entries()) results.push(await run.result(legs[i]!, o));
      return buyAnswer({ results, halted_at_index: haltedAt, opportunity_id: run.opportunity, model_id: targets.modelId }, q.atMs);
    });
    return response;
  }

  private run(q: PracticeBuyRequest, client: PoolClient | Pool, modelId: string | null, joinedOpportunityId: string | null, catalog?: CatalogCopies): BuyRun {
    return new BuyRun(
      { client, hot: this.d.hot, quotes: this.quotes, catalog, account: q.account, idempotencyKey: q.scope.key, at: new Date(q.atMs).toISOString(), modelId, joinedOpportunityId, currency: q.currency },
      q.legs,
    );
  }

  private fallback(reason: string): null {
    this.served.inc({ path: 'transaction', reason });
    return null;
  }
}
