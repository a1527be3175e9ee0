/**
 * The VenueAdapter for one simulated venue. It talks to its SimVenueServer the way a real
 * adapter talks to a venue: requests in the venue's units (prices rounded onto its grid, stakes
 * onto its increment), responses and pushes parsed by the pure parsers with the adapter's clock.
 */
import type { OrderType } from '../../domain/catalog.js';
import { partnerOfLiquidityHash } from '../../domain/hashes.js';
import { VenueError, VenueErrorCodes, notSupported } from '../errors.js';
import { roundLimitForBuyer, round6, toNative } from '../prices.js';
import type {
  GameStateRecord,
  NormalizedQuote,
  NormalizedTrade,
  QuoteFilter,
  Unsubscribe,
  VenueAdapter,
  VenueBalance,
  VenueBalanceUpdate,
  VenueCancelRequest,
  VenueDepth,
  VenueDescription,
  VenueOrder,
  VenueOrderRequest,
  VenueOrderWarning,
  VenueRejectCode,
  VenueSettlement,
} from '../types.js';
import { toVenueError } from './errors.js';
import type { SimInstrument, SimWireOrderRequest } from '../../sim/messages.js';
import type { SimMarket } from '../../sim/model.js';
import {
  parseBalance,
  parseBalanceEvent,
  parseOrderAck,
  parseQuote,
  parseScoreboard,
  parseSettlement,
  parseTrade,
  quoteRef,
  tradeRef,
  type QuoteParseContext,
} from './parse.js';
import type { SimPartnerId } from '../../sim/personalities.js';
import { SimVenueServer } from '../../sim/server.js';
import { localRejection, validateOrderRequest } from '../order-request.js';

export interface SimAdapterOptions {
  /** ts_init source; defaults to the wall clock. Tests pass the market's clock. */
  clock?: () => number;
}

const invalid = (partnerId: string, code: string, message: string) => new VenueError('non_retryable', code, message, { partner_id: partnerId });

export class SimVenueAdapter implements VenueAdapter {
  readonly id: SimPartnerId;
  private readonly server: SimVenueServer;
  private readonly clock: () => number;
  private connected = false;
  private readonly subscriptions = new Set<() => void>();
  private readonly quoteCtx: QuoteParseContext;
  /** Messages a parser refused (a real venue sends junk now and then; the feed keeps going). */
  parseErrors = 0;

  constructor(
    private readonly market: SimMarket,
    partnerId: SimPartnerId,
    opts: SimAdapterOptions = {},
  ) {
    this.id = partnerId;
    this.server = new SimVenueServer(market, partnerId);
    this.clock = opts.clock ?? Date.now;
    const p = this.server.personality;
    this.quoteCtx = {
      partner_id: partnerId,
      fee: p.fee,
      real_book: p.real_book,
      source: p.capabilities.quotes.streaming ? 'streaming' : 'polling',
    };
  }

  describe(): VenueDescription {
    const p = this.server.personality;
    return structuredClone({ partner: p.partner, fee: p.fee, capabilities: p.capabilities });
  }

  async connect(): Promise<void> {
    this.connected = true;
  }

  async close(): Promise<void> {
    this.connected = false;
    for (const off of this.subscriptions) off();
    this.subscriptions.clear();
  }

  // ---- guards --------------------------------------------------------------------------------

  private get caps() {
    return this.server.personality.capabilities;
  }

  private ensureConnected(): void {
    if (!this.connected) throw new VenueError('retryable', VenueErrorCodes.notConnected, `${this.id} is not connected`, { partner_id: this.id });
  }

  private require(ok: boolean, capability: string): void {
    if (!ok) throw notSupported(this.id, capability);
    this.ensureConnected();
  }

