/**
 * Polymarket test support (not a test file): the recorded fixtures, and a small local Polymarket
 * serving them: Gamma `/events` and CLOB `/book` + `/books` over node:http, the market channel
 * `/ws/market` over uWebSockets.js (the project's WebSocket server).
 *
 * No recording has a catalog and the books of its own tokens, so the world here joins them: the
 * recorded Gamma events are the catalog, and each listed token's book is a recorded book with its
 * `asset_id` set to that token. The first listed runner takes line 2 of ws-book.jsonl, whose 15
 * recorded price_change frames (ws-price_change.jsonl) follow it exactly; `nextPriceChange()`
 * replays them in order, re-keyed the same way (the recorded complement's items go to the
 * runner's No token).
 */
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as UWS from 'uWebSockets.js';
import type { GammaEvent, GammaMarket } from '../../../src/venues/polymarket/messages.js';

const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof UWS;

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const fixtureText = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
export const fixture = <T = unknown>(name: string): T => JSON.parse(fixtureText(name)) as T;
export const fixtureLines = <T = Record<string, unknown>>(name: string): T[] =>
  fixtureText(name)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

/** After every recorded timestamp (2026-10-01T00:00:00Z): the adapters' ts_init in these tests. */
export const TEST_NOW = Date.UTC(2026, 9, 1);

/** The recorded asset ids of the book + price_change capture (line 2 of ws-book.jsonl). */
export const CAPTURE_TOKEN = '76670567130917723816490572615540605537878462672464291990940067659127658071111';
export const CAPTURE_COMPLEMENT = '54179564009642723353355316176091991063553046330768303687769988635499280029688';

/** The served catalog: the sports neg-risk events, the 2028 nominee event and the 5-minute BTC market's event. */
export function servedEvents(): GammaEvent[] {
  const btc = fixture<GammaMarket>('rest-gamma-market.json');
  const { events, ...market } = btc;
  return [...fixture<GammaEvent[]>('rest-gamma-events.json'), ...fixture<GammaEvent[]>('rest-gamma-event-negrisk.json'), { ...events![0]!, markets: [market as GammaMarket] }];
}

/** Listed tokens of the served catalog, in catalog order: [yes token, no token] per open market. */
export function listedTokenPairs(events: GammaEvent[]): [string, string][] {
  const out: [string, string][] = [];
  for (const e of events) {
    for (const m of e.markets ?? []) {
      if (m.closed || !m.active) continue;
      out.push(JSON.parse(m.clobTokenIds!) as [string, string]);
    }
  }
  return out;
}

type Json = Record<string, unknown>;

const rekey = (o: Json, token: string): Json => ({ ...o, asset_id: token });

export interface FakeOptions {
  events?: GammaEvent[];
}

export class FakePolymarket {
  readonly events: GammaEvent[];
  /** token → its book payload (REST shape). */
  readonly books = new Map<string, Json>();
  /** The token whose book is the capture's, and its complement. */
  readonly captureToken: string;
  readonly captureComplement: string;
  /** REST answers with this status (and an error body) while set. */
  failRest: number | null = null;
  /** The WebSocket answers nothing, PONG included, while set. */
  silent = false;
  readonly requests: string[] = [];
  httpPort = 0;
  wsPort = 0;
  private http: Server | null = null;
  private app: UWS.TemplatedApp | null = null;
  private listen: UWS.us_listen_socket | null = null;
  private readonly sockets = new Set<UWS.WebSocket<{ assets: string[] }>>();
  private subscribedWaiters: (() => void)[] = [];
  private pcIndex = 0;
  private readonly priceChanges = fixtureLines('ws-price_change.jsonl');
  private tradeSeq = 0;

  constructor(opts: FakeOptions = {}) {
    this.events = opts.events ?? servedEvents();
    const pairs = listedTokenPairs(this.events);
    const recorded: Json[] = [
      fixtureLines('ws-book.jsonl')[1]!,
      fixtureLines('ws-book.jsonl')[0]!,
      fixture<Json>('rest-clob-book-2024.json'),
      fixtureLines('ws-book.jsonl')[2]!,
      fixture<Json>('rest-clob-book.json'),
    ];
    // Runners first, then the two sides of a yes/no market: each quoted token gets a book.
    pairs.forEach(([yes, no], i) => {
      this.books.set(yes, { ...rekey(recorded[i % recorded.length]!, yes), event_type: undefined });
      if (i === pairs.length - 1) this.books.set(no, { ...rekey(recorded[(i + 1) % recorded.length]!, no), event_type: undefined });
    });
    [this.captureToken, this.captureComplement] = pairs[0]!;
  }

