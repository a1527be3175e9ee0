/**
 * The simulated venues' matching engines: what a venue itself enforces when an order reaches it
 * (its order_config: order types, min/max, whole contracts, price band), how it fills (market
 * orders walk the book up to the limit and kill the rest; limits rest; async venues confirm
 * later), and the money side (balances, holds, holdings, settlement payouts).
 *
 * Prices inside are 0-1 probabilities; requests and acks carry the venue's native unit.
 */
import { fillFee } from '../domain/fees.js';
import { fromNative, inPriceBand, onGrid, round6, toNative } from '../domain/prices.js';
import type { PositionResult, PriceLevel } from '../venues/types.js';
import type { SimWireBalanceEvent, SimWireOrderAck, SimWireOrderRequest } from './messages.js';
import type { AccountRt, Listing, OrderRt, OrderState, PosRt, VenueRt } from './runtime.js';

/** A venue-side refusal of a malformed request (mapped to a VenueError by the adapter). */
export class SimFault extends Error {
  constructor(
    readonly venueCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'SimFault';
  }
}

export interface EngineCtx {
  now(): number;
  /** The listing's book changed (after fills): publish it. */
  bookChanged(l: Listing): void;
  orderChanged(v: VenueRt, o: OrderRt): void;
  balanceChanged(v: VenueRt, a: AccountRt, reason: SimWireBalanceEvent['reason'], orderId: string | null): void;
  position(hash: string): PosRt | undefined;
  /** Versions a listing whose book just changed (strictly increasing ts_event). */
  stamp(l: Listing): void;
  /** Best live price across real venues with at least USD 1 offered (the practice book's fill). */
  bestLivePrice(positionHash: string): number | null;
}

const PRICE_EPS = 1e-9;
const DUST_USD = 0.005;

interface Fill {
  level: number;
  qty: number;
  price: number;
}

interface Walk {
  fills: Fill[];
  qty: number;
  notional: number;
  /** Some level was priced within the limit. */
  eligible: boolean;
  /** The request was met (or the rest is below one whole contract). */
  satisfied: boolean;
}

const floor6 = (x: number) => Math.floor(x * 1e6 + 1e-6) / 1e6;

/** Takes liquidity from `levels` up to `limit` for a stake or a contract count (no mutation). */
function walk(levels: readonly PriceLevel[], limit: number, whole: boolean, notional: number | null, qty: number | null): Walk {
  const fills: Fill[] = [];
  let remN = notional ?? 0;
  let remQ = qty ?? 0;
  let totQ = 0;
  let totN = 0;
  let eligible = false;
  let satisfied = false;
  for (let i = 0; i < levels.length; i++) {
    const lv = levels[i]!;
    if (lv.available <= 0) continue;
    if (lv.price > limit + PRICE_EPS) break;
    eligible = true;
    const levelQty = lv.available / lv.price;
    let take = qty !== null ? Math.min(levelQty, remQ) : Math.min(levelQty, remN / lv.price);
    take = whole ? Math.floor(take + 1e-9) : floor6(take);
    if (take <= 0) {
      // Only rounding stops us here: the rest cannot buy one whole contract at this (or any
      // deeper, dearer) level.
      satisfied = true;
      break;
    }
    fills.push({ level: i, qty: take, price: lv.price });
    totQ += take;
    totN += take * lv.price;
    if (qty !== null) remQ -= take;
    else remN -= take * lv.price;
    if (qty !== null ? remQ <= 1e-9 : remN < DUST_USD) {
      satisfied = true;
      break;
    }
  }
  return { fills, qty: round6(totQ), notional: round6(totN), eligible, satisfied };
}

function feeOf(v: VenueRt, role: 'taker' | 'maker', fills: readonly { qty: number; price: number }[]): number {
  let fee = 0;
  for (const f of fills) fee += fillFee(v.pers.fee, role, f.price, f.qty);
  if (v.pers.dynamics.fee_round_up_to_cent) return Math.ceil(round6(fee) * 100 - 1e-9) / 100;
  return round6(fee);
}

