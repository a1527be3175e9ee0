/**
 * The one RFC 6455 WebSocket client of the venue adapters (ws:// and wss://), on node:net/tls, and
 * the frame codec it shares with the tests' fake venues.
 *
 * Why our own: Node 20 has no stable global WebSocket, the project carries no `ws` package, and a
 * venue feed needs little: text messages, ping/pong, close, custom handshake headers (signed auth)
 * and a bound on message size. No extensions are offered (so no compression); frames from us are
 * masked as the RFC requires; a server frame that breaks the protocol (masked, a continuation
 * without a message, a fragmented control frame, an unknown opcode) closes the connection 1002,
 * and a message over `maxMessageBytes` closes it 1009 instead of growing a buffer without bound.
 * Binary messages carry nothing a market feed sends: they are skipped.
 *
 * The handshake is written and read by hand (not node:http's upgrade) so every answer a server can
 * give, a refused or forged upgrade included, ends as one WsHandshakeError with the status.
 *
 * Liveness is the caller's: `onActivity` fires on every inbound frame (pings and pongs included),
 * and with `pingIntervalMs` the client pings on its own, so a caller that sees no activity for a
 * while knows the connection is dead even when TCP does not say so.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';

export const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024;
/** Largest handshake response read before giving up on a server. */
const MAX_HANDSHAKE_BYTES = 64 * 1024;
/** How long a close we started waits for the server's answer before the socket is dropped. */
const CLOSE_WAIT_MS = 2_000;

/** The Sec-WebSocket-Accept value for a handshake key (RFC 6455 §4.2.2). */
export function acceptKey(key: string): string {
  return createHash('sha1').update(key + WS_GUID).digest('base64');
}

/** One whole frame; clients mask (`mask` true), servers do not. */
export function encodeFrame(opcode: number, payload: Buffer, mask: boolean): Buffer {
  const len = payload.length;
  const extra = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const head = Buffer.alloc(2 + extra + (mask ? 4 : 0));
  head[0] = 0x80 | opcode;
  head[1] = (mask ? 0x80 : 0) | (len < 126 ? len : len < 65536 ? 126 : 127);
  if (extra === 2) head.writeUInt16BE(len, 2);
  else if (extra === 8) head.writeBigUInt64BE(BigInt(len), 2);
  if (!mask) return Buffer.concat([head, payload]);
  const key = randomBytes(4);
  key.copy(head, 2 + extra);
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ key[i & 3]!;
  return Buffer.concat([head, body]);
}

export interface Frame {
  fin: boolean;
  opcode: number;
  /** Whether the sender masked it (a client must, a server must not). */
  masked: boolean;
  /** Unmasked, and a copy (not a view on a read buffer). */
  payload: Buffer;
}

/**
 * Incremental frame decoder, for either direction. Chunks are kept as a list until a whole frame is
 * there, so a large message arriving in many reads is copied once, not once per read. A frame
 * longer than `maxFrameBytes` stops the decoding: `oversized` turns true and nothing after it is
 * decoded (the caller closes 1009).
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private held = 0;
  /** Bytes the next frame needs before it can be decoded (2 until its header is read). */
  private need = 2;
  oversized = false;

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_MESSAGE) {}

  push(chunk: Buffer): Frame[] {
    if (this.oversized) return [];
    this.chunks.push(chunk);
    this.held += chunk.length;
    if (this.held < this.need) return [];
    const b = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.held);
    const out: Frame[] = [];
    let off = 0;
    this.need = 2;
    for (;;) {
      if (b.length - off < 2) break;
      const fin = (b[off]! & 0x80) !== 0;
      const opcode = b[off]! & 0x0f;
      const masked = (b[off + 1]! & 0x80) !== 0;
      let len = b[off + 1]! & 0x7f;
      let hdr = 2;
      if (len === 126) {
        hdr = 4;
        if (b.length - off < hdr) {
          this.need = hdr;
          break;
        }
        len = b.readUInt16BE(off + 2);
      } else if (len === 127) {
        hdr = 10;
        if (b.length - off < hdr) {
          this.need = hdr;
          break;
        }
        const big = b.readBigUInt64BE(off + 2);
        if (big > BigInt(this.maxFrameBytes)) {
          this.oversized = true;
          break;
        }
        len = Number(big);
      }
      if (len > this.maxFrameBytes) {
        this.oversized = true;
        break;
      }
      const maskLen = masked ? 4 : 0;
      if (b.length - off < hdr + maskLen + len) {
        this.need = hdr + maskLen + len;
        break;
      }
      const payload = Buffer.from(b.subarray(off + hdr + maskLen, off + hdr + maskLen + len));
      if (masked) {
        const key = b.subarray(off + hdr, off + hdr + 4);
        for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ key[i & 3]!;
      }
      off += hdr + maskLen + len;
      out.push({ fin, opcode, masked, payload });
    }
    const rest = this.oversized || off >= b.length ? null : b.subarray(off);
    this.chunks = rest ? [rest] : [];
    this.held = rest ? rest.length : 0;
    return out;
  }
}

