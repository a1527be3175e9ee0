/**
 * Opaque, signed cursors. A cursor names the list it belongs to (route plus filter fingerprint) and
 * the last row's sort key; the HMAC makes tampered and foreign cursors detectable, so they get a
 * 400 `invalid_cursor` rather than a wrong page or a 500.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from './errors.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export class Cursors {
  constructor(private readonly secret: string) {}

  encode(scope: string, position: unknown[]): string {
    const body = Buffer.from(JSON.stringify({ s: scope, p: position })).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The position carried by a cursor of this scope; throws 400 invalid_cursor otherwise. */
  decode(scope: string, cursor: string): unknown[] {
    const bad = () => badRequest('invalid_cursor', 'cursor is invalid or belongs to another list; pass next_cursor back verbatim with the same filters');
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw bad();
    const body = cursor.slice(0, dot);
    const sig = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(body), 'base64url');
    if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) throw bad();
    let parsed: { s?: unknown; p?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw bad();
    }
    if (parsed.s !== scope || !Array.isArray(parsed.p)) throw bad();
    return parsed.p;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, 16).toString('base64url');
  }
}