/** Removes filled quantity from a listing's book (new arrays: emitted books are immutable). */
function consume(l: Listing, fills: readonly Fill[]): void {
  if (fills.length === 0) return;
  const next: PriceLevel[] = [];
  for (let i = 0; i < l.levels.length; i++) {
    const lv = l.levels[i]!;
    let avail = lv.available;
    for (const f of fills) if (f.level === i) avail -= f.qty * f.price;
    avail = round6(avail);
    if (avail >= 0.01) next.push({ price: lv.price, available: avail });
  }
  l.levels = next;
}

function addHolding(a: AccountRt, hash: string, qty: number, cost: number): void {
  const h = a.holdings.get(hash);
  if (h) {
    h.contracts = round6(h.contracts + qty);
    h.cost = round6(h.cost + cost);
  } else a.holdings.set(hash, { contracts: round6(qty), cost: round6(cost) });
}

function newOrder(v: VenueRt, req: SimWireOrderRequest, now: number, listing: Listing | null): OrderRt {
  return {
    id: `${v.id}-o${++v.orderSeq}`,
    client_order_id: req.client_order_id,
    account_id: req.account_id,
    listing,
    position_hash: listing ? listing.pr.pos.position_hash : (req.position_hash ?? null),
    type: req.type,
    state: 'REJECTED',
    requested_notional: req.notional ?? null,
    requested_qty: req.quantity ?? null,
    limit: 0,
    limit_px: req.limit_px,
    filled_qty: 0,
    filled_notional: 0,
    fee: 0,
    open_qty: 0,
    hold: 0,
    pending: null,
    reject_reason: null,
    reject_message: null,
    currency: v.pers.partner.internal_book ? 'ATLAS' : 'USD',
    ts: now,
  };
}

function validateShape(req: SimWireOrderRequest): void {
  const hasN = req.notional !== undefined;
  const hasQ = req.quantity !== undefined;
  if (hasN === hasQ) throw new SimFault('INVALID_SIZE', 'exactly one of notional or quantity');
  const x = hasN ? req.notional! : req.quantity!;
  if (!Number.isFinite(x) || x <= 0) throw new SimFault('INVALID_SIZE', `size must be a positive number: ${x}`);
  if (!Number.isFinite(req.limit_px)) throw new SimFault('INVALID_PRICE', `limit_px must be a number: ${req.limit_px}`);
  if (req.type !== 'market' && req.type !== 'limit') throw new SimFault('INVALID_ORDER', `unknown order type ${String(req.type)}`);
}