export interface WsHandlers {
  /** One whole text message. */
  onText(text: string): void;
  /** Any inbound frame, control frames included (liveness). */
  onActivity?(): void;
  /** Once, when the connection is gone for any reason (1006: ended without a close frame). */
  onClose?(code: number, reason: string): void;
}

export interface WsOptions {
  headers?: Record<string, string>;
  /** Handshake deadline (default 10 s). */
  timeoutMs?: number;
  /** The client pings this often (default 0: never; a venue with an application-level ping sends its own). */
  pingIntervalMs?: number;
  /** Largest message accepted; a bigger one closes the connection 1009 (default 16 MiB). */
  maxMessageBytes?: number;
}

/** The upgrade failed: refused (`status` is the HTTP status), forged, cut short or timed out (`status` null). */
export class WsHandshakeError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    /** The start of a refusal's body, as far as it came with the status line (may be empty). */
    readonly body = '',
  ) {
    super(message);
    this.name = 'WsHandshakeError';
  }
}

export class WsConnection {
  private readonly reader: FrameReader;
  private readonly maxMessage: number;
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private fragmentOpcode = 0;
  private closed = false;
  private sentClose = false;
  private pinger: NodeJS.Timeout | null = null;

  constructor(
    private readonly socket: net.Socket,
    private readonly handlers: WsHandlers,
    opts: WsOptions = {},
  ) {
    this.maxMessage = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE;
    this.reader = new FrameReader(this.maxMessage);
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('close', () => this.finish(1006, ''));
    socket.on('error', () => this.finish(1006, 'socket error'));
    const every = opts.pingIntervalMs ?? 0;
    if (every > 0) {
      this.pinger = setInterval(() => this.write(OPCODE.ping, Buffer.alloc(0)), every);
      this.pinger.unref();
    }
  }

  /** Open for sending: neither closed nor closing. */
  get isOpen(): boolean {
    return !this.closed && !this.sentClose;
  }

  send(text: string): void {
    if (this.isOpen) this.write(OPCODE.text, Buffer.from(text, 'utf8'));
  }

  /**
   * Starts the closing handshake: onClose reports once the server answers (or the socket ends), and
   * a server that never answers is dropped after CLOSE_WAIT_MS.
   */
  close(code = 1000, reason = ''): void {
    if (this.closed || this.sentClose) return;
    this.sendClose(code, reason);
    setTimeout(() => this.terminate(), CLOSE_WAIT_MS).unref();
  }

  /** Drops the connection without a handshake (a silent peer). */
  terminate(): void {
    this.socket.destroy();
    this.finish(1006, '');
  }

  /** Frames that arrived with the handshake's answer, in the same read. */
  feed(d: Buffer): void {
    if (d.length > 0) this.onData(d);
  }

  private write(opcode: number, payload: Buffer): void {
    if (this.closed || this.socket.destroyed) return;
    this.socket.write(encodeFrame(opcode, payload, true));
  }

  private sendClose(code: number, reason: string): void {
    this.sentClose = true;
    // A control frame carries at most 125 bytes: the code and 123 of reason.
    const r = Buffer.from(reason, 'utf8').subarray(0, 123);
    const payload = Buffer.alloc(2 + r.length);
    payload.writeUInt16BE(code, 0);
    r.copy(payload, 2);
    this.write(OPCODE.close, payload);
  }

  /** The server broke the protocol: say why (close frame), end the socket, report that code. */
  private fail(code: number, reason: string): void {
    if (!this.sentClose) this.sendClose(code, reason);
    this.finish(code, reason);
  }

  private onData(d: Buffer): void {
    if (this.closed) return;
    const frames = this.reader.push(d);
    for (const f of frames) {
      if (this.closed) return;
      this.handlers.onActivity?.();
      this.onFrame(f);
    }
    if (this.reader.oversized && !this.closed) this.fail(1009, 'message too big');
  }

