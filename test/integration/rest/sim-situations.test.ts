/**
 * POST /sim/v1/situations over HTTP, through the real app (its own PostgreSQL database and Redis
 * prefix) and the simulator's venue adapters: each signal type's situation is made now, the answer
 * says what was done, and the venues' own feeds carried exactly that (prints on the trade feeds,
 * books on the quote feeds; polled venues read at once). Refusals are 400/404/409 with a code and
 * put nothing on any feed; hostile bodies never give a 5xx.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../support/fuzz-seed.js';
import { simRoutes } from '../../../api/rest/sim/routes.js';
import { createSimAdapters } from '../../../src/venues/sim/index.js';
import { buildSimCatalog, SimMarket, SIM_SITUATIONS } from '../../../src/sim/index.js';
import type { NormalizedQuote, NormalizedTrade, VenueAdapter } from '../../../src/venues/types.js';
import { send } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

const SEED = 11;
let s: TestStack;
let market: SimMarket;
let adapters: VenueAdapter[];
const trades: NormalizedTrade[] = [];
const quotes: NormalizedQuote[] = [];
const refreshed: string[] = [];
let admin: Record<string, string>;

beforeAll(async () => {
  const startMs = Date.now();
  market = new SimMarket({ seed: SEED, now: startMs });
  // Frozen: only what a test makes happens; the venues' clock moves as a real venue's does.
  market.freeze(true);
  market.start({ clock: Date.now, interval_ms: 2 ** 31 - 1 });
  adapters = createSimAdapters(market);
  for (const a of adapters) {
    await a.connect();
    const caps = a.describe().capabilities;
    if (caps.trades) a.subscribeTrades((t) => trades.push(t));
    if (caps.quotes.streaming) a.subscribeQuotes((q) => quotes.push(q));
  }
  s = await startStack({
    catalog: buildSimCatalog(SEED, startMs),
    plugins: [
      simRoutes({
        market,
        refresh: async (partnerId) => {
          refreshed.push(partnerId);
        },
      }),
    ],
  });
  admin = { 'x-admin-token': s.config.adminToken };
}, 120_000);
afterAll(async () => {
  market?.stop();
  await s?.close();
});

const force = (body: unknown, headers = admin) => send(s.built.app, 'POST', '/sim/v1/situations', JSON.stringify(body) ?? 'null', headers);
const feeds = () => ({ trades: trades.length, quotes: quotes.length, refreshed: refreshed.length });
const polled = async (partnerId: string, hash: string) => (await adapters.find((a) => a.id === partnerId)!.fetchQuotes({ position_hashes: [hash] }))[0]!;

/** The feed's prints of one answer, as the answer lists them. */
function fed(printsOfAnswer: any[]): NormalizedTrade[] {
  return printsOfAnswer.map((p) => trades.find((t) => t.venue_trade_id === p.venue_trade_id)!);
}

