/**
 * One buy's legs, run inside its transaction (docs/orders.md "Buy"). Practice (paper) legs fill on
 * the internal book at the best live price across real venues (spec rule 11) and debit the practice
 * wallet in the same transaction as their order row and events. Real-money legs are placed by
 * real-legs.ts (a buy holds one currency).
 *
 * Planning (planLeg: the price, the size, every check before a write) is its own step: the
 * one-statement buy (practice-buy.ts) plans with it before any transaction and hands what placing
 * would write (placements) to one statement; the transaction plans with it, then places.
 */
import { practiceAccountPartnerId, PRACTICE_PARTNER_ID, type BalanceUpdateEvent, type Currency } from '../../../src/domain/account.js';
import type { ResolvedLeg } from '../../../src/domain/orders.js';
import { NO_POLICY } from '../../../src/domain/execution-limits.js';
import { microsText } from '../../../src/domain/money.js';
import { bestPaperQuote, evaluateLeg } from '../../../src/domain/order-checks.js';
import type { PartnerLiquidity } from '../../../src/domain/stream.js';
import {
  checkFailure,
  placedResult,
  orderUpdateEvent,
  type BuyResponse,
  type LegFailure,
  type LegOutcome,
  type PlacedOrderView,
  type RouterOrder,
  type RouterOrderResult,
} from '../../../src/domain/router-orders.js';
import { envelope } from '../../../src/domain/envelope.js';
import { ApiError } from '../../../src/errors.js';
import { newId, sha256Hex } from '../../../src/ids.js';
import type { IdempotentResponse } from '../../../src/store/pg/idempotency.js';
import { openOpportunity } from '../../../src/store/pg/opportunities.js';
import { paperTerms, type PaperTerms } from '../../../src/domain/paper-terms.js';
import { insertOrder, paperAffordable, writtenOrderView, type NewOrder } from '../../../src/store/pg/orders.js';
import type { PaperBuyLeg } from '../../../src/store/pg/paper-buys.js';
import { enqueueAccountEvent } from '../../../src/store/pg/outbox.js';
import type { Pool, PoolClient } from '../../../src/store/pg/pool.js';
import { appendPracticeEntry, practiceBalance } from '../../../src/store/pg/wallet.js';
import type { HotState } from '../../../src/store/redis/hot.js';
import { modelError } from '../account/models.js';
import type { ContestQuotes, PositionQuotes } from './contest-quotes.js';
import { READ_CATALOG, type PlanCatalog } from './plan-catalog.js';

/** What a paper leg will do once placed: where, at what price, for how much. */
interface PaperPlan {
  position_hash: string;
  contest_id: string;
  title: string;
  quote: PartnerLiquidity;
  terms: PaperTerms;
}

export interface BuyRunInput {
  /**
   * The buy's transaction. The one-statement buy gives the pool: it only plans (planning only
   * reads, each read on any connection), and checkAll and place refuse to run on it.
   */
  client: PoolClient | Pool;
  hot: HotState;
  /** The contests' quotes (the hot state's liquidity documents, parsed once per document). */
  quotes: ContestQuotes;
  /** Where planning finds positions and internal books: PostgreSQL on `client` unless given. */
  catalog?: PlanCatalog;
  account: string;
  idempotencyKey: string;
  /** The request's instant (ISO 8601), stamped on its events. */
  at: string;
  /** The model every order is filed under (the request's, or the joined opportunity's). */
  modelId: string | null;
  /** The opportunity joined, or null to open one with the first order written. */
  joinedOpportunityId: string | null;
  /** The request's one currency (null when no leg names a mode). */
  currency: Currency | null;
}

const rejected = (reason: string, code: LegFailure['code'] = null): LegFailure => ({ status: 'rejected', code, reason });
const failed = (reason: string, code: LegFailure['code']): LegFailure => ({ status: 'failed', code, reason });

/** At most six decimals (the ledgers' scale), plain notation: what a JSON number's shortest text shows when it is exact here. */
const SIX_DECIMALS = /^\d+(\.\d{1,6})?$/;

/** What placing a planned leg writes (the one-statement buy's leg) and how its order reads. */
export interface Placement {
  leg: ResolvedLeg;
  write: PaperBuyLeg;
  view: PlacedOrderView;
}

