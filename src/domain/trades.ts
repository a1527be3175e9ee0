/**
 * Trade prints (spec "Trade print", "Trades"): the complement rule, the notional, and the window
 * rules of GET /flow/v1/trades. Pure; the ingest path calls normalizeVenueTrade() when it turns a
 * venue's trade into the print the bus, the stream and ClickHouse carry.
 */
import { MAX_UNIX_MS, parseUnixMs } from './history.js';
import type { TradePrint } from './stream.js';

export type TakerAction = 'buy' | 'sell';

/**
 * How the linked position relates to the outcome the venue traded: `same` when the venue traded
 * the linked position itself, `complement` when only the complement of the venue's market is
 * linked (a binary market: one contract of either side pays 1 when that side wins).
 */
export type LinkRelation = 'same' | 'complement';

export const TRADES_DEFAULT_WINDOW_MS = 3_600_000;
/** since may reach at most 7 days back. */
export const TRADES_MAX_LOOKBACK_MS = 7 * 86_400_000;
/** Slack for a caller who computed "now − 7 days" a moment before the request arrived. */
export const TRADES_LOOKBACK_GRACE_MS = 60_000;
export const TRADES_MAX_LIMIT = 1000;
export const TRADES_DEFAULT_LIMIT = 50;

/** Rounds away binary floating-point noise (1 − 0.7 = 0.30000000000000004) without moving real digits. */
function clean(n: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(n * f) / f;
}

export const flipAction = (a: TakerAction): TakerAction => (a === 'buy' ? 'sell' : 'buy');

/**
 * The complement rule: when only the complement is linked, a taker buying the venue's side is
 * reported as a sell of the linked position, at the linked position's price (1 − price). A sell of
 * the venue's side is, likewise, a buy of the linked one. `same` passes through.
 */
export function orientToLinked(
  venueSide: { taker_action: TakerAction; price: number },
  relation: LinkRelation,
): { taker_action: TakerAction; price: number } {
  if (relation === 'same') return { taker_action: venueSide.taker_action, price: venueSide.price };
  return { taker_action: flipAction(venueSide.taker_action), price: clean(1 - venueSide.price, 9) };
}

/**
 * notional_usd = size × price of the named position, for buys and sells alike: the position's
 * value, not the taker's cash (a taker selling 10 contracts at 0.30 prints 3.00, not 7.00).
 */
export function tradeNotionalUsd(sizeContracts: number, price: number): number {
  return clean(sizeContracts * price, 6);
}

/** A venue's trade as the adapter parsed it, before it is tied to a position. */
export interface VenueTrade {
  partner_id: string;
  partner_name: string;
  venue_trade_id: string;
  venue_market_id: string;
  /** What the aggressive side did to the outcome the venue traded. */
  taker_action: TakerAction;
  /** 0-1 price of the outcome the venue traded. */
  price: number;
  size_contracts: number;
  is_block?: boolean;
  trader_id?: string | null;
  trader_id_kind?: string | null;
  /** Unix ms, or an ISO 8601 string. */
  executed_at: number | string;
}

/** Where a venue market is linked in the router's catalog. */
export interface TradeLink {
  position_hash: string;
  liquidity_hash: string;
  router_contest_id: string;
  router_market_id: string;
  relation: LinkRelation;
}

export type NormalizedTradeResult = { ok: true; print: TradePrint } | { ok: false; reason: string };

const nonEmpty = (s: unknown): s is string => typeof s === 'string' && s.length > 0;

