/**
 * The signal reads (spec "Signals"):
 * - GET /flow/v1/signals/types: the type catalog as the asking key sees it (entitled,
 *   missing_entitlements). Open to any valid key on any plan: the route needs no entitlement.
 * - GET /flow/v1/signals: every live signal (src/store/redis/signals.ts), filtered (AND), sorted and
 *   cut to `limit`; meta counts them. Read from Redis on every call, never from the read cache: the
 *   live set changes with every detection and expiry.
 *
 * What is never served, whatever the query: an expired signal, a type the catalog does not publish
 * (trade_burst) or has retired, and a type needing an entitlement the key lacks (absent, not a 403).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { catalogFor, CONFIDENCES, entitledTypes, selectsSignal, SIGNAL_TYPES, type Signal as SignalT } from '../../../src/domain/signals.js';
import { badRequest } from '../../../src/errors.js';
import { SignalStore } from '../../../src/store/redis/signals.js';
import type { AppContext } from '../context.js';
import { Errors, Ok } from '../openapi/responses.js';
import { sendEnvelope } from '../reply.js';
import { CommaList, splitList } from '../schemas.js';
import { Signal, SignalCatalogEntry, SignalMeta } from './shapes.js';

export const SIGNAL_LIMIT = { default: 100, max: 500 } as const;
export const SIGNAL_SORTS = ['strength', 'detected_at', 'expires_at'] as const;
type Sort = (typeof SIGNAL_SORTS)[number];

export const SignalQuery = Type.Object(
  {
    contest_id: Type.Optional(CommaList()),
    league_id: Type.Optional(CommaList()),
    market_id: Type.Optional(CommaList()),
    // Position hashes are longer than other ids; room for a page of them.
    position_hash: Type.Optional(CommaList(8000)),
    type: Type.Optional(CommaList(1000)),
    include_beta: Type.Optional(Type.Enum(['true', 'false'], { description: 'true serves beta types too; omitted (or false), beta signals are left out' })),
    min_strength: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'minimum strength, 0-100' })),
    min_confidence: Type.Optional(Type.Enum([...CONFIDENCES], { description: 'minimum confidence: low < medium < high' })),
    sort: Type.Optional(Type.Enum([...SIGNAL_SORTS], { description: 'strength and detected_at descending, expires_at ascending; default strength' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SIGNAL_LIMIT.max, default: SIGNAL_LIMIT.default, description: `default ${SIGNAL_LIMIT.default}, max ${SIGNAL_LIMIT.max}` })),
  },
  { additionalProperties: false },
);
type Query = Static<typeof SignalQuery>;

const KNOWN_TYPES = new Set<string>(SIGNAL_TYPES);

/**
 * The filters of a query for one key, parsed once: every value checked before anything is read.
 * An unknown type is a 400 (a typo would otherwise match nothing, silently); a known type that is
 * not served (retired, unpublished) is accepted and matches nothing.
 */
export function signalFilter(q: Query, entitlements: ReadonlySet<string>): (s: SignalT) => boolean {
  const contests = splitList('contest_id', q.contest_id);
  const leagues = splitList('league_id', q.league_id);
  const markets = splitList('market_id', q.market_id);
  const positions = splitList('position_hash', q.position_hash);
  const types = splitList('type', q.type, SIGNAL_TYPES.length);
  const unknown = types?.filter((t) => !KNOWN_TYPES.has(t));
  if (unknown?.length) throw badRequest('invalid_parameter', `type ${unknown.map((t) => JSON.stringify(t)).join(', ')} is not a signal type; types: ${SIGNAL_TYPES.join(', ')}`, { parameter: 'type' });
  const allowed = entitledTypes(entitlements);
  const selected = selectsSignal({ types: types ? new Set(types) : null, includeBeta: q.include_beta === 'true', minStrength: q.min_strength ?? null, minConfidence: q.min_confidence ?? null });
  const c = contests && new Set(contests);
  const l = leagues && new Set(leagues);
  const m = markets && new Set(markets);
  const p = positions && new Set(positions);
  return (s) =>
    allowed.has(s.signal_type) &&
    selected(s) &&
    (!c || c.has(s.position.router_contest_id)) &&
    (!l || (s.position.router_league_id !== null && l.has(s.position.router_league_id))) &&
    (!m || m.has(s.position.router_market_id)) &&
    (!p || p.has(s.position.position_hash) || s.related_positions.some((h) => p.has(h)));
}

