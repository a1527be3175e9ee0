/**
 * The one venue WebSocket client (src/venues/ws-client.ts) against a raw TCP server that writes
 * frames byte by byte as the RFC lays them out: fragmented messages with a ping in the middle, 16-
 * and 64-bit lengths, the closing handshake, the size cap, refused and forged upgrades, masked
 * server frames, broken fragmentation; the handshake headers a venue signs; the client's own pings
 * and the activity callback; and the frame codec the fake venues speak.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FrameReader, OPCODE, encodeFrame, openWebSocket, WsHandshakeError, type WsConnection, type WsOptions } from '../../../src/venues/ws-client.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** A frame from the server (unmasked). */
function frame(opcode: number, payload: Buffer | string, fin = true): Buffer {
  const p = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const head = p.length < 126 ? Buffer.from([0, p.length]) : p.length < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = (fin ? 0x80 : 0) | opcode;
  if (p.length >= 126 && p.length < 65_536) {
    head[1] = 126;
    head.writeUInt16BE(p.length, 2);
  } else if (p.length >= 65_536) {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(p.length), 2);
  }
  return Buffer.concat([head, p]);
}

/** Client frames (masked) from a buffer: opcode and unmasked payload. */
function clientFrames(buf: Buffer): { opcode: number; payload: Buffer }[] {
  const out: { opcode: number; payload: Buffer }[] = [];
  let o = 0;
  while (o + 2 <= buf.length) {
    const opcode = buf[o]! & 0x0f;
    expect(buf[o + 1]! & 0x80).toBe(0x80); // the client always masks
    let len = buf[o + 1]! & 0x7f;
    let off = o + 2;
    if (len === 126) {
      len = buf.readUInt16BE(off);
      off += 2;
    }
    const mask = buf.subarray(off, off + 4);
    off += 4;
    const payload = Buffer.from(buf.subarray(off, off + len).map((b, i) => b ^ mask[i & 3]!));
    out.push({ opcode, payload });
    o = off + len;
  }
  return out;
}

interface Raw {
  port: number;
  /** The client's handshake request. */
  request: () => string;
  /** What the client sent after the handshake. */
  received: () => Buffer;
  socket: () => Promise<net.Socket>;
  close: () => Promise<void>;
}

let servers: Raw[] = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
});

