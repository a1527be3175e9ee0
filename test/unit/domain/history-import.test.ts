import { describe, expect, it } from 'vitest';
import { checkColumns, detectImportKind, validateTickRecord, validateTradeRecord } from '../../../src/domain/history-import.js';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const tick = { ts: '1795176000000', contest_id: 'c', position_hash: 'p', partner_id: 'v', price: '0.5', available: '10', liquidity_hash: 'l' };
const trade = {
  executed_at: '2026-11-20T11:00:00Z',
  router_contest_id: 'c',
  router_market_id: 'm',
  position_hash: 'p',
  liquidity_hash: 'l',
  partner_id: 'v',
  venue_trade_id: 't',
  venue_market_id: 'vm',
  taker_action: 'sell',
  price: 0.3,
  size_contracts: 10,
};
const problems = (r: { ok: boolean; problems?: string[] }): string[] => (r.ok ? [] : (r.problems ?? []));

describe('validateTickRecord', () => {
  it('accepts CSV strings and JSON values alike, with defaults', () => {
    expect(validateTickRecord(tick, NOW)).toEqual({
      ok: true,
      row: { ts: 1795176000000, contest_id: 'c', position_hash: 'p', partner_id: 'v', price: 0.5, available: 10, liquidity_hash: 'l', source: 'streaming', outlier: false },
    });
    const r = validateTickRecord({ ...tick, ts: '2026-11-20T11:59:59.250+00:00', price: 1, available: 0, source: 'polling', outlier: 'TRUE' }, NOW);
    expect(r.ok && r.row).toMatchObject({ ts: NOW - 750, price: 1, available: 0, source: 'polling', outlier: true });
  });
  it.each([
    [{ price: '1.01' }, /price 1.01 is not a 0-1 probability/],
    [{ price: '' }, /price is missing/],
    [{ price: 'NaN' }, /price "NaN" is not a number/],
    [{ available: -1 }, /available -1 is negative/],
    [{ ts: '2026-11-20 12:00' }, /ts .* is not unix milliseconds or an ISO 8601/],
    [{ ts: String(NOW + 2 * 86_400_000) }, /is in the future/],
    [{ ts: -5 }, /ts -5 is not unix milliseconds/],
    [{ contest_id: 'a\u0000b' }, /contest_id contains a control character/],
    [{ partner_id: ' v' }, /partner_id has leading or trailing spaces/],
    [{ position_hash: 'x'.repeat(501) }, /position_hash is longer than 500/],
    [{ contest_id: 7 }, /contest_id must be a string/],
    [{ source: 'socket' }, /source "socket" is not one of streaming, polling/],
    [{ outlier: 'maybe' }, /outlier "maybe" is not true or false/],
  ])('refuses %j', (over, re) => {
    expect(problems(validateTickRecord({ ...tick, ...over }, NOW)).join('; ')).toMatch(re);
  });
});

describe('validateTradeRecord', () => {
  it('completes the print with the live rule (notional, partner_name, trader_id_kind)', () => {
    const r = validateTradeRecord(trade, NOW);
    expect(r.ok && r.row).toMatchObject({ partner_name: 'v', taker_action: 'sell', price: 0.3, notional_usd: 3, is_block: false, trader_id: null, trader_id_kind: null, executed_at: '2026-11-20T11:00:00.000Z' });
  });
  it('refuses a notional that is not size × price, a zero size and an unknown taker action', () => {
    expect(problems(validateTradeRecord({ ...trade, notional_usd: 7 }, NOW))[0]).toMatch(/notional_usd 7 is not size_contracts × price \(3\)/);
    expect(problems(validateTradeRecord({ ...trade, size_contracts: 0 }, NOW))[0]).toMatch(/size_contracts 0 is not positive/);
    expect(problems(validateTradeRecord({ ...trade, taker_action: 'hold' }, NOW))[0]).toMatch(/taker_action "hold"/);
  });
});

describe('columns', () => {
  it('detects the kind and checks a header', () => {
    expect(detectImportKind(Object.keys(trade))).toBe('trades');
    expect(detectImportKind(Object.keys(tick))).toBe('ticks');
    expect(detectImportKind(['a'])).toBeNull();
    expect(checkColumns('ticks', Object.keys(tick))).toEqual([]);
    expect(checkColumns('ticks', ['ts', 'ts', 'x'])[0]).toMatch(/missing required columns contest_id, position_hash/);
  });
});
