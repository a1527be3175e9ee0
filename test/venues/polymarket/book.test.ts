/**
 * Books as the adapter keeps them, on recorded payloads: best-level-last books read best first,
 * the recorded price_change burst applied pair by pair to its own recorded book (every reported
 * touch agrees), a disagreeing touch drops the book, and the buyer's quote with exact numbers.
 */
import { describe, expect, it } from 'vitest';
import { quoteOf, TokenBook } from '../../../src/venues/polymarket/book.js';
import type { PolymarketToken } from '../../../src/venues/polymarket/catalog.js';
import type { ClobBook } from '../../../src/venues/polymarket/messages.js';
import { parseBook, parseMarketMessage, type PmMarketFrame } from '../../../src/venues/polymarket/parse.js';
import { CAPTURE_COMPLEMENT, CAPTURE_TOKEN, fixture, fixtureText } from './support.js';

const TS_INIT = 1_791_000_000_000;
const FEE = { kind: 'pq', taker_rate: 0.03, maker_rate: 0 } as const;
const ctx = { partner_id: 'polymarket', source: 'streaming' as const, levels: 20 };

const token = (token_id: string, position_hash: string | null = 'pm_ev_1:yes_no:yes:0:pm_m1:ft'): PolymarketToken => ({
  token_id,
  condition_id: '0xc',
  gamma_market_id: '1',
  contest_id: 'pm_ev_1',
  outcome: 'Yes',
  outcome_index: 0,
  complement_token_id: 'other',
  position_hash,
  trade_position_hash: position_hash ?? 'pm_ev_1:yes_no:yes:0:pm_m1:ft',
  trade_relation: position_hash === null ? 'complement' : 'same',
  side_key: 'yes',
  liquidity_hash: `polymarket:${token_id}`,
  tick_size: 0.01,
  min_order_size: 5,
  neg_risk: false,
  accepting_orders: true,
  fee: FEE,
});

const wsFrames = (name: string): PmMarketFrame[] =>
  fixtureText(name)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => parseMarketMessage(l));

describe('book ordering (best level last on the wire)', () => {
  it('REST /book: asks descending on the wire become the buyer levels best first, in USD', () => {
    const raw = fixture<ClobBook>('rest-clob-book-2024.json');
    expect(raw.asks.at(-1)).toEqual({ price: '0.14', size: '705' }); // the best ask is last as recorded
    const b = new TokenBook(raw.asset_id);
    b.applySnapshot(parseBook(raw));
    expect(b.bestAsk()).toBe(0.14);
    expect(b.bestBid()).toBe(0.1);
    const q = quoteOf(b, token(raw.asset_id), FEE, ctx, TS_INIT)!;
    expect(q.levels).toEqual([
      { price: 0.14, available: 98.7 },
      { price: 0.2, available: 14 },
      { price: 0.38, available: 73.074 },
      { price: 0.46, available: 4.6 },
      { price: 0.47, available: 23.5 },
      { price: 0.5, available: 15 },
      { price: 0.98, available: 4900 },
    ]);
    expect(q).toMatchObject({
      partner_id: 'polymarket',
      liquidity_hash: `polymarket:${raw.asset_id}`,
      venue_market_id: raw.asset_id,
      price: 0.14,
      available: 98.7,
      fee: FEE,
      real_book: true,
      source: 'streaming',
      ts_event: 1728799418260,
      ts_init: TS_INIT,
    });
  });

  it('early books named the sides buys / sells: read the same', () => {
    const b = parseBook({ asset_id: 't', market: 'm', buys: [{ price: '0.4', size: '10' }, { price: '0.45', size: '5' }], sells: [{ price: '0.6', size: '1' }, { price: '0.5', size: '2' }] } as unknown as ClobBook);
    expect([b.bids[0], b.asks[0]]).toEqual([
      { price: 0.45, size: 5 },
      { price: 0.5, size: 2 },
    ]);
  });

  it('a quote carries at most the configured levels, and never a ts_event after ts_init', () => {
    const [f] = wsFrames('ws-book.jsonl');
    const b = new TokenBook('t');
    b.applySnapshot((f as Extract<PmMarketFrame, { kind: 'book' }>).book);
    const q = quoteOf(b, token('t'), FEE, { ...ctx, levels: 3 }, 1_700_000_000_000)!;
    expect(q.levels).toEqual([
      { price: 0.08, available: 18255.8624 },
      { price: 0.09, available: 13789.8369 },
      { price: 0.1, available: 9331.563 },
    ]);
    // The book says 2026-08-13; a clock behind it does not make the quote come from the future.
    expect(q.ts_event).toBe(1_700_000_000_000);
  });
});