export class BuyRun {
  private readonly plans = new Map<number, Promise<PaperPlan | LegFailure>>();
  private readonly contests = new Map<string, Promise<PositionQuotes>>();
  private internalBooks: Promise<ReadonlySet<string>> | null = null;
  private opportunityId: string | null;
  /** Whether any order was written (then the opportunity is the joined or opened one). */
  private wrote = false;
  /** Each leg's sor_decision_id, by index. */
  private readonly decisions: string[];

  constructor(
    private readonly r: BuyRunInput,
    legs: readonly ResolvedLeg[],
  ) {
    this.opportunityId = r.joinedOpportunityId;
    this.decisions = legs.map(() => newId('sor'));
  }

  /** The opportunity the orders went under; null when no leg wrote an order. */
  get opportunity(): string | null {
    return this.wrote ? this.opportunityId : null;
  }

  /** check_all_first: every leg's plan, then the paper stakes against the wallet in leg order (rule 6). */
  async checkAll(legs: readonly ResolvedLeg[]): Promise<(LegFailure | null)[]> {
    // One after another: they share the transaction's connection, which runs one query at a time.
    const plans: (PaperPlan | LegFailure)[] = [];
    for (const l of legs) plans.push(await this.plan(l));
    const failures = plans.map((p) => ('status' in p ? p : null));
    const paper = plans.flatMap((p, i) => ('status' in p ? [] : [{ i, stake: p.terms.stake }]));
    if (paper.length > 0) {
      const tx = this.transaction();
      const fits = await paperAffordable(tx, await practiceBalance(tx, this.r.account), paper.map((p) => p.stake));
      paper.forEach((p, k) => {
        if (!fits[k]) failures[p.i] = insufficientBalance();
      });
    }
    return failures;
  }

  /** Places one leg: its plan, the wallet debit, the opportunity, the order row and its events. */
  async place(leg: ResolvedLeg): Promise<LegOutcome<RouterOrder>> {
    const plan = await this.plan(leg);
    if ('status' in plan) return { failure: plan };
    const client = this.transaction();
    const { account } = this.r;
    const routerOrderId = newId('ord');
    const debit = await appendPracticeEntry(client, account, { type: 'bet_debit', amount: `-${plan.terms.stake}`, router_order_id: routerOrderId, description: debitDescription(plan) });
    if (debit.outcome !== 'ok') {
      if (debit.outcome === 'no_account') throw new ApiError(404, 'not_found', 'the acting account does not exist');
      return { failure: insufficientBalance() };
    }
    const order = await insertOrder(client, this.paperOrder(leg, plan, routerOrderId, await this.ensureOpportunity()));
    this.wrote = true;
    await enqueueAccountEvent(client, account, 'orders', orderUpdateEvent(order, this.r.at));
    const balance: BalanceUpdateEvent = {
      ...this.orderHoldEvent(routerOrderId),
      balance: Number(debit.balance_after),
      venue_balance: Number(debit.balance_after),
      balance_version: debit.seq,
      balance_as_of: debit.created_at,
    };
    await enqueueAccountEvent(client, account, 'balance', balance);
    return { placed: order, status: 'completed' };
  }

  /**
   * The one-statement buy: what placing each leg writes, when every leg plans (then, whatever
   * on_leg_failure, check_all_first and placement say, every leg is placed, provided the wallet
   * covers them, which the statement checks); null when one does not (the transaction answers it).
   */
  async placements(legs: readonly ResolvedLeg[], opportunityId: string): Promise<Placement[] | null> {
    const out: Placement[] = [];
    for (const leg of legs) {
      const plan = await this.plan(leg);
      if ('status' in plan) return null;
      const order = this.paperOrder(leg, plan, newId('ord'), opportunityId);
      out.push({
        leg,
        write: { order, stake: plan.terms.stake, description: debitDescription(plan), orderEvent: orderUpdateEvent(writtenOrderView(order), this.r.at), balanceEvent: this.orderHoldEvent(order.router_order_id) },
        view: writtenOrderView(order),
      });
    }
    this.opportunityId = opportunityId;
    this.wrote = out.length > 0;
    return out;
  }

  /** The internal books the legs were priced without (read once per buy, by the first leg priced). */
  async pricedWithout(): Promise<string[]> {
    return this.internalBooks === null ? [] : [...(await this.internalBooks)];
  }

