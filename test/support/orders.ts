/**
 * A market for the order tests: the simulator's catalog in PostgreSQL, venue quotes written to the
 * hot state as ingest writes them and computed into liquidity by the real liquidity processor (the
 * pipeline a practice buy reads its price from), and the buy request as the routes take it.
 */
import { randomUUID } from 'node:crypto';
import { ComputePool } from '../../pipelines/compute-pool.js';
import { LiquidityProducer } from '../../pipelines/producers/liquidity.js';
import { PRACTICE_PARTNER_ID } from '../../src/domain/account.js';
import { newId } from '../../src/ids.js';
import { insertOrder, type NewOrder } from '../../src/store/pg/orders.js';
import { inTransaction, type Pool } from '../../src/store/pg/pool.js';
import { appendPracticeEntry } from '../../src/store/pg/wallet.js';
import { HotState } from '../../src/store/redis/hot.js';
import { buildSimCatalog, type SimCatalog } from '../../src/sim/index.js';
import type { StoredQuote } from '../../src/venues/types.js';
import type { CreatedKey } from '../../src/store/pg/keys.js';
import { send } from './http.js';
import { testProcessor, venueQuote } from './pipeline.js';
import type { TestStack } from './stack.js';

/** The simulator catalog the order tests seed (its partners include the practice book). */
export const orderCatalog = (): SimCatalog => buildSimCatalog(3, Date.now());

export interface QuoteSpec {
  partner: string;
  price: number;
  available: number;
  /** The quote's freshness bound already passed: it reads is_stale. */
  stale?: boolean;
}

export interface OrderMarket {
  hot: HotState;
  contestId: string;
  /** Two positions of one moneyline (home, away) and a position of another contest. */
  home: string;
  away: string;
  other: string;
  otherContestId: string;
  /** The liquidity_hash a venue quotes a position under (test quotes: `partner:position`). */
  lh(partner: string, positionHash: string): string;
  /** Stores the quotes of one position and waits until the computed liquidity shows them. */
  quote(positionHash: string, quotes: QuoteSpec[]): Promise<void>;
  close(): Promise<void>;
}

