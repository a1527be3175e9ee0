/**
 * Authentication, entitlements and rate limits for every /flow/v1 route, in one onRequest hook and
 * one Redis round trip (see src/store/redis/gate.ts). Routes declare what they need in their config:
 *   config: { public: true }            no key needed (health, docs)
 *   config: { entitlements: ['x:y'] }   403 entitlement_required without them
 *   config: { dayExempt: true }         counts against the minute window only (own-account reads)
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { isWellFormedApiKey } from '../../../src/domain/api-key.js';
import { ApiError, entitlementRequired, unauthorized } from '../../../src/errors.js';
import { missingEntitlements } from '../../../src/domain/plans.js';
import { principalFromRecord, type Principal, type PrincipalRecord } from '../../../src/domain/principal.js';
import { retryAfterSeconds } from '../../../src/domain/ratelimit.js';
import { sha256Hex } from '../../../src/ids.js';
import { verifyPlayerJwt } from '../../../src/jwt.js';
import { isInvalid, type Credential, type PrincipalCache, type Resolved } from '../../../src/store/principals.js';
import type { GateOutcome } from '../../../src/store/redis/gate.js';
import { asStoreUnavailable } from '../../../src/store/unavailable.js';
import type { AppContext } from '../context.js';
import { isSafeId } from '../schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    public?: boolean;
    entitlements?: string[];
    dayExempt?: boolean;
  }
}

/** The gate as a callback-style hook, for requests no route claims (unknown routes, framework errors). */
export type GateHook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

/** Returns the gate of a route with no entitlements, for requests that match no route. */
export function installGate(app: FastifyInstance, ctx: AppContext, principals: PrincipalCache): GateHook {
  const views = new WeakMap<PrincipalRecord, Principal>();
  // Hashing the same key on every request is wasted work; keys are few, requests many. Least recently
  // used first out, so a flood of made-up keys costs the valid ones a hash at most, never a wipe.
  const hashes = new LRUCache<string, string>({ max: 10_000 });
  app.decorateRequest('principal', null as unknown as Principal);

  /** The key's hash, or null when its checksum is wrong. Only well-formed keys are memoized, so a
   *  key seen before skips both the checksum and the hash. */
  function keyHash(key: string): string | null {
    let h = hashes.get(key);
    if (!h) {
      if (!isWellFormedApiKey(key)) return null;
      h = sha256Hex(key);
      hashes.set(key, h);
    }
    return h;
  }

  function credentials(request: FastifyRequest): Credential {
    const key = request.headers['x-api-key'];
    if (typeof key === 'string' && key.length > 0) {
      // The checksum refuses a mistyped or made-up key before any store is asked.
      const id = keyHash(key);
      if (id === null) throw unauthorized('API key is not valid: check that it was copied whole');
      return { kind: 'key', id };
    }
    const auth = request.headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) {
      const v = verifyPlayerJwt(ctx.config.jwtSecret, auth.slice(7).trim(), ctx.clock.now());
      if (!v.ok) throw unauthorized(`player token rejected: ${v.reason}`);
      // The claim is looked up in PostgreSQL: a NUL byte or a huge value must not get that far.
      if (!isSafeId(v.claims.sub)) throw unauthorized('player token names no account');
      return { kind: 'acct', id: v.claims.sub };
    }
    throw unauthorized('send an API key in the X-API-Key header, or a player JWT as Authorization: Bearer <token>');
  }

  function setHeaders(reply: FastifyReply, r: PrincipalRecord, o: GateOutcome): void {
    reply.headers({
      'x-ratelimit-limit-minute': r.rpm,
      'x-ratelimit-remaining-minute': Math.max(0, r.rpm - o.minuteCount),
      'x-ratelimit-reset-minute': o.windows.minuteResetSec,
      'x-ratelimit-limit-day': r.rpd,
      'x-ratelimit-remaining-day': Math.max(0, r.rpd - o.dayCount),
      'x-ratelimit-reset-day': o.windows.dayResetSec,
    });
  }

  // The gate is attached to each protected route as a route-level hook when the route is added, with
  // that route's config in its closure: public routes run no gate at all, and no request pays for
  // looking its route's options up (request.routeOptions builds a fresh object on every access).
  // Callback-style, not async: a cached principal goes from header to Redis with no promise at all.
  app.addHook('onRoute', (route) => {
    const cfg = route.config ?? {};
    if (cfg.public) return;
    const dayExempt = cfg.dayExempt === true;
    const required = cfg.entitlements ?? [];
    const hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => gateRequest(request, reply, dayExempt, required, done);
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    route.onRequest = [hook, ...existing] as typeof route.onRequest;
  });

  const unrouted: GateHook = (request, reply, done) => gateRequest(request, reply, false, [], done);

  function gateRequest(request: FastifyRequest, reply: FastifyReply, dayExempt: boolean, required: readonly string[], done: (err?: Error) => void): void {
    let cred: Credential;
    try {
      cred = credentials(request);
    } catch (err) {
      done(err as Error);
      return;
    }
    const cached = principals.peek(cred);
    if (cached !== undefined) admit(request, reply, cred, cached, dayExempt, required, done);
    else principals.resolve(cred).then((rec) => admit(request, reply, cred, rec, dayExempt, required, done), (err: unknown) => done(unavailableOr(err)));
  }

  /** A store out of reach (Redis, or PostgreSQL for an uncached key) is the service's state, not a bug: 503 and when to retry. */
  function unavailableOr(err: unknown): Error {
    return asStoreUnavailable(err, 'authentication and rate limiting') ?? (err as Error);
  }

  function admit(request: FastifyRequest, reply: FastifyReply, cred: Credential, rec: Resolved, dayExempt: boolean, required: readonly string[], done: (err?: Error) => void): void {
    if (isInvalid(rec)) {
      done(
        unauthorized(
          cred.kind === 'acct'
            ? 'player token names no account'
            : rec.invalid === 'revoked'
              ? 'this API key was revoked; create a new one'
              : 'API key is not valid',
        ),
      );
      return;
    }
    ctx.gate.check(rec, ctx.clock.now(), dayExempt, (err, outcome) => {
      if (err) return done(unavailableOr(err));
      try {
        done(verdict(request, reply, rec, outcome!, required));
      } catch (thrown) {
        done(thrown as Error);
      }
    });
  }

  /** Sets the rate-limit headers and the principal; the error to answer with, if any. */
  function verdict(request: FastifyRequest, reply: FastifyReply, rec: PrincipalRecord, outcome: GateOutcome, required: readonly string[]): Error | undefined {
    setHeaders(reply, rec, outcome);
    if (outcome.kind !== 'allowed') {
      const window = outcome.kind === 'minute_exceeded' ? 'minute' : 'day';
      const wait = retryAfterSeconds(window === 'minute' ? outcome.windows.minuteTtlMs : outcome.windows.dayTtlMs);
      return new ApiError(
        429,
        'rate_limit_exceeded',
        `the workspace's ${window} budget is spent; retry after ${wait} s`,
        { retry_after_seconds: wait, window },
        { 'retry-after': String(wait) },
      );
    }
    let principal = views.get(rec);
    if (!principal) {
      principal = principalFromRecord(rec);
      views.set(rec, principal);
    }
    request.principal = principal;
    if (required.length > 0) {
      const missing = missingEntitlements(principal.entitlements, required);
      if (missing.length > 0) return entitlementRequired(missing);
    }
    return undefined;
  }
  return unrouted;
}