/** Places an order on venue `v`. Throws SimFault for malformed requests; refusals are REJECTED acks. */
export function placeOrder(ctx: EngineCtx, v: VenueRt, req: SimWireOrderRequest): OrderRt {
  const key = `${req.account_id}|${req.client_order_id}`;
  const seen = v.byClientId.get(key);
  if (seen) return seen; // the venue's idempotency: same client id, same order

  validateShape(req);
  const cfg = v.pers.partner.order_config;
  const now = ctx.now();

  if (v.pers.wire === 'internal') return practiceOrder(ctx, v, req, key);

  const l = req.instrument_id !== undefined ? v.byInstrument.get(req.instrument_id) : undefined;
  if (!l) throw new SimFault('UNKNOWN_INSTRUMENT', `no instrument ${String(req.instrument_id)} on ${v.id}`);
  const o = newOrder(v, req, now, l);
  const { store, reject } = recorder(v, o, key);

  if (!cfg.orders_allowed) return reject('READ_ONLY', `${v.id} does not accept orders`);
  if (!cfg.supported_order_types.includes(req.type)) return reject('ORDER_TYPE', `${req.type} orders are not supported on ${v.id}`);
  const a = v.accounts.get(req.account_id);
  if (!a || a.credential_status !== 'connected') return reject('ACCOUNT_NOT_LINKED', `account ${req.account_id} is not connected to ${v.id}`);

  const format = cfg.price_format;
  if (cfg.price_submitted) {
    if (!onGrid(req.limit_px, cfg.price_tick)) throw new SimFault('PRICE_TICK', `price ${req.limit_px} is off the ${cfg.price_tick} grid`);
    if (!inPriceBand(cfg, req.limit_px)) return reject('PRICE_BAND', `price ${req.limit_px} outside [${cfg.min_price}, ${cfg.max_price}]`);
  } else if (format === 'american' && Math.abs(req.limit_px) < 100) {
    throw new SimFault('INVALID_PRICE', `not american odds: ${req.limit_px}`);
  }
  let limit: number;
  try {
    limit = fromNative(format, req.limit_px);
  } catch {
    throw new SimFault('INVALID_PRICE', `bad price ${req.limit_px}`);
  }
  if (!(limit > 0 && limit < 1)) throw new SimFault('INVALID_PRICE', `price ${req.limit_px} is not a probability`);
  o.limit = limit;

  const whole = cfg.whole_contracts;
  let qty = req.quantity ?? null;
  if (qty !== null && whole) qty = Math.floor(qty + 1e-9);
  const notional = req.notional ?? null;
  if (qty !== null && qty <= 0) return reject('ZERO_CONTRACTS', 'quantity floors to zero whole contracts');

  const book = l.closed ? [] : l.levels;
  const hasBook = book.some((x) => x.available > 0);

  if (!cfg.price_submitted && hasBook) {
    // Accept-by-id: the offer's own price is taken; the band applies to it.
    const offer = book.find((x) => x.available > 0)!;
    if (!inPriceBand(cfg, toNative(format, offer.price))) return reject('PRICE_BAND', `offer price outside the venue band`);
  }

  // Size bounds, in USD. A contract count is valued at the limit.
  const requested = notional ?? qty! * limit;
  if (cfg.max_order_amount !== null && requested > cfg.max_order_amount + 1e-9) {
    return reject('MAX_NOTIONAL', `order of ${round6(requested)} USD above the maximum ${cfg.max_order_amount}`);
  }
  if (requested < cfg.min_order_amount - 1e-9) {
    let takeAll = false;
    if (cfg.full_fill_always_allowed && req.type === 'market') {
      const all = walk(book, limit, whole, null, Number.MAX_SAFE_INTEGER);
      takeAll = all.qty > 0 && requested >= all.notional - 1e-9;
    }
    if (!takeAll) return reject('MIN_NOTIONAL', `order of ${round6(requested)} USD below the minimum ${cfg.min_order_amount}`);
  }

  if (req.type === 'market') {
    if (!hasBook) return reject('NO_LIQUIDITY', 'nothing offered on this market');
    const w = walk(book, limit, whole, notional, qty);
    if (!w.eligible) return reject('PRICE_LIMIT', `best offer ${book.find((x) => x.available > 0)!.price} is above the limit ${limit}`);
    if (w.qty <= 0) return reject('ZERO_CONTRACTS', 'the stake buys no whole contract');
    if (req.tif === 'fok' && !w.satisfied) return reject('SIZE_LIMIT', `only ${w.notional} USD offered within the limit`);
    const fee = feeOf(v, 'taker', w.fills);
    const cost = w.notional + fee;
    if (cost > a.balance + 1e-9) return reject('INSUFFICIENT_FUNDS', `cost ${round6(cost)} exceeds balance ${a.balance}`);
    consume(l, w.fills);
    ctx.stamp(l);
    const final = w.satisfied ? 'FILLED' : 'PARTIAL';
    const async = v.pers.dynamics.async_fill_ms;
    if (async !== null) {
      a.balance = round6(a.balance - cost);
      a.held = round6(a.held + cost);
      o.hold = round6(cost);
      o.pending = { qty: w.qty, notional: w.notional, fee, final, due: now + async };
      o.state = 'PENDING';
      v.pending.add(o);
      store();
      ctx.bookChanged(l);
      ctx.balanceChanged(v, a, 'ORDER_HOLD', o.id);
      return o;
    }
    a.balance = round6(a.balance - cost);
    addHolding(a, l.pr.pos.position_hash, w.qty, w.notional);
    o.filled_qty = w.qty;
    o.filled_notional = w.notional;
    o.fee = fee;
    o.state = final;
    store();
    ctx.bookChanged(l);
    ctx.balanceChanged(v, a, 'FILL', o.id);
    return o;
  }

  // limit: take what crosses, rest the remainder at the limit
  const target = qty ?? (whole ? Math.floor(notional! / limit + 1e-9) : floor6(notional! / limit));
  if (target <= 0) return reject('ZERO_CONTRACTS', 'the stake buys no whole contract at this price');
  const w = walk(book, limit, whole, null, target);
  const fee = feeOf(v, 'taker', w.fills);
  const rest = round6(target - w.qty);
  const hold = round6(rest * limit);
  const cost = w.notional + fee + hold;
  if (cost > a.balance + 1e-9) return reject('INSUFFICIENT_FUNDS', `cost ${round6(cost)} exceeds balance ${a.balance}`);
  if (w.fills.length > 0) {
    consume(l, w.fills);
    ctx.stamp(l);
    addHolding(a, l.pr.pos.position_hash, w.qty, w.notional);
  }
  a.balance = round6(a.balance - w.notional - fee - hold);
  a.held = round6(a.held + hold);
  o.filled_qty = w.qty;
  o.filled_notional = w.notional;
  o.fee = fee;
  o.open_qty = rest;
  o.hold = hold;
  o.state = rest > 0 ? 'OPEN' : 'FILLED';
  if (rest > 0) l.resting.push(o);
  store();
  if (w.fills.length > 0) ctx.bookChanged(l);
  ctx.balanceChanged(v, a, rest > 0 ? 'ORDER_HOLD' : 'FILL', o.id);
  return o;
}