describe('price_change pairs', () => {
  it('the recorded burst applies to its recorded book: every reported touch agrees, exact final asks', () => {
    const [, snapshot] = wsFrames('ws-book.jsonl');
    const b = new TokenBook(CAPTURE_TOKEN);
    b.applySnapshot((snapshot as Extract<PmMarketFrame, { kind: 'book' }>).book);
    const pcs = wsFrames('ws-price_change.jsonl') as Extract<PmMarketFrame, { kind: 'price_change' }>[];
    let applied = 0;
    for (const f of pcs) {
      // Each frame is a pair: our token and its complement at 1 − p (whose book we do not hold here).
      expect(f.changes.map((c) => c.token_id).sort()).toEqual([CAPTURE_COMPLEMENT, CAPTURE_TOKEN].sort());
      const mine = f.changes.filter((c) => c.token_id === CAPTURE_TOKEN);
      const theirs = f.changes.find((c) => c.token_id === CAPTURE_COMPLEMENT)!;
      expect(Math.round((mine[0]!.price + theirs.price) * 1e6)).toBe(1e6);
      expect(mine[0]!.side).not.toBe(theirs.side);
      for (const c of mine) {
        expect(b.applyChange(c, f.ts)).toBe(true);
        applied++;
      }
    }
    expect(applied).toBe(15);
    expect(b.mismatches).toBe(0);
    expect(b.confirmed).toBe(true);
    expect(b.bestBid()).toBe(0.311);
    const q = quoteOf(b, token(CAPTURE_TOKEN), FEE, ctx, TS_INIT)!;
    expect(q.levels.slice(0, 8)).toEqual([
      { price: 0.36, available: 108 },
      { price: 0.389, available: 42.79 },
      { price: 0.39, available: 1858.35 },
      { price: 0.398, available: 1467.77226 },
      { price: 0.399, available: 194.66811 },
      { price: 0.43, available: 15.0844 },
      { price: 0.44, available: 1622.6628 },
      { price: 0.441, available: 1069.51761 },
    ]);
    expect(q.levels).toHaveLength(20); // 21 ask levels held, the quote's cap
    expect(q.ts_event).toBe(1790658701600);
  });

  it('a change whose reported touch disagrees drops the book until a snapshot replaces it', () => {
    const [, snapshot] = wsFrames('ws-book.jsonl');
    const book = (snapshot as Extract<PmMarketFrame, { kind: 'book' }>).book;
    const b = new TokenBook(CAPTURE_TOKEN);
    b.applySnapshot(book);
    // The venue says the best ask is now 0.35, but no change of ours put anything there: we missed one.
    expect(b.applyChange({ token_id: CAPTURE_TOKEN, side: 'bid', price: 0.305, size: 10, best_bid: 0.305, best_ask: 0.35 }, 1)).toBe(false);
    expect(b.confirmed).toBe(false);
    expect(b.mismatches).toBe(1);
    b.applySnapshot(book);
    expect(b.confirmed).toBe(true);
  });

  it('size 0 removes a level; an emptied ask side quotes the last ask with nothing available', () => {
    const b = new TokenBook('t');
    b.applySnapshot(parseBook({ asset_id: 't', market: 'm', bids: [], asks: [{ price: '0.6', size: '10' }, { price: '0.55', size: '20' }], timestamp: '5' }));
    expect(b.applyChange({ token_id: 't', side: 'ask', price: 0.55, size: 0, best_bid: null, best_ask: 0.6 }, 6)).toBe(true);
    expect(b.applyChange({ token_id: 't', side: 'ask', price: 0.6, size: 0, best_bid: null, best_ask: null }, 7)).toBe(true);
    const q = quoteOf(b, token('t'), FEE, ctx, TS_INIT)!;
    expect(q).toMatchObject({ price: 0.6, available: 0, levels: [], ts_event: 7 });
  });

  it("a neg-risk runner's No token is not quoted (it mirrors the Yes book)", () => {
    const b = new TokenBook('no');
    b.applySnapshot(parseBook({ asset_id: 'no', market: 'm', bids: [], asks: [{ price: '0.6', size: '10' }] }));
    expect(quoteOf(b, token('no', null), FEE, ctx, TS_INIT)).toBeNull();
  });
});