  private onFrame(f: Frame): void {
    if (f.masked) return this.fail(1002, 'masked server frame');
    if (f.opcode >= 0x8) {
      if (!f.fin || f.payload.length > 125) return this.fail(1002, 'bad control frame');
      return this.control(f.opcode, f.payload);
    }
    if (f.opcode === OPCODE.continuation) {
      if (this.fragments.length === 0) return this.fail(1002, 'continuation without a message');
    } else if (f.opcode === OPCODE.text || f.opcode === OPCODE.binary) {
      if (this.fragments.length > 0) return this.fail(1002, 'new message inside a fragmented one');
      this.fragmentOpcode = f.opcode;
    } else {
      return this.fail(1002, 'unknown opcode');
    }
    this.fragmentBytes += f.payload.length;
    if (this.fragmentBytes > this.maxMessage) return this.fail(1009, 'message too big');
    this.fragments.push(f.payload);
    if (!f.fin) return;
    const whole = this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments, this.fragmentBytes);
    const op = this.fragmentOpcode;
    this.fragments = [];
    this.fragmentBytes = 0;
    if (op === OPCODE.text) this.handlers.onText(whole.toString('utf8'));
  }

  private control(opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OPCODE.close: {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.length > 2 ? payload.subarray(2).toString('utf8') : '';
        // Answer with the same code (1000 when the server gave none), unless we started the close.
        if (!this.sentClose) this.sendClose(code === 1005 ? 1000 : code, '');
        this.finish(code, reason);
        return;
      }
      case OPCODE.ping:
        if (!this.sentClose) this.write(OPCODE.pong, payload);
        return;
      case OPCODE.pong:
        return;
      default:
        this.fail(1002, 'unknown control opcode');
    }
  }

  private finish(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.fragments = [];
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
    // Let a close frame just written go out, but never keep a half-closed socket for long.
    if (!this.socket.destroyed) {
      this.socket.end();
      setTimeout(() => this.socket.destroy(), CLOSE_WAIT_MS).unref();
    }
    this.handlers.onClose?.(code, reason);
  }
}

/** Opens a WebSocket to `url` (ws: or wss:); resolves once the server accepted the upgrade. */
export function openWebSocket(url: string, handlers: WsHandlers, opts: WsOptions = {}): Promise<WsConnection> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.reject(new WsHandshakeError(`not a WebSocket URL: ${url}`, null));
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') return Promise.reject(new WsHandshakeError(`not a WebSocket URL: ${url}`, null));
  const secure = u.protocol === 'wss:';
  const port = Number(u.port || (secure ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const key = randomBytes(16).toString('base64');
  const expected = acceptKey(key);
  const headers: Record<string, string> = {
    Host: u.host,
    ...opts.headers,
    // After the caller's: these make it a WebSocket upgrade and cannot be overridden.
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': key,
    'Sec-WebSocket-Version': '13',
  };
  const request = `GET ${u.pathname || '/'}${u.search} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

  return new Promise((resolve, reject) => {
    const socket = secure ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host }) : net.connect({ host, port });
    let got = Buffer.alloc(0);
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new WsHandshakeError(`WebSocket handshake with ${u.host} timed out`, null)), opts.timeoutMs ?? 10_000);
    timer.unref();
    socket.once(secure ? 'secureConnect' : 'connect', () => socket.write(request));
    socket.on('error', (e) => fail(e));
    socket.on('close', () => fail(new WsHandshakeError(`${u.host} closed the connection during the WebSocket handshake`, null)));
    const onData = (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) {
        if (got.length > MAX_HANDSHAKE_BYTES) fail(new WsHandshakeError('WebSocket handshake response too large', null));
        return;
      }
      const lines = got.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
      const hdr = new Map<string, string>();
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) hdr.set(l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim());
      }
      if (status !== 101) {
        const known = Number.isFinite(status) ? status : null;
        const body = got.subarray(end + 4, end + 4 + 4096).toString('utf8');
        return fail(new WsHandshakeError(`WebSocket upgrade refused with HTTP ${known ?? '?'}${body ? `: ${body.slice(0, 200)}` : ''}`, known, body));
      }
      if (hdr.get('sec-websocket-accept') !== expected) return fail(new WsHandshakeError('WebSocket upgrade answered with a wrong Sec-WebSocket-Accept', status));
      done = true;
      clearTimeout(timer);
      socket.removeListener('data', onData);
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      const conn = new WsConnection(socket, handlers, opts);
      resolve(conn);
      conn.feed(got.subarray(end + 4));
    };
    socket.on('data', onData);
  });
}
