/**
 * The Kalshi WebSocket session: order books kept from `orderbook_snapshot` + `orderbook_delta`, public
 * trades, and our own order updates.
 *
 * Book integrity (the venue's rules, measured on its demo socket by the recordings' authors):
 * - every subscription has its own `sid`, and `seq` counts per sid from 1 across all its tickers;
 *   `ok`/`unsubscribed`/`error` frames addressed to a sid consume a seq too;
 * - a subscription first sends one snapshot per ticker, then deltas (a signed change of the resting
 *   count at a price on one side);
 * - re-subscribing an already subscribed ticker sends no snapshot; unsubscribe + subscribe gives a
 *   new sid whose seq restarts at 1, with fresh snapshots.
 * So a seq gap on the book subscription, a delta for a book we never got, or a delta that would drive
 * a level negative all mean our books may be wrong: every book of that subscription is dropped at once
 * (the adapter stops quoting them), the subscription is replaced by a fresh one, and the event is
 * counted (`seq_gaps`, `book_errors`, `resnapshots`). A wrong book is never served.
 *
 * Liveness: any inbound frame (Kalshi pings every 10 s; we ping too) refreshes `last_frame_at`. After
 * `silenceMs` without one the connection counts as dead: books are dropped, the socket is closed and
 * reopened with backoff. Trades have their own sid and seq; a trade gap is counted (`trade_gaps`)
 * but cannot be repaired from the socket.
 */
import type { WsConnection, WsHandlers, WsOptions } from '../ws-client.js';
import { openWebSocket, WsHandshakeError } from '../ws-client.js';
import type { KalshiSigner } from './auth.js';
import { applyDelta, type KalshiBook } from './book.js';
import type { KalshiOrder, KalshiWsCommand, WsDeltaMsg, WsSnapshotMsg, WsTradeMsg } from './messages.js';
import { frameTime, parseDelta, parseSnapshot, parseWsFrame } from './parse.js';

export type KalshiChannel = 'orderbook_delta' | 'trade' | 'user_orders';

export interface KalshiStreamStats {
  connected: boolean;
  frames: number;
  seq_gaps: number;
  book_errors: number;
  resnapshots: number;
  trade_gaps: number;
  parse_errors: number;
  reconnects: number;
  connect_failures: number;
  subscribe_errors: number;
  books_synced: number;
  last_frame_at: number | null;
  last_error: string | null;
}

export interface KalshiStreamOptions {
  url: string;
  signer: KalshiSigner | null;
  tickers: string[];
  channels: KalshiChannel[];
  clock: () => number;
  /** No frame for this long = a dead connection (default 30 s: three missed Kalshi pings). */
  silenceMs?: number;
  /** How long start() waits for the subscriptions' acks (default 10 s). */
  ackTimeoutMs?: number;
  onBook(ticker: string, book: KalshiBook, tsEvent: number): void;
  /** The book of `ticker` is no longer trusted (until its next snapshot). */
  onBookLost(ticker: string): void;
  onTrade(msg: WsTradeMsg): void;
  onUserOrder(msg: KalshiOrder): void;
  /** Injected for tests; defaults to the real client. */
  open?: (url: string, handlers: WsHandlers, opts: WsOptions) => Promise<Pick<WsConnection, 'send' | 'close' | 'isOpen'>>;
}

interface Sub {
  sid: number;
  channel: KalshiChannel;
  tickers: string[];
  nextSeq: number;
}

const BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
/** Retired sids remembered so their late frames are ignored (bounded; cleared on reconnect). */
const MAX_RETIRED = 256;

/** A feed's counters before it has run. */
export const emptyStreamStats = (): KalshiStreamStats => ({
  connected: false,
  frames: 0,
  seq_gaps: 0,
  book_errors: 0,
  resnapshots: 0,
  trade_gaps: 0,
  parse_errors: 0,
  reconnects: 0,
  connect_failures: 0,
  subscribe_errors: 0,
  books_synced: 0,
  last_frame_at: null,
  last_error: null,
});

export class KalshiStream {
  readonly stats: KalshiStreamStats = emptyStreamStats();
  private conn: Pick<WsConnection, 'send' | 'close' | 'isOpen'> | null = null;
  private nextId = 1;
  private readonly subs = new Map<number, Sub>();
  private readonly pending = new Map<number, { channel: KalshiChannel; tickers: string[] }>();
  private readonly retired = new Set<number>();
  private readonly books = new Map<string, { book: KalshiBook; ts: number }>();
  private stopped = true;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private ackWaiters: (() => void)[] = [];
  private generation = 0;

