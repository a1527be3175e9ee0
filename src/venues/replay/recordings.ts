/**
 * A directory of recorded venue payloads, read by file name (the corpus convention of
 * the fixtures' README in `test/venues/<id>/fixtures/`: one file per endpoint or message type, `.json` REST bodies, `.jsonl`
 * stream frames one per line). `<dir>/kalshi/` and `<dir>/polymarket/` hold each venue's files; a
 * venue folder with a `fixtures/` folder inside (the repo's `test/venues/<id>/fixtures/`) is read
 * from there. Files the replay has no use for are listed as ignored.
 *
 * Kalshi                                           Polymarket
 *   rest-markets*.json, rest-market*.json  markets   rest-gamma-event*.json      Gamma events (with markets)
 *   [handwritten/]series-*.json            series    rest-gamma-market*.json     Gamma markets (their event nested)
 *   [handwritten/]event-*.json             events    rest-clob-book*.json        CLOB books
 *   rest-orderbook*.json                   books     ws-book*.jsonl              `book` frames
 *   rest-trades*.json                      trades    ws-price_change*.jsonl      `price_change` (not *legacy*)
 *   ws-orderbook_snapshot*.jsonl, ws-orderbook_delta*.jsonl, ws-trade*.jsonl
 *                                                   ws-last_trade_price*.jsonl, ws-tick_size_change*.jsonl
 *
 * A recorded Kalshi REST order book does not name its market: `rest-orderbook-<TICKER>.json` says it
 * in the file name; a bare `rest-orderbook.json` is joined to the market whose recorded touch it
 * reproduces (yes ask = 1 − best no bid, and the reverse, with the size), or to none.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KalshiEvent, KalshiMarket, KalshiOrderbookResponse, KalshiSeries, KalshiTrade } from '../kalshi/messages.js';
import type { GammaEvent, GammaMarket } from '../polymarket/messages.js';

export class RecordingsError extends Error {
  override readonly name = 'RecordingsError';
}

export type Json = Record<string, unknown>;

export interface KalshiRecordings {
  dir: string;
  markets: KalshiMarket[];
  series: KalshiSeries[];
  events: KalshiEvent[];
  /** REST books with the market each belongs to (null: none of the recorded markets). */
  orderbooks: { file: string; ticker: string | null; body: KalshiOrderbookResponse }[];
  trades: KalshiTrade[];
  /** `orderbook_snapshot` and `orderbook_delta` frames, in file order (snapshots first). */
  bookFrames: Json[];
  tradeFrames: Json[];
  files: string[];
  ignored: string[];
}

export interface PolymarketRecordings {
  dir: string;
  /** Raw Gamma events with their markets, as `/events` answers them. */
  events: GammaEvent[];
  /** Raw books (REST shape or `book` frames), in file order. */
  books: { file: string; book: Json }[];
  priceChanges: Json[];
  trades: Json[];
  tickSizeChanges: Json[];
  files: string[];
  ignored: string[];
}

export interface Recordings {
  dir: string;
  kalshi: KalshiRecordings | null;
  polymarket: PolymarketRecordings | null;
}

function venueDir(dir: string, id: string): string | null {
  const d = join(dir, id);
  if (!existsSync(d) || !statSync(d).isDirectory()) return null;
  const f = join(d, 'fixtures');
  return existsSync(f) && statSync(f).isDirectory() ? f : d;
}

/** Every file under `dir` (relative paths, sorted: the order files are read in). */
function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    if (statSync(join(dir, rel)).isDirectory()) out.push(...listFiles(dir, rel));
    else out.push(rel);
  }
  return out;
}

const base = (rel: string) => rel.slice(rel.lastIndexOf('/') + 1);

function readJson(dir: string, rel: string): unknown {
  try {
    return JSON.parse(readFileSync(join(dir, rel), 'utf8')) as unknown;
  } catch (e) {
    throw new RecordingsError(`${join(dir, rel)}: not a JSON body (${(e as Error).message})`);
  }
}

function readLines(dir: string, rel: string): Json[] {
  return readFileSync(join(dir, rel), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as Json;
      } catch (e) {
        throw new RecordingsError(`${join(dir, rel)} line ${i + 1}: not JSON (${(e as Error).message})`);
      }
    });
}

