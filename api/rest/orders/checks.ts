/**
 * A request's per-leg checks end to end: read the inputs (src/store/order-inputs.ts), read live
 * books where verify_liquidity calls for it, check each leg (src/domain/order-checks.ts) and apply
 * affordability and halt across the request (LegBatch). Preflight answers with the results; the
 * buy runs the same before placing and places the passing legs' plans.
 *
 * Live reads (venue calls) happen only for legs that get that far: not for a leg refused before its
 * book is looked at, nor for legs a halt skips. With on_leg_failure halt and no check_all_first the
 * legs go one at a time, so a halted leg's venue is never called; otherwise the reads run at once.
 */
import type { Partner } from '../../../src/domain/catalog.js';
import {
  evaluateLeg,
  haltedResult,
  LegBatch,
  needsLiveBook,
  type LegEvaluation,
  type LegInput,
  type LegPlan,
  type LiveBook,
  type LiveBookReader,
  type PreflightResult,
} from '../../../src/domain/order-checks.js';
import type { OnLegFailure, ResolvedLeg } from '../../../src/domain/orders.js';
import { loadOrderInputs, type OrderInputs } from '../../../src/store/order-inputs.js';
import type { Pool } from '../../../src/store/pg/pool.js';
import type { HotState } from '../../../src/store/redis/hot.js';

export interface LegCheckDeps {
  pool: Pool;
  hot: HotState;
  /** The venues' live books (verify_liquidity); noLiveBooks where no adapter runs. */
  live: LiveBookReader;
  now(): number;
}

export interface LegCheckRequest {
  routerAccountId: string;
  legs: readonly ResolvedLeg[];
  verifyLiquidity: boolean;
  checkAllFirst: boolean;
  onLegFailure: OnLegFailure;
  /** The partner catalog when the caller has read it already. */
  partners?: readonly Partner[];
}

export interface LegChecks {
  /** One per leg, in request order. */
  results: PreflightResult[];
  /** The passing legs' orders in exact units (null for a refused or halted leg). */
  plans: (LegPlan | null)[];
  halted_at_index: number | null;
  inputs: OrderInputs;
}

/** Codes given before a leg's book is looked at: no live read can change them (the limits need the stake, not the book). */
const BEFORE_THE_BOOK = new Set(['orders_not_supported', 'venue_disabled', 'execution_limit_exceeded', 'no_live_price_for_paper']);

/**
 * A request's legs checked one at a time or all at once, on inputs read once: preflight checks
 * every leg up front (runLegChecks); the buy checks each leg right before it places it, or all of
 * them first under check_all_first, with the same functions and the same affordability batch.
 */
export class LegChecker {
  private readonly evaluations = new Map<number, Promise<LegEvaluation>>();

  private constructor(
    private readonly deps: LegCheckDeps,
    private readonly q: LegCheckRequest,
    readonly inputs: OrderInputs,
    /** Affordability across the legs settled so far (and halt, as the request asked). */
    readonly batch: LegBatch,
  ) {}

  static async load(deps: LegCheckDeps, q: LegCheckRequest, batchOpts?: { halt: boolean; checkAllFirst: boolean }): Promise<LegChecker> {
    const inputs = await loadOrderInputs(deps.pool, deps.hot, { routerAccountId: q.routerAccountId, legs: q.legs, nowMs: deps.now(), partners: q.partners });
    const batch = new LegBatch(inputs.funds, batchOpts ?? { halt: q.onLegFailure === 'halt', checkAllFirst: q.checkAllFirst }, inputs.policy);
    return new LegChecker(deps, q, inputs, batch);
  }

  /** The leg's own checks (the cached book, then the live one when verify_liquidity calls for it), worked out once. */
  check(i: number): Promise<LegEvaluation> {
    let e = this.evaluations.get(i);
    if (!e) this.evaluations.set(i, (e = this.evaluate(i)));
    return e;
  }

  /** The leg checked and settled against the batch (affordability): its final result and its plan. */
  async settle(i: number): Promise<{ result: PreflightResult; plan: LegPlan | null }> {
    return this.batch.settle(await this.check(i));
  }

  private async evaluate(i: number): Promise<LegEvaluation> {
    const { q, inputs } = this;
    const leg = q.legs[i]!;
    const input: LegInput = {
      leg,
      venue: inputs.partners.get(leg.partner_id) ?? null,
      practice: inputs.practice,
      access: inputs.access.get(leg.partner_id) ?? null,
      market: inputs.markets[i]!,
      verify: q.verifyLiquidity,
      live: null,
      policy: inputs.policy,
    };
    const cached = evaluateLeg(input);
    const r = cached.result;
    const reachedBook = r.accepted || (r.rejected_code !== null && !BEFORE_THE_BOOK.has(r.rejected_code));
    if (!q.verifyLiquidity || !reachedBook || !needsLiveBook(leg, input.market)) return cached;
    const live: LiveBook = { levels: await this.deps.live.read(leg.partner_id, input.market.position_hash!) };
    return evaluateLeg({ ...input, live });
  }
}

export async function runLegChecks(deps: LegCheckDeps, q: LegCheckRequest): Promise<LegChecks> {
  const checker = await LegChecker.load(deps, q);
  const { batch } = checker;
  const results: PreflightResult[] = [];
  const plans: (LegPlan | null)[] = [];
  const sequential = q.onLegFailure === 'halt' && !q.checkAllFirst;
  if (!sequential) await Promise.all(q.legs.map((_, i) => checker.check(i)));
  for (const [i, leg] of q.legs.entries()) {
    if (batch.skipping) {
      results.push(haltedResult(leg, batch.haltedAtIndex!));
      plans.push(null);
      continue;
    }
    const settled = await checker.settle(i);
    results.push(settled.result);
    plans.push(settled.plan);
  }
  return { results, plans, halted_at_index: batch.haltedAtIndex, inputs: checker.inputs };
}
