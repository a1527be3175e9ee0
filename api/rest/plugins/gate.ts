/**
 * Authentication, entitlements and rate limits for every /flow/v1 route, in one onRequest hook and
 * one Redis round trip (see src/store/redis/gate.ts). Routes declare what they need in their config:
 *   config: { public: true }            no key needed (health, docs)
 *   config: { entitlements: ['x:y'] }   403 entitlement_required without them
 *   config: { dayExempt: true }         counts against the minute window only (own-account reads)
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, entitlementRequired, unauthorized } from '../../../src/errors.js';
import { missingEntitlements } from '../../../src/domain/plans.js';
import { principalFromRecord, type Principal, type PrincipalRecord } from '../../../src/domain/principal.js';
import { retryAfterSeconds } from '../../../src/domain/ratelimit.js';
import { sha256Hex } from '../../../src/ids.js';
import { verifyPlayerJwt } from '../../../src/jwt.js';
import { isInvalid, type Credential, type PrincipalCache } from '../../../src/store/principals.js';
import { usageId, type GateOutcome } from '../../../src/store/redis/gate.js';
import type { AppContext } from '../context.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    /** The matched route pattern ('unmatched' for a 404), read once per request. */
    routeKey: string;
  }
  interface FastifyContextConfig {
    public?: boolean;
    entitlements?: string[];
    dayExempt?: boolean;
  }
}

export function installGate(app: FastifyInstance, ctx: AppContext, principals: PrincipalCache): void {
  const views = new WeakMap<PrincipalRecord, Principal>();
  // Hashing the same key on every request is wasted work; keys are few, requests many.
  const hashes = new Map<string, string>();
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('routeKey', '');

  function keyHash(key: string): string {
    let h = hashes.get(key);
    if (!h) {
      h = sha256Hex(key);
      if (hashes.size > 10_000) hashes.clear();
      hashes.set(key, h);
    }
    return h;
  }

  function credentials(request: FastifyRequest): Credential {
    const key = request.headers['x-api-key'];
    if (typeof key === 'string' && key.length > 0) {
      if (key.length > 256) throw unauthorized('API key is not valid');
      return { kind: 'key', id: keyHash(key) };
    }
    const auth = request.headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) {
      const v = verifyPlayerJwt(ctx.config.jwtSecret, auth.slice(7).trim(), ctx.clock.now());
      if (!v.ok) throw unauthorized(`player token rejected: ${v.reason}`);
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

  app.addHook('onRequest', async (request, reply) => {
    // routeOptions builds a fresh object on every access: read it once.
    const ro = request.routeOptions;
    const cfg = ro.config;
    request.routeKey = ro.url ?? 'unmatched';
    // Unmatched routes go straight to the 404 handler; public routes need no key.
    if (!ro.url || cfg.public) return;
    const cred = credentials(request);
    const rec = principals.peek(cred) ?? (await principals.resolve(cred));
    if (isInvalid(rec)) {
      throw unauthorized(
        cred.kind === 'acct'
          ? 'player token names no account'
          : rec.invalid === 'revoked'
            ? 'this API key was revoked; create a new one'
            : 'API key is not valid',
      );
    }
    const outcome = await ctx.gate.check(rec, ctx.clock.now(), cfg.dayExempt === true);
    setHeaders(reply, rec, outcome);
    if (outcome.kind !== 'allowed') {
      const window = outcome.kind === 'minute_exceeded' ? 'minute' : 'day';
      const wait = retryAfterSeconds(window === 'minute' ? outcome.windows.minuteTtlMs : outcome.windows.dayTtlMs);
      throw new ApiError(
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
    const required = cfg.entitlements;
    if (required && required.length > 0) {
      const missing = missingEntitlements(principal.entitlements, required);
      if (missing.length > 0) throw entitlementRequired(missing);
    }
  });

  // Callback style: no promise per response on the hot path.
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode >= 400 && request.principal) ctx.gate.countError(usageId(request.principal), ctx.clock.now());
    done();
  });
}