  constructor(private readonly opts: KalshiStreamOptions) {}

  private get silenceMs(): number {
    return this.opts.silenceMs ?? 30_000;
  }

  /** Opens the socket and subscribes; a failed first attempt is retried in the background. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.watchdog = setInterval(() => this.checkSilence(), 5_000);
    this.watchdog.unref();
    await this.open();
  }

  stop(): void {
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.watchdog = this.reconnectTimer = null;
    this.drop();
  }

  /** Connected and heard from within the silence bound (judged on the adapter's clock). */
  alive(): boolean {
    return this.stats.connected && this.stats.last_frame_at !== null && this.opts.clock() - this.stats.last_frame_at < this.silenceMs;
  }

  /** The synced book of a ticker and when it last changed, or null. */
  book(ticker: string): { book: KalshiBook; ts: number } | null {
    return this.books.get(ticker) ?? null;
  }

  syncedTickers(): string[] {
    return [...this.books.keys()];
  }

  /** Closes a silent connection (called by the watchdog; public so tests drive it with their clock). */
  checkSilence(): boolean {
    if (this.stats.connected && !this.alive()) {
      this.stats.last_error = `no frame for ${this.silenceMs} ms`;
      this.conn?.close(4000);
      this.lost();
      return true;
    }
    return false;
  }

