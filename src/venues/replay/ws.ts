/**
 * The server end of a WebSocket on a node:http upgrade, with the frame codec the venue clients use
 * (src/venues/ws-client.ts): text messages out, text messages in, pings answered, close handshake.
 * Just enough for the replay server; it never fragments what it sends.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { FrameReader, OPCODE, acceptKey, encodeFrame } from '../ws-client.js';

/** Largest message a replay client may send (subscriptions are small). */
const MAX_INBOUND_BYTES = 1024 * 1024;

export class ServerSocket {
  private closed = false;
  private readonly reader = new FrameReader(MAX_INBOUND_BYTES);
  private fragments: Buffer[] = [];
  onText: (text: string) => void = () => undefined;
  onClose: () => void = () => undefined;

  private constructor(
    private readonly socket: Socket,
    readonly headers: IncomingMessage['headers'],
    readonly path: string,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('close', () => this.finish());
    socket.on('error', () => this.finish());
  }

  /** Completes the handshake, or answers `status` and returns null when the request is not a WebSocket upgrade. */
  static accept(req: IncomingMessage, socket: Socket, head: Buffer): ServerSocket | null {
    const key = req.headers['sec-websocket-key'];
    if (typeof key !== 'string' || String(req.headers.upgrade).toLowerCase() !== 'websocket') {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return null;
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`);
    const s = new ServerSocket(socket, req.headers, new URL(req.url ?? '/', 'http://replay').pathname);
    if (head.length) queueMicrotask(() => s.onData(head));
    return s;
  }

  /** Refuses an upgrade with an HTTP status. */
  static refuse(socket: Socket, status: number, reason: string): void {
    const body = JSON.stringify({ error: reason });
    socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  sendText(text: string): void {
    if (this.closed) return;
    this.socket.write(encodeFrame(OPCODE.text, Buffer.from(text, 'utf8'), false));
  }

  ping(): void {
    if (!this.closed) this.socket.write(encodeFrame(OPCODE.ping, Buffer.alloc(0), false));
  }

  close(code = 1000): void {
    if (this.closed) return;
    const p = Buffer.alloc(2);
    p.writeUInt16BE(code, 0);
    this.socket.end(encodeFrame(OPCODE.close, p, false));
    this.finish();
  }

  /** Drops the connection without a close frame. */
  destroy(): void {
    this.socket.destroy();
    this.finish();
  }

  private onData(d: Buffer): void {
    let frames;
    try {
      frames = this.reader.push(d);
    } catch {
      this.close(1009);
      return;
    }
    for (const f of frames) {
      if (f.opcode === OPCODE.ping) this.socket.write(encodeFrame(OPCODE.pong, f.payload, false));
      else if (f.opcode === OPCODE.close) {
        this.socket.end(encodeFrame(OPCODE.close, f.payload.subarray(0, 2), false));
        this.finish();
        return;
      } else if (f.opcode === OPCODE.text || f.opcode === OPCODE.continuation) {
        this.fragments.push(f.payload);
        if (f.fin) {
          const text = Buffer.concat(this.fragments).toString('utf8');
          this.fragments = [];
          this.onText(text);
        }
      }
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}
