/**
 * Issue 11 "done when": every per-leg code a buy can give, driven over HTTP through the simulator,
 * on the buy itself (not only preflight): the same leg is asked of preflight and then bought; the
 * buy fails or rejects it with the code preflight named, writes no order for it, and the venue
 * (the simulator's own record) never sees it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../../api/rest/orders/execution.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import type { SimPartnerId } from '../../../src/sim/personalities.js';
import { keyHeaders as H } from '../../support/accounts.js';
import { send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

let o: OrderStack;
let k: CreatedKey;
let positions: string[];
let closedPosition: string;
let used = 0;
const fresh = () => positions[used++]!;

beforeAll(async () => {
  o = await startOrderStack(17, { executeWaitMs: 10_000 });
  o.execute();
  const open = new Set(o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  positions = o.market.catalog.positions.filter((p) => open.has(p.contest_id) && p.market_key === 'moneyline').map((p) => p.position_hash);
  closedPosition = o.market.catalog.positions.find((p) => !open.has(p.contest_id))!.position_hash;
  k = await o.key();
  for (const v of ['sim_exchange', 'sim_book01', 'sim_sportsbook'] as const) await o.connect(k.router_account_id, v, 10_000);
}, 120_000);
afterAll(async () => o?.close());

type Book = { partner: SimPartnerId; levels: { price: number; available: number }[] };
interface Case {
  code: string;
  books: Book[];
  leg: (h: string) => Record<string, unknown>;
  /** The account to buy as (default: the connected one). */
  as?: () => Promise<CreatedKey>;
  position?: () => string;
}

const CASES: Case[] = [
  { code: 'orders_not_supported', books: [{ partner: 'sim_quotes', levels: [{ price: 0.5, available: 1_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_quotes', amount: 10, max_price: 0.6 }) },
  { code: 'venue_disabled', books: [{ partner: 'sim_exchange', levels: [{ price: 0.47, available: 1_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }), as: () => o.key() },
  { code: 'insufficient_live_depth', books: [{ partner: 'sim_exchange', levels: [] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }) },
  { code: 'insufficient_live_depth', books: [], leg: (h) => ({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }), position: () => closedPosition },
  { code: 'above_max_price', books: [{ partner: 'sim_exchange', levels: [{ price: 0.6, available: 1_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.55 }) },
  { code: 'insufficient_size', books: [{ partner: 'sim_exchange', levels: [{ price: 0.47, available: 5 }, { price: 0.6, available: 1_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.5 }) },
  { code: 'unfillable', books: [{ partner: 'sim_exchange', levels: [{ price: 0.47, available: 1_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_exchange', amount: 0.3, max_price: 0.5 }) },
  { code: 'below_min_order', books: [{ partner: 'sim_sportsbook', levels: [{ price: 0.5, available: 2_500 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_sportsbook', amount: 3, max_price: 0.6 }) },
  { code: 'above_max_order', books: [{ partner: 'sim_sportsbook', levels: [{ price: 0.5, available: 2_500 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_sportsbook', amount: 1_500, max_price: 0.6 }) },
  { code: 'price_out_of_band', books: [{ partner: 'sim_exchange', levels: [{ price: 0.47, available: 1_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_exchange', amount: 10, max_price: 0.004 }) },
  { code: 'price_out_of_band', books: [{ partner: 'sim_sportsbook', levels: [{ price: 0.995, available: 1_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_sportsbook', amount: 10, max_price: 0.999 }) },
  { code: 'insufficient_balance', books: [{ partner: 'sim_book01', levels: [{ price: 0.4, available: 100_000 }] }], leg: (h) => ({ position_hash: h, partner_id: 'sim_book01', amount: 20_000, max_price: 0.5 }) },
];

describe('every per-leg code on the buy itself, as preflight names it', () => {
  it.each(CASES.map((c, i) => [`${c.code} #${i}`, c] as const))('%s: failed or rejected with that code, nothing written, nothing at the venue', async (_name, c) => {
    const h = c.position ? c.position() : fresh();
    for (const b of c.books) await o.setBook(b.partner, h, b.levels);
    const buyer = c.as ? await c.as() : k;
    const leg = { mode: 'real', ...c.leg(h) };
    const pre = await send(o.s.built.app, 'POST', '/flow/v1/auth/orders/preflight', { orders: [leg] }, H(buyer));
    expect(pre.status).toBe(200);
    expect(pre.body.data.results[0].rejected_code).toBe(c.code);

    const key = randomUUID();
    const r = await send(o.s.built.app, 'POST', '/flow/v1/auth/orders/buy', { orders: [leg] }, H(buyer, { 'idempotency-key': key }));
    expect(r.status).toBe(200);
    const res = r.body.data.results[0];
    expect(res.rejected_code, JSON.stringify(res)).toBe(c.code);
    expect(['failed', 'rejected']).toContain(res.status);
    expect(res).toMatchObject({ filled_notional: 0, filled_shares: 0, venues: [] });
    expect(r.body.data.opportunity_id).toBeNull();
    const { rows } = await o.s.rt.pool.query('SELECT 1 FROM orders WHERE router_account_id = $1 AND idempotency_key = $2', [buyer.router_account_id, key]);
    expect(rows).toEqual([]);
    const cid = clientOrderId(buyer.router_account_id, key, 0);
    for (const v of ['sim_exchange', 'sim_book01', 'sim_sportsbook'] as const) expect([...o.market._venue(v).orders.values()].filter((x) => x.client_order_id === cid)).toEqual([]);
  });
});
