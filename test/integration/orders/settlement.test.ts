/**
 * Settlement through the simulator over HTTP (issue 11 item 6): practice buys through POST
 * orders/buy, the contest settled with POST /sim/v1/contests/:id/settle (win, lose, push; by
 * winner), the venues' settlement feeds recorded in PostgreSQL before the settle answers, then the
 * scheduler's settler: each order's result, winnings and net_winnings, the practice wallet's
 * settlement_credit and refund, the reads (GET orders?settled=true, the resolution), the
 * order.settled and balance.update events on the owner's stream through the outbox, relay and
 * gateway; real-order rows settling into the venue connection's expected_balance; and a second run
 * changing nothing.
 */
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountEventRelay } from '../../../pipelines/account-events/relay.js';
import { OrderSettler } from '../../../pipelines/settlement/settler.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { keyHeaders as H } from '../../support/accounts.js';
import { get, send } from '../../support/http.js';
import { startOrderStack, type OrderStack } from '../../support/order-stack.js';
import { buy, filledOrder, paperLeg, writeOrder } from '../../support/orders.js';
import { startHarness, type Harness } from '../gateway/harness.js';

let o: OrderStack;
let h: Harness;
let relay: AccountEventRelay;
let settler: OrderSettler;

interface Position {
  position_hash: string;
  contest_id: string;
  participant_id: string | null;
}
/** Open team contests: their two moneyline sides and a spread position. */
let contests: { id: string; home: Position; away: Position; spread: Position }[];

beforeAll(async () => {
  o = await startOrderStack();
  h = await startHarness({}, { stack: o.s });
  relay = new AccountEventRelay({ pool: o.s.rt.pool, databaseUrl: o.s.databaseUrl, redis: o.s.rt.redis, ks: o.s.rt.ks, log: o.s.rt.log, pollMs: 60_000 }).start();
  // Driven by the tests (drain), so each knows exactly when orders settle.
  settler = new OrderSettler({ pool: o.s.rt.pool, log: pino({ level: 'silent' }), metrics: o.s.rt.metrics, batchSize: 2 });
  const open = o.market.catalog.contests.filter((c) => c.status === 'open').map((c) => c.id);
  contests = open
    .map((id) => {
      const ps = o.market.catalog.positions.filter((p) => p.contest_id === id);
      const [home, away] = ps.filter((p) => p.market_key === 'moneyline');
      const spread = ps.find((p) => p.market_key === 'spread');
      return home && away && spread ? { id, home, away, spread } : null;
    })
    .filter((c) => c !== null);
  expect(contests.length).toBeGreaterThanOrEqual(3);
}, 120_000);
afterEach(async () => h.closeClients());
afterAll(async () => {
  await relay?.stop();
  await h?.close();
  await o?.close();
});

const app = () => o.s.built.app;
const settle = (contestId: string, body: unknown) => send(app(), 'POST', `/sim/v1/contests/${contestId}/settle`, body, o.admin);

/** A practice buy of `amount` on `position`, its quote `price` on sim_exchange; returns the order id. */
async function practiceBuy(k: CreatedKey, position: string, amount: number): Promise<string> {
  const r = await buy(o.s, k, { orders: [paperLeg(position, amount)] });
  expect(r.status).toBe(200);
  expect(r.body.data.results[0].status).toBe('completed');
  return r.body.data.results[0].venues[0].router_order_id;
}

async function ledgerOf(account: string) {
  const { rows } = await o.s.rt.pool.query<{ type: string; amount: string; balance_after: string; router_order_id: string | null }>(
    'SELECT type, amount::text, balance_after::text, router_order_id FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq',
    [account],
  );
  return rows;
}
/** The wallet balance from the REST read, checked against the ledger (the newest balance_after is the sum of every amount). */
async function walletBalance(k: CreatedKey): Promise<number> {
  const { rows } = await o.s.rt.pool.query<{ sum: string; last: string }>(
    `SELECT sum(amount)::text AS sum, (SELECT balance_after::text FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT 1) AS last
       FROM practice_ledger WHERE router_account_id = $1`,
    [k.router_account_id],
  );
  expect(rows[0]!.sum).toBe(rows[0]!.last);
  const r = await get(app(), '/flow/v1/auth/account/paper', H(k));
  expect(r.status).toBe(200);
  expect(r.body.data.balance).toBe(Number(rows[0]!.sum));
  return r.body.data.balance;
}
async function settledOrders(k: CreatedKey) {
  const r = await get(app(), '/flow/v1/auth/orders?settled=true&limit=200', H(k));
  expect(r.status).toBe(200);
  return new Map<string, any>(r.body.data.map((x: any) => [x.router_order_id, x]));
}