describe('POST /sim/v1/situations', () => {
  it('each trade situation: 200 with what it did, and the venue’s trade feed carried exactly those prints', async () => {
    for (const type of ['whale_trade', 'block_trade', 'flow_imbalance', 'trade_through', 'volume_spike', 'trade_burst']) {
      const before = trades.length;
      const r = await force({ type });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const d = r.body.data;
      expect(d).toMatchObject({ type, partner_id: 'sim_exchange', position_hash: expect.stringContaining(':'), contest_id: d.position_hash.split(':')[0] });
      expect(d.details.crosses_threshold, type).toBe(true);
      const all = [...(d.details.baseline_prints ?? []), ...d.details.prints];
      // Nothing else printed, and every print of the answer is on the feed as answered.
      expect(trades.length - before, type).toBe(all.length);
      for (const [p, t] of all.map((x: any, i: number) => [x, fed(all)[i]!] as const)) {
        expect(t, type).toMatchObject({ partner_id: 'sim_exchange', position_hash: d.position_hash, taker_action: p.taker_action, price: p.price, size_contracts: p.size_contracts, is_block: p.is_block });
        expect(new Date(t.executed_at).toISOString()).toBe(p.executed_at);
        expect(p.notional_usd).toBeCloseTo(t.price * t.size_contracts, 6);
      }
    }
  });

  it('whale_trade: the answer’s figures are the published rule applied to its own baseline', async () => {
    const r = await force({ type: 'whale_trade', partner_id: 'sim_book01', direction: 'sell' });
    expect(r.status).toBe(200);
    const d = r.body.data.details;
    const base = fed(d.baseline_prints).map((t) => t.price * t.size_contracts).sort((a, b) => a - b);
    expect(base).toHaveLength(9);
    expect(d.threshold_usd).toBe(Math.max(500, 8 * d.median_notional_usd));
    expect(d.median_notional_usd).toBeCloseTo(base[4]!, 6);
    const [whale] = fed(d.prints);
    expect(whale).toMatchObject({ partner_id: 'sim_book01', taker_action: 'sell', trader_id_kind: 'wallet' });
    expect((whale!.price * whale!.size_contracts) / d.threshold_usd).toBeGreaterThanOrEqual(4 - 0.01);
  });

  it('price_move: every venue’s book moves the same way; streaming venues publish it, polled ones are read at once', async () => {
    const q0 = quotes.length;
    const r0 = refreshed.length;
    const r = await force({ type: 'price_move', move: 0.08 });
    expect(r.status).toBe(200);
    const d = r.body.data;
    expect(d.details).toMatchObject({ crosses_threshold: true, move: 0.08 });
    const mine = d.details.quotes.filter((q: any) => q.position_hash === d.position_hash);
    expect(mine.map((q: any) => q.partner_id)).toEqual(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes']);
    const sign = d.details.direction === 'up' ? 1 : -1;
    for (const q of mine) {
      expect(sign * (q.to_price - q.from_price), q.partner_id).toBeGreaterThan(0.07);
      // What the venue shows now, streamed or polled, is the answer's book.
      expect((await polled(q.partner_id, d.position_hash)).levels).toEqual(q.levels);
    }
    const streamed = quotes.slice(q0).map((q) => `${q.partner_id} ${q.position_hash} ${q.price}`);
    expect(streamed).toEqual(d.details.quotes.filter((q: any) => ['sim_exchange', 'sim_book01'].includes(q.partner_id)).map((q: any) => `${q.partner_id} ${q.position_hash} ${q.to_price}`));
    expect(new Set(refreshed.slice(r0))).toEqual(new Set(['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes']));
  });

  it('arbitrage: the pair sums under 1.0 by the edge asked, on the venue and position asked', async () => {
    const first = await force({ type: 'arbitrage', partner_id: 'sim_book01', edge: 0.05 });
    expect(first.status).toBe(200);
    const d = first.body.data;
    expect(d).toMatchObject({ type: 'arbitrage', partner_id: 'sim_book01' });
    expect(d.details.combined_price).toBeLessThanOrEqual(0.95 + 1e-9);
    const shown = (await polled('sim_book01', d.position_hash)).price;
    const other = (await polled(d.details.counterpart.partner_id, d.details.counterpart.position_hash)).price;
    expect(shown + other).toBeCloseTo(d.details.combined_price, 9);
    expect(shown + other).toBeLessThan(1);
  });

  it('refuses with the code that says why, and puts nothing on any feed', async () => {
    const outright = market.catalog.positions.find((p) => p.market_key === 'tournament_winner' && market.instrumentForPosition('sim_exchange', p.position_hash))!;
    const before = feeds();
    const cases: [unknown, number, string][] = [
      [{ type: 'whale_trade', extra: 1 }, 400, 'unknown_parameter'],
      [{ type: 'whale_trade', move: 0.1 }, 400, 'unknown_parameter'],
      [{ type: 'nope' }, 400, 'invalid_parameter'],
      [{}, 400, 'invalid_parameter'],
      [{ type: 'flow_imbalance', prints: 0 }, 400, 'invalid_parameter'],
      [{ type: 'flow_imbalance', direction: 'up' }, 400, 'invalid_parameter'],
      [{ type: 'price_move', move: 0.6 }, 400, 'invalid_parameter'],
      [{ type: 'whale_trade', notional_usd: '100' }, 400, 'invalid_parameter'],
      [[], 400, 'invalid_parameter'],
      [{ type: 'whale_trade', partner_id: 'nope' }, 404, 'partner_not_found'],
      [{ type: 'whale_trade', position_hash: 'ct_nope:moneyline:home:0:x:ft' }, 404, 'position_not_found'],
      [{ type: 'trade_burst', partner_id: 'sim_p2p' }, 409, 'trades_not_supported'],
      [{ type: 'arbitrage', partner_id: 'sim_quotes' }, 409, 'indicative_only'],
      [{ type: 'price_move', position_hash: outright.position_hash }, 409, 'not_two_way'],
    ];
    for (const [body, status, code] of cases) {
      const r = await force(body);
      expect([r.status, r.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
      expect(r.body.error.message.length).toBeGreaterThan(10);
    }
    expect((await force({ type: 'whale_trade', move: 0.1 })).body.error.details).toEqual({ in: 'body', parameter: '/move' });
    expect((await force({ type: 'block_trade' }, {})).status).toBe(401);
    expect(feeds()).toEqual(before);
  });

  it('hostile bodies: never a 5xx; a refusal puts nothing on the feeds', async () => {
    const real = market.catalog.positions.slice(0, 40).map((p) => p.position_hash);
    const num = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, 0.02, 0.1, 0.5, 1, 5, 1e7, 1e7 + 1, -1), fc.string(), fc.constant(null), fc.boolean());
    const body = fc.oneof(
      // Near the happy path: a real type, maybe a venue that can carry it.
      fc.record({ type: fc.constantFrom(...SIM_SITUATIONS), partner_id: fc.constantFrom('sim_exchange', 'sim_book01') }, { requiredKeys: ['type'] }),
      fc.record(
        {
          type: fc.oneof(fc.constantFrom(...SIM_SITUATIONS, 'off_market_price', ''), fc.string({ unit: 'binary' }), fc.anything()),
          partner_id: fc.oneof(fc.constantFrom('sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_quotes', 'practice', ''), fc.string(), fc.anything()),
          position_hash: fc.oneof(fc.constantFrom(...real), fc.string({ unit: 'binary' }), fc.anything()),
          edge: num,
          move: num,
          direction: fc.oneof(fc.constantFrom('up', 'down', 'buy', 'sell'), fc.anything()),
          notional_usd: num,
          prints: num,
          through: num,
          window_ms: num,
          with_baseline: fc.oneof(fc.boolean(), fc.anything()),
          other: fc.anything(),
        },
        { requiredKeys: [] },
      ),
      fc.anything(),
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const before = feeds();
        const r = await force(b);
        expect([200, 400, 404, 409], JSON.stringify(r.body)).toContain(r.status);
        if (r.status === 200) ok++;
        else {
          expect(r.body.error.code).toMatch(/^[a-z_]+$/);
          expect(feeds()).toEqual(before);
        }
      }),
      { numRuns: 200 },
    );
    // The generator reaches the happy path too, not only refusals.
    expect(ok).toBeGreaterThan(0);
  });
});
