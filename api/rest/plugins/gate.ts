/**
 * Authentication, entitlements and rate limits for every /flow/v1 route, in one onRequest hook and
 * one Redis round trip (see src/store/redis/gate.ts). Routes declare what they need in their config:
 *   config: { public: true }            no key needed (health, docs)
 *   config: { entitlements: ['x:y'] }   403 entitlement_required without them
 *   config: { dayExempt: true }         counts against the minute window only (own-account reads)
 *
 * The pieces (who the caller is, counting one request, the verdict) are the Gatekeeper's, so a
 * surface that is not a REST route (the MCP endpoint, api/mcp) authenticates and meters its calls
 * exactly as a route is gated, without a second copy.
 */
import type { IncomingHttpHeaders } from 'node:http';
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

/** What one counted request comes to: the principal when admitted (null when the budget is spent), and the error to answer with, if any. */
export interface Verdict {
  principal: Principal | null;
  error: ApiError | undefined;
}

/**
 * Who is calling and whether one more request of theirs may run: the gate's steps, shared by the
 * REST hook below and the MCP endpoint. Callback-style where the REST hot path uses it.
 */
export class Gatekeeper {
  private readonly views = new WeakMap<PrincipalRecord, Principal>();
  // Hashing the same key on every request is wasted work; keys are few, requests many. Least recently
  // used first out, so a flood of made-up keys costs the valid ones a hash at most, never a wipe.
  private readonly hashes = new LRUCache<string, string>({ max: 10_000 });

  constructor(
    private readonly ctx: AppContext,
    private readonly principals: PrincipalCache,
  ) {}

  /** The key's hash, or null when its checksum is wrong. Only well-formed keys are memoized, so a
   *  key seen before skips both the checksum and the hash. */
  private keyHash(key: string): string | null {
    let h = this.hashes.get(key);
    if (!h) {
      if (!isWellFormedApiKey(key)) return null;
      h = sha256Hex(key);
      this.hashes.set(key, h);
    }
    return h;
  }

