/**
 * A small fake Kalshi for the adapter tests: REST (node:http) and the WebSocket (the same server's
 * upgrade, speaking the frame codec of src/venues/ws-client.ts) on Kalshi's paths, serving the
 * recorded fixtures and a little state (books, orders) so the adapter can be driven end to end.
 *
 * It checks every signed request and handshake with the public key (RSA-PSS, as Kalshi does), and
 * refuses `orderbook_delta` to an unauthenticated socket (error code 9), as the venue does.
 * Levers: pushDelta, pushTrade, loseDelta (a frame lost on the way), pushRawDelta, failNext, dropSockets; `requests` logs every call.
 * Not the lead's replay server: just enough venue for one adapter's tests.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UNIT, type Micros } from '../../../src/domain/money.js';
import { verifyKalshiSignature } from '../../../src/venues/kalshi/auth.js';
import { applyDelta, ladder, offers, otherSide, type KalshiBook, type KalshiSide } from '../../../src/venues/kalshi/book.js';
import { dollarsText } from '../../../src/venues/kalshi/grid.js';
import type { KalshiMarket } from '../../../src/venues/kalshi/messages.js';
import { FrameReader, OPCODE, acceptKey, encodeFrame } from '../../../src/venues/ws-client.js';
import { fixture } from './support.js';

const API = '/trade-api/v2';
const WS_PATH = '/trade-api/ws/v2';

interface Sub {
  sid: number;
  channel: string;
  tickers: string[];
  seq: number;
}

interface Client {
  socket: Socket;
  authed: boolean;
  subs: Map<number, Sub>;
  nextSid: number;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: string;
  signed: boolean;
  body: unknown;
}

const countText = (c: Micros) => {
  const hundredths = c / 10_000n;
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, '0')}`;
};

/** Kalshi's taker fee, computed here independently of the adapter: ceil to the cent of 0.07·C·P·(1−P). */
const takerFeeCents = (contracts: number, price: number) => Math.ceil(Math.round(0.07 * contracts * price * (1 - price) * 1e8) / 1e6);

export class FakeKalshi {
  readonly requests: LoggedRequest[] = [];
  readonly markets: KalshiMarket[];
  readonly books = new Map<string, KalshiBook>();
  readonly orders = new Map<string, Record<string, unknown>>();
  private readonly clients = new Set<Client>();
  private server: http.Server | null = null;
  private port = 0;
  /** Frames sent to clients (all kinds). */
  framesSent = 0;
  /** Every WebSocket command received, in order. */
  readonly commands: { cmd: string; params?: Record<string, unknown> }[] = [];
  /** The next POST /portfolio/orders answers this instead of matching. */
  private failNextOrder: { status: number; body: unknown } | null = null;

