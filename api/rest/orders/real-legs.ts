/**
 * A buy of real-money legs (docs/orders.md "Real-money legs"). Unlike a practice buy it cannot be
 * one transaction: each leg waits on a venue. So:
 *
 * 1. The Idempotency-Key record is claimed and committed `running` under a lease (with the
 *    request-level rule-8 checks and the user's trade grants in the same transaction: a refused
 *    request writes nothing, and its key stays free for the corrected request).
 * 2. Each leg runs the preflight checks (LegChecker: one implementation), then its intent (the
 *    order row, with the client_order_id the venue sees) is committed, its job enqueued on the
 *    venue's execute queue, and the leg's decision awaited (bounded: past it the leg answers
 *    pending, and the legs after it are not placed). Legs follow rules 2-5 (sequenceLegs): one at a
 *    time in array order, halt, check_all_first, parallel across venues.
 * 3. The record is finished with the response, which later calls with the key replay.
 *
 * The runner renews its lease while it works. Should the process die, the record stays running;
 * once the lease lapses the same key and body resume the buy: every leg with an intent is taken
 * from its row (an undecided one enqueued again: the worker reconciles with the venue before
 * deciding), every leg without one runs as new. Nothing is placed twice: a leg's intent is unique
 * per (account, key, leg), and its client_order_id is derived from them.
 */
import type { Currency } from '../../../src/domain/account.js';
import { exposureOf, limitBreach, type AccountPolicy } from '../../../src/domain/execution-limits.js';
import { envelope } from '../../../src/domain/envelope.js';
import { microsText, parseMicros } from '../../../src/domain/money.js';
import { haltedResult, limitRefusal, type LegPlan, type LiveBookReader, type PreflightResult } from '../../../src/domain/order-checks.js';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { checkFailure, placedResult, sequenceLegs, type BuyResponse, type LegFailure, type LegOutcome, type RouterOrderResult } from '../../../src/domain/router-orders.js';
import { ApiError } from '../../../src/errors.js';
import { newId } from '../../../src/ids.js';
import type { Logger } from '../../../src/log.js';
import type { Partner } from '../../../src/domain/catalog.js';
import { lockAccount } from '../../../src/store/pg/accounts.js';
import { positionsByHash } from '../../../src/store/pg/catalog.js';
import { buyLegOrderOf, ordersOfBuy, OrderDecisions, type BuyLegOrder } from '../../../src/store/pg/executions.js';
import { claimLeasedKey, finishLeasedKey, keyInUse, leaseKey, renewKeyLease, settledClaim, type IdempotencyScope, type IdempotentResponse } from '../../../src/store/pg/idempotency.js';
import { getOpportunity, openOpportunity } from '../../../src/store/pg/opportunities.js';
import { insertOrder } from '../../../src/store/pg/orders.js';
import { inTransaction, type Pool, type PoolClient } from '../../../src/store/pg/pool.js';
import { accountPolicy, lockAccountLimits } from '../../../src/store/pg/policy.js';
import type { Keyspace } from '../../../src/store/redis/client.js';
import type { HotState } from '../../../src/store/redis/hot.js';
import { ExecuteProducer } from '../../../pipelines/producers/execute.js';
import type { BuyBodyT } from './body.js';
import { LegChecker } from './checks.js';
import { clientOrderId } from './execution.js';
import { checkTradeGrants, orderTargets } from './request.js';

/** How long a runner's lease on its key lasts unless renewed, and how often it renews (a third of it). */
export const BUY_LEASE_MS = 30_000;

export interface RealBuyDeps {
  pool: Pool;
  databaseUrl: string;
  redisUrl: string;
  ks: Keyspace;
  hot: HotState;
  live: LiveBookReader;
  log: Pick<Logger, 'warn' | 'info'>;
  now(): number;
  /** How long a leg's decision is awaited before it answers pending. */
  waitMs: number;
}

export interface RealBuyRequest {
  account: string;
  scope: IdempotencyScope;
  body: BuyBodyT;
  legs: readonly ResolvedLeg[];
  partners: readonly Partner[];
  atMs: number;
}

/** One app's real-money buys: the execute queues and the decision waiter are opened on first use and closed with the app. */
export class RealBuys {
  private producerOf: ExecuteProducer | null = null;
  private decisionsOf: OrderDecisions | null = null;

  constructor(private readonly d: RealBuyDeps) {}

  private get producer(): ExecuteProducer {
    return (this.producerOf ??= new ExecuteProducer(this.d.redisUrl, this.d.ks));
  }

  private get decisions(): OrderDecisions {
    return (this.decisionsOf ??= new OrderDecisions(this.d.pool, this.d.databaseUrl, { log: this.d.log }));
  }