  private track(off: () => void): Unsubscribe {
    let done = false;
    const un = () => {
      if (done) return;
      done = true;
      off();
      this.subscriptions.delete(un);
    };
    this.subscriptions.add(un);
    return un;
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw toVenueError(this.id, e);
    }
  }

  private matches(inst: SimInstrument, filter?: QuoteFilter): boolean {
    if (!filter) return true;
    if (filter.contest_ids && !filter.contest_ids.includes(inst.contest_id)) return false;
    if (filter.position_hashes && !filter.position_hashes.includes(inst.position_hash)) return false;
    return true;
  }

  // ---- quotes and depth ----------------------------------------------------------------------

  async fetchQuotes(filter?: QuoteFilter): Promise<NormalizedQuote[]> {
    this.require(this.caps.quotes.snapshot, 'quote snapshots');
    const wire = this.server.wire;
    const out: NormalizedQuote[] = [];
    const tsInit = this.clock();
    for (const msg of this.server.quoteSnapshot()) {
      const inst = this.server.instrument(quoteRef(wire, msg));
      if (!inst || !this.matches(inst, filter)) continue;
      out.push(parseQuote(wire, msg, inst, this.quoteCtx, tsInit));
    }
    return out;
  }

  subscribeQuotes(listener: (quote: NormalizedQuote) => void, filter?: QuoteFilter): Unsubscribe {
    this.require(this.caps.quotes.streaming, 'quote streaming');
    const wire = this.server.wire;
    return this.track(
      this.server.subscribeQuotes((msg) => {
        const inst = this.server.instrument(quoteRef(wire, msg));
        if (!inst || !this.matches(inst, filter)) return;
        let q: NormalizedQuote;
        try {
          q = parseQuote(wire, msg, inst, this.quoteCtx, this.clock());
        } catch {
          this.parseErrors++;
          return;
        }
        listener(q);
      }),
    );
  }

  async fetchDepth(positionHash: string): Promise<VenueDepth> {
    this.require(this.caps.depth, 'depth');
    if (typeof positionHash !== 'string' || !this.market.isPosition(positionHash)) {
      throw invalid(this.id, VenueErrorCodes.unknownPosition, `unknown position ${String(positionHash)}`);
    }
    const tsInit = this.clock();
    const inst = this.server.instrumentForPosition(positionHash);
    const msg = inst ? this.server.quote(inst.instrument_id) : undefined;
    if (!inst || !msg) {
      return { partner_id: this.id, position_hash: positionHash, liquidity_hash: null, levels: [], total_available: 0, best_price: null, ts_event: tsInit, ts_init: tsInit };
    }
    const q = parseQuote(this.server.wire, msg, inst, this.quoteCtx, tsInit);
    return {
      partner_id: this.id,
      position_hash: positionHash,
      liquidity_hash: q.liquidity_hash,
      levels: q.levels,
      total_available: round6(q.levels.reduce((s, l) => s + l.available, 0)),
      best_price: q.levels[0]?.price ?? null,
      ts_event: q.ts_event,
      ts_init: tsInit,
    };
  }

  // ---- orders --------------------------------------------------------------------------------

  private localReject(req: VenueOrderRequest, code: VenueRejectCode, reason: string, positionHash: string, liquidityHash: string | null): VenueOrder {
    const currency = this.server.personality.partner.internal_book ? 'ATLAS' : 'USD';
    return localRejection(this.id, req, code, reason, { position_hash: positionHash, liquidity_hash: liquidityHash, currency, ts: this.clock() });
  }

  async placeOrder(req: VenueOrderRequest): Promise<VenueOrder> {
    validateOrderRequest(this.id, req);
    this.ensureConnected();
    const p = this.server.personality;
    const cfg = p.partner.order_config;
    const internal = p.partner.internal_book;

    // Which position / instrument the order is for.
    let positionHash: string;
    let inst: SimInstrument | undefined;
    if (req.liquidity_hash !== undefined) {
      if (internal) {
        // The practice book fills whatever venue was named, at the best live price.
        const h = this.market.positionOfLiquidityHash(req.liquidity_hash);
        if (h === undefined) throw invalid(this.id, VenueErrorCodes.unknownPosition, `unknown liquidity_hash ${req.liquidity_hash}`);
        positionHash = h;
      } else {
        if (partnerOfLiquidityHash(req.liquidity_hash) !== this.id) {
          throw invalid(this.id, 'liquidity_hash_mismatch', `liquidity_hash ${req.liquidity_hash} does not name ${this.id}`);
        }
        inst = this.server.instrument(req.liquidity_hash.slice(this.id.length + 1));
        if (!inst) throw invalid(this.id, VenueErrorCodes.unknownPosition, `unknown liquidity_hash ${req.liquidity_hash}`);
        positionHash = inst.position_hash;
      }
    } else {
      positionHash = req.position_hash!;
      if (!this.market.isPosition(positionHash)) throw invalid(this.id, VenueErrorCodes.unknownPosition, `unknown position ${positionHash}`);
      if (!internal) inst = this.server.instrumentForPosition(positionHash);
    }

    if (!this.caps.orders.place || !cfg.orders_allowed) {
      return this.localReject(req, 'orders_not_supported', `${this.id} does not accept orders`, positionHash, inst?.liquidity_hash ?? null);
    }
    if (!internal && !inst) {
      return this.localReject(req, 'insufficient_live_depth', `${this.id} does not list this position`, positionHash, null);
    }

    // Venue grid: price rounded in the buyer's favour, stake floored to the increment.
    const warnings: VenueOrderWarning[] = [];
    let limitPx = req.max_price;
    if (!internal) {
      const native = toNative(cfg.price_format, req.max_price);
      limitPx = roundLimitForBuyer(cfg.price_format, native, cfg.price_tick);
      if (cfg.price_submitted && Math.abs(limitPx - native) > 1e-9 * Math.max(1, Math.abs(native))) warnings.push('price_off_tick');
    }
    let amount = req.amount;
    if (amount !== undefined && cfg.amount_increment !== null && cfg.amount_increment > 0) {
      const inc = cfg.amount_increment;
      const floored = Number((Math.floor(amount / inc + 1e-9) * inc).toFixed(8));
      if (Math.abs(floored - amount) > 1e-9) warnings.push('amount_off_increment');
      if (floored <= 0) {
        return this.localReject(req, 'below_min_order', `amount ${amount} is below one ${inc} increment`, positionHash, inst?.liquidity_hash ?? null);
      }
      amount = floored;
    }

    const type: OrderType = req.order_type;
    const wire: SimWireOrderRequest = {
      client_order_id: req.client_order_id,
      account_id: req.account_id,
      ...(internal ? { position_hash: positionHash } : { instrument_id: inst!.instrument_id }),
      type,
      ...(amount !== undefined ? { notional: amount } : { quantity: req.shares! }),
      limit_px: limitPx,
      tif: type === 'limit' ? 'gtc' : (req.time_in_force ?? 'ioc'),
    };
    const ack = this.guard(() => this.server.placeOrder(wire));
    return parseOrderAck(ack, { partner_id: this.id, price_format: cfg.price_format, instrument: inst ?? null, warnings }, this.clock());
  }

  async cancelOrder(req: VenueCancelRequest): Promise<VenueOrder> {
    this.require(this.caps.orders.cancel, 'order cancellation');
    const ack = this.guard(() => this.server.cancelOrder(req.account_id, req.venue_order_id));
    return this.orderOf(ack);
  }

  async fetchOrder(accountId: string, venueOrderId: string): Promise<VenueOrder> {
    this.require(this.caps.orders.place, 'orders');
    const ack = this.server.getOrder(accountId, venueOrderId);
    if (!ack) throw invalid(this.id, VenueErrorCodes.unknownOrder, `no order ${venueOrderId} for ${accountId}`);
    return this.orderOf(ack);
  }

  private orderOf(ack: Parameters<typeof parseOrderAck>[0]): VenueOrder {
    const inst = ack.instrument_id !== null ? (this.server.instrument(ack.instrument_id) ?? null) : null;
    return parseOrderAck(ack, { partner_id: this.id, price_format: this.server.personality.partner.order_config.price_format, instrument: inst }, this.clock());
  }

  subscribeOrderUpdates(listener: (order: VenueOrder) => void): Unsubscribe {
    this.require(this.caps.orders.place, 'order updates');
    return this.track(this.server.subscribeOrders((ack) => listener(this.orderOf(ack))));
  }

  // ---- balances ------------------------------------------------------------------------------

  async fetchBalance(accountId: string): Promise<VenueBalance> {
    this.require(this.caps.balance, 'balances');
    const w = this.server.balance(accountId);
    if (!w) throw invalid(this.id, VenueErrorCodes.unknownAccount, `account ${accountId} is not connected to ${this.id}`);
    return parseBalance(w, this.id, this.clock());
  }

  subscribeBalances(listener: (update: VenueBalanceUpdate) => void): Unsubscribe {
    this.require(this.caps.balance, 'balance updates');
    return this.track(this.server.subscribeBalances((ev) => listener(parseBalanceEvent(ev, this.id, this.clock()))));
  }

  // ---- trades, game state, settlement --------------------------------------------------------

  subscribeTrades(listener: (trade: NormalizedTrade) => void, filter?: { contest_ids?: string[] }): Unsubscribe {
    this.require(this.caps.trades, 'trades');
    return this.track(
      this.server.subscribeTrades((msg) => {
        const inst = this.server.instrument(tradeRef(msg));
        if (!inst || !this.matches(inst, filter)) return;
        let t: NormalizedTrade;
        try {
          t = parseTrade(msg, inst, this.id, this.clock());
        } catch {
          this.parseErrors++;
          return;
        }
        listener(t);
      }),
    );
  }

  async fetchGameState(contestIds: string[]): Promise<GameStateRecord[]> {
    this.require(this.caps.game_state, 'game state');
    const tsInit = this.clock();
    const out: GameStateRecord[] = [];
    for (const id of contestIds) {
      const msg = this.server.scoreboard(id);
      if (msg) out.push(parseScoreboard(msg, this.id, tsInit));
    }
    return out;
  }

  subscribeGameState(listener: (rec: GameStateRecord) => void, filter?: { contest_ids?: string[] }): Unsubscribe {
    this.require(this.caps.game_state, 'game state');
    return this.track(
      this.server.subscribeScoreboard((msg) => {
        if (filter?.contest_ids && !filter.contest_ids.includes(msg.event_id)) return;
        listener(parseScoreboard(msg, this.id, this.clock()));
      }),
    );
  }

  subscribeSettlements(listener: (s: VenueSettlement) => void): Unsubscribe {
    this.require(this.caps.settlements, 'settlements');
    const internal = this.server.wire === 'internal';
    const resolve = (ref: string) => (internal ? ref : this.server.instrument(ref)?.position_hash);
    return this.track(this.server.subscribeSettlements((w) => listener(parseSettlement(w, resolve, this.id, this.clock()))));
  }
}
