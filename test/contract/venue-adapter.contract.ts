/**
 * The conformance suite every VenueAdapter must pass (BullMQ adapter-conformance style).
 *
 *   venueAdapterContract('sim_exchange', () => makeHarness(...));
 *
 * The harness gives the suite a fresh adapter (not yet connected) plus the few venue-specific
 * facts and levers a generic test cannot know: a position the venue can fill, a connected
 * account, and ways to make the venue publish something. Every assertion is driven by the
 * adapter's own describe(): a capability it declares must work, one it does not declare must be
 * refused with `capability_not_supported`.
 */
import { afterEach, beforeEach, describe, expect, it, type TestContext } from 'vitest';
import { VenueError, isVenueError, venueErrorFromJSON } from '../../src/venues/errors.js';
import { QUOTE_RECONFIRM_MS } from '../../src/venues/freshness.js';
import type { NormalizedQuote, VenueAdapter, VenueOrder, VenueRejectCode } from '../../src/venues/types.js';

export interface ContractHarness {
  adapter: VenueAdapter;
  /** The clock value the adapter stamps as ts_init right now. */
  now(): number;
  /** A position the service knows. */
  knownPosition: string;
  /** A position an order on this venue can fill (the venue quotes it, or the practice book can price it). */
  orderPosition: string;
  /** An account connected to the venue with ample balance; null for venues without accounts. */
  account: string | null;
  /** A contest the venue has game state for (when it declares game_state). */
  contestId: string;
  /**
   * Make the venue publish quote changes. A venue behind a network connection resolves once the
   * adapter has handled what was published (its listeners were called), so the suite's checks
   * right after see it; an in-process venue returns at once.
   */
  triggerQuotes(): void | Promise<void>;
  /** Make the venue publish a trade print on `positionHash` (resolving as triggerQuotes does). */
  triggerTrade(positionHash: string): void | Promise<void>;
  /** Make the venue publish a game-state update for `contestId`. */
  triggerGameState(contestId: string): void | Promise<void>;
  /** Settle the contest of `orderPosition` (settlement feed). */
  triggerSettlement(): void | Promise<void>;
  /** Let venue time pass (async fills land). */
  advance(ms: number): void | Promise<void>;
  dispose?(): Promise<void> | void;
}

const REJECT_CODES: readonly VenueRejectCode[] = [
  'venue_disabled',
  'orders_not_supported',
  'unsupported_order_type',
  'below_min_order',
  'above_max_order',
  'unfillable',
  'price_out_of_band',
  'above_max_price',
  'insufficient_size',
  'insufficient_live_depth',
  'insufficient_balance',
  'no_live_price_for_paper',
];

async function expectVenueError(p: Promise<unknown> | (() => unknown), code: string, kind?: VenueError['kind']): Promise<VenueError> {
  let err: unknown;
  try {
    if (typeof p === 'function') p();
    else await p;
  } catch (e) {
    err = e;
  }
  expect(err, `expected VenueError ${code}`).toBeInstanceOf(VenueError);
  const ve = err as VenueError;
  expect(ve.code).toBe(code);
  if (kind) expect(ve.kind).toBe(kind);
  // survives a process boundary
  const back = venueErrorFromJSON(JSON.parse(JSON.stringify(ve)));
  expect(back.code).toBe(ve.code);
  expect(back.kind).toBe(ve.kind);
  return ve;
}