  private async open(): Promise<void> {
    const gen = ++this.generation;
    const u = new URL(this.opts.url);
    const headers = this.opts.signer ? this.opts.signer.headers('GET', u.pathname, this.opts.clock()) : {};
    const handlers: WsHandlers = {
      onText: (t) => {
        if (gen === this.generation) this.onText(t);
      },
      onActivity: () => {
        if (gen === this.generation) this.stats.last_frame_at = this.opts.clock();
      },
      onClose: (code, reason) => {
        if (gen !== this.generation) return;
        this.stats.last_error = `closed ${code}${reason ? ` ${reason}` : ''}`;
        this.lost();
      },
    };
    try {
      this.conn = await (this.opts.open ?? openWebSocket)(this.opts.url, handlers, { headers, pingIntervalMs: 10_000 });
    } catch (e) {
      this.stats.connect_failures++;
      this.stats.last_error = e instanceof WsHandshakeError && e.status !== null ? `upgrade refused: HTTP ${e.status}` : (e as Error).message;
      this.scheduleReconnect();
      return;
    }
    if (this.stopped || gen !== this.generation) {
      this.conn.close();
      return;
    }
    this.attempt = 0;
    this.stats.connected = true;
    this.stats.last_frame_at = this.opts.clock();
    const acks = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.opts.ackTimeoutMs ?? 10_000);
      timer.unref();
      this.ackWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    for (const ch of this.opts.channels) this.subscribe(ch, ch === 'user_orders' ? [] : this.opts.tickers);
    if (this.pending.size === 0) this.releaseAckWaiters();
    await acks;
  }

  private send(cmd: KalshiWsCommand): void {
    if (this.conn?.isOpen) this.conn.send(JSON.stringify(cmd));
  }

  private subscribe(channel: KalshiChannel, tickers: string[]): void {
    if (channel !== 'user_orders' && tickers.length === 0) return;
    const id = this.nextId++;
    this.pending.set(id, { channel, tickers });
    this.send({ id, cmd: 'subscribe', params: { channels: [channel], ...(tickers.length ? { market_tickers: tickers } : {}) } });
  }

  private releaseAckWaiters(): void {
    const ws = this.ackWaiters;
    this.ackWaiters = [];
    for (const w of ws) w();
  }

  /** The connection is gone: every book is untrusted; reconnect unless stopped. */
  private lost(): void {
    if (!this.stats.connected && this.conn === null) return;
    this.drop();
    this.scheduleReconnect();
  }

  private drop(): void {
    this.generation++;
    this.stats.connected = false;
    const c = this.conn;
    this.conn = null;
    if (c?.isOpen) c.close();
    for (const t of [...this.books.keys()]) this.loseBook(t);
    this.subs.clear();
    this.pending.clear();
    this.retired.clear();
    this.releaseAckWaiters();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const wait = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)]!;
    this.attempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.stopped) return;
      this.stats.reconnects++;
      void this.open();
    }, wait);
    this.reconnectTimer.unref();
  }

  private loseBook(ticker: string): void {
    if (this.books.delete(ticker)) {
      this.stats.books_synced = this.books.size;
      this.opts.onBookLost(ticker);
    }
  }

  /**
   * Drops every book of a book subscription and replaces the subscription (new sid, seq from 1,
   * fresh snapshots). Public so a caller can force a resync.
   */
  resnapshot(sid: number, reason: string): void {
    const sub = this.subs.get(sid);
    if (!sub || sub.channel !== 'orderbook_delta') return;
    this.stats.resnapshots++;
    this.stats.last_error = `resnapshot sid ${sid}: ${reason}`;
    for (const t of sub.tickers) this.loseBook(t);
    this.subs.delete(sid);
    if (this.retired.size >= MAX_RETIRED) this.retired.clear();
    this.retired.add(sid);
    this.send({ id: this.nextId++, cmd: 'unsubscribe', params: { sids: [sid] } });
    this.subscribe('orderbook_delta', sub.tickers);
  }

  private onText(text: string): void {
    this.stats.frames++;
    let f: ReturnType<typeof parseWsFrame>;
    try {
      f = parseWsFrame(text);
    } catch {
      this.stats.parse_errors++;
      return;
    }
    try {
      this.onFrame(f);
    } catch (e) {
      // A frame we cannot read on a book subscription may have changed the book: resync it.
      this.stats.parse_errors++;
      if (typeof f.sid === 'number' && this.subs.get(f.sid)?.channel === 'orderbook_delta') this.resnapshot(f.sid, `unreadable ${f.type}: ${(e as Error).message}`);
    }
  }

  private onFrame(f: ReturnType<typeof parseWsFrame>): void {
    if (f.type === 'subscribed') {
      const m = (f as { msg?: { channel?: unknown; sid?: unknown } }).msg;
      const id = (f as { id?: unknown }).id;
      const p = typeof id === 'number' ? this.pending.get(id) : undefined;
      if (p && m && m.channel === p.channel && typeof m.sid === 'number') {
        this.pending.delete(id as number);
        this.subs.set(m.sid, { sid: m.sid, channel: p.channel, tickers: p.tickers, nextSeq: 1 });
        if (this.pending.size === 0) this.releaseAckWaiters();
      }
      return;
    }
    if (f.type === 'error' && typeof f.id === 'number' && this.pending.has(f.id)) {
      const m = (f as { msg?: { code?: unknown; msg?: unknown } }).msg;
      this.pending.delete(f.id);
      this.stats.subscribe_errors++;
      this.stats.last_error = `subscribe refused: ${String(m?.code)} ${String(m?.msg)}`;
      if (this.pending.size === 0) this.releaseAckWaiters();
      // An error on a sid still consumes that sid's seq (checked below).
      if (typeof f.sid !== 'number') return;
    }
    if (typeof f.sid !== 'number') return;
    if (this.retired.has(f.sid)) return;
    const sub = this.subs.get(f.sid);
    if (!sub) return;
    if (typeof f.seq === 'number') {
      if (f.seq !== sub.nextSeq) {
        if (sub.channel === 'orderbook_delta') {
          this.stats.seq_gaps++;
          this.resnapshot(sub.sid, `seq ${f.seq}, expected ${sub.nextSeq}`);
          return;
        }
        if (f.seq > sub.nextSeq) this.stats.trade_gaps++;
      }
      sub.nextSeq = f.seq + 1;
    }
    switch (f.type) {
      case 'orderbook_snapshot': {
        const msg = f.msg as WsSnapshotMsg;
        const book = parseSnapshot(msg);
        if (!sub.tickers.includes(msg.market_ticker)) return;
        const ts = this.opts.clock();
        this.books.set(msg.market_ticker, { book, ts });
        this.stats.books_synced = this.books.size;
        this.opts.onBook(msg.market_ticker, book, ts);
        return;
      }
      case 'orderbook_delta': {
        const msg = f.msg as WsDeltaMsg;
        const d = parseDelta(msg);
        const held = this.books.get(msg.market_ticker);
        if (!held) {
          if (!sub.tickers.includes(msg.market_ticker)) return;
          this.stats.book_errors++;
          this.resnapshot(sub.sid, `delta for ${msg.market_ticker} before its snapshot`);
          return;
        }
        if (applyDelta(held.book, d.side, d.price, d.delta) === 'negative') {
          this.stats.book_errors++;
          this.resnapshot(sub.sid, `delta drives ${msg.market_ticker} ${d.side} negative`);
          return;
        }
        held.ts = frameTime(msg) ?? this.opts.clock();
        this.opts.onBook(msg.market_ticker, held.book, held.ts);
        return;
      }
      case 'trade':
        this.opts.onTrade(f.msg as WsTradeMsg);
        return;
      case 'user_order':
        this.opts.onUserOrder(f.msg as KalshiOrder);
        return;
      default:
        return;
    }
  }
}
