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
import { principalRecordForAccount, principalRecordForKeyHash } from '../../../src/store/pg/keys.js';
import { usageId, type GateOutcome } from '../../../src/store/redis/gate.js';
import type { AppContext } from '../context.js';

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

export function installGate(app: FastifyInstance, ctx: AppContext): void {
  const principals = new WeakMap<PrincipalRecord, Principal>();
  app.decorateRequest('principal', null as unknown as Principal);

  async function load(recordKey: string, kind: 'key' | 'acct', id: string): Promise<void> {
    const rec = kind === 'key' ? await principalRecordForKeyHash(ctx.pool, id) : await principalRecordForAccount(ctx.pool, id);
    await ctx.gate.remember(recordKey, rec);
  }

  function credentials(request: FastifyRequest): { kind: 'key' | 'acct'; id: string } {
    const key = request.headers['x-api-key'];
    if (typeof key === 'string' && key.length > 0) {
      if (key.length > 256) throw unauthorized('API key is not valid');
      return { kind: 'key', id: sha256Hex(key) };
    }
    const auth = request.headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) {
      const v = verifyPlayerJwt(ctx.config.jwtSecret, auth.slice(7).trim(), ctx.clock.now());
      if (!v.ok) throw unauthorized(`player token rejected: ${v.reason}`);
      return { kind: 'acct', id: v.claims.sub };
    }
    throw unauthorized('send an API key in the X-API-Key header, or a player JWT as Authorization: Bearer <token>');
  }

  function setHeaders(reply: FastifyReply, o: Extract<GateOutcome, { record: PrincipalRecord }>): void {
    const r = o.record;
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
    const cfg = request.routeOptions.config;
    // Unmatched routes go straight to the 404 handler; public routes need no key.
    if (!request.routeOptions.url || cfg.public) return;
    const cred = credentials(request);
    const recordKey = ctx.gate.recordKey(cred.kind, cred.id);
    const now = ctx.clock.now();
    const exempt = cfg.dayExempt === true;
    let outcome = await ctx.gate.check(recordKey, now, exempt);
    if (outcome.kind === 'miss') {
      await load(recordKey, cred.kind, cred.id);
      outcome = await ctx.gate.check(recordKey, now, exempt);
    }
    if (outcome.kind === 'miss' || outcome.kind === 'invalid') {
      const revoked = outcome.kind === 'invalid' && outcome.reason === 'revoked';
      throw unauthorized(
        cred.kind === 'acct'
          ? 'player token names no account'
          : revoked
            ? 'this API key was revoked; create a new one'
            : 'API key is not valid',
      );
    }
    setHeaders(reply, outcome);
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
    let principal = principals.get(outcome.record);
    if (!principal) {
      principal = principalFromRecord(outcome.record);
      principals.set(outcome.record, principal);
    }
    request.principal = principal;
    const required = cfg.entitlements;
    if (required && required.length > 0) {
      const missing = missingEntitlements(principal.entitlements, required);
      if (missing.length > 0) throw entitlementRequired(missing);
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode >= 400 && request.principal) ctx.gate.countError(usageId(request.principal), ctx.clock.now());
  });
}
