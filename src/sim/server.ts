/**
 * The simulated venues' servers: the market model seen through each venue's wire dialect. This
 * is the sim's I/O layer (the counterpart of a real venue's rest.ts/stream.ts): adapters talk to
 * a SimVenueServer exactly as they would talk to a venue, and parse what it sends (parse.ts).
 */
import { probToAmerican, round6 } from '../domain/prices.js';
import type { GameState } from '../venues/types.js';
import type {
  Book01BookMsg,
  Book01TradeMsg,
  ExchangeBookMsg,
  ExchangeTradeMsg,
  P2PLineMsg,
  QuotesFeedMsg,
  SimInstrument,
  SimWireBalance,
  SimWireBalanceEvent,
  SimWireOrderAck,
  SimWireOrderRequest,
  SimWireQuote,
  SimWireSettlement,
  SimWireTrade,
  SportsbookOfferMsg,
  SportsbookScoreboardMsg,
} from './messages.js';
import type { SimMarket, SimQuoteEvent, SimSettleEvent, SimStateEvent, SimTradeEvent } from './model.js';
import { SIM_PERSONALITIES, type SimPartnerId, type SimPersonality, type SimWire } from './personalities.js';

// ---- pure encoders (internal event → wire) ------------------------------------------------------

export function encodeQuote(p: SimPersonality, ev: SimQuoteEvent, seq: number): SimWireQuote {
  const inst = ev.instrument;
  switch (p.wire) {
    case 'exchange':
      return {
        type: 'orderbook_snapshot',
        market_ticker: inst.instrument_id,
        listed_side: inst.venue_side_key,
        asks: ev.levels.map((l) => [round6(l.price * 100), round6(l.available / l.price)] as [number, number]),
        last_price_cents: round6(ev.last_price * 100),
        ts_ms: ev.ts_event,
        seq,
      } satisfies ExchangeBookMsg;
    case 'book01': {
      const fee = p.fee.kind === 'pq' ? p.fee : { taker_rate: 0, maker_rate: 0 };
      return {
        event_type: 'book',
        asset_id: inst.instrument_id,
        outcome: inst.venue_side_key,
        asks: ev.levels.map((l) => ({ price: String(l.price), size: String(round6(l.available / l.price)) })),
        last_price: String(ev.last_price),
        fee_rate_bps: round6(fee.taker_rate * 10_000),
        maker_fee_rate_bps: round6(fee.maker_rate * 10_000),
        timestamp: String(ev.ts_event),
      } satisfies Book01BookMsg;
    }
    case 'sportsbook':
      return {
        offer_id: inst.instrument_id,
        event_id: inst.contest_id,
        selection: inst.venue_side_key,
        odds_american: round6(probToAmerican(ev.levels[0]?.price ?? ev.last_price)),
        max_stake: ev.levels[0]?.available ?? 0,
        updated_at: new Date(ev.ts_event).toISOString(),
      } satisfies SportsbookOfferMsg;
    case 'p2p':
      return {
        line_id: inst.instrument_id,
        listed_side: inst.venue_side_key,
        offers: ev.levels.map((l) => ({ decimal_odds: 1 / l.price, stake: l.available })),
        last_decimal_odds: 1 / ev.last_price,
        as_of: ev.ts_event,
      } satisfies P2PLineMsg;
    case 'quotes':
      return {
        id: inst.instrument_id,
        side: inst.venue_side_key,
        implied_pct: (ev.levels[0]?.price ?? ev.last_price) * 100,
        depth_usd: ev.levels[0]?.available ?? 0,
        as_of_ms: ev.ts_event,
      } satisfies QuotesFeedMsg;
    case 'internal':
      throw new Error('the practice book publishes no quotes');
  }
}

export function encodeTrade(wire: SimWire, ev: SimTradeEvent): SimWireTrade {
  if (wire === 'exchange') {
    return {
      type: 'trade',
      trade_id: ev.trade_id,
      market_ticker: ev.instrument.instrument_id,
      taker_side: ev.taker_action,
      price_cents: round6(ev.price * 100),
      count: ev.size_contracts,
      is_block: ev.is_block,
      ts_ms: ev.executed_at,
    } satisfies ExchangeTradeMsg;
  }
  if (wire === 'book01') {
    return {
      event_type: 'last_trade_price',
      id: ev.trade_id,
      asset_id: ev.instrument.instrument_id,
      side: ev.taker_action === 'buy' ? 'BUY' : 'SELL',
      price: String(ev.price),
      size: String(ev.size_contracts),
      taker: ev.trader_id,
      timestamp: String(ev.executed_at),
    } satisfies Book01TradeMsg;
  }
  throw new Error(`${wire} publishes no trades`);
}

