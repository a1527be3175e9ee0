import { describe, expect, it } from 'vitest';
import {
  flipAction,
  normalizeVenueTrade,
  orientToLinked,
  parseTradeTime,
  resolveTradesWindow,
  tradeNotionalUsd,
  type TradeLink,
  type VenueTrade,
} from '../../../src/domain/trades.js';

const trade = (over: Partial<VenueTrade> = {}): VenueTrade => ({
  partner_id: 'vx',
  partner_name: 'Venue X',
  venue_trade_id: 't-1',
  venue_market_id: 'M-1',
  taker_action: 'buy',
  price: 0.7,
  size_contracts: 10,
  executed_at: Date.parse('2026-11-20T12:00:00.123Z'),
  ...over,
});

const link = (relation: TradeLink['relation']): TradeLink => ({
  position_hash: 'ct:mk:home:0:pt:ft',
  liquidity_hash: 'vx:M-1:no',
  router_contest_id: 'ct',
  router_market_id: 'mk',
  relation,
});

describe('notional', () => {
  it('is size × price of the named position, buys and sells alike', () => {
    expect(tradeNotionalUsd(10, 0.3)).toBe(3);
    expect(tradeNotionalUsd(2.5, 0.41)).toBe(1.025);
    expect(tradeNotionalUsd(0, 0.5)).toBe(0);
  });
});

describe('complement rule', () => {
  it('same: passes the action and price through', () => {
    expect(orientToLinked({ taker_action: 'buy', price: 0.7 }, 'same')).toEqual({ taker_action: 'buy', price: 0.7 });
    expect(orientToLinked({ taker_action: 'sell', price: 0.7 }, 'same')).toEqual({ taker_action: 'sell', price: 0.7 });
  });
  it('complement: a taker buying the other side is a sell of the linked one, at 1 − price', () => {
    expect(orientToLinked({ taker_action: 'buy', price: 0.7 }, 'complement')).toEqual({ taker_action: 'sell', price: 0.3 });
    expect(orientToLinked({ taker_action: 'sell', price: 0.62 }, 'complement')).toEqual({ taker_action: 'buy', price: 0.38 });
  });
  it('flipAction flips', () => {
    expect(flipAction('buy')).toBe('sell');
    expect(flipAction('sell')).toBe('buy');
  });
});

describe('normalizeVenueTrade', () => {
  it('builds every Trade print field for a directly linked market', () => {
    const r = normalizeVenueTrade(trade({ is_block: true, trader_id: 'w1', trader_id_kind: 'wallet' }), link('same'));
    expect(r).toEqual({
      ok: true,
      print: {
        partner_id: 'vx',
        partner_name: 'Venue X',
        venue_trade_id: 't-1',
        venue_market_id: 'M-1',
        liquidity_hash: 'vx:M-1:no',
        position_hash: 'ct:mk:home:0:pt:ft',
        router_contest_id: 'ct',
        router_market_id: 'mk',
        taker_action: 'buy',
        price: 0.7,
        size_contracts: 10,
        notional_usd: 7,
        is_block: true,
        trader_id: 'w1',
        trader_id_kind: 'wallet',
        executed_at: '2026-11-20T12:00:00.123Z',
      },
    });
  });
  it('reports a complement-linked buy as a sell of the linked position, notional at its price', () => {
    const r = normalizeVenueTrade(trade(), link('complement'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.print.taker_action).toBe('sell');
    expect(r.print.price).toBe(0.3);
    expect(r.print.notional_usd).toBe(3);
    expect(r.print.is_block).toBe(false);
    expect(r.print.trader_id).toBeNull();
    expect(r.print.trader_id_kind).toBeNull();
  });
  it('accepts an ISO executed_at', () => {
    const r = normalizeVenueTrade(trade({ executed_at: '2026-11-20T12:00:01Z' }), link('same'));
    expect(r.ok && r.print.executed_at).toBe('2026-11-20T12:00:01.000Z');
  });
  it.each([
    [{ price: 1.2 }, 'price'],
    [{ price: Number.NaN }, 'price'],
    [{ size_contracts: 0 }, 'size_contracts'],
    [{ size_contracts: -1 }, 'size_contracts'],
    [{ taker_action: 'hold' as never }, 'taker_action'],
    [{ venue_trade_id: '' }, 'venue_trade_id'],
    [{ executed_at: 'yesterday' }, 'executed_at'],
  ])('refuses %o', (over, word) => {
    const r = normalizeVenueTrade(trade(over), link('same'));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain(word);
  });
  it('refuses an unknown relation', () => {
    const r = normalizeVenueTrade(trade(), { ...link('same'), relation: 'inverse' as never });
    expect(r.ok).toBe(false);
  });
});

describe('trades window', () => {
  const now = Date.parse('2026-11-20T12:00:00Z');
  it('parses ISO 8601 with a zone and unix ms', () => {
    expect(parseTradeTime('2026-11-20T11:00:00Z')).toBe(now - 3_600_000);
    expect(parseTradeTime('2026-11-20T13:00:00+01:00')).toBe(now);
    expect(parseTradeTime('2026-11-20T11:00:00.5Z')).toBe(now - 3_600_000 + 500);
    expect(parseTradeTime(String(now))).toBe(now);
    for (const bad of ['2026-11-20', '2026-11-20T11:00:00', 'yesterday', '-5', '']) expect(parseTradeTime(bad)).toBeNull();
  });
  it('refuses instants a store cannot hold: beyond 2^53, past year 2286, before 1970', () => {
    for (const bad of ['9007199254740993', '10000000000000', '9'.repeat(40), '9999-12-31T00:00:00Z', '1969-12-31T23:59:59Z']) expect(parseTradeTime(bad), bad).toBeNull();
    expect(parseTradeTime('9999999999999')).toBe(9_999_999_999_999);
    expect(parseTradeTime('0')).toBe(0);
  });
  it('defaults since to one hour ago with an open until', () => {
    expect(resolveTradesWindow(undefined, undefined, now)).toEqual({ ok: true, since: now - 3_600_000, until: null });
  });
  it('allows exactly 7 days back and refuses older', () => {
    const sevenDays = new Date(now - 7 * 86_400_000).toISOString();
    expect(resolveTradesWindow(sevenDays, undefined, now).ok).toBe(true);
    const older = new Date(now - 7 * 86_400_000 - 120_000).toISOString();
    const r = resolveTradesWindow(older, undefined, now);
    expect(r).toMatchObject({ ok: false, parameter: 'since' });
  });
  it('refuses until before since and malformed values', () => {
    expect(resolveTradesWindow('2026-11-20T11:00:00Z', '2026-11-20T10:00:00Z', now)).toMatchObject({ ok: false, parameter: 'until' });
    expect(resolveTradesWindow('soon', undefined, now)).toMatchObject({ ok: false, parameter: 'since' });
    expect(resolveTradesWindow(undefined, 'later', now)).toMatchObject({ ok: false, parameter: 'until' });
  });
});