/** Files an order under its id and client key; a rejection is filed too, so a retry sees the same answer. */
function recorder(v: VenueRt, o: OrderRt, key: string): { store(): OrderRt; reject(reason: string, msg: string): OrderRt } {
  const store = () => {
    v.orders.set(o.id, o);
    v.byClientId.set(key, o);
    if (v.orders.size > MAX_ORDERS_PER_VENUE) forgetOldestFinished(v, v.orders.size - MAX_ORDERS_PER_VENUE);
    return o;
  };
  const reject = (reason: string, msg: string) => {
    o.state = 'REJECTED';
    o.reject_reason = reason;
    o.reject_message = msg;
    return store();
  };
  return { store, reject };
}

function practiceOrder(ctx: EngineCtx, v: VenueRt, req: SimWireOrderRequest, key: string): OrderRt {
  const cfg = v.pers.partner.order_config;
  const hash = req.position_hash;
  if (hash === undefined || !ctx.position(hash)) throw new SimFault('UNKNOWN_INSTRUMENT', `unknown position ${String(hash)}`);
  const o = newOrder(v, req, ctx.now(), null);
  const { store, reject } = recorder(v, o, key);
  if (!cfg.supported_order_types.includes(req.type)) return reject('ORDER_TYPE', 'the practice book takes market orders only');
  const limit = req.limit_px;
  if (!(limit > 0 && limit < 1)) throw new SimFault('INVALID_PRICE', `price ${limit} is not a probability`);
  o.limit = limit;
  const best = ctx.bestLivePrice(hash);
  if (best === null) return reject('NO_PAPER_PRICE', 'no venue quotes this position with at least USD 1');
  if (best > limit + PRICE_EPS) return reject('PRICE_LIMIT', `best live price ${best} is above the limit ${limit}`);
  const notional = req.notional ?? round6(req.quantity! * best);
  if (notional < cfg.min_order_amount - 1e-9) return reject('MIN_NOTIONAL', `order of ${notional} below the minimum ${cfg.min_order_amount}`);
  o.filled_notional = round6(notional);
  o.filled_qty = req.quantity ?? round6(notional / best);
  o.state = 'FILLED';
  return store();
}