export function encodeScoreboard(contestId: string, state: GameState, ts: number): SportsbookScoreboardMsg {
  const st = state.game_status;
  return {
    event_id: contestId,
    status: st === 'scheduled' ? 'pre' : st === 'final' ? 'post' : 'in',
    status_detail: st,
    clock: state.clock ? { display: state.clock.display, seconds_left: state.clock.remaining_seconds, running: state.clock.is_running } : null,
    period: state.period ? { ...state.period } : null,
    home_score: state.scores ? state.scores.home_score : null,
    away_score: state.scores ? state.scores.away_score : null,
    linescore: state.scores ? state.scores.period_scores.map((x) => [x.home_score, x.away_score] as [number, number]) : [],
    situation: state.situation ? structuredClone(state.situation) : null,
    leaderboard: state.leaderboard
      ? state.leaderboard.map((e) => ({ id: e.participant_id, name: e.participant_name, rank: e.rank, score: e.score, status: e.status }))
      : null,
    result: state.contest_result,
    winner_id: state.winner_participant_id,
    updated_at: new Date(ts).toISOString(),
  };
}

// ---- the server ------------------------------------------------------------------------------

export class SimVenueServer {
  readonly personality: SimPersonality;
  private seq = 0;

  constructor(
    readonly market: SimMarket,
    readonly partnerId: SimPartnerId,
  ) {
    this.personality = SIM_PERSONALITIES[partnerId];
  }

  get wire(): SimWire {
    return this.personality.wire;
  }

  instruments(): SimInstrument[] {
    return this.market.instruments(this.partnerId);
  }

  instrument(instrumentId: string): SimInstrument | undefined {
    return this.market.instrument(this.partnerId, instrumentId);
  }

  instrumentForPosition(positionHash: string): SimInstrument | undefined {
    return this.market.instrumentForPosition(this.partnerId, positionHash);
  }

  /** Every book the venue lists (its REST snapshot). */
  quoteSnapshot(): SimWireQuote[] {
    return this.market.books(this.partnerId).map((ev) => encodeQuote(this.personality, ev, ++this.seq));
  }

  quote(instrumentId: string): SimWireQuote | undefined {
    const ev = this.market.book(this.partnerId, instrumentId);
    return ev ? encodeQuote(this.personality, ev, ++this.seq) : undefined;
  }

  subscribeQuotes(cb: (m: SimWireQuote) => void): () => void {
    return this.market.onQuote((ev) => cb(encodeQuote(this.personality, ev, ++this.seq)), this.partnerId);
  }

  subscribeTrades(cb: (m: SimWireTrade) => void): () => void {
    return this.market.onTrade((ev) => cb(encodeTrade(this.wire, ev)), this.partnerId);
  }

  subscribeOrders(cb: (ack: SimWireOrderAck) => void): () => void {
    return this.market.onOrder((ev) => cb(ev.ack), this.partnerId);
  }

  subscribeBalances(cb: (ev: SimWireBalanceEvent) => void): () => void {
    return this.market.onBalance((ev) => cb(ev.event), this.partnerId);
  }

  scoreboard(contestId: string): SportsbookScoreboardMsg | undefined {
    const s = this.market.gameState(contestId);
    return s ? encodeScoreboard(s.contest_id, s.state, s.ts_event) : undefined;
  }

  subscribeScoreboard(cb: (m: SportsbookScoreboardMsg) => void): () => void {
    return this.market.onState((ev: SimStateEvent) => cb(encodeScoreboard(ev.contest_id, ev.state, ev.ts_event)));
  }

  /** Settlement of the venue's own instruments (the practice book settles every position). */
  subscribeSettlements(cb: (m: SimWireSettlement) => void): () => void {
    return this.market.onSettle((ev: SimSettleEvent) => {
      const outcomes: SimWireSettlement['outcomes'] = [];
      for (const r of ev.results) {
        const ref = this.wire === 'internal' ? r.position_hash : this.instrumentForPosition(r.position_hash)?.instrument_id;
        if (ref !== undefined) outcomes.push({ ref, outcome: r.result === 'win' ? 'WIN' : r.result === 'lose' ? 'LOSE' : 'PUSH' });
      }
      if (outcomes.length > 0) cb({ event_ref: ev.contest_id, winner_id: ev.winner_participant_id, outcomes, ts: ev.ts_event });
    });
  }

  /** Throws SimFault for malformed requests. */
  placeOrder(req: SimWireOrderRequest): SimWireOrderAck {
    return this.market.submitOrder(this.partnerId, req);
  }

  cancelOrder(accountId: string, orderId: string): SimWireOrderAck {
    return this.market.cancelOrder(this.partnerId, accountId, orderId);
  }

  getOrder(accountId: string, orderId: string): SimWireOrderAck | undefined {
    return this.market.order(this.partnerId, accountId, orderId);
  }

  balance(accountId: string): SimWireBalance | undefined {
    return this.market.balance(this.partnerId, accountId);
  }
}