function assertQuote(q: NormalizedQuote, adapter: VenueAdapter, tsInit: number): void {
  const d = adapter.describe();
  expect(q.partner_id).toBe(adapter.id);
  expect(q.liquidity_hash.startsWith(adapter.id + ':')).toBe(true);
  expect(q.position_hash.length).toBeGreaterThan(0);
  expect(q.venue_market_id.length).toBeGreaterThan(0);
  expect(q.venue_side_key.length).toBeGreaterThan(0);
  expect(q.price).toBeGreaterThan(0);
  expect(q.price).toBeLessThan(1);
  expect(q.available).toBeGreaterThanOrEqual(0);
  expect(q.fee.kind).toBe(d.fee.kind);
  expect(q.source).toBe(d.capabilities.quotes.streaming ? 'streaming' : 'polling');
  expect(q.ts_init).toBe(tsInit);
  expect(q.ts_event).toBeLessThanOrEqual(q.ts_init);
  if (q.levels.length > 0) {
    expect(q.levels[0]!.price).toBe(q.price);
    expect(q.levels[0]!.available).toBe(q.available);
    for (let i = 1; i < q.levels.length; i++) expect(q.levels[i]!.price).toBeGreaterThan(q.levels[i - 1]!.price);
    for (const l of q.levels) {
      expect(l.price).toBeGreaterThan(0);
      expect(l.price).toBeLessThan(1);
      expect(l.available).toBeGreaterThan(0);
    }
  } else {
    expect(q.available).toBe(0);
  }
}

function assertOrder(o: VenueOrder, adapter: VenueAdapter): void {
  expect(o.partner_id).toBe(adapter.id);
  expect(['filled', 'partially_filled', 'resting', 'pending', 'rejected', 'cancelled']).toContain(o.status);
  expect(o.filled_contracts).toBeGreaterThanOrEqual(0);
  expect(o.filled_notional).toBeGreaterThanOrEqual(0);
  expect(o.fees).toBeGreaterThanOrEqual(0);
  expect(o.limit_price).toBeGreaterThan(0);
  expect(o.limit_price).toBeLessThan(1);
  if (o.status === 'rejected') {
    expect(o.reject_code === null || REJECT_CODES.includes(o.reject_code)).toBe(true);
    expect(o.reject_reason).toBeTruthy();
    expect(o.filled_contracts).toBe(0);
  } else {
    expect(o.reject_code).toBeNull();
    expect(o.venue_order_id.length).toBeGreaterThan(0);
  }
  if (o.filled_contracts > 0) {
    expect(o.avg_price).not.toBeNull();
    expect(o.avg_price!).toBeLessThanOrEqual(o.limit_price + 1e-9);
    expect(o.filled_notional).toBeCloseTo(o.filled_contracts * o.avg_price!, 4);
  }
  expect(o.ts_event).toBeLessThanOrEqual(o.ts_init);
}

