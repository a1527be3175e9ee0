/**
 * Kalshi on recorded payloads: the public REST reads and the WebSocket on Kalshi's paths (the
 * server mounts it under a prefix; paths below are relative to `/trade-api/v2` and
 * `/trade-api/ws/v2`).
 *
 * REST (GET only): `/markets` (filters `tickers`, `series_ticker`, `event_ticker`, `status`,
 * `mve_filter`; `limit` + `cursor` paging), `/markets/{ticker}`, `/events/{ticker}`,
 * `/series/{ticker}`, `/markets/{ticker}/orderbook`, `/markets/trades`. Anything else is a 404 in
 * Kalshi's error shape saying the replay has no recording for it.
 *
 * WebSocket: `subscribe` answers `subscribed` with a fresh sid per channel; `orderbook_delta`
 * (refused with code 9 on a handshake without Kalshi's signature headers, as the venue does; the
 * signature itself is not checked: this is not a venue) sends each subscribed market's snapshot,
 * then its recorded deltas, `seq` counted per sid from 1; `trade` sends the recorded trade frames of
 * the subscribed markets. `unsubscribe` answers `unsubscribed`. Kalshi pings every 10 s; so does this.
 *
 * Books: a market keeps a book recorded for its own ticker; a market without one borrows the next
 * recorded book no listed market owns (in file order), with the deltas recorded after it; a market
 * left without a book has none (its order book read is a 404 and no snapshot is sent). REST serves
 * the state after every recorded delta (the last state, held).
 */
import type { Micros } from '../../domain/money.js';
import { applyDelta, type KalshiBook } from '../kalshi/book.js';
import { dollarsText } from '../kalshi/grid.js';
import type { KalshiMarket, KalshiTrade } from '../kalshi/messages.js';
import { parseDelta, parseOrderbook, parseSnapshot } from '../kalshi/parse.js';
import { KALSHI_OPEN_STATUSES } from './catalogs.js';
import type { Json, KalshiRecordings } from './recordings.js';
import type { ServerSocket } from './ws.js';

export interface HttpAnswer {
  status: number;
  body: unknown;
}

/** How a listed market's book came to be served. */
export interface BookAssignment {
  ticker: string;
  /** Where the recorded book came from (a file, or `ws:<recorded ticker>`). */
  from: string;
  /** The recorded market it belongs to, when that is another market (a borrowed book). */
  borrowed_from: string | null;
}

interface Served {
  initial: KalshiBook;
  deltas: Json[];
  final: KalshiBook;
}

interface Sub {
  sid: number;
  channel: string;
  tickers: string[];
  seq: number;
}

interface Client {
  socket: ServerSocket;
  authed: boolean;
  subs: Map<number, Sub>;
  nextSid: number;
}

const PAGE_MAX = 1000;

const countText = (c: Micros): string => {
  const neg = c < 0n;
  const hundredths = (neg ? -c : c) / 10_000n;
  return `${neg ? '-' : ''}${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, '0')}`;
};

/** One side as Kalshi lists it: [price, count] ascending (best bid last). */
const ladderOut = (m: Map<Micros, Micros>): [string, string][] =>
  [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([p, c]) => [dollarsText(p), countText(c)]);

const copyBook = (b: KalshiBook): KalshiBook => ({ yes: new Map(b.yes), no: new Map(b.no) });

export class KalshiReplay {
  readonly markets: KalshiMarket[];
  readonly assignments: BookAssignment[] = [];
  private readonly books = new Map<string, Served>();
  private readonly trades = new Map<string, KalshiTrade[]>();
  private readonly tradeFrames = new Map<string, Json[]>();
  private readonly clients = new Set<Client>();