  /** The order row of a planned paper leg. */
  private paperOrder(leg: ResolvedLeg, plan: PaperPlan, routerOrderId: string, opportunityId: string): NewOrder {
    const { account } = this.r;
    return {
      router_order_id: routerOrderId,
      router_account_id: account,
      opportunity_id: opportunityId,
      model_id: this.r.modelId,
      idempotency_key: this.r.idempotencyKey,
      leg_index: leg.index,
      client_order_id: clientOrderId(account, this.r.idempotencyKey, leg.index),
      sor_decision_id: this.decisions[leg.index]!,
      partner_id: PRACTICE_PARTNER_ID,
      requested_partner_id: leg.partner_id,
      currency: 'ATLAS',
      mode: 'paper',
      order_type: leg.order_type,
      position_hash: plan.position_hash,
      liquidity_hash: leg.liquidity_hash,
      price_partner_id: plan.quote.partner_id,
      price_liquidity_hash: plan.quote.liquidity_hash,
      contest_id: plan.contest_id,
      title: plan.title,
      requested_amount: leg.amount === null ? null : String(leg.amount),
      requested_shares: leg.shares === null ? null : String(leg.shares),
      max_price: String(leg.max_price),
      amount: plan.terms.stake,
      avg_price: String(plan.quote.price),
      filled_notional: plan.terms.stake,
      filled_shares: plan.terms.shares,
      unfilled_notional: '0',
      fee: '0',
      leg_status: 'completed',
      // A filled practice order holds its position until the contest settles.
      status: 'open',
      fill_status: 'filled',
      rejected_code: null,
      rejected_reason: null,
    };
  }

  /** A debit's balance event, but for the fields the debit decides (balance, venue_balance, balance_version, balance_as_of). */
  private orderHoldEvent(routerOrderId: string): Omit<BalanceUpdateEvent, 'balance' | 'venue_balance' | 'balance_version' | 'balance_as_of'> {
    return {
      type: 'balance.update',
      account_partner_id: practiceAccountPartnerId(this.r.account),
      partner_id: PRACTICE_PARTNER_ID,
      currency: 'ATLAS',
      pending: 0,
      cause: 'order_hold',
      router_order_id: routerOrderId,
      timestamp: this.r.at,
    };
  }

  /** The leg's result as the buy answers it. */
  async result(leg: ResolvedLeg, o: LegOutcome<PlacedOrderView>): Promise<RouterOrderResult> {
    const base = { index: leg.index, sor_decision_id: this.decisions[leg.index]!, requested_partner_id: leg.partner_id };
    if ('placed' in o) return placedResult(base, o.status, o.placed);
    return {
      ...base,
      status: o.failure.status,
      filled_notional: 0,
      filled_shares: 0,
      unfilled_notional: await this.notionalAsked(leg),
      avg_price: 0,
      rejected_reason: o.failure.reason,
      rejected_code: o.failure.code,
      venues: [],
    };
  }

  /** What the leg asked for in money: its amount, or its shares at the price it was planned at (0 when never priced). */
  private async notionalAsked(leg: ResolvedLeg): Promise<number> {
    if (leg.amount !== null) return leg.amount;
    const plan = this.plans.get(leg.index);
    const p = plan ? await plan : null;
    return p && !('status' in p) ? Number(p.terms.stake) : 0;
  }

  /** The leg's plan, worked out once per buy (check_all_first and placement share it). */
  private plan(leg: ResolvedLeg): Promise<PaperPlan | LegFailure> {
    let p = this.plans.get(leg.index);
    if (!p) this.plans.set(leg.index, (p = this.planLeg(leg)));
    return p;
  }

