/**
 * What the simulated venues publish, as events to the market's feeds: a listing's book, a trade
 * print (also kept on the listing's tape for the situations), an order's state, an account's
 * balance, a contest's game state.
 */
import { round6 } from '../domain/prices.js';
import type { TakerAction } from '../venues/types.js';
import { currentTime, nameOf, type MarketCore } from './core.js';
import { toAck } from './engine.js';
import type { SimBalanceEvent, SimOrderEvent, SimQuoteEvent, SimStateEvent, SimTradeEvent } from './events.js';
import { buildState, clamp } from './game.js';
import type { SimWireBalanceEvent } from './messages.js';
import type { AccountRt, ContestRt, Listing, OrderRt, VenueRt } from './runtime.js';
import { recordTape } from './situations.js';

/** A listing's book as it stands: best first; the last price when the book is empty. */
export function quoteEvent(l: Listing): SimQuoteEvent {
  const top = l.levels[0];
  return { partner_id: l.v.id, instrument: l.inst, levels: l.levels, last_price: top ? top.price : round6(clamp(l.lag, 0.01, 0.99)), ts_event: l.ts_event };
}

export function emitQuote(core: MarketCore, l: Listing): SimQuoteEvent {
  const ev = quoteEvent(l);
  core.feeds.quotes.deliver(l.v.id, ev, core.feeds.safe);
  return ev;
}

export function publishTrade(core: MarketCore, v: VenueRt, l: Listing, action: TakerAction, price: number, size: number, isBlock: boolean, traderId: string | null, at: number): SimTradeEvent {
  const ev: SimTradeEvent = {
    partner_id: v.id,
    trade_id: `${v.id}-t${++v.tradeSeq}`,
    instrument: l.inst,
    taker_action: action,
    price,
    size_contracts: size,
    is_block: isBlock,
    trader_id: traderId,
    trader_id_kind: traderId === null ? null : v.pers.wire === 'book01' ? 'wallet' : 'account',
    executed_at: at,
  };
  recordTape(l, at, price * size, action === 'buy');
  core.feeds.trades.deliver(v.id, ev, core.feeds.safe);
  return ev;
}

export function emitOrder(core: MarketCore, v: VenueRt, o: OrderRt): void {
  if (!core.feeds.orders.heard(v.id)) return;
  const ev: SimOrderEvent = { partner_id: v.id, ack: toAck(v, o) };
  core.feeds.orders.deliver(v.id, ev, core.feeds.safe);
}

export function emitBalance(core: MarketCore, v: VenueRt, acc: AccountRt, reason: SimWireBalanceEvent['reason'], orderId: string | null): void {
  if (!core.feeds.balances.heard(v.id)) return;
  const ev: SimBalanceEvent = {
    partner_id: v.id,
    event: { account_id: acc.account_id, available_usd: acc.balance, held_usd: acc.held, credential_status: acc.credential_status, ts: currentTime(core), reason, order_id: orderId },
  };
  core.feeds.balances.deliver(v.id, ev, core.feeds.safe);
}

/** Publishes a contest's game state (rebuilt from the game unless `keep` or under manual control). */
export function publishState(core: MarketCore, c: ContestRt, now: number, keep = false): void {
  if (!keep && !c.manual) c.state = buildState(c, now, (id) => nameOf(core, id));
  c.stateTs = now;
  c.lastStateEmit = now;
  if (!core.feeds.states.heard()) return;
  const ev: SimStateEvent = { contest_id: c.p.contest_id, state: structuredClone(c.state), ts_event: now };
  core.feeds.states.deliver(ev, core.feeds.safe);
}