  /** Runs (or resumes, or replays) the buy and answers it. */
  async buy(q: RealBuyRequest): Promise<IdempotentResponse> {
    const { pool } = this.d;
    const owner = newId('lease');
    const claimed = await inTransaction(pool, async (c) => {
      const claim = await claimLeasedKey(c, q.scope);
      if (claim.outcome === 'fresh') {
        // Rule 8 and the grants with the claim: a refusal rolls back, and nothing is recorded for the key.
        if (!(await lockAccount(c, q.account))) throw new ApiError(404, 'not_found', 'the acting account does not exist');
        const targets = await orderTargets(c, q.account, q.body, 'USD');
        await checkTradeGrants(c, q.account, q.legs);
        await leaseKey(c, q.scope, owner, BUY_LEASE_MS);
        return { claim, targets };
      }
      if (claim.outcome === 'resume') await leaseKey(c, q.scope, owner, BUY_LEASE_MS);
      return { claim, targets: null };
    });
    if (claimed.claim.outcome !== 'fresh' && claimed.claim.outcome !== 'resume') return settledClaim(claimed.claim);

    let lost = false;
    const renew = setInterval(() => {
      renewKeyLease(pool, q.scope, owner, BUY_LEASE_MS)
        .then((ok) => {
          if (!ok) lost = true;
        })
        .catch((err: unknown) => this.d.log.warn({ err }, 'renewing a buy’s Idempotency-Key lease failed; retried'));
    }, BUY_LEASE_MS / 3);
    renew.unref();
    try {
      const existing = await ordersOfBuy(pool, q.account, q.scope.key);
      const targets = claimed.targets ?? (await resumedTargets(pool, q.account, q.body, existing));
      const run = new RealBuyRun(this.d, { producer: this.producer, decisions: this.decisions, stillOurs: () => !lost }, q, targets, existing);
      const data = await run.run();
      const response = { status: 200, body: JSON.stringify(envelope(data, q.atMs)) };
      if (!(await finishLeasedKey(pool, q.scope, owner, response))) throw keyInUse();
      return response;
    } finally {
      clearInterval(renew);
    }
  }

  async close(): Promise<void> {
    await this.decisionsOf?.close();
    await this.producerOf?.close();
  }
}

interface Targets {
  modelId: string | null;
  opportunityId: string | null;
}

/**
 * A resumed buy's model and opportunity: those its orders were filed under, else the request's
 * (rule 8 held when the first runner claimed the key; it is not asked again of a buy that may have
 * placed legs already).
 */
async function resumedTargets(pool: Pool, account: string, body: BuyBodyT, existing: ReadonlyMap<number, BuyLegOrder>): Promise<Targets> {
  const first = [...existing.values()][0];
  if (first) return { modelId: first.order.model_id, opportunityId: first.order.opportunity_id };
  const joined = body.opportunity_id === undefined ? null : await getOpportunity(pool, account, body.opportunity_id);
  return { modelId: body.model_id ?? joined?.model_id ?? null, opportunityId: joined?.opportunity_id ?? null };
}

/** What a placed leg came to: its order as it stands, and why it is not decided when it is not. */
interface Placed {
  leg: BuyLegOrder;
  /** Set when the wait ran out before the decision. */
  undecided: string | null;
}

interface RunTools {
  producer: ExecuteProducer;
  decisions: OrderDecisions;
  /** false once another runner took the key's record over: place nothing more. */
  stillOurs(): boolean;
}

class RealBuyRun {
  private checker: Promise<LegChecker> | null = null;
  private readonly checked = new Map<number, PreflightResult>();
  private readonly prechecked = new Map<number, { result: PreflightResult; plan: LegPlan | null }>();
  private readonly sor: string[];
  private opportunityId: string | null;
  private wrote: boolean;
  /** Lanes whose last leg was not decided in time: nothing more is placed in them. */
  private readonly stalled = new Map<string, number>();
  private readonly parallel: boolean;

  constructor(
    private readonly d: RealBuyDeps,
    private readonly tools: RunTools,
    private readonly q: RealBuyRequest,
    private readonly targets: Targets,
    private readonly existing: Map<number, BuyLegOrder>,
  ) {
    this.sor = q.legs.map((l) => existing.get(l.index)?.sor_decision_id ?? newId('sor'));
    this.opportunityId = targets.opportunityId;
    this.wrote = existing.size > 0;
    this.parallel = q.body.placement === 'parallel';
  }

  async run(): Promise<BuyResponse> {
    const { legs, body } = this.q;
    const { outcomes, haltedAt } = await sequenceLegs(
      legs,
      { halt: body.on_leg_failure === 'halt', checkAllFirst: body.check_all_first === true, parallel: this.parallel },
      { checkAll: () => this.checkAll(), place: (l) => this.place(l), lane: (l) => this.laneOf(l) },
    );
    return {
      results: outcomes.map((o, i) => this.result(legs[i]!, o)),
      halted_at_index: haltedAt,
      opportunity_id: this.wrote ? this.opportunityId : null,
      model_id: this.targets.modelId,
    };
  }