  constructor(
    private readonly rec: KalshiRecordings,
    private readonly opts: { loopMs?: number } = {},
  ) {
    this.markets = rec.markets;
    const listed = new Set(rec.markets.map((m) => m.ticker));

    // Every recorded book: REST bodies (ticker from the file name or the touch), WS snapshots + deltas.
    const recorded: { ticker: string | null; from: string; served: Served }[] = [];
    for (const ob of rec.orderbooks) {
      const b = parseOrderbook(ob.body);
      recorded.push({ ticker: ob.ticker, from: ob.file, served: { initial: b, deltas: [], final: copyBook(b) } });
    }
    const wsBooks = new Map<string, Served>();
    for (const f of rec.bookFrames) {
      const msg = f.msg as Json | undefined;
      const t = typeof msg?.market_ticker === 'string' ? msg.market_ticker : null;
      if (!msg || !t) continue;
      if (f.type === 'orderbook_snapshot') {
        const b = parseSnapshot(msg as never);
        const s: Served = { initial: b, deltas: [], final: copyBook(b) };
        wsBooks.set(t, s);
        recorded.push({ ticker: t, from: `ws:${t}`, served: s });
      } else {
        const s = wsBooks.get(t);
        if (!s) continue;
        const d = parseDelta(msg as never);
        // A recorded delta that does not fit its book is dropped, never served as a wrong book.
        if (applyDelta(s.final, d.side, d.price, d.delta) === 'applied') s.deltas.push(msg);
      }
    }
    const owned = recorded.filter((r) => r.ticker !== null && listed.has(r.ticker));
    const spare = recorded.filter((r) => r.ticker === null || !listed.has(r.ticker));
    for (const r of owned) {
      if (this.books.has(r.ticker!)) continue;
      this.books.set(r.ticker!, r.served);
      this.assignments.push({ ticker: r.ticker!, from: r.from, borrowed_from: null });
    }
    for (const m of rec.markets) {
      if (this.books.has(m.ticker)) continue;
      const r = spare.shift();
      if (!r) break;
      this.books.set(m.ticker, { ...r.served, deltas: r.served.deltas.map((d) => ({ ...d, market_ticker: m.ticker })) });
      this.assignments.push({ ticker: m.ticker, from: r.from, borrowed_from: r.ticker });
    }
    for (const t of rec.trades) {
      const tk = t.ticker;
      if (typeof tk !== 'string' || !listed.has(tk)) continue;
      const list = this.trades.get(tk);
      if (list) list.push(t);
      else this.trades.set(tk, [t]);
    }
    for (const f of rec.tradeFrames) {
      const t = (f.msg as Json | undefined)?.market_ticker;
      if (typeof t !== 'string' || !listed.has(t)) continue;
      const list = this.tradeFrames.get(t);
      if (list) list.push(f.msg as Json);
      else this.tradeFrames.set(t, [f.msg as Json]);
    }
  }

  /** The book served for a ticker (its last state), or null. */
  book(ticker: string): KalshiBook | null {
    return this.books.get(ticker)?.final ?? null;
  }

  // ---- REST ------------------------------------------------------------------------------------

  get(path: string, q: URLSearchParams): HttpAnswer {
    const notFound = (what: string): HttpAnswer => ({ status: 404, body: { error: { code: 'not_found', message: `the replay has no recording of ${what}`, service: 'replay' } } });
    let m: RegExpExecArray | null;
    if (path === '/markets') return { status: 200, body: this.listMarkets(q) };
    if (path === '/markets/trades') {
      const t = q.get('ticker');
      const all = t ? (this.trades.get(t) ?? []) : [...this.trades.values()].flat();
      const limit = Math.min(Math.max(Number(q.get('limit') ?? 100) || 100, 1), PAGE_MAX);
      return { status: 200, body: { cursor: '', trades: all.slice(0, limit) } };
    }
    if ((m = /^\/markets\/([^/]+)\/orderbook$/.exec(path))) {
      const t = decodeURIComponent(m[1]!);
      const b = this.books.get(t);
      if (!b) return notFound(`an order book of ${t}`);
      return { status: 200, body: { orderbook_fp: { yes_dollars: ladderOut(b.final.yes), no_dollars: ladderOut(b.final.no) } } };
    }
    if ((m = /^\/markets\/([^/]+)$/.exec(path))) {
      const t = decodeURIComponent(m[1]!);
      const market = this.markets.find((x) => x.ticker === t);
      return market ? { status: 200, body: { market } } : notFound(`market ${t}`);
    }
    if ((m = /^\/events\/([^/]+)$/.exec(path))) {
      const t = decodeURIComponent(m[1]!);
      const event = this.rec.events.find((e) => e.event_ticker === t);
      return event ? { status: 200, body: { event, markets: this.markets.filter((x) => x.event_ticker === t) } } : notFound(`event ${t}`);
    }
    if ((m = /^\/series\/([^/]+)$/.exec(path))) {
      const t = decodeURIComponent(m[1]!);
      const series = this.rec.series.find((s) => s.ticker === t);
      return series ? { status: 200, body: { series } } : notFound(`series ${t}`);
    }
    return notFound(`GET ${path}`);
  }

  private listMarkets(q: URLSearchParams): { cursor: string; markets: KalshiMarket[] } {
    const tickers = q.get('tickers')?.split(',').filter(Boolean);
    const series = q.get('series_ticker');
    const event = q.get('event_ticker');
    const status = q.get('status');
    const mve = q.get('mve_filter');
    const seriesOf = (m: KalshiMarket) => m.event_ticker.split('-')[0];
    const all = this.markets.filter(
      (m) =>
        (!tickers || tickers.includes(m.ticker)) &&
        (!series || seriesOf(m) === series) &&
        (!event || m.event_ticker === event) &&
        (!status || (status === 'open' ? m.status === undefined || KALSHI_OPEN_STATUSES.has(m.status) : m.status === status)) &&
        (mve !== 'exclude' || !m.mve_collection_ticker) &&
        (mve !== 'only' || !!m.mve_collection_ticker),
    );
    const offset = Number(q.get('cursor') || 0) || 0;
    const limit = Math.min(Math.max(Number(q.get('limit') ?? 100) || 100, 1), PAGE_MAX);
    const page = all.slice(offset, offset + limit);
    return { cursor: offset + limit < all.length ? String(offset + limit) : '', markets: page };
  }

