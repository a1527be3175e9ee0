/**
 * The replay server on the repo's copied recordings (test/venues/*\/fixtures), with both real
 * adapters connected to it over the network: their quotes equal the recorded books, level by level
 * (expected values computed here from the recorded files, independently of the replay and the
 * adapters). Then the replay's own rules (paths, filters, paging, refusals, the loop) and the merge
 * seen through remapAdapter on live replayed quotes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativePosition } from '../../../src/venues/kalshi/catalog.js';
import { createKalshiAdapter, type KalshiAdapter } from '../../../src/venues/kalshi/index.js';
import { mergeVenueCatalogs, parseMappingFile, remapAdapter } from '../../../src/venues/matching/index.js';
import { createPolymarketAdapter, type PolymarketAdapter } from '../../../src/venues/polymarket/index.js';
import { startReplayServer, type ReplayServer } from '../../../src/venues/replay/index.js';
import type { NormalizedQuote } from '../../../src/venues/types.js';
import { openWebSocket } from '../../../src/venues/ws-client.js';
import { rsaPair } from '../kalshi/support.js';

const VENUES = join(import.meta.dirname, '..');
const raw = (venue: string, name: string) => readFileSync(join(VENUES, venue, 'fixtures', name), 'utf8');
const json = <T = any>(venue: string, name: string): T => JSON.parse(raw(venue, name)) as T;
const lines = <T = any>(venue: string, name: string): T[] =>
  raw(venue, name)
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const M = 1_000_000n;
const micros = (x: string | number) => BigInt(Math.round(Number(x) * 1e6));
const fromMicros = (m: bigint) => Number(m) / 1e6;

/**
 * Kalshi's buyer levels of `outcome` from the recorded bid ladders: the other outcome's bids, best
 * (highest) first, at 1 − bid; available = price × count floored to the micro-dollar.
 */
function kalshiAsks(otherBids: [string, string][]): { price: number; available: number }[] {
  return [...otherBids]
    .map(([p, c]) => [micros(p), micros(c)] as const)
    .sort((a, b) => (a[0] > b[0] ? -1 : 1))
    .slice(0, 20)
    .map(([p, c]) => ({ price: fromMicros(M - p), available: fromMicros(((M - p) * c) / M) }));
}

/** Polymarket's buyer levels from a recorded ask side: lowest first, available = price × size. */
function pmAsks(asks: { price: string; size: string }[]): { price: number; available: number }[] {
  return [...asks]
    .filter((l) => Number(l.size) > 0)
    .sort((a, b) => Number(a.price) - Number(b.price))
    .slice(0, 20)
    .map((l) => ({ price: Number(l.price), available: Number((Number(l.price) * Number(l.size)).toFixed(6)) }));
}

const levelsOf = (q: NormalizedQuote | undefined) => q?.levels.map((l) => ({ price: l.price, available: Number(l.available.toFixed(6)) }));

let server: ReplayServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startReplayServer({ dir: VENUES });
  env = server.env();
});

afterAll(async () => {
  await server.close();
});

