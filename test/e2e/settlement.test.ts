/**
 * Settlement end to end in `flow all` (issue 11 item 6): a practice buy over REST, the contest
 * settled through /sim/v1 (the ingest role records the venues' settlement feeds in PostgreSQL before
 * the settle answers), and the scheduler role's settler settling the order: order.settled and the
 * wallet's balance.update (cause settlement) reach the owner's stream through the api role's relay,
 * and the reads show the result.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWs, type WsClient } from '../../bench/support/ws-client.js';
import { client, demoKey, eventually, findTotalLine } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let c: ReturnType<typeof client>;
let key: string;
let ws: WsClient | null = null;

beforeAll(async () => {
  svc = await startService();
  key = demoKey(svc);
  c = client(svc, key);
  await c.sim('/sim/v1/freeze', { frozen: true });
}, 120_000);
afterAll(async () => {
  await ws?.close().catch(() => undefined);
  await svc?.cleanup();
}, 60_000);

describe('settlement in flow all', () => {
  it('a practice order on the winning side settles: order.settled and the credit on the owner’s stream, the order read as won', async () => {
    const line = await findTotalLine(c);
    const quote = line.over.partner_liquidities.find((q: any) => q.partner_id === 'sim_exchange');
    ws = await connectWs(`ws://127.0.0.1:${svc.streamPort}/flow/v1/stream?api_key=${key}`);
    await ws.next((m) => m.type === 'connected');
    await ws.request({ action: 'subscribe', channel: 'orders' });
    await ws.request({ action: 'subscribe', channel: 'balance' });

    const bought = await c.api('/flow/v1/auth/orders/buy', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ orders: [{ liquidity_hash: quote.liquidity_hash, amount: 10, max_price: 0.99, mode: 'paper' }] }),
    });
    expect(bought.status).toBe(200);
    const leg = bought.body.data.results[0];
    expect(leg.status).toBe('completed');
    const id = leg.venues[0].router_order_id as string;
    const before = (await c.api('/flow/v1/auth/account/paper')).body.data.balance as number;

    await c.sim(`/sim/v1/contests/${line.contestId}/settle`, { results: { [line.over.position_hash]: 'win', [line.under.position_hash]: 'lose' } });

    const settled = await ws.next((m) => m.type === 'order.settled' && m.router_order_id === id, 20_000);
    expect(settled).toEqual({ type: 'order.settled', router_order_id: id, partner_id: 'practice', result: 'win', winnings: leg.filled_shares, net_winnings: leg.filled_shares, timestamp: expect.any(String) });
    const credit = await ws.next((m) => m.type === 'balance.update' && m.cause === 'settlement', 5_000);
    expect(credit).toMatchObject({ partner_id: 'practice', router_order_id: id, balance: Number((before + leg.filled_shares).toFixed(6)) });

    const read = await eventually(
      () => c.api(`/flow/v1/auth/orders/${id}/resolution`),
      (r) => r.body.data.resolved === true,
    );
    expect(read.body.data).toMatchObject({ resolved: true, result: 'win', winnings: leg.filled_shares, status: 'closed' });
    // The service's log lines reach this process through a pipe, after the answers that follow them.
    const logged = (msg: string) => () => Promise.resolve(svc.logs.some((l) => l.msg === msg && l.contest_id === line.contestId && l.partner_id === 'practice'));
    expect(await eventually(logged('venue settlement recorded'), (x) => x, 10_000)).toBe(true);
    expect(await eventually(logged('orders settled'), (x) => x, 10_000)).toBe(true);
  }, 90_000);
});