/** Confirms async fills that are due. Returns how many landed. */
export function deliverPending(ctx: EngineCtx, v: VenueRt, nowMs: number, force = false, onlyContest?: string): number {
  let n = 0;
  for (const o of [...v.pending]) {
    if (o.state !== 'PENDING' || !o.pending) {
      v.pending.delete(o);
      continue;
    }
    if (!force && o.pending.due > nowMs) continue;
    if (onlyContest !== undefined && o.listing?.pr.c.p.contest_id !== onlyContest) continue;
    const a = v.accounts.get(o.account_id);
    const p = o.pending;
    v.pending.delete(o);
    o.pending = null;
    o.filled_qty = p.qty;
    o.filled_notional = p.notional;
    o.fee = p.fee;
    o.state = p.final;
    o.ts = nowMs;
    if (a) {
      a.held = round6(a.held - o.hold);
      addHolding(a, o.position_hash!, p.qty, p.notional);
    }
    o.hold = 0;
    n++;
    ctx.orderChanged(v, o);
    if (a) ctx.balanceChanged(v, a, 'FILL', o.id);
  }
  return n;
}

/** Fills resting limit orders the listing's (new) book now crosses, at their limit (maker). */
export function matchResting(ctx: EngineCtx, l: Listing): boolean {
  if (l.resting.length === 0 || l.closed) return false;
  const v = l.v;
  const whole = v.pers.partner.order_config.whole_contracts;
  let any = false;
  for (const o of [...l.resting]) {
    const fills: Fill[] = [];
    let filled = 0;
    for (let i = 0; i < l.levels.length && o.open_qty - filled > 1e-9; i++) {
      const lv = l.levels[i]!;
      if (lv.price > o.limit + PRICE_EPS) break;
      // Contracts already promised to earlier fills of this order at this level.
      const used = fills.filter((f) => f.level === i).reduce((s, f) => s + f.qty * f.price, 0);
      let take = Math.min((lv.available - used) / lv.price, o.open_qty - filled);
      take = whole ? Math.floor(take + 1e-9) : floor6(take);
      if (take <= 0) continue;
      fills.push({ level: i, qty: take, price: lv.price });
      filled += take;
    }
    if (filled <= 0) continue;
    any = true;
    consume(l, fills);
    const qty = round6(filled);
    const notional = round6(qty * o.limit);
    const fee = feeOf(v, 'maker', [{ qty, price: o.limit }]);
    const a = v.accounts.get(o.account_id);
    const release = round6(Math.min(o.hold, notional));
    o.hold = round6(o.hold - release);
    o.filled_qty = round6(o.filled_qty + qty);
    o.filled_notional = round6(o.filled_notional + notional);
    o.fee = round6(o.fee + fee);
    o.open_qty = round6(o.open_qty - qty);
    o.ts = ctx.now();
    if (o.open_qty <= 1e-9) {
      o.open_qty = 0;
      o.state = 'FILLED';
      l.resting.splice(l.resting.indexOf(o), 1);
    }
    if (a) {
      a.held = round6(a.held - release);
      a.balance = round6(a.balance - fee);
      addHolding(a, l.pr.pos.position_hash, qty, notional);
    }
    ctx.orderChanged(v, o);
    if (a) ctx.balanceChanged(v, a, 'FILL', o.id);
  }
  if (any) ctx.stamp(l);
  return any;
}

/** Cancels a resting order (the venue's cancel endpoint). */
export function cancelOrder(ctx: EngineCtx, v: VenueRt, accountId: string, orderId: string): OrderRt {
  const o = v.orders.get(orderId);
  if (!o || o.account_id !== accountId) throw new SimFault('UNKNOWN_ORDER', `no order ${orderId} for this account`);
  if (!v.pers.partner.order_config.cancel_supported) throw new SimFault('CANCEL_UNSUPPORTED', `${v.id} cannot cancel orders`);
  if (o.state !== 'OPEN') throw new SimFault('NOT_CANCELLABLE', `order ${orderId} is ${o.state}`);
  releaseResting(ctx, v, o);
  return o;
}

function releaseResting(ctx: EngineCtx, v: VenueRt, o: OrderRt): void {
  const a = v.accounts.get(o.account_id);
  if (a) {
    a.balance = round6(a.balance + o.hold);
    a.held = round6(a.held - o.hold);
  }
  o.hold = 0;
  o.open_qty = 0;
  o.state = 'CANCELLED';
  o.ts = ctx.now();
  if (o.listing) {
    const i = o.listing.resting.indexOf(o);
    if (i >= 0) o.listing.resting.splice(i, 1);
  }
  ctx.orderChanged(v, o);
  if (a) ctx.balanceChanged(v, a, 'RELEASE', o.id);
}