/** Reads the recordings under `dir`. Throws RecordingsError when neither venue has a folder there. */
export function loadRecordings(dir: string): Recordings {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new RecordingsError(`${dir} is not a directory`);
  const k = venueDir(dir, 'kalshi');
  const p = venueDir(dir, 'polymarket');
  if (!k && !p) throw new RecordingsError(`${dir} holds no recordings: expected ${join(dir, 'kalshi')}/ or ${join(dir, 'polymarket')}/ (the layout of test/venues)`);
  return { dir, kalshi: k ? loadKalshi(k) : null, polymarket: p ? loadPolymarket(p) : null };
}

// ---- Kalshi ------------------------------------------------------------------------------------

export function loadKalshi(dir: string): KalshiRecordings {
  const r: KalshiRecordings = { dir, markets: [], series: [], events: [], orderbooks: [], trades: [], bookFrames: [], tradeFrames: [], files: [], ignored: [] };
  const seenTickers = new Set<string>();
  const snapshots: Json[] = [];
  const deltas: Json[] = [];
  const books: { file: string; named: string | null; body: KalshiOrderbookResponse }[] = [];
  for (const rel of listFiles(dir)) {
    const f = base(rel);
    let used = true;
    if (/^rest-markets?(-.*)?\.json$/.test(f)) {
      const body = readJson(dir, rel) as { markets?: KalshiMarket[]; market?: KalshiMarket };
      for (const m of body.markets ?? (body.market ? [body.market] : [])) {
        if (typeof m?.ticker !== 'string' || seenTickers.has(m.ticker)) continue;
        seenTickers.add(m.ticker);
        r.markets.push(m);
      }
    } else if (/^series-.*\.json$/.test(f)) {
      const body = readJson(dir, rel) as { series?: KalshiSeries };
      if (body.series) r.series.push(body.series);
    } else if (/^event-.*\.json$/.test(f)) {
      const body = readJson(dir, rel) as { event?: KalshiEvent };
      if (body.event) r.events.push(body.event);
    } else if (/^rest-orderbook(-.+)?\.json$/.test(f)) {
      const named = /^rest-orderbook-(.+)\.json$/.exec(f)?.[1] ?? null;
      books.push({ file: rel, named, body: readJson(dir, rel) as KalshiOrderbookResponse });
    } else if (/^rest-trades.*\.json$/.test(f)) {
      const body = readJson(dir, rel) as { trades?: KalshiTrade[] };
      r.trades.push(...(body.trades ?? []));
    } else if (/^ws-orderbook_snapshot.*\.jsonl$/.test(f)) snapshots.push(...readLines(dir, rel).filter((x) => x.type === 'orderbook_snapshot'));
    else if (/^ws-orderbook_delta.*\.jsonl$/.test(f)) deltas.push(...readLines(dir, rel).filter((x) => x.type === 'orderbook_delta'));
    else if (/^ws-trade.*\.jsonl$/.test(f)) r.tradeFrames.push(...readLines(dir, rel).filter((x) => x.type === 'trade'));
    else used = false;
    (used ? r.files : r.ignored).push(rel);
  }
  r.bookFrames = [...snapshots, ...deltas];
  for (const b of books) r.orderbooks.push({ file: b.file, ticker: b.named ?? bookOwner(b.body, r.markets), body: b.body });
  return r;
}

/** Dollars (0-1) of a decimal text or a legacy cent integer. */
const dollars = (x: unknown, cents: boolean): number | null => {
  const n = typeof x === 'string' ? Number(x) : typeof x === 'number' ? x : NaN;
  if (!Number.isFinite(n)) return null;
  return cents ? n / 100 : n;
};

/** The best (highest) bid of a recorded ladder side: [price, count] or null. */
function bestOf(levels: unknown, cents: boolean): [number, number] | null {
  if (!Array.isArray(levels)) return null;
  let best: [number, number] | null = null;
  for (const lv of levels) {
    if (!Array.isArray(lv)) continue;
    const p = dollars(lv[0], cents);
    const c = Number(lv[1]);
    if (p !== null && Number.isFinite(c) && c > 0 && (!best || p > best[0])) best = [p, c];
  }
  return best;
}

const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;