describe('the replay server', () => {
  it('prints the environment that points both adapters at it', () => {
    expect(env).toEqual({
      FLOW_VENUES: 'kalshi,polymarket',
      FLOW_KALSHI_BASE_URL: `${server.url}/kalshi/trade-api/v2`,
      FLOW_KALSHI_WS_URL: `${server.url.replace('http:', 'ws:')}/kalshi/trade-api/ws/v2`,
      FLOW_POLYMARKET_GAMMA_URL: `${server.url}/polymarket/gamma`,
      FLOW_POLYMARKET_CLOB_URL: `${server.url}/polymarket/clob`,
      FLOW_POLYMARKET_WS_URL: `${server.url.replace('http:', 'ws:')}/polymarket`,
    });
  });

  it('joins each recorded book to a listed market: its own when recorded, else a spare one, said so', () => {
    const s = server.summary();
    expect(s.kalshi).toEqual([
      // rest-orderbook.json names no market; its touch is KXELONMARS-99's recorded yes ask 0.12 × 1967.33 and no ask 0.92.
      { ticker: 'KXELONMARS-99', from: 'rest-orderbook.json', borrowed_from: null },
      { ticker: 'KXCPI-26AUG-T1.0', from: 'ws:KXGOLDH-26AUG2711-T4615.99', borrowed_from: 'KXGOLDH-26AUG2711-T4615.99' },
      { ticker: 'KXNFLGAME-25DEC27BALGB-GB', from: 'ws:KXBTCD-25AUG2617-T112999.99', borrowed_from: 'KXBTCD-25AUG2617-T112999.99' },
    ]);
    expect(s.polymarket.map((a) => [a.from, a.borrowed_from])).toEqual([
      ['rest-clob-book-2024.json', json('polymarket', 'rest-clob-book-2024.json').asset_id],
      ['rest-clob-book.json', json('polymarket', 'rest-clob-book.json').asset_id],
      ['ws-book.jsonl:1', lines('polymarket', 'ws-book.jsonl')[0].asset_id],
      ['ws-book.jsonl:2', lines('polymarket', 'ws-book.jsonl')[1].asset_id],
      ['ws-book.jsonl:3', lines('polymarket', 'ws-book.jsonl')[2].asset_id],
    ]);
    expect(s.ignored.kalshi).toContain('rest-portfolio-balance.json');
    expect(s.files.polymarket).toContain('ws-price_change.jsonl');
  });
});