  /** Under placement parallel a venue's legs share a lane (rule 5); otherwise every leg does. */
  private laneOf(leg: ResolvedLeg): string {
    return this.parallel ? leg.partner_id : '';
  }

  private checks(): Promise<LegChecker> {
    const { body, legs, account, partners } = this.q;
    // Halting is sequenceLegs'; the batch sums affordability over the legs that would place.
    return (this.checker ??= LegChecker.load(
      { pool: this.d.pool, hot: this.d.hot, live: this.d.live, now: this.d.now },
      { routerAccountId: account, legs, verifyLiquidity: body.verify_liquidity === true, checkAllFirst: body.check_all_first === true, onLegFailure: 'continue', partners },
      { halt: false, checkAllFirst: true },
    ));
  }

  /** check_all_first: every leg's checks at once, then affordability in leg order (legs a resumed buy already wrote pass). */
  private async checkAll(): Promise<(LegFailure | null)[]> {
    const checker = await this.checks();
    const todo = this.q.legs.filter((l) => !this.existing.has(l.index));
    await Promise.all(todo.map((l) => checker.check(l.index)));
    const failures: (LegFailure | null)[] = this.q.legs.map(() => null);
    for (const l of todo) {
      const settled = await checker.settle(l.index);
      this.prechecked.set(l.index, settled);
      this.checked.set(l.index, settled.result);
      if (!settled.plan) failures[l.index] = checkFailure(settled.result);
    }
    return failures;
  }

  private async place(leg: ResolvedLeg): Promise<LegOutcome<Placed>> {
    const had = this.existing.get(leg.index);
    if (had) return this.await(had);
    const lane = this.laneOf(leg);
    const stalledAt = this.stalled.get(lane);
    if (stalledAt !== undefined) {
      return { failure: { status: 'rejected', code: null, reason: `not placed: leg ${stalledAt} was not decided within ${this.d.waitMs / 1000} s (it is pending) and the legs after it wait for it; send this leg again once it is` } };
    }
    if (!this.tools.stillOurs()) throw keyInUse();
    let settled = this.prechecked.get(leg.index);
    if (!settled) {
      settled = await (await this.checks()).settle(leg.index);
      this.checked.set(leg.index, settled.result);
    }
    if (!settled.plan) return { failure: checkFailure(settled.result) };
    const written = await this.writeIntent(leg, settled.plan);
    if ('failure' in written) return written;
    return this.await(written.leg);
  }

  /** The account's limits with its exposure, read under the limits lock; null when it has no limits (nothing to lock for). */
  private async limitsFor(c: PoolClient): Promise<AccountPolicy | null> {
    if ((await this.checks()).inputs.policy.limits.length === 0) return null;
    await lockAccountLimits(c, this.q.account);
    return accountPolicy(c, this.q.account);
  }

