/**
 * Player JWTs: HS256 only, `sub` = router_account_id, `exp` required. Small enough to own rather than
 * pull a library, and owning it lets us refuse every other algorithm outright.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface PlayerClaims {
  sub: string;
  exp: number;
  iat?: number;
}

const b64 = (buf: Buffer | string) => Buffer.from(buf).toString('base64url');
const HEADER = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

export function signPlayerJwt(secret: string, sub: string, ttlSeconds: number, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  const payload = b64(JSON.stringify({ sub, iat, exp: iat + ttlSeconds }));
  const sig = createHmac('sha256', secret).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${sig}`;
}

export type JwtResult = { ok: true; claims: PlayerClaims } | { ok: false; reason: string };

export function verifyPlayerJwt(secret: string, token: string, nowMs = Date.now()): JwtResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed token' };
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: string };
  let claims: Partial<PlayerClaims>;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed token' };
  }
  if (header.alg !== 'HS256') return { ok: false, reason: 'only HS256 tokens are accepted' };
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  const given = Buffer.from(s, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad signature' };
  if (typeof claims.sub !== 'string' || claims.sub === '') return { ok: false, reason: 'token has no sub' };
  if (typeof claims.exp !== 'number') return { ok: false, reason: 'token has no exp' };
  if (claims.exp * 1000 <= nowMs) return { ok: false, reason: 'token expired' };
  return { ok: true, claims: claims as PlayerClaims };
}
