/**
 * One connection to Polymarket's market channel for a set of tokens: connect, subscribe, send
 * `PING` every 10 s, parse what arrives, reconnect with backoff when the connection drops or goes
 * silent. The feed has no sequence numbers, so a dropped connection means the books may have
 * missed changes: `onDown` tells the owner to stop trusting them until the snapshots the venue
 * sends after the new subscription arrive.
 */
import { openWebSocket, type WsConnection } from '../ws-client.js';
import { parseMarketMessage, type PmMarketFrame } from './parse.js';
import { RECONNECT_MAX_MS, RECONNECT_MIN_MS, WS_PING_MS, WS_SILENCE_MS } from './venue.js';

export interface MarketStreamOptions {
  /** Full URL of the market channel (…/ws/market). */
  url: string;
  assetIds: readonly string[];
  /** The clock silence is judged by (the adapter's). */
  now: () => number;
  onFrames: (frames: PmMarketFrame[]) => void;
  /** The connection is gone (closed, refused or silent); its books may have missed changes. */
  onDown: () => void;
  onParseError?: (err: unknown) => void;
}

export class MarketStream {
  private conn: WsConnection | null = null;
  private stopped = true;
  private backoff = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private subscribed = false;
  private readyWaiters: (() => void)[] = [];
  /** When the last message (any, the PONG included) arrived, by opts.now. */
  lastMessageAt: number | null = null;
  /** Connections opened (the first included), connection losses, messages that did not parse. */
  connects = 0;
  drops = 0;
  parseErrors = 0;

  constructor(private readonly opts: MarketStreamOptions) {}

  get assetIds(): readonly string[] {
    return this.opts.assetIds;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.backoff = RECONNECT_MIN_MS;
    void this.open();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.stopPing();
    const c = this.conn;
    this.conn = null;
    this.subscribed = false;
    c?.close(1000, 'closing');
    this.releaseWaiters();
  }

  /** Subscribed, and something arrived within the silence bound. */
  live(): boolean {
    if (!this.subscribed || this.conn === null || !this.conn.isOpen) return false;
    const at = this.lastMessageAt;
    return at !== null && this.opts.now() - at <= WS_SILENCE_MS;
  }

  /** Resolves once subscribed (or stopped), or after `timeoutMs` whatever happened. */
  ready(timeoutMs: number): Promise<void> {
    if (this.subscribed || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(done, timeoutMs);
      t.unref();
      const self = this;
      function done() {
        clearTimeout(t);
        self.readyWaiters = self.readyWaiters.filter((w) => w !== done);
        resolve();
      }
      this.readyWaiters.push(done);
    });
  }

  private releaseWaiters(): void {
    const ws = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of ws) w();
  }

  private async open(): Promise<void> {
    let conn: WsConnection;
    try {
      conn = await openWebSocket(this.opts.url, {
        onText: (text) => this.onText(text),
        onClose: () => this.onClose(conn),
      });
    } catch {
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) {
      conn.close(1000, 'closing');
      return;
    }
    if (!conn.isOpen) {
      // Closed in the same read that opened it.
      this.scheduleReconnect();
      return;
    }
    this.conn = conn;
    this.connects++;
    this.backoff = RECONNECT_MIN_MS;
    this.lastMessageAt = this.opts.now();
    conn.send(JSON.stringify({ assets_ids: this.opts.assetIds, type: 'market' }));
    this.subscribed = true;
    this.startPing();
    this.releaseWaiters();
  }

  private onText(text: string): void {
    this.lastMessageAt = this.opts.now();
    let frames: PmMarketFrame[];
    try {
      frames = parseMarketMessage(text);
    } catch (e) {
      this.parseErrors++;
      this.opts.onParseError?.(e);
      return;
    }
    this.opts.onFrames(frames);
  }

  private onClose(conn: WsConnection): void {
    if (this.conn !== conn) return;
    this.conn = null;
    this.subscribed = false;
    this.stopPing();
    this.drops++;
    this.opts.onDown();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    const wait = this.backoff;
    this.backoff = Math.min(RECONNECT_MAX_MS, this.backoff * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) void this.open();
    }, wait);
    this.retryTimer.unref();
  }

  private startPing(): void {
    this.stopPing();
    this.pingTimer = setInterval(() => this.tick(), WS_PING_MS);
    this.pingTimer.unref();
  }

  private stopPing(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  /** Every ping interval: replace a silent connection, else ping it. */
  tick(): void {
    const c = this.conn;
    if (!c || !this.subscribed) return;
    if (this.lastMessageAt !== null && this.opts.now() - this.lastMessageAt > WS_SILENCE_MS) {
      // Silent: drop it (onClose reports it down and reconnects).
      c.terminate();
      return;
    }
    c.send('PING');
  }
}