  // ---- WebSocket -------------------------------------------------------------------------------

  attach(socket: ServerSocket): void {
    const client: Client = { socket, authed: typeof socket.headers['kalshi-access-signature'] === 'string', subs: new Map(), nextSid: 1 };
    this.clients.add(client);
    socket.onText = (text) => {
      let cmd: { id?: number; cmd?: string; params?: { channels?: string[]; market_tickers?: string[]; market_ticker?: string; sids?: number[] } };
      try {
        cmd = JSON.parse(text);
      } catch {
        return this.send(client, { type: 'error', msg: { code: 1, msg: 'Unable to process message' } });
      }
      this.onCommand(client, cmd);
    };
    socket.onClose = () => this.clients.delete(client);
  }

  /** Kalshi's 10 s heartbeat, and the loop (when set): every subscription's sequence again. */
  tick(loop: boolean): void {
    for (const c of this.clients) {
      c.socket.ping();
      if (loop) for (const s of c.subs.values()) this.play(c, s);
    }
  }

  get loopMs(): number {
    return this.opts.loopMs ?? 0;
  }

  close(): void {
    for (const c of [...this.clients]) c.socket.destroy();
    this.clients.clear();
  }

  private send(c: Client, msg: unknown): void {
    c.socket.sendText(JSON.stringify(msg));
  }

  private onCommand(c: Client, cmd: { id?: number; cmd?: string; params?: { channels?: string[]; market_tickers?: string[]; market_ticker?: string; sids?: number[] } }): void {
    const id = cmd.id;
    if (cmd.cmd === 'subscribe') {
      const tickers = cmd.params?.market_tickers ?? (cmd.params?.market_ticker ? [cmd.params.market_ticker] : []);
      for (const channel of cmd.params?.channels ?? []) {
        if (!['orderbook_delta', 'trade', 'ticker', 'user_orders', 'fill', 'market_positions', 'market_lifecycle_v2'].includes(channel)) {
          this.send(c, { id, type: 'error', msg: { code: 8, msg: 'Unknown channel name' } });
          continue;
        }
        if (['orderbook_delta', 'user_orders', 'fill', 'market_positions'].includes(channel) && !c.authed) {
          this.send(c, { id, type: 'error', msg: { code: 9, msg: 'Authentication required' } });
          continue;
        }
        const sub: Sub = { sid: c.nextSid++, channel, tickers, seq: 0 };
        c.subs.set(sub.sid, sub);
        this.send(c, { id, type: 'subscribed', msg: { channel, sid: sub.sid } });
        this.play(c, sub);
      }
      return;
    }
    if (cmd.cmd === 'unsubscribe') {
      for (const sid of cmd.params?.sids ?? []) {
        const sub = c.subs.get(sid);
        if (!sub) continue;
        c.subs.delete(sid);
        this.send(c, { id, sid, seq: ++sub.seq, type: 'unsubscribed' });
      }
      return;
    }
    this.send(c, { id, type: 'error', msg: { code: 13, msg: 'Unsupported action' } });
  }

  /** One subscription's recorded sequence. */
  private play(c: Client, sub: Sub): void {
    if (sub.channel === 'orderbook_delta') {
      for (const t of sub.tickers) {
        const b = this.books.get(t);
        if (!b) continue;
        const yes = ladderOut(b.initial.yes);
        const no = ladderOut(b.initial.no);
        // A side with no orders is absent from a snapshot, as the venue sends it.
        this.send(c, { type: 'orderbook_snapshot', sid: sub.sid, seq: ++sub.seq, msg: { market_ticker: t, ...(yes.length ? { yes_dollars_fp: yes } : {}), ...(no.length ? { no_dollars_fp: no } : {}) } });
        for (const d of b.deltas) this.send(c, { type: 'orderbook_delta', sid: sub.sid, seq: ++sub.seq, msg: { ...d, market_ticker: t } });
      }
    } else if (sub.channel === 'trade') {
      for (const t of sub.tickers) for (const f of this.tradeFrames.get(t) ?? []) this.send(c, { type: 'trade', sid: sub.sid, seq: ++sub.seq, msg: f });
    }
  }
}