describe('Kalshi against the replay', () => {
  const book = json('kalshi', 'rest-orderbook.json').orderbook_fp as { yes_dollars: [string, string][]; no_dollars: [string, string][] };
  const [snap] = lines('kalshi', 'ws-orderbook_snapshot.jsonl');
  const [delta] = lines('kalshi', 'ws-orderbook_delta.jsonl');
  // The recorded KXGOLDH book after its recorded delta (+10.00 on the yes bid at 0.0100).
  const goldYes: [string, string][] = snap.msg.yes_dollars_fp.map(([p, c]: [string, string]) => (p === delta.msg.price_dollars ? [p, String(Number(c) + Number(delta.msg.delta_fp))] : [p, c]));
  const goldNo: [string, string][] = snap.msg.no_dollars_fp;
  const expectRecorded = (qs: NormalizedQuote[]) => {
    const q = (ticker: string, side: string) => qs.find((x) => x.venue_market_id === ticker && x.venue_side_key === side);
    expect(levelsOf(q('KXELONMARS-99', 'yes'))).toEqual(kalshiAsks(book.no_dollars));
    expect(levelsOf(q('KXELONMARS-99', 'no'))).toEqual(kalshiAsks(book.yes_dollars));
    expect(q('KXELONMARS-99', 'yes')).toMatchObject({ price: 0.12, available: 236.0796, position_hash: nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'yes') });
    expect(levelsOf(q('KXCPI-26AUG-T1.0', 'yes'))).toEqual(kalshiAsks(goldNo));
    expect(levelsOf(q('KXCPI-26AUG-T1.0', 'no'))).toEqual(kalshiAsks(goldYes));
    expect(q('KXCPI-26AUG-T1.0', 'no')).toMatchObject({ price: 0.99, available: 1405.8 });
    // The borrowed recorded book of KXBTCD is empty: the market's recorded asks, nothing available.
    expect(q('KXNFLGAME-25DEC27BALGB-GB', 'yes')).toMatchObject({ available: 0, levels: [] });
    // No recording holds a book for KXCOLONIZEMARS-50: it is not quoted.
    expect(qs.filter((x) => x.venue_market_id === 'KXCOLONIZEMARS-50')).toEqual([]);
  };

  it('polls the recorded books over REST without credentials', async () => {
    const a = createKalshiAdapter({ restBaseUrl: env.FLOW_KALSHI_BASE_URL, wsUrl: env.FLOW_KALSHI_WS_URL });
    try {
      await a.connect();
      expect(a.catalog()!.listings.map((l) => l.ticker)).toEqual(['KXCPI-26AUG-T1.0', 'KXNFLGAME-25DEC27BALGB-GB', 'KXELONMARS-99', 'KXCOLONIZEMARS-50']);
      expect(a.describe().capabilities.quotes.streaming).toBe(false);
      expectRecorded(await a.fetchQuotes());
      expect(a.feedStats().book_fetch_failures).toBe(1);
    } finally {
      await a.close();
    }
  });

  it('streams the recorded snapshots and deltas with credentials, seq gapless, and holds the last state', async () => {
    const a: KalshiAdapter = createKalshiAdapter({ restBaseUrl: env.FLOW_KALSHI_BASE_URL, wsUrl: env.FLOW_KALSHI_WS_URL, keyId: 'replay-key', privateKeyPem: rsaPair().privateKeyPem }, { reconfirmMs: 0 });
    const seen: NormalizedQuote[] = [];
    try {
      await a.connect();
      a.subscribeQuotes((q) => seen.push(q));
      await until(() => a.feedStats().books_synced === 3, 'three synced books');
      expect(a.describe().capabilities.quotes.streaming).toBe(true);
      const qs = await a.fetchQuotes();
      expectRecorded(qs);
      expect(a.feedStats()).toMatchObject({ seq_gaps: 0, book_errors: 0, resnapshots: 0, subscribe_errors: 0 });
      // The loop: the same recorded sequence again on the same subscription, seq carrying on.
      const frames = a.feedStats().frames;
      server.kalshi!.tick(true);
      await until(() => a.feedStats().frames >= frames + 4, 'the replayed sequence');
      expect(a.feedStats()).toMatchObject({ seq_gaps: 0, book_errors: 0, resnapshots: 0 });
      expectRecorded(await a.fetchQuotes());
    } finally {
      await a.close();
    }
  });

  it('answers the venue paths and refuses what it has no recording of', async () => {
    const get = async (p: string) => {
      const r = await fetch(`${env.FLOW_KALSHI_BASE_URL}${p}`);
      return { status: r.status, body: (await r.json()) as any };
    };
    const page1 = await get('/markets?limit=2');
    expect(page1.body.markets.map((m: any) => m.ticker)).toEqual(['KXCPI-26AUG-T1.0', 'KXNFLGAME-25DEC27BALGB-GB']);
    expect(page1.body.cursor).toBe('2');
    const page2 = await get('/markets?limit=2&cursor=2');
    expect(page2.body.markets.map((m: any) => m.ticker)).toEqual(['KXMVESPORTSMULTIGAMEEXTENDED-S20266D3DB8D5F92-F8F7FBDBF23', 'KXELONMARS-99']);
    expect((await get('/markets?mve_filter=exclude&series_ticker=KXNFLGAME')).body.markets.map((m: any) => m.ticker)).toEqual(['KXNFLGAME-25DEC27BALGB-GB']);
    expect((await get('/markets?tickers=KXELONMARS-99,KXCPI-26AUG-T1.0')).body.markets).toHaveLength(2);
    expect((await get('/markets/KXCPI-26AUG-T1.0')).body.market.ticker).toBe('KXCPI-26AUG-T1.0');
    expect((await get('/series/KXELONMARS')).body.series.ticker).toBe('KXELONMARS');
    expect((await get('/events/KXELONMARS-99')).body.markets.map((m: any) => m.ticker)).toEqual(['KXELONMARS-99']);
    expect((await get('/markets/trades?ticker=KXELONMARS-99')).body.trades).toEqual(json('kalshi', 'rest-trades.json').trades);
    expect(await get('/markets/KXCOLONIZEMARS-50/orderbook')).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'the replay has no recording of an order book of KXCOLONIZEMARS-50', service: 'replay' } } });
    expect((await get('/portfolio/balance')).status).toBe(404);
    const post = await fetch(`${env.FLOW_KALSHI_BASE_URL}/portfolio/orders`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
  });

  it('refuses the book channel to a socket without Kalshi signature headers, as the venue does', async () => {
    const got: any[] = [];
    const c = await openWebSocket(env.FLOW_KALSHI_WS_URL!, { onText: (t) => got.push(JSON.parse(t)) }, { pingIntervalMs: 0 });
    try {
      c.send(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'trade', 'nonsense'], market_tickers: ['KXELONMARS-99'] } }));
      await until(() => got.length >= 3, 'three answers');
      expect(got).toEqual([
        { id: 1, type: 'error', msg: { code: 9, msg: 'Authentication required' } },
        { id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 1 } },
        { id: 1, type: 'error', msg: { code: 8, msg: 'Unknown channel name' } },
      ]);
    } finally {
      c.close();
    }
  });
});

