/** Success replies in the spec's envelope, plus a fast path for cached, pre-serialized bodies. */
import type { FastifyReply } from 'fastify';
import { API_VERSION, envelope, type Pagination } from '../../src/domain/envelope.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export function sendEnvelope(
  reply: FastifyReply,
  nowMs: number,
  data: unknown,
  extra?: { pagination?: Pagination; meta?: Record<string, unknown> },
  status = 200,
): FastifyReply {
  return reply.code(status).type(JSON_TYPE).send(JSON.stringify(envelope(data, nowMs, extra)));
}

/** A response recorded whole (an Idempotency-Key's first answer), sent as it was recorded. */
export function sendRecorded(reply: FastifyReply, response: { status: number; body: string }): FastifyReply {
  return reply.code(response.status).type(JSON_TYPE).send(response.body);
}

/**
 * A body's `data` and `pagination` serialized once; the meta (with its fresh timestamp) is appended
 * per request, so a cached read costs one string concatenation.
 */
export function serializeFragment(data: unknown, pagination?: Pagination): string {
  const d = `"data":${JSON.stringify(data)}`;
  return pagination ? `${d},"pagination":${JSON.stringify(pagination)}` : d;
}

// At tens of thousands of responses a second most share their millisecond: format it once.
let isoMs = -1;
let isoText = '';
export function isoAt(nowMs: number): string {
  if (nowMs !== isoMs) {
    isoMs = nowMs;
    isoText = new Date(nowMs).toISOString();
  }
  return isoText;
}

/** `meta`: further meta members, serialized (`"k":v,...`), after timestamp and api_version. */
export function sendFragment(reply: FastifyReply, nowMs: number, fragment: string, meta?: string): FastifyReply {
  return reply.code(200).type(JSON_TYPE).send(`{${fragment},"meta":{"timestamp":"${isoAt(nowMs)}","api_version":"${API_VERSION}"${meta ? `,${meta}` : ''}}}`);
}

const OPEN_DATA = Buffer.from('{"data":');
const META_HEAD = Buffer.from(',"meta":{"timestamp":"');
const META_VERSION = Buffer.from(`","api_version":"${API_VERSION}"`);
const CLOSE_META = Buffer.from('}}');

/**
 * A large cached `data` (a contest's liquidity, ~100 KB) written as-is: the envelope's head and meta
 * go around it as separate chunks in one corked write, so no response copies or re-encodes the
 * cached bytes (a string concatenation would be flattened and UTF-8 encoded on every response).
 * Headers set earlier (rate limits) are kept; onResponse hooks still run.
 */
/** `meta`: further meta members, as for sendFragment. */
export function sendCachedData(reply: FastifyReply, nowMs: number, data: Buffer, meta?: string): void {
  const ts = Buffer.from(isoAt(nowMs));
  const extra = meta ? Buffer.from(`,${meta}`) : null;
  const length = OPEN_DATA.length + data.length + META_HEAD.length + ts.length + META_VERSION.length + (extra?.length ?? 0) + CLOSE_META.length;
  reply.hijack();
  const res = reply.raw;
  res.cork();
  res.writeHead(200, { ...reply.getHeaders(), 'content-type': JSON_TYPE, 'content-length': length } as Record<string, string | number>);
  res.write(OPEN_DATA);
  res.write(data);
  res.write(META_HEAD);
  res.write(ts);
  res.write(META_VERSION);
  if (extra) res.write(extra);
  res.end(CLOSE_META);
  res.uncork();
}