/** Turns a venue trade plus its link into the spec's Trade print, or says why it cannot. */
export function normalizeVenueTrade(trade: VenueTrade, link: TradeLink): NormalizedTradeResult {
  for (const k of ['partner_id', 'venue_trade_id', 'venue_market_id'] as const) {
    if (!nonEmpty(trade[k])) return { ok: false, reason: `${k} is missing` };
  }
  for (const k of ['position_hash', 'liquidity_hash', 'router_contest_id', 'router_market_id'] as const) {
    if (!nonEmpty(link[k])) return { ok: false, reason: `link ${k} is missing` };
  }
  if (trade.taker_action !== 'buy' && trade.taker_action !== 'sell') return { ok: false, reason: `taker_action ${String(trade.taker_action)} is neither buy nor sell` };
  if (link.relation !== 'same' && link.relation !== 'complement') return { ok: false, reason: `relation ${String(link.relation)} is unknown` };
  if (!(Number.isFinite(trade.price) && trade.price >= 0 && trade.price <= 1)) return { ok: false, reason: `price ${trade.price} is not a 0-1 probability` };
  if (!(Number.isFinite(trade.size_contracts) && trade.size_contracts > 0)) return { ok: false, reason: `size_contracts ${trade.size_contracts} is not positive` };
  const executedMs = typeof trade.executed_at === 'number' ? trade.executed_at : Date.parse(trade.executed_at);
  if (!Number.isFinite(executedMs)) return { ok: false, reason: `executed_at ${String(trade.executed_at)} is not a time` };

  const named = orientToLinked(trade, link.relation);
  return {
    ok: true,
    print: {
      partner_id: trade.partner_id,
      partner_name: nonEmpty(trade.partner_name) ? trade.partner_name : trade.partner_id,
      venue_trade_id: trade.venue_trade_id,
      venue_market_id: trade.venue_market_id,
      liquidity_hash: link.liquidity_hash,
      position_hash: link.position_hash,
      router_contest_id: link.router_contest_id,
      router_market_id: link.router_market_id,
      taker_action: named.taker_action,
      price: named.price,
      size_contracts: trade.size_contracts,
      notional_usd: tradeNotionalUsd(trade.size_contracts, named.price),
      is_block: trade.is_block === true,
      trader_id: trade.trader_id ?? null,
      trader_id_kind: trade.trader_id != null ? (trade.trader_id_kind ?? null) : null,
      executed_at: new Date(Math.floor(executedMs)).toISOString(),
    },
  };
}

export type TradesWindowResult =
  | { ok: true; since: number; until: number | null }
  | { ok: false; parameter: 'since' | 'until'; message: string };

/**
 * Parses a since/until value: ISO 8601 date-time with a zone, or unix milliseconds. Either way the
 * instant lies in [0, MAX_UNIX_MS], so no value beyond 2^53 (or past year 2286) reaches a query.
 */
export function parseTradeTime(raw: string): number | null {
  if (/^[0-9]+$/.test(raw)) return parseUnixMs(raw);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i.test(raw)) return null;
  const ms = Date.parse(raw);
  return Number.isFinite(ms) && ms >= 0 && ms <= MAX_UNIX_MS ? ms : null;
}

/** since defaults to one hour ago and may reach at most 7 days back; until is exclusive. */
export function resolveTradesWindow(rawSince: string | undefined, rawUntil: string | undefined, nowMs: number): TradesWindowResult {
  let since = nowMs - TRADES_DEFAULT_WINDOW_MS;
  if (rawSince !== undefined) {
    const v = parseTradeTime(rawSince);
    if (v === null) return { ok: false, parameter: 'since', message: `since must be an ISO 8601 date-time with a zone (e.g. 2026-11-20T12:00:00Z) or unix milliseconds, from 1970 up to ${MAX_UNIX_MS}` };
    since = v;
  }
  if (since < nowMs - TRADES_MAX_LOOKBACK_MS - TRADES_LOOKBACK_GRACE_MS) {
    return { ok: false, parameter: 'since', message: 'since may reach at most 7 days back' };
  }
  let until: number | null = null;
  if (rawUntil !== undefined) {
    const v = parseTradeTime(rawUntil);
    if (v === null) return { ok: false, parameter: 'until', message: `until must be an ISO 8601 date-time with a zone (e.g. 2026-11-20T12:00:00Z) or unix milliseconds, from 1970 up to ${MAX_UNIX_MS}` };
    if (v < since) return { ok: false, parameter: 'until', message: 'until is earlier than since' };
    until = v;
  }
  return { ok: true, since, until };
}