describe('Polymarket against the replay', () => {
  const capture = lines('polymarket', 'ws-book.jsonl')[1];
  /** The capture's book after its 15 recorded price_change frames (the changes to its own asset). */
  function captureAfterChanges(): { price: string; size: string }[] {
    const asks = new Map<number, { price: string; size: string }>(capture.asks.map((l: any) => [Number(l.price), l]));
    for (const f of lines('polymarket', 'ws-price_change.jsonl')) {
      for (const it of f.price_changes) {
        if (it.asset_id !== capture.asset_id || it.side !== 'SELL') continue;
        if (Number(it.size) === 0) asks.delete(Number(it.price));
        else asks.set(Number(it.price), { price: it.price, size: it.size });
      }
    }
    return [...asks.values()];
  }

  let a: PolymarketAdapter;
  const seen: NormalizedQuote[] = [];
  beforeAll(async () => {
    a = createPolymarketAdapter({ urls: { gamma: env.FLOW_POLYMARKET_GAMMA_URL, clob: env.FLOW_POLYMARKET_CLOB_URL, ws: env.FLOW_POLYMARKET_WS_URL } });
    await a.connect();
    a.subscribeQuotes((q) => seen.push(q));
  });
  afterAll(async () => {
    await a.close();
  });

  it('streams every lent book and the recorded price_change burst, every reported touch agreeing', async () => {
    const tokens = server.summary().polymarket.map((x) => x.token_id);
    const last = () => new Map(seen.map((q) => [q.venue_market_id, q]));
    const want = new Map(
      server.summary().polymarket.map((x) => [x.token_id, pmAsks(x.from === 'ws-book.jsonl:2' ? captureAfterChanges() : (x.from.startsWith('ws-book') ? lines('polymarket', 'ws-book.jsonl')[Number(x.from.split(':')[1]) - 1] : json('polymarket', x.from)).asks)]),
    );
    await until(() => tokens.every((t) => JSON.stringify(levelsOf(last().get(t))) === JSON.stringify(want.get(t))), 'every lent book quoted as recorded');
    for (const t of tokens) expect(levelsOf(last().get(t))).toEqual(want.get(t));
    expect(a.feedStats()).toMatchObject({ book_mismatches: 0, resyncs: 0, parse_errors: 0 });
    // fetchQuotes answers the same from the live books.
    const qs = await a.fetchQuotes();
    for (const t of tokens) expect(levelsOf(qs.find((q) => q.venue_market_id === t))).toEqual(want.get(t));
    expect(qs.map((q) => q.venue_market_id).sort()).toEqual([...tokens].sort());
  });

  it('serves a lent book over REST with its market, and mirrors it for the other token', async () => {
    const lent = server.summary().polymarket.find((x) => x.from === 'rest-clob-book-2024.json')!;
    const recorded = json('polymarket', 'rest-clob-book-2024.json');
    const own = (await (await fetch(`${env.FLOW_POLYMARKET_CLOB_URL}/book?token_id=${lent.token_id}`)).json()) as any;
    expect(own).toMatchObject({ asset_id: lent.token_id, bids: recorded.bids, asks: recorded.asks, timestamp: recorded.timestamp });
    expect(own.market).not.toBe(recorded.market);
    const other = (await (await fetch(`${env.FLOW_POLYMARKET_CLOB_URL}/book?token_id=${lent.complement_token_id}`)).json()) as any;
    // A bid at p on one token is an offer at 1 − p on the other; bids ascending, asks descending, as the venue lists them.
    const best = (xs: { price: string }[]) => Number(xs.at(-1)!.price);
    expect(best(other.asks)).toBeCloseTo(1 - best(recorded.bids), 9);
    expect(best(other.bids)).toBeCloseTo(1 - best(recorded.asks), 9);
    expect(other.asks.map((l: any) => l.size)).toEqual(recorded.bids.map((l: any) => l.size));
    const many = (await (await fetch(`${env.FLOW_POLYMARKET_CLOB_URL}/books`, { method: 'POST', body: JSON.stringify([{ token_id: lent.token_id }, { token_id: 'nope' }]) })).json()) as any[];
    expect(many.map((b) => b.asset_id)).toEqual([lent.token_id]);
    const missing = await fetch(`${env.FLOW_POLYMARKET_CLOB_URL}/book?token_id=nope`);
    expect([missing.status, await missing.json()]).toEqual([404, { error: 'No orderbook exists for the requested token id' }]);
  });

  it('filters and pages Gamma events as the adapter asks', async () => {
    const ev = async (q: string) => ((await (await fetch(`${env.FLOW_POLYMARKET_GAMMA_URL}/events?${q}`)).json()) as any[]).map((e) => e.id);
    const all = await ev('active=true&closed=false&limit=100&offset=0');
    expect(all).toHaveLength(10);
    expect(await ev('active=true&closed=false&limit=3&offset=3')).toEqual(all.slice(3, 6));
    expect(await ev('tag_id=899')).toEqual(['27829']);
    expect((await fetch(`${env.FLOW_POLYMARKET_GAMMA_URL}/markets`)).status).toBe(404);
  });
});