  constructor(private readonly opts: { publicKeyPem: string | null; clock: () => number }) {
    this.markets = fixture<{ markets: KalshiMarket[] }>('rest-markets.json').markets;
    for (const m of this.markets) this.books.set(m.ticker, { yes: new Map(), no: new Map() });
    const recorded = fixture('rest-orderbook.json').orderbook_fp;
    this.books.set('KXELONMARS-99', { yes: ladder(recorded.yes_dollars, 'yes'), no: ladder(recorded.no_dollars, 'no') });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}${API}`;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}${WS_PATH}`;
  }

  /** Listens on `port` (default: any free one; a test that points a service here before the venue is up picks it). */
  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => void this.onRequest(req, res));
    this.server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket as Socket, head));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.dropSockets();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  /** Kills every socket without a close frame (the venue went away). */
  dropSockets(): void {
    for (const c of this.clients) c.socket.destroy();
    this.clients.clear();
  }

  /** Connected clients subscribed to `channel` (for `ticker` when given). */
  subscribers(channel: string, ticker?: string): number {
    let n = 0;
    for (const c of this.clients) for (const s of c.subs.values()) if (s.channel === channel && (!ticker || s.tickers.includes(ticker))) n++;
    return n;
  }

  // ---- levers ------------------------------------------------------------------------------------

  /** Changes the resting count at a price and tells every book subscriber; returns frames sent. */
  pushDelta(ticker: string, side: KalshiSide, price: string, delta: string): number {
    const p = BigInt(Math.round(Number(price) * 1e6));
    const d = BigInt(Math.round(Number(delta) * 1e6));
    if (applyDelta(this.books.get(ticker)!, side, p, d) !== 'applied') throw new Error('fake: delta drives the book negative');
    const ts = this.opts.clock();
    return this.broadcast('orderbook_delta', ticker, (sub) => ({
      type: 'orderbook_delta',
      sid: sub.sid,
      seq: ++sub.seq,
      msg: { market_ticker: ticker, market_id: `id-${ticker}`, price_dollars: dollarsText(p), delta_fp: `${d < 0n ? '-' : ''}${countText(d < 0n ? -d : d)}`, side, ts: new Date(ts).toISOString(), ts_ms: ts },
    }));
  }

  /** Publishes a trade print; returns frames sent. */
  pushTrade(ticker: string, takerSide: KalshiSide, yesPrice: string, count: string): number {
    const ts = this.opts.clock() - 5;
    const yes = BigInt(Math.round(Number(yesPrice) * 1e6));
    return this.broadcast('trade', ticker, (sub) => ({
      type: 'trade',
      sid: sub.sid,
      seq: ++sub.seq,
      msg: {
        trade_id: randomUUID(),
        market_ticker: ticker,
        yes_price_dollars: dollarsText(yes),
        no_price_dollars: dollarsText(UNIT - yes),
        count_fp: count,
        taker_side: takerSide,
        ts: Math.floor(ts / 1000),
        ts_ms: ts,
      },
    }));
  }

  /** Sends a delta to book subscribers without applying it to the venue's book (a venue-side bug). */
  pushRawDelta(ticker: string, side: KalshiSide, price: string, delta: string): number {
    return this.broadcast('orderbook_delta', ticker, (sub) => ({
      type: 'orderbook_delta',
      sid: sub.sid,
      seq: ++sub.seq,
      msg: { market_ticker: ticker, price_dollars: price, delta_fp: delta, side, ts_ms: this.opts.clock() },
    }));
  }

  /** The next order placement fails with this HTTP answer. */
  failNext(status: number, body: unknown): void {
    this.failNextOrder = { status, body };
  }

  /** A book change the venue makes but whose frame is lost on the way: state changes, seq moves on. */
  loseDelta(ticker: string, side: KalshiSide, price: string, delta: string): void {
    const p = BigInt(Math.round(Number(price) * 1e6));
    const d = BigInt(Math.round(Number(delta) * 1e6));
    if (applyDelta(this.books.get(ticker)!, side, p, d) !== 'applied') throw new Error('fake: delta drives the book negative');
    for (const c of this.clients) for (const s of c.subs.values()) if (s.channel === 'orderbook_delta' && s.tickers.includes(ticker)) s.seq++;
  }

  private broadcast(channel: string, ticker: string | null, frame: (sub: Sub) => unknown): number {
    let n = 0;
    for (const c of this.clients) {
      for (const s of c.subs.values()) {
        if (s.channel !== channel || (ticker !== null && s.tickers.length > 0 && !s.tickers.includes(ticker))) continue;
        this.send(c, frame(s));
        n++;
      }
    }
    return n;
  }

  // ---- WebSocket ---------------------------------------------------------------------------------

  private onUpgrade(req: http.IncomingMessage, socket: Socket, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const signedHeaders = req.headers['kalshi-access-signature'] !== undefined;
    const authed = signedHeaders && this.opts.publicKeyPem !== null && verifyKalshiSignature(this.opts.publicKeyPem, 'GET', url.pathname, req.headers);
    if (url.pathname !== WS_PATH || (signedHeaders && !authed) || typeof req.headers['sec-websocket-key'] !== 'string') {
      socket.end(`HTTP/1.1 ${url.pathname !== WS_PATH ? 404 : 401} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(req.headers['sec-websocket-key'])}\r\n\r\n`,
    );
    const client: Client = { socket, authed, subs: new Map(), nextSid: 1 };
    this.clients.add(client);
    const reader = new FrameReader();
    const onData = (d: Buffer) => {
      for (const f of reader.push(d)) {
        if (f.opcode === OPCODE.ping) socket.write(encodeFrame(OPCODE.pong, f.payload, false));
        else if (f.opcode === OPCODE.close) {
          socket.end(encodeFrame(OPCODE.close, f.payload, false));
          this.clients.delete(client);
        } else if (f.opcode === OPCODE.text) this.onCommand(client, JSON.parse(f.payload.toString('utf8')));
      }
    };
    socket.on('data', onData);
    socket.on('close', () => this.clients.delete(client));
    socket.on('error', () => this.clients.delete(client));
    if (head.length) onData(head);
  }

  private send(c: Client, msg: unknown): void {
    if (c.socket.destroyed) return;
    this.framesSent++;
    c.socket.write(encodeFrame(OPCODE.text, Buffer.from(JSON.stringify(msg)), false));
  }

  private snapshot(ticker: string): Record<string, unknown> {
    const b = this.books.get(ticker);
    const side = (m: Map<Micros, Micros> | undefined) =>
      [...(m ?? new Map<Micros, Micros>()).entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1)).map(([p, c]) => [dollarsText(p), countText(c)]);
    const yes = side(b?.yes);
    const no = side(b?.no);
    // A side with no orders is absent, as the venue sends it.
    return { market_ticker: ticker, market_id: `id-${ticker}`, ...(yes.length ? { yes_dollars_fp: yes } : {}), ...(no.length ? { no_dollars_fp: no } : {}) };
  }

  private onCommand(c: Client, cmd: { id: number; cmd: string; params?: { channels?: string[]; market_tickers?: string[]; sids?: number[] } }): void {
    this.commands.push({ cmd: cmd.cmd, params: cmd.params });
    if (cmd.cmd === 'subscribe') {
      for (const channel of cmd.params?.channels ?? []) {
        if ((channel === 'orderbook_delta' || channel === 'user_orders') && !c.authed) {
          this.send(c, { id: cmd.id, type: 'error', msg: { code: 9, msg: 'Authentication required' } });
          continue;
        }
        const sub: Sub = { sid: c.nextSid++, channel, tickers: cmd.params?.market_tickers ?? [], seq: 0 };
        c.subs.set(sub.sid, sub);
        this.send(c, { id: cmd.id, type: 'subscribed', msg: { channel, sid: sub.sid } });
        if (channel === 'orderbook_delta') for (const t of sub.tickers) this.send(c, { type: 'orderbook_snapshot', sid: sub.sid, seq: ++sub.seq, msg: this.snapshot(t) });
      }
    } else if (cmd.cmd === 'unsubscribe') {
      for (const sid of cmd.params?.sids ?? []) {
        const sub = c.subs.get(sid);
        if (!sub) continue;
        c.subs.delete(sid);
        this.send(c, { id: cmd.id, sid, seq: ++sub.seq, type: 'unsubscribed' });
      }
    } else {
      this.send(c, { id: cmd.id, type: 'error', msg: { code: 13, msg: 'Unsupported action' } });
    }
  }

  // ---- REST --------------------------------------------------------------------------------------

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw ? JSON.parse(raw) : null;
    const method = req.method ?? 'GET';
    const signed = this.opts.publicKeyPem !== null && verifyKalshiSignature(this.opts.publicKeyPem, method, url.pathname, req.headers);
    this.requests.push({ method, path: url.pathname, query: url.search, signed, body });
    const reply = (status: number, b: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(b));
    };
    const notFound = (what: string) => reply(404, { error: { code: 'not_found', message: `${what} not found` } });
    if (!url.pathname.startsWith(API)) return notFound('path');
    const path = url.pathname.slice(API.length);
    if (path.startsWith('/portfolio/') && !signed) return reply(401, { error: { code: 'authentication_error', message: 'bad signature' } });

    let m: RegExpExecArray | null;
    if (method === 'GET' && path === '/markets') {
      const tickers = url.searchParams.get('tickers')?.split(',');
      return reply(200, { cursor: '', markets: this.markets.filter((x) => !tickers || tickers.includes(x.ticker)) });
    }
    if (method === 'GET' && (m = /^\/series\/([^/]+)$/.exec(path))) {
      return m[1] === 'KXELONMARS' ? reply(200, fixture('handwritten/series-KXELONMARS.json')) : notFound('series');
    }
    if (method === 'GET' && (m = /^\/events\/([^/]+)$/.exec(path))) {
      return m[1] === 'KXELONMARS-99' ? reply(200, fixture('handwritten/event-KXELONMARS-99.json')) : notFound('event');
    }
    if (method === 'GET' && (m = /^\/markets\/([^/]+)\/orderbook$/.exec(path))) {
      const s = this.snapshot(decodeURIComponent(m[1]!));
      if (!this.books.has(decodeURIComponent(m[1]!))) return notFound('market');
      return reply(200, { orderbook_fp: { yes_dollars: s.yes_dollars_fp ?? [], no_dollars: s.no_dollars_fp ?? [] } });
    }
    if (method === 'GET' && path === '/markets/trades') return reply(200, fixture('rest-trades.json'));
    if (method === 'GET' && path === '/portfolio/balance') return reply(200, fixture('rest-portfolio-balance.json'));
    if (method === 'GET' && path === '/portfolio/fills') return reply(200, fixture('rest-portfolio-fills.json'));
    if (method === 'POST' && path === '/portfolio/orders') {
      const fail = this.failNextOrder;
      this.failNextOrder = null;
      return fail ? reply(fail.status, fail.body) : this.createOrder(body, reply);
    }
    if (method === 'GET' && path === '/portfolio/orders') {
      const ticker = url.searchParams.get('ticker');
      return reply(200, { cursor: '', orders: [...this.orders.values()].filter((o) => !ticker || o.ticker === ticker).reverse() });
    }
    if ((m = /^\/portfolio\/orders\/([^/]+)$/.exec(path))) {
      const o = this.orders.get(m[1]!);
      if (!o) return notFound('order');
      if (method === 'GET') return reply(200, { order: o });
      if (method === 'DELETE') {
        if (o.status !== 'resting') return notFound('order');
        const left = o.remaining_count_fp;
        Object.assign(o, { status: 'canceled', remaining_count_fp: '0.00', last_update_time: new Date(this.opts.clock()).toISOString() });
        this.pushUserOrder(o);
        return reply(200, { order: o, reduced_by_fp: left });
      }
    }
    return notFound('route');
  }

  private createOrder(b: Record<string, any>, reply: (status: number, b: unknown) => void): void {
    const book = this.books.get(b?.ticker);
    const side = b?.side as KalshiSide;
    const priceText = side === 'yes' ? b?.yes_price_dollars : b?.no_price_dollars;
    if (!book || (side !== 'yes' && side !== 'no') || b.action !== 'buy' || !Number.isInteger(b.count) || b.count < 1 || typeof priceText !== 'string') {
      return reply(400, { error: { code: 'invalid_parameters', message: 'bad order' } });
    }
    if ([...this.orders.values()].some((o) => o.client_order_id === b.client_order_id)) return reply(409, { error: { code: 'order_already_exists', message: 'duplicate client_order_id' } });
    const limit = Number(priceText);
    let want = b.count as number;
    const fills: { price: number; count: number }[] = [];
    const asks = offers(book, side).map((o) => ({ price: Number(o.price) / 1e6, count: Number(o.count) / 1e6 }));
    const fillable = asks.filter((a) => a.price <= limit + 1e-12).reduce((s, a) => s + a.count, 0);
    if (b.time_in_force !== 'fill_or_kill' || fillable >= want) {
      for (const a of asks) {
        if (want <= 0 || a.price > limit + 1e-12) break;
        const n = Math.min(want, Math.floor(a.count));
        if (n <= 0) continue;
        fills.push({ price: a.price, count: n });
        want -= n;
        // Taking a YES ask consumes the NO bid it mirrors.
        applyDelta(book, otherSide(side), BigInt(Math.round((1 - a.price) * 1e6)), -BigInt(n) * UNIT);
      }
    }
    const filled = fills.reduce((s, f) => s + f.count, 0);
    const cost = fills.reduce((s, f) => s + f.price * f.count, 0);
    const fee = fills.reduce((s, f) => s + takerFeeCents(f.count, f.price), 0) / 100;
    const rests = b.time_in_force === undefined || b.time_in_force === 'good_till_canceled';
    const remaining = rests ? b.count - filled : 0;
    const now = new Date(this.opts.clock()).toISOString();
    const price = BigInt(Math.round(limit * 1e6));
    const order = {
      order_id: randomUUID(),
      user_id: '00000000-0000-0000-0000-000000000001',
      client_order_id: b.client_order_id,
      ticker: b.ticker,
      side,
      action: 'buy',
      type: 'limit',
      status: filled === b.count ? 'executed' : rests ? 'resting' : 'canceled',
      yes_price_dollars: dollarsText(side === 'yes' ? price : UNIT - price),
      no_price_dollars: dollarsText(side === 'no' ? price : UNIT - price),
      fill_count_fp: filled.toFixed(2),
      remaining_count_fp: remaining.toFixed(2),
      initial_count_fp: (b.count as number).toFixed(2),
      taker_fill_cost_dollars: cost.toFixed(4),
      maker_fill_cost_dollars: '0.0000',
      taker_fees_dollars: fee.toFixed(4),
      maker_fees_dollars: '0.0000',
      created_time: now,
      last_update_time: now,
    };
    this.orders.set(order.order_id, order);
    this.pushUserOrder(order);
    reply(201, { order });
  }

  private pushUserOrder(o: Record<string, unknown>): void {
    // As the AsyncAPI example: user_order frames carry a sid and no seq.
    this.broadcast('user_orders', null, (sub) => ({ type: 'user_order', sid: sub.sid, msg: o }));
  }
}