export function venueAdapterContract(name: string, make: () => ContractHarness | Promise<ContractHarness>): void {
  describe(`VenueAdapter contract: ${name}`, () => {
    let h: ContractHarness;
    let a: VenueAdapter;

    beforeEach(async () => {
      h = await make();
      a = h.adapter;
    });
    afterEach(async () => {
      await a.close();
      await h.dispose?.();
    });

    const caps = () => a.describe().capabilities;
    /**
     * A capability the adapter does not declare is a visible skip with its reason, never a test that
     * returns early and counts as passed.
     */
    const requireCapability = (ctx: TestContext, declared: boolean, capability: string) =>
      ctx.skip(!declared, `${name} does not declare ${capability}`);
    const order = (over: Partial<Parameters<VenueAdapter['placeOrder']>[0]> = {}) => ({
      client_order_id: `c-${Math.random().toString(36).slice(2)}`,
      account_id: h.account ?? 'acct-none',
      position_hash: h.orderPosition,
      order_type: 'market' as const,
      amount: 10,
      max_price: 0.99,
      ...over,
    });

    describe('describe()', () => {
      it('is plain data naming the adapter, and a copy', () => {
        const d = a.describe();
        expect(JSON.parse(JSON.stringify(d))).toEqual(d);
        expect(d.partner.partner_id).toBe(a.id);
        expect(a.id).not.toContain(':');
        expect(d.partner.name.length).toBeGreaterThan(0);
        expect(d.partner.logo_url).toMatch(/^https?:\/\//);
        expect(d.partner.status).toBe('active');
        (d.partner as { name: string }).name = 'mutated';
        expect(a.describe().partner.name).not.toBe('mutated');
      });

      it('has an order_config consistent with the capabilities', () => {
        const { partner, capabilities: c } = a.describe();
        const oc = partner.order_config;
        expect(oc.orders_allowed).toBe(partner.orders_allowed);
        expect(oc.supported_order_types).toContain('market');
        expect(c.orders.place).toBe(oc.orders_allowed);
        if (c.orders.place) {
          expect([...c.orders.types].sort()).toEqual([...oc.supported_order_types].sort());
          expect(c.orders.cancel).toBe(oc.cancel_supported);
        } else {
          expect(c.orders.types).toEqual([]);
          expect(c.orders.cancel).toBe(false);
        }
        if (oc.supported_order_types.includes('limit')) expect(oc.price_submitted).toBe(true);
        expect(oc.min_order_amount).toBeGreaterThanOrEqual(0);
        if (oc.max_order_amount !== null) expect(oc.max_order_amount).toBeGreaterThan(oc.min_order_amount);
        expect(oc.price_tick).toBeGreaterThan(0);
        expect(['cents', 'probability', 'american']).toContain(oc.price_format);
      });

      it('declares polling intervals, freshness bounds, connectability and credentials coherently', () => {
        const { partner, capabilities: c } = a.describe();
        if (c.quotes.streaming) expect(c.quotes.poll_interval_ms).toBeNull();
        if (c.quotes.snapshot && !c.quotes.streaming) expect(c.quotes.poll_interval_ms).toBeGreaterThan(0);
        if (!c.quotes.snapshot) expect(c.quotes.poll_interval_ms).toBeNull();
        if (c.quotes.snapshot || c.quotes.streaming) {
          // A bound no longer than ingest's gap between two confirmations of an unchanged quote
          // would mark a quiet, healthy venue stale.
          expect(Number.isInteger(c.quotes.freshness_ms)).toBe(true);
          expect(c.quotes.freshness_ms).toBeGreaterThan(QUOTE_RECONFIRM_MS + (c.quotes.poll_interval_ms ?? 0));
        } else {
          expect(c.quotes.freshness_ms).toBeNull();
        }
        if (partner.internal_book) {
          expect(partner.connectable).toBe(false);
          expect(partner.credential_fields).toEqual([]);
        }
        if (partner.connectable) expect(partner.credential_fields.length).toBeGreaterThan(0);
        for (const f of partner.credential_fields) {
          expect(f.key).toMatch(/^[a-z_]+$/);
          expect(f.label.length).toBeGreaterThan(0);
          expect(['text', 'password', 'email']).toContain(f.type);
          expect(typeof f.required).toBe('boolean');
        }
      });
    });

    describe('connection', () => {
      it('refuses work before connect with a retryable not_connected', async () => {
        await expectVenueError(a.placeOrder(order()), 'not_connected', 'retryable');
      });

      it('connect and close are idempotent', async () => {
        await a.connect();
        await a.connect();
        await a.close();
        await a.close();
        await expectVenueError(a.placeOrder(order()), 'not_connected', 'retryable');
      });
    });

    describe('capabilities it does not declare', () => {
      it('are refused with capability_not_supported (non-retryable)', async (ctx) => {
        await a.connect();
        const c = caps();
        const checks: [boolean, () => unknown][] = [
          [c.quotes.snapshot, () => a.fetchQuotes()],
          [c.quotes.streaming, () => a.subscribeQuotes(() => {})],
          [c.depth, () => a.fetchDepth(h.knownPosition)],
          [c.orders.cancel, () => a.cancelOrder({ account_id: 'x', venue_order_id: 'y' })],
          [c.orders.place, () => a.subscribeOrderUpdates(() => {})],
          [c.balance, () => a.fetchBalance('x')],
          [c.balance, () => a.subscribeBalances(() => {})],
          [c.trades, () => a.subscribeTrades(() => {})],
          [c.game_state, () => a.fetchGameState([h.contestId])],
          [c.game_state, () => a.subscribeGameState(() => {})],
          [c.settlements, () => a.subscribeSettlements(() => {})],
        ];
        const undeclared = checks.filter(([declared]) => !declared);
        ctx.skip(undeclared.length === 0, `${name} declares every capability`);
        for (const [, call] of undeclared) {
          // A synchronous throw and a rejected promise are both a refusal; a return is not.
          await expectVenueError(Promise.resolve().then(call), 'capability_not_supported', 'non_retryable');
        }
      });
    });

    describe('quotes', () => {
      it('snapshot: normalized quotes with ts_init from the clock', async (ctx) => {
        requireCapability(ctx, caps().quotes.snapshot, 'quotes.snapshot');
        await a.connect();
        const qs = await a.fetchQuotes();
        expect(qs.length).toBeGreaterThan(0);
        const ts = h.now();
        for (const q of qs) assertQuote(q, a, ts);
        const hashes = new Set(qs.map((q) => q.liquidity_hash));
        expect(hashes.size).toBe(qs.length);
      });

      it('snapshot honours a position filter', async (ctx) => {
        requireCapability(ctx, caps().quotes.snapshot, 'quotes.snapshot');
        await a.connect();
        const qs = await a.fetchQuotes({ position_hashes: [h.orderPosition] });
        expect(qs.length).toBe(1);
        expect(qs[0]!.position_hash).toBe(h.orderPosition);
      });

      it('streaming: pushes changes until unsubscribed or closed', async (ctx) => {
        requireCapability(ctx, caps().quotes.streaming, 'quotes.streaming');
        await a.connect();
        const got: NormalizedQuote[] = [];
        const off = a.subscribeQuotes((q) => got.push(q));
        await h.triggerQuotes();
        expect(got.length).toBeGreaterThan(0);
        for (const q of got) assertQuote(q, a, h.now());
        off();
        off(); // idempotent
        const n = got.length;
        await h.triggerQuotes();
        expect(got.length).toBe(n);

        const again: NormalizedQuote[] = [];
        a.subscribeQuotes((q) => again.push(q));
        await a.close();
        await h.triggerQuotes();
        expect(again.length).toBe(0);
      });

      it('depth: the book of one position, best first', async (ctx) => {
        requireCapability(ctx, caps().depth, 'depth');
        await a.connect();
        const d = await a.fetchDepth(h.orderPosition);
        expect(d.partner_id).toBe(a.id);
        expect(d.position_hash).toBe(h.orderPosition);
        expect(d.levels.length).toBeGreaterThan(0);
        expect(d.best_price).toBe(d.levels[0]!.price);
        expect(d.total_available).toBeCloseTo(d.levels.reduce((s, l) => s + l.available, 0), 6);
        for (let i = 1; i < d.levels.length; i++) expect(d.levels[i]!.price).toBeGreaterThan(d.levels[i - 1]!.price);
        expect(d.ts_init).toBe(h.now());
        await expectVenueError(a.fetchDepth('no:such:position:0:x:ft'), 'unknown_position', 'non_retryable');
      });
    });

    describe('orders', () => {
      it('rejects malformed requests with non-retryable VenueErrors', async () => {
        await a.connect();
        await expectVenueError(a.placeOrder(order({ max_price: 1.5 })), 'invalid_price', 'non_retryable');
        await expectVenueError(a.placeOrder(order({ max_price: 0 })), 'invalid_price', 'non_retryable');
        await expectVenueError(a.placeOrder(order({ amount: -1 })), 'invalid_amount', 'non_retryable');
        await expectVenueError(a.placeOrder(order({ shares: 5 })), 'invalid_amount', 'non_retryable');
        await expectVenueError(a.placeOrder(order({ liquidity_hash: `${a.id}:x` })), 'invalid_request', 'non_retryable');
        await expectVenueError(a.placeOrder(order({ position_hash: 'no:such:position:0:x:ft' })), 'unknown_position', 'non_retryable');
      });

      it('a quotes-only venue answers orders_not_supported', async (ctx) => {
        ctx.skip(caps().orders.place, `${name} places orders (not quotes-only)`);
        await a.connect();
        const o = await a.placeOrder(order());
        assertOrder(o, a);
        expect(o.status).toBe('rejected');
        expect(o.reject_code).toBe('orders_not_supported');
      });

      it('a market order fills (or is accepted) within max_price and reads back', async (ctx) => {
        requireCapability(ctx, caps().orders.place, 'orders.place');
        await a.connect();
        const o = await a.placeOrder(order());
        assertOrder(o, a);
        expect(caps().orders.async_fills ? ['pending'] : ['filled', 'partially_filled']).toContain(o.status);
        if (!caps().orders.async_fills) expect(o.filled_contracts).toBeGreaterThan(0);
        const back = await a.fetchOrder(o.account_id, o.venue_order_id);
        expect(back.venue_order_id).toBe(o.venue_order_id);
        expect(back.status).toBe(o.status);
        expect(back.filled_contracts).toBe(o.filled_contracts);
        await expectVenueError(a.fetchOrder(o.account_id, 'no-such-order'), 'unknown_order', 'non_retryable');
      });

      it('an unsupported order type is rejected with unsupported_order_type', async (ctx) => {
        requireCapability(ctx, caps().orders.place, 'orders.place');
        ctx.skip(caps().orders.types.includes('limit'), `${name} supports every order type (limit included)`);
        await a.connect();
        const o = await a.placeOrder(order({ order_type: 'limit' }));
        expect(o.status).toBe('rejected');
        expect(o.reject_code).toBe('unsupported_order_type');
      });

      it('a limit below the book rests', async (ctx) => {
        requireCapability(ctx, caps().orders.types.includes('limit'), 'limit orders');
        await a.connect();
        const o = await a.placeOrder(order({ order_type: 'limit', max_price: 0.02, amount: 5 }));
        assertOrder(o, a);
        expect(o.status).toBe('resting');
        expect(o.remaining_contracts).toBeGreaterThan(0);
      });

      it('a resting limit cancels once, then is not cancellable', async (ctx) => {
        requireCapability(ctx, caps().orders.types.includes('limit'), 'limit orders');
        requireCapability(ctx, caps().orders.cancel, 'orders.cancel');
        await a.connect();
        const o = await a.placeOrder(order({ order_type: 'limit', max_price: 0.02, amount: 5 }));
        expect(o.status).toBe('resting');
        const c = await a.cancelOrder({ account_id: o.account_id, venue_order_id: o.venue_order_id });
        expect(c.status).toBe('cancelled');
        expect(c.remaining_contracts).toBe(0);
        await expectVenueError(a.cancelOrder({ account_id: o.account_id, venue_order_id: o.venue_order_id }), 'order_not_cancellable', 'non_retryable');
      });

      it('async-fill venues confirm the fill on the order feed', async (ctx) => {
        requireCapability(ctx, caps().orders.async_fills, 'orders.async_fills');
        await a.connect();
        const updates: VenueOrder[] = [];
        a.subscribeOrderUpdates((u) => updates.push(u));
        const o = await a.placeOrder(order());
        expect(o.status).toBe('pending');
        expect(o.filled_contracts).toBe(0);
        await h.advance(60_000);
        const u = updates.find((x) => x.venue_order_id === o.venue_order_id);
        expect(u).toBeDefined();
        expect(['filled', 'partially_filled']).toContain(u!.status);
        expect(u!.filled_contracts).toBeGreaterThan(0);
        assertOrder(u!, a);
      });
    });

    describe('balances', () => {
      it('reads the connected account and refuses unknown ones', async (ctx) => {
        requireCapability(ctx, caps().balance, 'balance');
        await a.connect();
        const b = await a.fetchBalance(h.account!);
        expect(b.partner_id).toBe(a.id);
        expect(b.account_id).toBe(h.account);
        expect(b.currency).toBe('USD');
        expect(b.balance).toBeGreaterThan(0);
        expect(b.held).toBeGreaterThanOrEqual(0);
        expect(b.ts_init).toBe(h.now());
        await expectVenueError(a.fetchBalance('nobody-here'), 'unknown_account', 'non_retryable');
      });
    });

    describe('feeds', () => {
      it('trades: published prints are normalized', async (ctx) => {
        requireCapability(ctx, caps().trades, 'trades');
        await a.connect();
        const got: Parameters<Parameters<VenueAdapter['subscribeTrades']>[0]>[0][] = [];
        const off = a.subscribeTrades((t) => got.push(t));
        await h.triggerTrade(h.orderPosition);
        expect(got.length).toBeGreaterThan(0);
        const t = got[got.length - 1]!;
        expect(t.partner_id).toBe(a.id);
        expect(t.position_hash).toBe(h.orderPosition);
        expect(t.liquidity_hash.startsWith(a.id + ':')).toBe(true);
        expect(['buy', 'sell']).toContain(t.taker_action);
        expect(t.price).toBeGreaterThan(0);
        expect(t.price).toBeLessThan(1);
        expect(t.size_contracts).toBeGreaterThan(0);
        expect(t.executed_at).toBe(t.ts_event);
        expect(t.ts_init).toBe(h.now());
        expect((t.trader_id === null) === (t.trader_id_kind === null)).toBe(true);
        off();
        const n = got.length;
        await h.triggerTrade(h.orderPosition);
        expect(got.length).toBe(n);
      });

      it('game state: spec-shaped records, unknown contests absent', async (ctx) => {
        requireCapability(ctx, caps().game_state, 'game_state');
        await a.connect();
        const recs = await a.fetchGameState([h.contestId, 'no_such_contest']);
        expect(recs.map((r) => r.contest_id)).toEqual([h.contestId]);
        const s = recs[0]!.state;
        for (const k of ['game_status', 'clock', 'period', 'contest_result', 'winner_participant_id', 'scores', 'situation', 'leaderboard']) {
          expect(s).toHaveProperty(k);
        }
        const got: unknown[] = [];
        a.subscribeGameState((r) => got.push(r), { contest_ids: [h.contestId] });
        await h.triggerGameState(h.contestId);
        expect(got.length).toBeGreaterThan(0);
      });

      it('settlements: win/lose/push per position', async (ctx) => {
        requireCapability(ctx, caps().settlements, 'settlements');
        await a.connect();
        const got: Parameters<Parameters<VenueAdapter['subscribeSettlements']>[0]>[0][] = [];
        a.subscribeSettlements((s) => got.push(s));
        await h.triggerSettlement();
        expect(got.length).toBeGreaterThan(0);
        const s = got[0]!;
        expect(s.partner_id).toBe(a.id);
        expect(s.results.length).toBeGreaterThan(0);
        for (const r of s.results) expect(['win', 'lose', 'push']).toContain(r.result);
        expect(s.results.some((r) => r.position_hash === h.orderPosition)).toBe(true);
      });
    });

    it('every error it throws is a VenueError', async () => {
      await a.connect();
      // Each of these is invalid for every adapter, so each must throw, and what it throws is a VenueError.
      const attempts: (() => Promise<unknown>)[] = [() => a.placeOrder(order({ amount: Number.NaN })), () => a.fetchOrder('x', 'y')];
      expect.assertions(attempts.length);
      for (const call of attempts) await expect(Promise.resolve().then(call)).rejects.toSatisfy(isVenueError);
    });
  });
}