describe('the merge on replayed quotes', () => {
  it('carries merged position hashes out of both adapters, and merged ids back in', async () => {
    const k = createKalshiAdapter({ restBaseUrl: env.FLOW_KALSHI_BASE_URL, wsUrl: env.FLOW_KALSHI_WS_URL });
    const p = createPolymarketAdapter({ urls: { gamma: env.FLOW_POLYMARKET_GAMMA_URL, clob: env.FLOW_POLYMARKET_CLOB_URL, ws: env.FLOW_POLYMARKET_WS_URL } });
    try {
      await Promise.all([k.connect(), p.connect()]);
      const marsYes = nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'yes');
      const marsNo = nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'no');
      const lent = server.summary().polymarket[0]!;
      const runner = p.catalog()!.tokens.find((t) => t.token_id === lent.token_id)!;
      // Not the same event, of course: a mapping file pairing them exercises the mechanics on live books.
      const mapping = parseMappingFile({ version: 1, merge: [{ contests: ['kalshi-KXELONMARS-99', runner.contest_id], id: 'replay_pair', positions: [[marsYes, runner.position_hash]] }] }, 'test-mapping.json');
      const m = mergeVenueCatalogs({ kalshi: k.catalog()!, polymarket: p.catalog()! }, { mapping });
      const merged = m.position_map.kalshi![marsYes]!;
      expect(merged).toMatch(/^replay_pair:/);
      expect(m.position_map.polymarket![runner.position_hash!]).toBe(merged);
      const rk = remapAdapter(k, m.position_map.kalshi, m.contest_map.kalshi);
      const rp = remapAdapter(p, m.position_map.polymarket, m.contest_map.polymarket);
      const both = [...(await rk.fetchQuotes({ contest_ids: ['replay_pair'] })), ...(await rp.fetchQuotes({ contest_ids: ['replay_pair'] }))];
      expect(both.map((q) => [q.partner_id, q.position_hash, q.venue_side_key])).toEqual([
        ['kalshi', merged, 'yes'],
        ['polymarket', merged, 'yes'],
      ]);
      expect(both[0]!.price).toBe(0.12);
      // What the file did not pair stays as the venue listed it.
      expect((await rk.fetchQuotes({ position_hashes: [marsNo] })).map((q) => q.position_hash)).toEqual([marsNo]);
      const depth = await rk.fetchDepth(merged);
      expect(depth).toMatchObject({ position_hash: merged, best_price: 0.12 });
      expect(m.catalog.contests.map((c) => c.id)).toEqual(expect.arrayContaining(['replay_pair', 'kalshi-KXELONMARS-99']));
    } finally {
      await Promise.all([k.close(), p.close()]);
    }
  });
});