  get restBase(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  get wsBase(): string {
    return `ws://127.0.0.1:${this.wsPort}`;
  }

  /** Adapter options pointing every host here. */
  urls(): { gamma: string; clob: string; ws: string } {
    return { gamma: this.restBase, clob: this.restBase, ws: this.wsBase };
  }

  async start(): Promise<void> {
    this.http = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      this.requests.push(`${req.method} ${url.pathname}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (this.failRest !== null) return send(this.failRest, { error: 'service unavailable' });
      if (req.method === 'GET' && url.pathname === '/events') {
        const offset = Number(url.searchParams.get('offset') ?? 0);
        const limit = Number(url.searchParams.get('limit') ?? 100);
        return send(200, this.events.slice(offset, offset + limit));
      }
      if (req.method === 'GET' && url.pathname === '/book') {
        const b = this.books.get(url.searchParams.get('token_id') ?? '');
        return b ? send(200, this.restBook(b)) : send(404, { error: 'No orderbook exists for the requested token id' });
      }
      if (req.method === 'POST' && url.pathname === '/books') {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => {
          const ids = (JSON.parse(body) as { token_id: string }[]).map((x) => x.token_id);
          send(200, ids.flatMap((id) => (this.books.has(id) ? [this.restBook(this.books.get(id)!)] : [])));
        });
        return;
      }
      send(404, { error: 'not found' });
    });
    await new Promise<void>((r) => this.http!.listen(0, '127.0.0.1', r));
    this.httpPort = (this.http.address() as { port: number }).port;

    this.app = uws.App().ws<{ assets: string[] }>('/ws/market', {
      compression: uws.DISABLED,
      upgrade: (res, req, ctx) => {
        res.upgrade({ assets: [] }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), ctx);
      },
      open: (ws) => {
        this.sockets.add(ws);
      },
      message: (ws, msg) => {
        const text = Buffer.from(msg).toString('utf8');
        if (this.silent) return;
        if (text === 'PING') {
          ws.send('PONG');
          return;
        }
        const sub = JSON.parse(text) as { assets_ids?: string[] };
        if (!Array.isArray(sub.assets_ids)) return;
        ws.getUserData().assets.push(...sub.assets_ids);
        // Like the venue: the subscription is answered with one array of book snapshots.
        const dump = sub.assets_ids.filter((id) => this.books.has(id)).map((id) => ({ ...this.restBook(this.books.get(id)!), event_type: 'book' }));
        if (dump.length > 0) ws.send(JSON.stringify(dump));
        const waiters = this.subscribedWaiters;
        this.subscribedWaiters = [];
        for (const w of waiters) w();
      },
      close: (ws) => {
        this.sockets.delete(ws);
      },
    });
    await new Promise<void>((resolve, reject) =>
      this.app!.listen('127.0.0.1', 0, (ls) => {
        if (!ls) return reject(new Error('uWS could not listen'));
        this.listen = ls;
        this.wsPort = uws.us_socket_local_port(ls as never);
        resolve();
      }),
    );
  }

  private restBook(b: Json): Json {
    const { event_type: _e, ...rest } = b;
    return rest;
  }

  /** Sockets that have subscribed. */
  subscribedCount(): number {
    let n = 0;
    for (const s of this.sockets) if (s.getUserData().assets.length > 0) n++;
    return n;
  }

  /** Resolves once some socket is subscribed. */
  untilSubscribed(): Promise<void> {
    if (this.subscribedCount() > 0) return Promise.resolve();
    return new Promise((r) => this.subscribedWaiters.push(r));
  }

  /** Sends a frame (object or array, or raw text) to every subscribed socket. */
  broadcast(frame: unknown): void {
    const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
    for (const s of this.sockets) if (s.getUserData().assets.length > 0) s.send(text);
  }

  /** The next recorded price_change frame, re-keyed onto the capture's tokens (the book is resent before the first). */
  nextPriceChange(): Json {
    const i = this.pcIndex++ % this.priceChanges.length;
    const f = this.priceChanges[i]!;
    if (i === 0 && this.pcIndex > 1) this.broadcast({ ...this.restBook(this.books.get(this.captureToken)!), event_type: 'book' });
    const items = (f.price_changes as Json[]).map((it) => ({
      ...it,
      asset_id: it.asset_id === CAPTURE_TOKEN ? this.captureToken : it.asset_id === CAPTURE_COMPLEMENT ? this.captureComplement : it.asset_id,
    }));
    return { ...f, price_changes: items };
  }

  /** The recorded last_trade_price frame on `token`, a distinct timestamp each time. */
  tradeFrame(token: string): Json {
    const f = fixtureLines('ws-last_trade_price.jsonl')[0]!;
    return { ...f, asset_id: token, timestamp: String(Number(f.timestamp) + this.tradeSeq++) };
  }

  /** Drops every connection from the server side. */
  dropConnections(): void {
    for (const s of [...this.sockets]) s.end(1001, 'going away');
  }

  async stop(): Promise<void> {
    if (this.listen) uws.us_listen_socket_close(this.listen);
    this.listen = null;
    for (const s of [...this.sockets]) s.close();
    this.sockets.clear();
    this.app?.close();
    this.app = null;
    const http = this.http;
    this.http = null;
    if (http) {
      const closed = new Promise<void>((r) => http.close(() => r()));
      // fetch keeps connections alive: end them, or close() waits for them.
      http.closeAllConnections();
      await closed;
    }
  }
}

/** Polls `pred` every few ms until it holds (a wait for an effect, not a timing assertion). */
export async function until(pred: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!pred()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