/** The one market whose recorded touch this book reproduces, or null (none, or more than one). */
export function bookOwner(body: KalshiOrderbookResponse, markets: readonly KalshiMarket[]): string | null {
  const fp = body?.orderbook_fp;
  const old = body?.orderbook;
  const cents = !fp && !!old && !(old.yes_dollars || old.no_dollars);
  const yes = bestOf(fp?.yes_dollars ?? old?.yes_dollars ?? old?.yes, cents);
  const no = bestOf(fp?.no_dollars ?? old?.no_dollars ?? old?.no, cents);
  const owners: string[] = [];
  for (const m of markets) {
    let checks = 0;
    let ok = true;
    const yesAsk = dollars(m.yes_ask_dollars, false) ?? dollars(m.yes_ask, true);
    const noAsk = dollars(m.no_ask_dollars, false) ?? dollars(m.no_ask, true);
    if (yesAsk !== null && yesAsk > 0 && yesAsk < 1) {
      checks++;
      ok &&= no !== null && near(yesAsk, 1 - no[0]);
      const size = Number(m.yes_ask_size_fp);
      if (ok && Number.isFinite(size) && m.yes_ask_size_fp !== undefined) ok &&= near(size, no![1]);
    }
    if (noAsk !== null && noAsk > 0 && noAsk < 1) {
      checks++;
      ok &&= yes !== null && near(noAsk, 1 - yes[0]);
    }
    if (checks > 0 && ok) owners.push(m.ticker);
  }
  return owners.length === 1 ? owners[0]! : null;
}

// ---- Polymarket --------------------------------------------------------------------------------

export function loadPolymarket(dir: string): PolymarketRecordings {
  const r: PolymarketRecordings = { dir, events: [], books: [], priceChanges: [], trades: [], tickSizeChanges: [], files: [], ignored: [] };
  const byId = new Map<string, GammaEvent>();
  const addEvent = (e: GammaEvent) => {
    const id = String(e.id);
    const prev = byId.get(id);
    if (!prev) {
      const copy = { ...e, markets: [...(e.markets ?? [])] };
      byId.set(id, copy);
      r.events.push(copy);
      return;
    }
    // The same event from a markets file: add the markets it did not have.
    const have = new Set((prev.markets ?? []).map((m) => String(m.id)));
    for (const m of e.markets ?? []) if (!have.has(String(m.id))) (prev.markets ??= []).push(m);
  };
  for (const rel of listFiles(dir)) {
    const f = base(rel);
    let used = true;
    if (/^rest-gamma-events?(-.*)?\.json$/.test(f)) {
      const body = readJson(dir, rel);
      for (const e of Array.isArray(body) ? body : [body]) addEvent(e as GammaEvent);
    } else if (/^rest-gamma-markets?(-.*)?\.json$/.test(f)) {
      const body = readJson(dir, rel);
      for (const raw of (Array.isArray(body) ? body : [body]) as GammaMarket[]) {
        const { events, ...market } = raw;
        const ev = events?.[0];
        addEvent(ev ? { ...ev, markets: [market as GammaMarket] } : ({ id: `m${market.id}`, title: market.question, slug: market.slug, active: market.active, closed: market.closed, markets: [market as GammaMarket] } as GammaEvent));
      }
    } else if (/^rest-clob-book.*\.json$/.test(f)) r.books.push({ file: rel, book: readJson(dir, rel) as Json });
    else if (/^ws-book.*\.jsonl$/.test(f)) readLines(dir, rel).forEach((b, i) => r.books.push({ file: `${rel}:${i + 1}`, book: b }));
    else if (/^ws-price_change.*\.jsonl$/.test(f) && !f.includes('legacy')) r.priceChanges.push(...readLines(dir, rel).filter((x) => x.event_type === 'price_change' && Array.isArray(x.price_changes)));
    else if (/^ws-last_trade_price.*\.jsonl$/.test(f)) r.trades.push(...readLines(dir, rel).filter((x) => x.event_type === 'last_trade_price'));
    else if (/^ws-tick_size_change.*\.jsonl$/.test(f)) r.tickSizeChanges.push(...readLines(dir, rel).filter((x) => x.event_type === 'tick_size_change'));
    else used = false;
    (used ? r.files : r.ignored).push(rel);
  }
  return r;
}