const SETTLED_FIELDS = ['type', 'router_order_id', 'partner_id', 'result', 'winnings', 'net_winnings', 'timestamp'].sort();

describe('settling practice orders through the simulator', () => {
  it('win, lose and push: results, winnings, the wallet’s credit and refund, the reads and the owner’s events, exactly once', async () => {
    const c = contests[0]!;
    // One price for all three: 0.4 on sim_exchange (the only book in the feed).
    for (const p of [c.home, c.away, c.spread]) await o.setBook('sim_exchange', p.position_hash, [{ price: 0.4, available: 5_000 }]);
    const k = await o.key();
    const other = await o.key();
    const won = await practiceBuy(k, c.home.position_hash, 10); // 25 contracts
    const lost = await practiceBuy(k, c.away.position_hash, 20); // 50 contracts
    const pushed = await practiceBuy(k, c.spread.position_hash, 8); // 20 contracts
    const bystander = await practiceBuy(other, c.home.position_hash, 4); // another account's: 10 contracts
    expect(await walletBalance(k)).toBe(962);

    const mine = await h.connect(k.api_key);
    const theirs = await h.connect(other.api_key);
    for (const ws of [mine, theirs]) {
      await ws.request({ action: 'subscribe', channel: 'orders' });
      await ws.request({ action: 'subscribe', channel: 'balance' });
    }
    await mine.drain(() => true, 100);

    const r = await settle(c.id, { results: { [c.home.position_hash]: 'win', [c.away.position_hash]: 'lose', [c.spread.position_hash]: 'push' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // The 200 came after the feeds' record: the practice book's and sim_exchange's results are durable.
    const recorded = await o.s.rt.pool.query<{ partner_id: string; result: string }>(
      'SELECT partner_id, result FROM position_settlements WHERE position_hash = $1 ORDER BY partner_id',
      [c.home.position_hash],
    );
    expect(recorded.rows).toEqual(expect.arrayContaining([
      { partner_id: 'practice', result: 'win' },
      { partner_id: 'sim_exchange', result: 'win' },
    ]));
    expect(recorded.rows.every((x) => x.result === 'win')).toBe(true);
    // Nothing settled before the settler runs.
    expect((await settledOrders(k)).size).toBe(0);

    await settler.drain();

    const orders = await settledOrders(k);
    expect([...orders.keys()].sort()).toEqual([won, lost, pushed].sort());
    const common = { status: 'closed', currency: 'ATLAS', partner_id: 'practice', fee: 0, settled_at: expect.any(String) };
    expect(orders.get(won)).toMatchObject({ ...common, result: 'win', winnings: 25, net_winnings: 25, amount: 10, filled_shares: 25 });
    expect(orders.get(lost)).toMatchObject({ ...common, result: 'lose', winnings: 0, net_winnings: 0, amount: 20 });
    expect(orders.get(pushed)).toMatchObject({ ...common, result: 'push', winnings: 8, net_winnings: 8, amount: 8 });
    // result filter and the resolution read agree.
    const wins = await get(app(), '/flow/v1/auth/orders?result=win', H(k));
    expect(wins.body.data.map((x: any) => x.router_order_id)).toEqual([won]);
    const res = await get(app(), `/flow/v1/auth/orders/${won}/resolution`, H(k));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      router_order_id: won,
      contest_id: c.id,
      position_hash: c.home.position_hash,
      title: expect.any(String),
      currency: 'ATLAS',
      status: 'closed',
      resolved: true,
      result: 'win',
      amount: 10,
      winnings: 25,
      net_winnings: 25,
      settled_at: orders.get(won).settled_at,
    });

    // The wallet: the three debits, then one credit for the win and one refund for the push; none for the loss.
    const settlementEntries = (await ledgerOf(k.router_account_id)).filter((e) => e.type === 'settlement_credit' || e.type === 'refund');
    expect(settlementEntries.map(({ type, amount, router_order_id }) => ({ type, amount, router_order_id })).sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: 'refund', amount: '8.000000', router_order_id: pushed },
      { type: 'settlement_credit', amount: '25.000000', router_order_id: won },
    ]);
    expect(await walletBalance(k)).toBe(962 + 25 + 8);
    const paper = await get(app(), '/flow/v1/auth/account/paper/ledger', H(k));
    expect(paper.body.data.entries.slice(0, 2).map((e: any) => [e.type, e.amount, e.router_order_id]).sort()).toEqual([['refund', 8, pushed], ['settlement_credit', 25, won]]);

    // The owner's stream: order.settled for each order (the spec's fields), balance.update cause settlement for each credit.
    const settledEvents = [];
    for (let i = 0; i < 3; i++) settledEvents.push(await mine.next((x: any) => x.type === 'order.settled', 5_000));
    for (const e of settledEvents) expect(Object.keys(e).sort()).toEqual(SETTLED_FIELDS);
    expect(settledEvents.sort((a, b) => a.router_order_id.localeCompare(b.router_order_id))).toEqual(
      [
        { type: 'order.settled', router_order_id: won, partner_id: 'practice', result: 'win', winnings: 25, net_winnings: 25, timestamp: orders.get(won).settled_at },
        { type: 'order.settled', router_order_id: lost, partner_id: 'practice', result: 'lose', winnings: 0, net_winnings: 0, timestamp: orders.get(lost).settled_at },
        { type: 'order.settled', router_order_id: pushed, partner_id: 'practice', result: 'push', winnings: 8, net_winnings: 8, timestamp: orders.get(pushed).settled_at },
      ].sort((a, b) => a.router_order_id.localeCompare(b.router_order_id)),
    );
    const balances = [await mine.next((x: any) => x.type === 'balance.update', 5_000), await mine.next((x: any) => x.type === 'balance.update', 5_000)];
    expect(balances.every((b) => b.cause === 'settlement' && b.partner_id === 'practice' && b.currency === 'ATLAS')).toBe(true);
    expect(balances.map((b) => b.router_order_id).sort()).toEqual([won, pushed].sort());
    // Versions follow the ledger: after the opening entry and three debits, 5 and 6; the later one holds the final balance.
    const last = balances.sort((a, b) => a.balance_version - b.balance_version)[1];
    expect(balances.map((b) => b.balance_version)).toEqual([5, 6]);
    expect(last.balance).toBe(995);

    // The other account: its own order settled, none of the owner's events.
    const theirsSettled = await theirs.next((x: any) => x.type === 'order.settled', 5_000);
    expect(theirsSettled).toMatchObject({ router_order_id: bystander, result: 'win', winnings: 10 });
    await theirs.drain(() => true, 150);
    expect(theirs.all.filter((x: any) => [won, lost, pushed].includes(x.router_order_id))).toEqual([]);

    // Exactly once: another run (and a repeated report of the same settlement) changes nothing.
    const before = await ledgerOf(k.router_account_id);
    o.settlements.accept({ partner_id: 'practice', contest_id: c.id, winner_participant_id: null, ts_event: Date.now(), results: [{ position_hash: c.home.position_hash, result: 'lose' }] });
    expect(await o.settlements.flush()).toBe(true);
    await settler.drain();
    expect(await ledgerOf(k.router_account_id)).toEqual(before);
    expect((await settledOrders(k)).get(won)).toEqual(orders.get(won));
    await mine.drain(() => true, 200);
    expect(mine.all.filter((x: any) => x.type === 'order.settled')).toHaveLength(3);
  }, 60_000);

  it('a settle by winner: the winner’s side wins, the other side loses', async () => {
    const c = contests[1]!;
    for (const p of [c.home, c.away]) await o.setBook('sim_exchange', p.position_hash, [{ price: 0.5, available: 5_000 }]);
    const k = await o.key();
    const onHome = await practiceBuy(k, c.home.position_hash, 30); // 60 contracts
    const onAway = await practiceBuy(k, c.away.position_hash, 5);
    const r = await settle(c.id, { winner_participant_id: c.home.participant_id });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await settler.drain();
    const orders = await settledOrders(k);
    expect(orders.get(onHome)).toMatchObject({ result: 'win', winnings: 60, net_winnings: 60 });
    expect(orders.get(onAway)).toMatchObject({ result: 'lose', winnings: 0, net_winnings: 0 });
    expect(await walletBalance(k)).toBe(1000 - 35 + 60);
    // A second settle is refused and records nothing more.
    expect((await settle(c.id, { winner_participant_id: c.home.participant_id })).status).toBe(409);
  }, 60_000);
});