  private async planLeg(leg: ResolvedLeg): Promise<PaperPlan | LegFailure> {
    if (leg.unplannable !== null) return rejected(leg.unplannable);
    // A buy with a real leg runs real-legs.ts (one currency per buy): none reaches here.
    if (leg.mode !== 'paper') return rejected('not a practice leg');
    const size = leg.amount !== null ? String(leg.amount) : String(leg.shares);
    if (!SIX_DECIMALS.test(size)) return rejected(`${leg.amount !== null ? 'amount' : 'shares'} ${size} has more than 6 decimals; practice orders are booked to 6`);

    const positionHash = leg.position_hash ?? (await this.r.hot.positionOfLiquidityHash(leg.liquidity_hash!));
    if (positionHash === null) return rejected(`no open contest has a quote under liquidity_hash ${JSON.stringify(leg.liquidity_hash)}`);
    const catalog = this.r.catalog ?? READ_CATALOG;
    const position = await catalog.position(this.r.client, positionHash);
    if (!position) return rejected(`unknown position_hash ${JSON.stringify(positionHash)}`);

    const quotes = (await this.quotesOf(position.contest_id)).get(positionHash) ?? [];
    const internal = await (this.internalBooks ??= catalog.internalBooks(this.r.client));
    const quote = bestPaperQuote(quotes, (q) => internal.has(q.partner_id) || q.partner_id === PRACTICE_PARTNER_ID);
    if (quote === null) {
      return rejected('no real venue quotes this position live with at least USD 1 available: a practice order has no price to fill at', 'no_live_price_for_paper');
    }
    if (quote.price > leg.max_price) {
      return failed(`the best live price ${quote.price} is above max_price ${leg.max_price}; retry with a higher max_price`, 'above_max_price');
    }
    // The practice book's own order rules (its minimum, its amount increment), exactly as preflight
    // applies them (evaluateLeg, one implementation): a leg preflight refuses is refused here too.
    const rules = evaluateLeg({
      leg,
      venue: null,
      practice: await catalog.practiceBook(this.r.client),
      access: null,
      market: { position_hash: positionHash, open: true, league_id: null, quote: null, levels: [], fee: null, quotes: [{ ...quote, is_stale: false, internal_book: false }] },
      verify: false,
      live: null,
      policy: NO_POLICY,
    });
    if (!rules.result.accepted || rules.plan === null) return checkFailure(rules.result);
    // What the rules book: the amount on the practice book's increment (the contracts follow from it below).
    const booked = leg.amount !== null ? microsText(rules.plan.amount) : size;
    const terms = paperTerms({ amount: leg.amount === null ? null : booked, shares: leg.shares === null ? null : size, price: String(quote.price) });
    if (!terms.positive) return rejected(`${size} shares at ${quote.price} is a stake of less than 0.000001 ATLAS`);
    return { position_hash: positionHash, contest_id: position.contest_id, title: position.title, quote, terms };
  }

  /** The contest's quotes, read once per buy (its legs on one contest price on one read). */
  private quotesOf(contestId: string): Promise<PositionQuotes> {
    let p = this.contests.get(contestId);
    if (!p) this.contests.set(contestId, (p = this.r.quotes.of(contestId)));
    return p;
  }

  /** The buy's transaction, for what writes or reads the wallet. */
  private transaction(): PoolClient {
    if (!('release' in this.r.client)) throw new Error('BuyRun: placing takes the buy’s transaction, not the pool');
    return this.r.client;
  }

  /** The joined opportunity, or the one this buy opens with its first order (currency from that buy). */
  private async ensureOpportunity(): Promise<string> {
    if (this.opportunityId !== null) return this.opportunityId;
    const opened = await openOpportunity(this.transaction(), { routerAccountId: this.r.account, modelId: this.r.modelId, currency: this.r.currency ?? 'ATLAS' });
    if (!opened.ok) throw modelError(opened.refusal, { model_id: this.r.modelId ?? undefined });
    return (this.opportunityId = opened.opportunity.opportunity_id);
  }
}

const insufficientBalance = (): LegFailure => failed('the practice wallet holds less than this leg’s stake', 'insufficient_balance');

const debitDescription = (plan: PaperPlan): string => `Practice order: ${plan.title}`;

/** A buy's 200 answer (recorded under its Idempotency-Key). */
export function buyAnswer(data: BuyResponse, atMs: number): IdempotentResponse {
  return { status: 200, body: JSON.stringify(envelope(data, atMs)) };
}

/**
 * The reference a venue sees for the leg: derived from account, Idempotency-Key and leg index, so a
 * placement retried under the same key can only ever name the same order.
 */
export const clientOrderId = (account: string, key: string, index: number): string => `fco_${sha256Hex(`${account}/${key}/${index}`).slice(0, 32)}`;
