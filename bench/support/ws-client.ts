/**
 * A minimal RFC 6455 WebSocket client over node:net, for the benches and the gateway tests: a
 * client of the stream gateway, as a user's would be. It lives with the benches because a bench
 * never imports test code (the tests import it from here).
 *
 * Why not a library: the repo has no `ws` package and Node 20 has no stable global WebSocket. A raw
 * client is also what these tests need: it exposes the HTTP status of a refused upgrade (401/429),
 * can stop answering pings (server liveness test) and can stop reading (backpressure test).
 * Text frames only; the server never masks, the client always does (as the RFC requires).
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';

export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused with HTTP ${status}: ${body}`);
  }
}

export interface ConnectOptions {
  headers?: Record<string, string>;
  /** Answer server pings (default true). */
  autoPong?: boolean;
  /** Called with every text message; when set, messages are not parsed or queued (bench mode). */
  onText?: (text: string) => void;
  /** Like onText but with the payload bytes, valid only during the call (cheapest bench mode). */
  onPayload?: (payload: Buffer) => void;
  timeoutMs?: number;
}

export interface CloseInfo {
  /** 1006 when the connection ended without a close frame (terminated). */
  code: number;
  reason: string;
}

type Waiter = { pred: (m: any) => boolean; resolve: (m: any) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

export class WsClient {
  /** Messages received and not yet taken by next(). */
  readonly inbox: any[] = [];
  /** Every message received, in order (for assertions about what never arrived). */
  readonly all: any[] = [];
  /** The raw text of every message, in order (to check payloads are forwarded verbatim). */
  readonly texts: string[] = [];
  pingsReceived = 0;
  /** When each ping arrived (Date.now()). */
  readonly pingTimes: number[] = [];
  readonly closed: Promise<CloseInfo>;
  private resolveClosed!: (c: CloseInfo) => void;
  private waiters: Waiter[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private closeInfo: CloseInfo | null = null;
  private sentClose = false;

  constructor(
    readonly socket: net.Socket,
    private readonly opts: ConnectOptions,
    leftover: Buffer,
  ) {
    this.closed = new Promise((r) => (this.resolveClosed = r));
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('close', () => this.finish({ code: 1006, reason: '' }));
    socket.on('error', () => undefined);
    if (leftover.length) this.onData(leftover);
  }

  get isClosed(): boolean {
    return this.closeInfo !== null;
  }

  send(msg: unknown): void {
    this.sendFrame(0x1, Buffer.from(typeof msg === 'string' ? msg : JSON.stringify(msg)));
  }

  /** Resolves with the next queued message matching pred (default: any); rejects after timeoutMs. */
  next<T = any>(pred: (m: any) => boolean = () => true, timeoutMs = 3000): Promise<T> {
    const i = this.inbox.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.inbox.splice(i, 1)[0] as T);
    if (this.closeInfo) return Promise.reject(new Error(`socket closed (${this.closeInfo.code}) before a matching message`));
    return new Promise<T>((resolve, reject) => {
      const w: Waiter = {
        pred,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(new Error(`no matching message within ${timeoutMs} ms; inbox: ${JSON.stringify(this.inbox).slice(0, 500)}`));
        }, timeoutMs),
      };
      this.waiters.push(w);
    });
  }

  /** Sends a message and waits for the first reply of one of the given types. */
  async request<T = any>(msg: unknown, types: string[] = ['subscribed', 'unsubscribed', 'error', 'pong'], timeoutMs = 3000): Promise<T> {
    this.send(msg);
    return this.next<T>((m) => types.includes(m?.type), timeoutMs);
  }

  /** Waits ms and returns (and removes) every queued message matching pred. */
  async drain(pred: (m: any) => boolean = () => true, ms = 150): Promise<any[]> {
    await new Promise((r) => setTimeout(r, ms));
    const out = this.inbox.filter(pred);
    for (const m of out) this.inbox.splice(this.inbox.indexOf(m), 1);
    return out;
  }

  /** Graceful close: sends a close frame, waits for the server's (or the socket end). */
  async close(code = 1000): Promise<CloseInfo> {
    if (!this.closeInfo && !this.sentClose && !this.socket.destroyed) {
      const b = Buffer.alloc(2);
      b.writeUInt16BE(code);
      this.sendFrame(0x8, b);
      this.sentClose = true;
    }
    const t = setTimeout(() => this.socket.destroy(), 1000);
    const info = await this.closed;
    clearTimeout(t);
    return info;
  }

  /** Drops the TCP connection without a close frame. */
  destroy(): void {
    this.socket.destroy();
  }

  private sendFrame(opcode: number, payload: Buffer): void {
    if (this.socket.destroyed) return;
    const mask = randomBytes(4);
    const len = payload.length;
    const head = len < 126 ? Buffer.alloc(6) : len < 65536 ? Buffer.alloc(8) : Buffer.alloc(14);
    head[0] = 0x80 | opcode;
    if (len < 126) head[1] = 0x80 | len;
    else if (len < 65536) {
      head[1] = 0x80 | 126;
      head.writeUInt16BE(len, 2);
    } else {
      head[1] = 0x80 | 127;
      head.writeBigUInt64BE(BigInt(len), 2);
    }
    mask.copy(head, head.length - 4);
    const body = Buffer.allocUnsafe(len);
    for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i & 3]!;
    this.socket.write(Buffer.concat([head, body]));
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    let off = 0;
    for (;;) {
      const b = this.buf;
      if (b.length - off < 2) break;
      const fin = (b[off]! & 0x80) !== 0;
      const opcode = b[off]! & 0x0f;
      let len = b[off + 1]! & 0x7f;
      let hdr = 2;
      if (len === 126) {
        if (b.length - off < 4) break;
        len = b.readUInt16BE(off + 2);
        hdr = 4;
      } else if (len === 127) {
        if (b.length - off < 10) break;
        len = Number(b.readBigUInt64BE(off + 2));
        hdr = 10;
      }
      if (b.length - off < hdr + len) break;
      const payload = b.subarray(off + hdr, off + hdr + len);
      off += hdr + len;
      this.onFrame(fin, opcode, payload);
    }
    this.buf = off >= this.buf.length ? Buffer.alloc(0) : this.buf.subarray(off);
  }

  private onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode === 0x9) {
      this.pingsReceived++;
      this.pingTimes.push(Date.now());
      if (this.opts.autoPong !== false) this.sendFrame(0xa, Buffer.from(payload));
      return;
    }
    if (opcode === 0xa) return;
    if (opcode === 0x8) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      const reason = payload.length > 2 ? payload.subarray(2).toString('utf8') : '';
      if (!this.sentClose) {
        const b = Buffer.alloc(2);
        b.writeUInt16BE(code === 1005 ? 1000 : code);
        this.sendFrame(0x8, b);
        this.sentClose = true;
      }
      this.finish({ code, reason });
      this.socket.end();
      return;
    }
    if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
      if (!fin) {
        this.fragments.push(Buffer.from(payload));
        return;
      }
      let data = payload;
      if (this.fragments.length) {
        data = Buffer.concat([...this.fragments, payload]);
        this.fragments = [];
      }
      if (this.opts.onPayload) return this.opts.onPayload(data);
      const text = data.toString('utf8');
      if (this.opts.onText) return this.opts.onText(text);
      this.texts.push(text);
      let m: unknown;
      try {
        m = JSON.parse(text);
      } catch {
        m = { type: '__non_json__', text };
      }
      this.all.push(m);
      const w = this.waiters.find((x) => x.pred(m));
      if (w) {
        clearTimeout(w.timer);
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(m);
      } else this.inbox.push(m);
    }
  }

  private finish(c: CloseInfo): void {
    if (this.closeInfo) return;
    this.closeInfo = c;
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`socket closed (${c.code} ${c.reason}) before a matching message`));
    }
    this.waiters = [];
    this.resolveClosed(c);
  }
}

/** Opens a WebSocket; rejects with UpgradeRefused (carrying the HTTP status) when the server refuses. */
export function connectWs(url: string, opts: ConnectOptions = {}): Promise<WsClient> {
  const u = new URL(url);
  const key = randomBytes(16).toString('base64');
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port) });
    socket.setNoDelay(true);
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`upgrade to ${u.pathname} timed out`));
    }, opts.timeoutMs ?? 5000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(e);
    };
    socket.once('error', fail);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      if (status !== 101) {
        // Read the (short) body until the server closes or sends Content-Length bytes.
        const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const want = Number(headers['content-length'] ?? NaN);
        const body = head.subarray(end + 4);
        if (Number.isFinite(want) && body.length < want) return;
        socket.off('data', onData);
        return fail(new UpgradeRefused(status, body.toString('utf8')));
      }
      socket.off('data', onData);
      socket.off('error', fail);
      clearTimeout(timer);
      resolve(new WsClient(socket, opts, head.subarray(end + 4)));
    };
    socket.on('data', onData);
    socket.once('connect', () => {
      const extra = Object.entries(opts.headers ?? {})
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
      );
    });
  });
}
