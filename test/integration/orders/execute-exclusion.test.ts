/**
 * Issue 11 item 2: legs that share (account, venue) never execute at once, however many execute
 * workers run; different accounts never wait on each other. Two execute processors (each its own
 * BullMQ worker with several slots and its own PostgreSQL sessions, as two processes would have)
 * work one venue's queue; many one-leg buys of two accounts arrive at once. Every venue call is
 * recorded (start, end) by a wrapper around the venue adapter that also makes each call take a
 * while, so any overlap would show.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import type { VenueAdapter, VenueOrderRequest } from '../../../src/venues/types.js';
import { keyHeaders as H } from '../../support/accounts.js';
import { send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';

const VENUE = 'sim_book01';
const CALL_MS = 30;
const LEGS_PER_ACCOUNT = 12;

interface Call {
  account: string;
  start: number;
  end: number;
}
const calls: Call[] = [];

/** The venue's adapter, its placements recorded and slowed down. */
function recording(adapters: VenueAdapter[]): VenueAdapter[] {
  return adapters.map((a) => {
    if (a.id !== VENUE) return a;
    const wrapped = Object.create(a) as VenueAdapter;
    wrapped.placeOrder = async (req: VenueOrderRequest) => {
      const start = performance.now();
      await new Promise((r) => setTimeout(r, CALL_MS));
      try {
        return await a.placeOrder(req);
      } finally {
        calls.push({ account: req.account_id, start, end: performance.now() });
      }
    };
    return wrapped;
  });
}

let o: OrderStack;
let accounts: CreatedKey[];
let position: string;

beforeAll(async () => {
  o = await startOrderStack(13, { executeWaitMs: 30_000, wrapAdapters: recording });
  const open = new Set(o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id));
  position = o.market.catalog.positions.find((p) => open.has(p.contest_id) && p.market_key === 'moneyline')!.position_hash;
  await o.setBook(VENUE, position, [{ price: 0.4, available: 100_000 }]);
  accounts = [await o.key(), await o.key()];
  for (const k of accounts) await o.connect(k.router_account_id, VENUE, 100_000);
}, 120_000);
afterAll(async () => o?.close());

describe('the (account, venue) exclusion', () => {
  it('two execute workers, many legs of two accounts on one venue: one account’s legs never overlap, while the other account’s run beside them', async () => {
    const workers = [o.execute({ concurrency: 4 }), o.execute({ concurrency: 4 })];
    await Promise.all(workers.flatMap((w) => w.workers.map((x) => x.waitUntilReady())));
    const buys = accounts.flatMap((k) =>
      Array.from({ length: LEGS_PER_ACCOUNT }, () =>
        send(o.s.built.app, 'POST', '/flow/v1/auth/orders/buy', { orders: [{ position_hash: position, partner_id: VENUE, amount: 2, max_price: 0.5, mode: 'real' }] }, H(k, { 'idempotency-key': randomUUID() })),
      ),
    );
    const answers = await Promise.all(buys);
    for (const a of answers) expect(a.body.data.results[0].status, JSON.stringify(a.body)).toBe('completed');
    expect(calls).toHaveLength(2 * LEGS_PER_ACCOUNT);

    for (const k of accounts) {
      const mine = calls.filter((c) => c.account === k.router_account_id).sort((x, y) => x.start - y.start);
      expect(mine).toHaveLength(LEGS_PER_ACCOUNT);
      // Each call starts after the one before it ended: never two at once.
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.start).toBeGreaterThanOrEqual(mine[i - 1]!.end);
    }
    // The accounts did not wait on each other: calls of one ran while calls of the other did.
    const [a, b] = accounts.map((k) => calls.filter((c) => c.account === k.router_account_id));
    const overlapping = a!.filter((x) => b!.some((y) => x.start < y.end && y.start < x.end));
    expect(overlapping.length).toBeGreaterThanOrEqual(2);
    // Both workers took legs.
    expect(workers[0]!.decided + workers[1]!.decided).toBe(2 * LEGS_PER_ACCOUNT);
    expect(workers.every((w) => w.decided > 0)).toBe(true);
  }, 60_000);
});