/**
 * Settles a contest on one venue: confirms due fills, cancels what still rests, pays holdings
 * (win: $1 a contract; push: the cost back; lose: nothing).
 */
export function settleVenue(ctx: EngineCtx, v: VenueRt, contestId: string, results: ReadonlyMap<string, PositionResult>): void {
  deliverPending(ctx, v, ctx.now(), true, contestId);
  for (const o of [...v.orders.values()]) {
    if (o.state === 'OPEN' && o.listing?.pr.c.p.contest_id === contestId) releaseResting(ctx, v, o);
  }
  for (const a of v.accounts.values()) {
    let credit = 0;
    let touched = false;
    for (const [hash, h] of a.holdings) {
      const r = results.get(hash);
      if (r === undefined) continue;
      touched = true;
      if (r === 'win') credit += h.contracts;
      else if (r === 'push') credit += h.cost;
      a.holdings.delete(hash);
    }
    if (touched) {
      a.balance = round6(a.balance + credit);
      ctx.balanceChanged(v, a, 'SETTLEMENT', null);
    }
  }
}

/**
 * The venue keeps an order while it can still change (OPEN, PENDING) or be asked about; finished
 * orders go when their contest settles (forgetSettledOrders) and, beyond this many, oldest first.
 */
export const MAX_ORDERS_PER_VENUE = 50_000;

const FINISHED: ReadonlySet<OrderState> = new Set(['FILLED', 'PARTIAL', 'REJECTED', 'CANCELLED']);

function forget(v: VenueRt, o: OrderRt): void {
  v.orders.delete(o.id);
  const key = `${o.account_id}|${o.client_order_id}`;
  if (v.byClientId.get(key) === o) v.byClientId.delete(key);
}

function forgetOldestFinished(v: VenueRt, n: number): void {
  // Map order is filing order: the first finished ones are the oldest.
  for (const o of v.orders.values()) {
    if (n <= 0) return;
    if (!FINISHED.has(o.state) || v.pending.has(o)) continue;
    forget(v, o);
    n--;
  }
}

/** After settleVenue: the contest's orders are all final; the venue forgets them. */
export function forgetSettledOrders(ctx: EngineCtx, v: VenueRt, contestId: string): void {
  for (const o of [...v.orders.values()]) {
    const c = o.listing ? o.listing.pr.c : o.position_hash ? ctx.position(o.position_hash)?.c : undefined;
    if (c?.p.contest_id === contestId && FINISHED.has(o.state) && !v.pending.has(o)) forget(v, o);
  }
}

/** The wire ack of an order, in the venue's native price unit. */
export function toAck(v: VenueRt, o: OrderRt): SimWireOrderAck {
  const format = v.pers.partner.order_config.price_format;
  const avg = o.filled_qty > 0 ? o.filled_notional / o.filled_qty : null;
  return {
    order_id: o.id,
    client_order_id: o.client_order_id,
    account_id: o.account_id,
    instrument_id: o.listing ? o.listing.inst.instrument_id : null,
    position_hash: o.listing ? null : o.position_hash,
    state: o.state,
    type: o.type,
    requested_notional: o.requested_notional,
    requested_qty: o.requested_qty,
    limit_px: o.limit_px,
    filled_qty: o.filled_qty,
    filled_notional: o.filled_notional,
    avg_px: avg === null ? null : v.pers.wire === 'internal' ? round6(avg) : nativeOf(format, avg),
    fee: o.fee,
    open_qty: o.open_qty,
    reject_reason: o.reject_reason,
    reject_message: o.reject_message,
    currency: o.currency,
    ts: o.ts,
  };
}

function nativeOf(format: Parameters<typeof toNative>[0], p: number): number {
  const x = toNative(format, Math.min(Math.max(p, 1e-6), 1 - 1e-6));
  return Math.round(x * 1e6) / 1e6;
}