export async function orderMarket(s: TestStack, catalog: SimCatalog): Promise<OrderMarket> {
  const moneylines = catalog.positions.filter((p) => p.market_key === 'moneyline');
  const contestId = moneylines[0]!.contest_id;
  const [home, away] = moneylines.filter((p) => p.contest_id === contestId);
  const other = moneylines.find((p) => p.contest_id !== contestId)!;
  const hot = new HotState(s.rt.redis, s.rt.ks);
  const compute = new ComputePool(1);
  const processor = testProcessor(s, hot, compute, Date.now);
  const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
  const contestOf = new Map(catalog.positions.map((p) => [p.position_hash, p.contest_id]));

  const shows = async (contest: string, positionHash: string, quotes: StoredQuote[]) => {
    const json = await hot.liquidity(contest);
    const position = json ? (JSON.parse(json) as { position_hash: string; partner_liquidities: { liquidity_hash: string; price: number; available: number; is_stale: boolean }[] }[]).find((p) => p.position_hash === positionHash) : undefined;
    return quotes.every((q) => position?.partner_liquidities.some((e) => e.liquidity_hash === q.liquidity_hash && e.price === q.price && e.available === q.available && e.is_stale === (q.stale_after_ms !== undefined && q.stale_after_ms < Date.now())));
  };

  return {
    hot,
    contestId,
    home: home!.position_hash,
    away: away!.position_hash,
    other: other.position_hash,
    otherContestId: other.contest_id,
    lh: (partner, positionHash) => `${partner}:${positionHash}`,
    async quote(positionHash, specs) {
      const contest = contestOf.get(positionHash)!;
      const now = Date.now();
      const quotes: StoredQuote[] = specs.map((q) => ({ ...venueQuote(q.partner, positionHash, q.price, q.available, now), ...(q.stale ? { stale_after_ms: now - 1 } : {}) }));
      await hot.writeQuotes(contest, quotes);
      await producer.enqueue(contest);
      const until = Date.now() + 20_000;
      while (!(await shows(contest, positionHash, quotes))) {
        if (Date.now() > until) throw new Error(`the liquidity of ${positionHash} never showed ${JSON.stringify(specs)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      await processor.close();
      await compute.close();
      await producer.close();
    },
  };
}

/** A practice leg buying `amount` of a position through `partner`'s quote, with any other fields. */
export const paperLeg = (positionHash: string, amount: number, extra: Record<string, unknown> = {}) => ({ position_hash: positionHash, partner_id: 'sim_exchange', amount, max_price: 0.99, mode: 'paper', ...extra });

/** POST orders/buy as `k` (a fresh Idempotency-Key unless one is given). */
export const buy = (s: TestStack, k: CreatedKey, body: unknown, opts: { key?: string | null; headers?: Record<string, string> } = {}) =>
  send(s.built.app, 'POST', '/flow/v1/auth/orders/buy', body, {
    'x-api-key': k.api_key,
    ...(opts.key === null ? {} : { 'idempotency-key': opts.key ?? randomUUID() }),
    ...opts.headers,
  });

export interface FillSpec {
  /** Exact decimal text: the booked stake, the contracts and the price. */
  stake: string;
  shares: string;
  price: string;
  fee?: string;
}

/**
 * An orders row as a filled market leg leaves it, for tests that need orders without placing them:
 * a real one (sim_exchange, USD) unless `extra.mode` is paper (the practice book, ATLAS).
 */
export function filledOrder(account: string, position: { position_hash: string; contest_id: string }, fill: FillSpec, extra: Partial<NewOrder> = {}): NewOrder {
  const key = randomUUID();
  const paper = extra.mode === 'paper';
  return {
    router_order_id: newId('ord'),
    router_account_id: account,
    opportunity_id: null,
    model_id: null,
    idempotency_key: key,
    leg_index: 0,
    client_order_id: `fco_${key.replaceAll('-', '')}`,
    sor_decision_id: newId('sor'),
    partner_id: paper ? PRACTICE_PARTNER_ID : 'sim_exchange',
    requested_partner_id: 'sim_exchange',
    currency: paper ? 'ATLAS' : 'USD',
    mode: paper ? 'paper' : 'real',
    order_type: 'market',
    position_hash: position.position_hash,
    liquidity_hash: null,
    price_partner_id: null,
    price_liquidity_hash: null,
    contest_id: position.contest_id,
    title: `test order on ${position.position_hash}`,
    requested_amount: fill.stake,
    requested_shares: null,
    max_price: '0.99',
    amount: fill.stake,
    avg_price: fill.price,
    filled_notional: fill.stake,
    filled_shares: fill.shares,
    unfilled_notional: '0',
    fee: fill.fee ?? '0',
    leg_status: 'completed',
    status: 'open',
    fill_status: 'filled',
    rejected_code: null,
    rejected_reason: null,
    ...extra,
  };
}

/**
 * Writes `order` with the money it takes, in one transaction, as a placement does: a paper order's
 * bet_debit on the practice wallet; a real one's hold (negative) on the account's connection to its
 * venue, when there is one.
 */
export async function writeOrder(pool: Pool, order: NewOrder): Promise<void> {
  await inTransaction(pool, async (c) => {
    if (order.mode === 'paper') {
      // The internal book charges no fee.
      const debit = await appendPracticeEntry(c, order.router_account_id, { type: 'bet_debit', amount: `-${order.filled_notional}`, router_order_id: order.router_order_id });
      if (debit.outcome !== 'ok') throw new Error(`debit ${order.router_order_id}: ${debit.outcome}`);
    } else {
      await c.query(
        `INSERT INTO balance_ledger (account_partner_id, kind, amount, router_order_id)
         SELECT account_partner_id, 'hold', -($3::numeric + $4::numeric), $5 FROM account_partners WHERE router_account_id = $1 AND partner_id = $2`,
        [order.router_account_id, order.partner_id, order.filled_notional, order.fee, order.router_order_id],
      );
    }
    await insertOrder(c, order);
  });
}