describe('settling real orders', () => {
  it('settle into the venue connection: a balance_ledger settlement row, expected_balance and pending move, balance.update cause settlement; net_winnings is after the fee', async () => {
    const c = contests[2]!;
    // sim_exchange lists these positions once it has a book on them, so its settlement feed names them.
    for (const p of [c.home, c.away, c.spread]) await o.setBook('sim_exchange', p.position_hash, [{ price: 0.4, available: 5_000 }]);
    const k = await o.key();
    const acct = k.router_account_id;
    await o.connect(acct, 'sim_exchange', 1_000);
    // Real orders as a placement leaves them (this build places none): each holds its stake plus fee.
    const won = filledOrder(acct, c.home, { stake: '10', shares: '25', price: '0.4', fee: '0.17' });
    const lost = filledOrder(acct, c.away, { stake: '6', shares: '15', price: '0.4', fee: '0.1' });
    const pushed = filledOrder(acct, c.spread, { stake: '4', shares: '10', price: '0.4' });
    for (const x of [won, lost, pushed]) await writeOrder(o.s.rt.pool, x);
    const partners = async () => {
      const r = await get(app(), '/flow/v1/auth/account/partners', H(k));
      expect(r.status).toBe(200);
      return r.body.data.account_partners.find((p: any) => p.partner_id === 'sim_exchange');
    };
    const before = await partners();
    expect(before).toMatchObject({ balance: 1_000, expected_balance: 979.73, pending: -20.27 });
    const { rows: v0 } = await o.s.rt.pool.query<{ v: number }>("SELECT balance_version::int AS v FROM account_partners WHERE router_account_id = $1 AND partner_id = 'sim_exchange'", [acct]);

    const ws = await h.connect(k.api_key);
    await ws.request({ action: 'subscribe', channel: 'orders' });
    await ws.request({ action: 'subscribe', channel: 'balance' });
    await ws.drain(() => true, 100);

    expect((await settle(c.id, { results: { [c.home.position_hash]: 'win', [c.away.position_hash]: 'lose', [c.spread.position_hash]: 'push' } })).status).toBe(200);
    await settler.drain();

    const orders = await settledOrders(k);
    expect(orders.get(won.router_order_id)).toMatchObject({ result: 'win', winnings: 25, net_winnings: 24.83, currency: 'USD', partner_id: 'sim_exchange', status: 'closed' });
    expect(orders.get(lost.router_order_id)).toMatchObject({ result: 'lose', winnings: 0, net_winnings: -0.1 });
    expect(orders.get(pushed.router_order_id)).toMatchObject({ result: 'push', winnings: 4, net_winnings: 4 });

    // expected_balance moved by what the settlements pay (25 + 4); the snapshot did not.
    expect(await partners()).toMatchObject({ balance: 1_000, expected_balance: 1_008.73, pending: 8.73 });
    const { rows: ledger } = await o.s.rt.pool.query<{ amount: string; router_order_id: string }>(
      "SELECT b.amount::text, b.router_order_id FROM balance_ledger b JOIN account_partners ap USING (account_partner_id) WHERE ap.router_account_id = $1 AND b.kind = 'settlement' ORDER BY b.amount DESC",
      [acct],
    );
    expect(ledger).toEqual([
      { amount: '25.000000', router_order_id: won.router_order_id },
      { amount: '4.000000', router_order_id: pushed.router_order_id },
    ]);
    const { rows: v1 } = await o.s.rt.pool.query<{ v: number }>("SELECT balance_version::int AS v FROM account_partners WHERE router_account_id = $1 AND partner_id = 'sim_exchange'", [acct]);
    expect(v1[0]!.v).toBe(v0[0]!.v + 2);
    // Practice is untouched by real orders.
    expect(await walletBalance(k)).toBe(1_000);

    const events = [await ws.next((x: any) => x.type === 'balance.update', 5_000), await ws.next((x: any) => x.type === 'balance.update', 5_000)].sort((a, b) => a.balance_version - b.balance_version);
    expect(events.map((e) => e.balance_version)).toEqual([v0[0]!.v + 1, v0[0]!.v + 2]);
    expect(events.every((e) => e.cause === 'settlement' && e.partner_id === 'sim_exchange' && e.currency === 'USD' && e.venue_balance === 1_000)).toBe(true);
    expect(events[1]).toMatchObject({ balance: 1_008.73, pending: 8.73 });
    const settled = [];
    for (let i = 0; i < 3; i++) settled.push(await ws.next((x: any) => x.type === 'order.settled', 5_000));
    expect(settled.find((e) => e.router_order_id === won.router_order_id)).toMatchObject({ partner_id: 'sim_exchange', result: 'win', winnings: 25, net_winnings: 24.83 });
  }, 60_000);

  it('an order still working at its venue waits (without holding up newer settlements); one that booked nothing settles cancelled; it settles once its fill lands', async () => {
    const c = contests[0]!; // settled by the first test: its results are recorded
    const k = await o.key();
    const acct = k.router_account_id;
    const working = filledOrder(acct, c.home, { stake: '0', shares: '0', price: '0.4' }, { leg_status: 'pending', status: 'pending', fill_status: 'unfilled', avg_price: null, unfilled_notional: '5', amount: '5', requested_amount: '5' });
    const failed = filledOrder(acct, c.away, { stake: '0', shares: '0', price: '0.4' }, { leg_status: 'failed', status: 'closed', fill_status: 'unfilled', avg_price: null, amount: '3', unfilled_notional: '3', requested_amount: '3' });
    for (const x of [working, failed]) await writeOrder(o.s.rt.pool, x);
    // A newer settlement with an order of its own, behind the one that keeps waiting.
    const later = { position_hash: 'ct_later_001:ml:home:0:p1:ft', contest_id: 'ct_later_001' };
    const onLater = filledOrder(acct, later, { stake: '2', shares: '4', price: '0.5' }, { mode: 'paper' });
    await writeOrder(o.s.rt.pool, onLater);
    o.settlements.accept({ partner_id: 'practice', contest_id: later.contest_id, winner_participant_id: null, ts_event: Date.now(), results: [{ position_hash: later.position_hash, result: 'win' }] });
    expect(await o.settlements.flush()).toBe(true);
    // Orders written after their book's settlement was worked through: the re-open sweep finds them.
    // One settlement a pass: the waiting one goes to the back of the queue instead of starving the newer one.
    const sweeping = new OrderSettler({ pool: o.s.rt.pool, log: pino({ level: 'silent' }), reopenEveryMs: 0, contestsPerPass: 1 });
    await sweeping.drain();
    let orders = await settledOrders(k);
    expect([...orders.keys()].sort()).toEqual([failed.router_order_id, onLater.router_order_id].sort());
    expect(orders.get(failed.router_order_id)).toMatchObject({ result: 'cancelled', winnings: 0, net_winnings: 0, status: 'closed' });
    expect(orders.get(onLater.router_order_id)).toMatchObject({ result: 'win', winnings: 4 });
    // The fill confirms (as the venue's report would land it): then it settles by the position's result.
    await o.s.rt.pool.query(
      "UPDATE orders SET leg_status = 'completed', status = 'open', fill_status = 'filled', filled_notional = 5, filled_shares = 12.5, unfilled_notional = 0, avg_price = 0.4 WHERE router_order_id = $1",
      [working.router_order_id],
    );
    await sweeping.drain();
    orders = await settledOrders(k);
    expect(orders.get(working.router_order_id)).toMatchObject({ result: 'win', winnings: 12.5, net_winnings: 12.5 });
    const { rows } = await o.s.rt.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM contest_settlements WHERE contest_id = $1 AND pending', [c.id]);
    expect(rows[0]!.n).toBe(0);
  }, 60_000);
});
