/**
 * Stream events as the spec shows them to WebSocket clients. Every event goes through the durable
 * event log (src/store/redis/eventlog.ts): those of the public channels are appended by the script
 * that stores the state they describe; those of the private channels (orders, balance) are written
 * to PostgreSQL's account outbox with the change they report and relayed to the log from there
 * (pipelines/account-events/relay.ts). The routing fields (contest, league; account for the private
 * channels) travel beside the event, so a gateway routes it without parsing it.
 */
import type { FeePacket, QuoteSource } from './quotes.js';

export const STREAM_CHANNELS = ['liquidity', 'ticks', 'arbitrage', 'signal', 'trades', 'contest_state', 'orders', 'balance'] as const;
export type StreamChannel = (typeof STREAM_CHANNELS)[number];

/** The private channels: an event belongs to one account, not to a contest. */
export const ACCOUNT_CHANNELS = ['orders', 'balance'] as const satisfies readonly StreamChannel[];
export type AccountChannel = (typeof ACCOUNT_CHANNELS)[number];

/** One changed quote on a liquidity.update: its price and size, and how current it is. */
export interface LiquidityChangedEntry {
  liquidity_hash: string;
  partner_id: string;
  price: number;
  available: number;
  /** When the service last confirmed the quote (a removal: when it saw it gone). */
  as_of: string;
  /** Not confirmed within its venue's freshness bound; a flip alone is a change. */
  is_stale: boolean;
}

export interface LiquidityUpdateEvent {
  type: 'liquidity.update';
  contest_id: string;
  changed_entries: LiquidityChangedEntry[];
  refresh_required: boolean;
  timestamp: string;
}

/** partner_liquidities entry (spec); a tick entry is one of these with its position around it. */
export interface PartnerLiquidity {
  partner_id: string;
  partner_name: string;
  price: number;
  american_odds: string;
  available: number;
  liquidity_hash: string;
  /** null when the venue's fee model is unknown. */
  fee_packet: FeePacket | null;
  /** When the service last confirmed the quote (ISO 8601 UTC). */
  as_of: string;
  /** The quote was not confirmed within its venue's freshness bound (or ingest flagged it). */
  is_stale: boolean;
}

export interface TickEntry extends PartnerLiquidity {
  position_hash: string;
  actionable: boolean;
  buy_id: string;
  source: QuoteSource;
  outlier: boolean;
  median: number | null;
}

/** A ticks event as produced and stored in the event log: no seq, which is per connection and added by the gateway. */
export interface TicksBusEvent {
  type: 'ticks';
  contest_id: string;
  ticks: TickEntry[];
  timestamp: string;
}

export interface ContestStateEvent {
  type: 'contest_state.update';
  contest_id: string;
  state: Record<string, unknown>;
  refreshed_at: string;
  timestamp: string;
}

export interface TradePrint {
  partner_id: string;
  partner_name: string;
  venue_trade_id: string;
  venue_market_id: string;
  liquidity_hash: string;
  position_hash: string;
  router_contest_id: string;
  router_market_id: string;
  taker_action: 'buy' | 'sell';
  price: number;
  size_contracts: number;
  notional_usd: number;
  is_block: boolean;
  trader_id: string | null;
  trader_id_kind: string | null;
  executed_at: string;
}

export interface TradesEvent {
  type: 'trades';
  contest_id: string;
  trades: TradePrint[];
  timestamp: string;
}

/** An event being routed to subscribers: its routing fields, then the client-facing event serialized once. */
export interface BusMessage {
  channel: StreamChannel;
  contest_id: string | null;
  league_id: string | null;
  /** For private channels (orders, balance): the account the event belongs to. */
  account_id?: string | null;
  /** The event exactly as a client receives it (ticks without seq). */
  event: string;
}

/** Largest number of changed entries or ticks in one event; larger updates are split. */
export const MAX_ENTRIES_PER_EVENT = 500;

/** Splits a list into chunks of at most `size` (always at least one chunk, possibly empty). */
export function chunk<T>(items: T[], size = MAX_ENTRIES_PER_EVENT): T[][] {
  if (items.length <= size) return [items];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The liquidity.update events of one contest computation, in log order: the changed entries
 * split into events of at most MAX_ENTRIES_PER_EVENT, the last one carrying `refresh_required` so a
 * client applies every entry before it refetches. Nothing changed but a refresh is required (the REST
 * answer changed in a way no entry carries): one event with no entries. Neither: no event.
 */
export function liquidityUpdateEvents(contestId: string, changed: LiquidityChangedEntry[], refreshRequired: boolean, timestamp: string): LiquidityUpdateEvent[] {
  if (changed.length === 0 && !refreshRequired) return [];
  const parts = chunk(changed);
  const last = parts.length - 1;
  return parts.map((part, i) => ({
    type: 'liquidity.update',
    contest_id: contestId,
    changed_entries: part,
    refresh_required: refreshRequired && i === last,
    timestamp,
  }));
}