async function rawServer(answer: (key: string) => string): Promise<Raw> {
  let got = Buffer.alloc(0);
  let request = '';
  let resolveSock: (s: net.Socket) => void;
  const sock = new Promise<net.Socket>((r) => (resolveSock = r));
  const conns = new Set<net.Socket>();
  const server = net.createServer((s) => {
    conns.add(s);
    let head = '';
    let upgraded = false;
    s.on('data', (d) => {
      if (upgraded) {
        got = Buffer.concat([got, d]);
        return;
      }
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const key = /Sec-WebSocket-Key: (.+)\r\n/i.exec(head)![1]!.trim();
      upgraded = true;
      request = head;
      s.write(answer(key));
      resolveSock(s);
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const raw: Raw = {
    port: (server.address() as net.AddressInfo).port,
    request: () => request,
    received: () => got,
    socket: () => sock,
    close: () =>
      new Promise<void>((r) => {
        for (const c of conns) c.destroy();
        server.close(() => r());
      }),
  };
  servers.push(raw);
  return raw;
}

const accept = (key: string) =>
  `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${createHash('sha1').update(key + GUID).digest('base64')}\r\n\r\n`;

async function open(raw: Raw, opts: WsOptions = {}) {
  const texts: string[] = [];
  const activity = { n: 0 };
  let closed: (v: { code: number; reason: string }) => void;
  const closedP = new Promise<{ code: number; reason: string }>((r) => (closed = r));
  const conn: WsConnection = await openWebSocket(
    `ws://127.0.0.1:${raw.port}/ws/market?x=1`,
    {
      onText: (t) => texts.push(t),
      onActivity: () => activity.n++,
      onClose: (code, reason) => closed({ code, reason }),
    },
    opts,
  );
  return { conn, texts, activity, closed: closedP, server: await raw.socket() };
}

const until = async (pred: () => boolean) => {
  for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(pred()).toBe(true);
};

describe('ws-client', () => {
  it('joins fragments, answers a ping between them, and reads 16- and 64-bit lengths', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw);
    const big = 'x'.repeat(70_000);
    const mid = 'y'.repeat(300);
    c.server.write(Buffer.concat([frame(0x1, 'hel', false), frame(0x9, 'p1'), frame(0x0, 'lo'), frame(0x1, mid), frame(0x1, big)]));
    await until(() => c.texts.length === 3);
    expect(c.texts[0]).toBe('hello');
    expect(c.texts[1]).toBe(mid);
    expect(c.texts[2]!.length).toBe(70_000);
    c.conn.send('PING');
    await until(() => clientFrames(raw.received()).length === 2);
    const sent = clientFrames(raw.received());
    expect(sent.map((f) => [f.opcode, f.payload.toString()])).toEqual([
      [0xa, 'p1'], // pong with the ping's payload
      [0x1, 'PING'],
    ]);
  });

  it('a message split across reads arrives whole', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw);
    const f = frame(0x1, '{"event_type":"book"}');
    for (const b of f) c.server.write(Buffer.from([b]));
    await until(() => c.texts.length === 1);
    expect(c.texts).toEqual(['{"event_type":"book"}']);
  });

  it('a close from the server is answered and reported with its code', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw);
    const payload = Buffer.alloc(2 + 10);
    payload.writeUInt16BE(1001, 0);
    payload.write('going away', 2);
    c.server.write(frame(0x8, payload));
    expect(await c.closed).toEqual({ code: 1001, reason: 'going away' });
    expect(c.conn.isOpen).toBe(false);
    await until(() => clientFrames(raw.received()).some((f) => f.opcode === 0x8));
  });

  it('a message over the cap closes the connection 1009 instead of growing the buffer', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw, { maxMessageBytes: 10 });
    c.server.write(frame(0x1, 'more than ten bytes'));
    expect((await c.closed).code).toBe(1009);
    expect(c.texts).toEqual([]);
  });

  it('a masked server frame is a protocol error (1002)', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw);
    const f = frame(0x1, 'hi');
    f[1] = f[1]! | 0x80;
    c.server.write(Buffer.concat([f, Buffer.from([1, 2, 3, 4])]));
    expect((await c.closed).code).toBe(1002);
  });

  it('a refused upgrade and a forged accept are handshake errors', async () => {
    const refused = await rawServer(() => 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    const e1 = await openWebSocket(`ws://127.0.0.1:${refused.port}/ws/market`, { onText: () => {} }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(WsHandshakeError);
    expect((e1 as WsHandshakeError).status).toBe(404);
    const forged = await rawServer(() => 'HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: nope\r\n\r\n');
    const e2 = await openWebSocket(`ws://127.0.0.1:${forged.port}/`, { onText: () => {} }).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(WsHandshakeError);
    expect(String((e2 as Error).message)).toContain('Sec-WebSocket-Accept');
    await expect(openWebSocket('http://127.0.0.1:1/', { onText: () => {} })).rejects.toBeInstanceOf(WsHandshakeError);
  });

  it('close() sends a close frame with the code, and the connection reports closed once the server answers', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw);
    c.conn.close(1000, 'bye');
    await until(() => clientFrames(raw.received()).length === 1);
    const [f] = clientFrames(raw.received());
    expect(f!.opcode).toBe(0x8);
    expect(f!.payload.readUInt16BE(0)).toBe(1000);
    expect(f!.payload.subarray(2).toString()).toBe('bye');
    c.server.write(frame(0x8, f!.payload.subarray(0, 2)));
    expect((await c.closed).code).toBe(1000);
  });

  it('a 64-bit length over the cap closes 1009 before the body arrives', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw, { maxMessageBytes: 1000 });
    const head = Buffer.alloc(10);
    head[0] = 0x81;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(1) << BigInt(40), 2);
    c.server.write(head);
    expect((await c.closed).code).toBe(1009);
  });

  it('broken fragmentation is a protocol error (1002): a continuation without a message, a new message inside one', async () => {
    const raw1 = await rawServer(accept);
    const c1 = await open(raw1);
    c1.server.write(frame(0x0, 'orphan'));
    expect((await c1.closed).code).toBe(1002);
    const raw2 = await rawServer(accept);
    const c2 = await open(raw2);
    c2.server.write(Buffer.concat([frame(0x1, 'a', false), frame(0x1, 'b')]));
    expect((await c2.closed).code).toBe(1002);
    expect(c2.texts).toEqual([]);
  });

  it('binary messages are skipped; every frame counts as activity', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw);
    c.server.write(Buffer.concat([frame(0x2, Buffer.from([1, 2, 3])), frame(0xa, ''), frame(0x1, 'after')]));
    await until(() => c.texts.length === 1);
    expect(c.texts).toEqual(['after']);
    expect(c.activity.n).toBe(3);
  });

  it("sends the caller's handshake headers (a venue's signature) but keeps the upgrade's own", async () => {
    const raw = await rawServer(accept);
    await openWebSocket(`ws://127.0.0.1:${raw.port}/trade-api/ws/v2`, { onText: () => {} }, { headers: { 'KALSHI-ACCESS-KEY': 'key-1', Upgrade: 'nope' } });
    const req = raw.request();
    expect(req.startsWith('GET /trade-api/ws/v2 HTTP/1.1\r\n')).toBe(true);
    expect(req).toContain('KALSHI-ACCESS-KEY: key-1\r\n');
    expect(req).toContain('Upgrade: websocket\r\n');
    expect(req).not.toContain('Upgrade: nope');
    expect(req).toContain('Sec-WebSocket-Version: 13\r\n');
  });

  it('with pingIntervalMs the client pings on its own (empty, masked ping frames)', async () => {
    const raw = await rawServer(accept);
    const c = await open(raw, { pingIntervalMs: 5 });
    await until(() => clientFrames(raw.received()).filter((f) => f.opcode === 0x9).length >= 2);
    expect(clientFrames(raw.received()).every((f) => f.opcode === 0x9 && f.payload.length === 0)).toBe(true);
    c.conn.terminate();
    expect((await c.closed).code).toBe(1006);
  });

  it('the frame codec round-trips both directions, split anywhere (what the fake venues speak)', () => {
    const big = Buffer.alloc(70_000, 7);
    const wire = Buffer.concat([encodeFrame(OPCODE.text, Buffer.from('hi'), true), encodeFrame(OPCODE.binary, big, false), encodeFrame(OPCODE.ping, Buffer.alloc(0), true)]);
    const reader = new FrameReader();
    const frames = [];
    for (let i = 0; i < wire.length; i += 997) frames.push(...reader.push(wire.subarray(i, i + 997)));
    expect(frames.map((f) => [f.opcode, f.masked, f.payload.length])).toEqual([
      [OPCODE.text, true, 2],
      [OPCODE.binary, false, 70_000],
      [OPCODE.ping, true, 0],
    ]);
    expect(frames[0]!.payload.toString()).toBe('hi');
    expect(frames[1]!.payload.equals(big)).toBe(true);
    const small = new FrameReader(10);
    expect(small.push(encodeFrame(OPCODE.text, Buffer.alloc(11), false))).toEqual([]);
    expect(small.oversized).toBe(true);
  });
});