  /** The leg's order row as an intent (with the opportunity, opened with the buy's first order), committed before any venue call. */
  private async writeIntent(leg: ResolvedLeg, plan: LegPlan): Promise<{ leg: BuyLegOrder } | { failure: LegFailure }> {
    const { account, scope } = this.q;
    // The checks passed, so the leg's position exists.
    const positionHash = (await this.checks()).inputs.markets[leg.index]!.position_hash!;
    const position = (await positionsByHash(this.d.pool, [positionHash])).get(positionHash)!;
    const requested = leg.amount !== null ? microsText(parseMicros(String(leg.amount), 'floor').micros) : microsText(plan.amount);
    try {
      const order = await inTransaction(this.d.pool, async (c) => {
        // The limits once more, under the account's limits lock, against the exposure as committed now
        // (this request's earlier legs and other buys' intents included): the check and this intent are
        // one step, so concurrent buys cannot together pass a limit that only one of them fits.
        const policy = await this.limitsFor(c);
        if (policy !== null) {
          const breach = limitBreach(policy.limits, { mode: 'real', partner_id: plan.partner_id, league_id: position.league_id, stake: plan.amount }, exposureOf(policy, plan.partner_id, position.league_id));
          if (breach) return { breach: limitRefusal(breach, plan.partner_id) };
        }
        let opportunityId = this.opportunityId;
        if (opportunityId === null) {
          const opened = await openOpportunity(c, { routerAccountId: account, modelId: this.targets.modelId, currency: 'USD' satisfies Currency });
          if (!opened.ok) return { refusal: opened.refusal };
          opportunityId = opened.opportunity.opportunity_id;
        }
        const o = await insertOrder(c, {
          router_order_id: newId('ord'),
          router_account_id: account,
          opportunity_id: opportunityId,
          model_id: this.targets.modelId,
          idempotency_key: scope.key,
          leg_index: leg.index,
          client_order_id: clientOrderId(account, scope.key, leg.index),
          sor_decision_id: this.sor[leg.index]!,
          partner_id: plan.partner_id,
          requested_partner_id: leg.partner_id,
          currency: 'USD',
          mode: 'real',
          order_type: leg.order_type,
          position_hash: positionHash,
          liquidity_hash: leg.liquidity_hash,
          price_partner_id: null,
          price_liquidity_hash: null,
          contest_id: position.contest_id,
          title: position.title,
          requested_amount: leg.amount === null ? null : requested,
          requested_shares: leg.shares === null ? null : String(leg.shares),
          max_price: String(leg.max_price),
          amount: requested,
          avg_price: null,
          filled_notional: '0',
          filled_shares: '0',
          unfilled_notional: requested,
          fee: '0',
          leg_status: 'pending',
          status: 'pending',
          fill_status: 'unfilled',
          rejected_code: null,
          rejected_reason: null,
          exec_state: 'intent',
          send_amount: leg.amount !== null ? microsText(plan.amount) : null,
          send_shares: leg.amount === null ? microsText(plan.contracts) : null,
          limit_price: microsText(plan.limit),
          commitment: microsText(plan.commitment),
        });
        return { opportunityId, order: o };
      });
      if ('breach' in order && order.breach) return { failure: { status: 'failed', code: 'execution_limit_exceeded', reason: order.breach.reason } };
      if ('refusal' in order) {
        return { failure: { status: 'rejected', code: null, reason: `not placed: the model is ${order.refusal === 'model_archived' ? 'archived' : 'gone'} since this buy began` } };
      }
      this.opportunityId = order.opportunityId;
      this.wrote = true;
      return { leg: (await buyLegOrderOf(this.d.pool, order.order.router_order_id))! };
    } catch (err) {
      // Another runner of this key (one that lost its lease and has not noticed yet) wrote the leg first: it is the same leg.
      if ((err as { code?: string }).code !== '23505') throw err;
      const theirs = (await ordersOfBuy(this.d.pool, account, scope.key)).get(leg.index);
      if (!theirs) throw err;
      return { leg: theirs };
    }
  }

  /** Enqueues the leg (again: a no-op while its job exists) and waits for its decision, within the wait. */
  private async await(leg: BuyLegOrder): Promise<LegOutcome<Placed>> {
    const id = leg.order.router_order_id;
    let now = leg;
    if (leg.exec_state !== 'decided') {
      try {
        await this.tools.producer.enqueue(leg.order.partner_id, id);
      } catch (err) {
        // The intent is in PostgreSQL: the execute role's sweep enqueues it.
        this.d.log.warn({ err, router_order_id: id }, 'enqueueing a real-money leg failed; the execute role’s sweep will');
      }
      await this.tools.decisions.wait(id, this.d.waitMs);
      now = (await buyLegOrderOf(this.d.pool, id)) ?? leg;
    }
    if (now.exec_state !== 'decided') {
      const lane = this.laneOf(this.q.legs[now.leg_index]!);
      if (!this.stalled.has(lane)) this.stalled.set(lane, now.leg_index);
      return {
        placed: { leg: now, undecided: `not decided within ${this.d.waitMs / 1000} s: the leg is queued for its venue (or at it); its outcome arrives on the orders channel and in GET orders` },
        status: 'pending',
      };
    }
    return { placed: { leg: now, undecided: null }, status: now.order.leg_status };
  }

  /** The leg's result as the buy answers it. */
  private result(leg: ResolvedLeg, o: LegOutcome<Placed>): RouterOrderResult {
    const base = { index: leg.index, sor_decision_id: this.sor[leg.index]!, requested_partner_id: leg.partner_id };
    if ('placed' in o) {
      const { leg: row, undecided } = o.placed;
      const order = row.order;
      const ok = o.status !== 'failed' && o.status !== 'rejected';
      const reason = undecided ?? row.rejected_reason ?? notCompleted(o.status, order.partner_id);
      return placedResult(base, o.status, order, { reason: o.status === 'completed' ? null : reason, code: ok ? null : row.rejected_code, success: ok });
    }
    const checked = this.checked.get(leg.index);
    return {
      ...base,
      status: o.failure.status,
      filled_notional: 0,
      filled_shares: 0,
      unfilled_notional: (checked ?? haltedResult(leg, leg.index)).unfilled_amount,
      avg_price: 0,
      rejected_reason: o.failure.reason,
      rejected_code: o.failure.code,
      venues: [],
    };
  }
}

/** The reason text of a leg the venue decided without completing it. */
function notCompleted(status: string, partnerId: string): string | null {
  if (status === 'resting') return `resting on ${partnerId} at its limit; fills arrive on the orders channel`;
  if (status === 'pending') return `accepted by ${partnerId}, which confirms fills later; they arrive on the orders channel`;
  return null;
}
