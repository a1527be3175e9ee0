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

export function sendFragment(reply: FastifyReply, nowMs: number, fragment: string): FastifyReply {
  return reply.code(200).type(JSON_TYPE).send(`{${fragment},"meta":{"timestamp":"${isoAt(nowMs)}","api_version":"${API_VERSION}"}}`);
}