  /** The request's credential; throws 401 when there is none or it cannot be one. */
  credentials(headers: IncomingHttpHeaders): Credential {
    const key = headers['x-api-key'];
    if (typeof key === 'string' && key.length > 0) {
      // The checksum refuses a mistyped or made-up key before any store is asked.
      const id = this.keyHash(key);
      if (id === null) throw unauthorized('API key is not valid: check that it was copied whole');
      return { kind: 'key', id };
    }
    const auth = headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) {
      const v = verifyPlayerJwt(this.ctx.config.jwtSecret, auth.slice(7).trim(), this.ctx.clock.now());
      if (!v.ok) throw unauthorized(`player token rejected: ${v.reason}`);
      // The claim is looked up in PostgreSQL: a NUL byte or a huge value must not get that far.
      if (!isSafeId(v.claims.sub)) throw unauthorized('player token names no account');
      return { kind: 'acct', id: v.claims.sub };
    }
    throw unauthorized('send an API key in the X-API-Key header, or a player JWT as Authorization: Bearer <token>');
  }

  /** The credential's principal record: at once when this process holds it, else from the stores. */
  resolve(cred: Credential, cb: (err: Error | undefined, rec?: PrincipalRecord) => void): void {
    const cached = this.principals.peek(cred);
    if (cached !== undefined) this.deliver(cred, cached, cb);
    else this.principals.resolve(cred).then((rec) => this.deliver(cred, rec, cb), (err: unknown) => cb(unavailableOr(err)));
  }

  private deliver(cred: Credential, rec: Resolved, cb: (err: Error | undefined, rec?: PrincipalRecord) => void): void {
    if (!isInvalid(rec)) return cb(undefined, rec);
    cb(unauthorized(cred.kind === 'acct' ? 'player token names no account' : rec.invalid === 'revoked' ? 'this API key was revoked; create a new one' : 'API key is not valid'));
  }

  /**
   * Counts one request of `rec` against its workspace's windows (the minute one only when dayExempt).
   * The callback gets the gate's raw error: map it with unavailableOr (one closure per request, not two).
   */
  count(rec: PrincipalRecord, dayExempt: boolean, cb: (err: unknown, outcome?: GateOutcome) => void): void {
    this.ctx.gate.check(rec, this.ctx.clock.now(), dayExempt, cb);
  }

  /** The counted request's verdict: 429 when a window is spent, 403 entitlement_required when the key lacks `required`. */
  judge(rec: PrincipalRecord, outcome: GateOutcome, required: readonly string[]): Verdict {
    if (outcome.kind !== 'allowed') {
      const window = outcome.kind === 'minute_exceeded' ? 'minute' : 'day';
      const wait = retryAfterSeconds(window === 'minute' ? outcome.windows.minuteTtlMs : outcome.windows.dayTtlMs);
      return {
        principal: null,
        error: new ApiError(429, 'rate_limit_exceeded', `the workspace's ${window} budget is spent; retry after ${wait} s`, { retry_after_seconds: wait, window }, { 'retry-after': String(wait) }),
      };
    }
    const principal = this.principal(rec);
    return { principal, error: this.entitlementError(principal, required) };
  }

  /** 403 entitlement_required naming what the principal lacks of `required`, or undefined. */
  entitlementError(principal: Principal, required: readonly string[]): ApiError | undefined {
    if (required.length === 0) return undefined;
    const missing = missingEntitlements(principal.entitlements, required);
    return missing.length > 0 ? entitlementRequired(missing) : undefined;
  }

  principal(rec: PrincipalRecord): Principal {
    let principal = this.views.get(rec);
    if (!principal) {
      principal = principalFromRecord(rec);
      this.views.set(rec, principal);
    }
    return principal;
  }

  /** The caller's record, counting nothing (the MCP endpoint's initialize and tools/list are free). */
  authenticate(headers: IncomingHttpHeaders): Promise<PrincipalRecord> {
    return new Promise((resolve, reject) => {
      let cred: Credential;
      try {
        cred = this.credentials(headers);
      } catch (err) {
        reject(err as Error);
        return;
      }
      this.resolve(cred, (err, rec) => (err ? reject(err) : resolve(rec!)));
    });
  }

  /** Counts one call as one request and judges it, as the REST gate does a route's request. */
  admit(rec: PrincipalRecord, dayExempt: boolean, required: readonly string[]): Promise<Verdict & { outcome: GateOutcome }> {
    return new Promise((resolve, reject) => {
      this.count(rec, dayExempt, (err, outcome) => {
        if (err) reject(unavailableOr(err));
        else resolve({ ...this.judge(rec, outcome!, required), outcome: outcome! });
      });
    });
  }
}

/** A store out of reach (Redis, or PostgreSQL for an uncached key) is the service's state, not a bug: 503 and when to retry. */
export function unavailableOr(err: unknown): Error {
  return asStoreUnavailable(err, 'authentication and rate limiting') ?? (err as Error);
}

/** The gate of every protected route; returns the gate of a route with no entitlements, for requests that match no route. */
export function installGate(app: FastifyInstance, keeper: Gatekeeper): GateHook {
  app.decorateRequest('principal', null as unknown as Principal);

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
      cred = keeper.credentials(request.headers);
    } catch (err) {
      done(err as Error);
      return;
    }
    keeper.resolve(cred, (err, rec) => {
      if (err) return done(err);
      keeper.count(rec!, dayExempt, (err2, outcome) => {
        if (err2) return done(unavailableOr(err2));
        try {
          setHeaders(reply, rec!, outcome!);
          const v = keeper.judge(rec!, outcome!, required);
          if (v.principal) request.principal = v.principal;
          done(v.error);
        } catch (thrown) {
          done(thrown as Error);
        }
      });
    });
  }
  return unrouted;
}