const byId = (x: SignalT, y: SignalT) => (x.signal_id < y.signal_id ? -1 : x.signal_id > y.signal_id ? 1 : 0);

/**
 * The three orders of the spec; ties fall back to strength (descending), then signal_id, so a page
 * is the same on every call while the set is. Timestamps compare as instants, not as text.
 */
export function signalOrder(sort: Sort): (x: SignalT, y: SignalT) => number {
  const strength = (x: SignalT, y: SignalT) => y.strength - x.strength;
  const at = (field: 'detected_at' | 'expires_at', dir: 1 | -1) => (x: SignalT, y: SignalT) => dir * (Date.parse(x[field]) - Date.parse(y[field]));
  const keys = sort === 'strength' ? [strength, at('detected_at', -1)] : sort === 'detected_at' ? [at('detected_at', -1), strength] : [at('expires_at', 1), strength];
  return (x, y) => {
    for (const k of keys) {
      const d = k(x, y);
      if (d !== 0) return d;
    }
    return byId(x, y);
  };
}

export function signalRoutes(app: FastifyInstance, ctx: AppContext): void {
  const store = new SignalStore(ctx.redis, ctx.ks);

  app.get(
    '/flow/v1/signals/types',
    {
      schema: {
        tags: ['signals'],
        summary: 'The signal type catalog, with what the asking key is entitled to',
        description:
          'Every type the service defines, retired ones included so stored type strings still resolve. Open to any valid key on any plan; entitled and missing_entitlements describe the asking key.',
        operationId: 'listSignalTypes',
        response: { 200: Ok(Type.Array(SignalCatalogEntry), 'The catalog, one entry per type') },
      },
      // No entitlements: any valid key (the gate still authenticates and counts the request).
      config: {},
    },
    async (req, reply) => sendEnvelope(reply, ctx.clock.now(), catalogFor(req.principal.entitlements)),
  );

  app.get<{ Querystring: Query }>(
    '/flow/v1/signals',
    {
      schema: {
        querystring: SignalQuery,
        tags: ['signals'],
        summary: 'Live market signals',
        description:
          'Every live signal, read fresh on each call (never cached). Filters combine as AND; comma-separated filters accept several values; position_hash also matches related_positions. Beta types are left out unless include_beta=true. Expired signals, retired or unpublished types, and types whose entitlements the key lacks are never served (absent, not an error).',
        operationId: 'listSignals',
        response: { 200: Ok(Type.Array(Signal), 'Matching signals, sorted, at most limit', SignalMeta), 400: Errors.badRequest },
      },
      config: { entitlements: ['signals:read'] },
    },
    async (req, reply) => {
      const keep = signalFilter(req.query, req.principal.entitlements);
      const now = ctx.clock.now();
      const matching: SignalT[] = [];
      const contests = new Set<string>();
      // Named contests are read alone; otherwise every contest that has signals.
      for (const { contestId, signals } of await store.live(now, splitList('contest_id', req.query.contest_id))) {
        for (const s of signals) {
          // live() drops expired signals already; checked again at the instant this answer is stamped with.
          if (Date.parse(s.expires_at) > now && keep(s)) {
            matching.push(s);
            contests.add(contestId);
          }
        }
      }
      matching.sort(signalOrder(req.query.sort ?? 'strength'));
      const data = matching.slice(0, req.query.limit ?? SIGNAL_LIMIT.default);
      return sendEnvelope(reply, now, data, { meta: { total: matching.length, returned: data.length, contest_count: contests.size } });
    },
  );
}
