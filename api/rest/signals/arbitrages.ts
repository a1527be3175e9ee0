/**
 * GET /flow/v1/arbitrages (spec "Arbitrage", deprecated in favour of signals of type arbitrage):
 * every open arbitrage from the detection cache (src/store/redis/arbitrages.ts), filtered (AND),
 * sorted and cut to `limit`, with meta.total the count before the cut. Answers with the RFC 8594
 * deprecation headers: Deprecation, and Link to its successor.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Arbitrage as ArbitrageT } from '../../../src/domain/arbitrage.js';
import { badRequest } from '../../../src/errors.js';
import { ArbitrageStore } from '../../../src/store/redis/arbitrages.js';
import type { AppContext } from '../context.js';
import { Errors, Ok } from '../openapi/responses.js';
import { sendEnvelope } from '../reply.js';
import { CommaList, Id, splitList, Text } from '../schemas.js';
import { Arbitrage, ArbitrageMeta } from './shapes.js';

export const ARBITRAGE_LIMIT = { default: 100, max: 500 } as const;

/** A decimal number sent as text (the spec types these filters as strings). */
const NumberText = (description: string) => Text({ minLength: 1, maxLength: 32, description: `${description} (a decimal number, e.g. 1.5)` });

export const ArbitrageQuery = Type.Object(
  {
    contest_id: Type.Optional(CommaList()),
    league_id: Type.Optional(CommaList()),
    market_id: Type.Optional(CommaList()),
    partner_id: Type.Optional(Id),
    min_roi: Type.Optional(NumberText('minimum gross profit percent')),
    after_fee: Type.Optional(Type.Literal('true', { description: 'only arbitrages profitable after taker fees on both legs; unknown-fee arbitrages excluded' })),
    min_after_fee_roi: Type.Optional(NumberText('minimum after-fee profit percent; implies after_fee=true')),
    min_investment: Type.Optional(NumberText('minimum deployable USD across both legs')),
    sort: Type.Optional(Type.Enum(['roi', 'after_fee_roi'], { description: 'descending; default roi. Under after_fee_roi, unknown-fee arbitrages sort last' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ARBITRAGE_LIMIT.max, default: ARBITRAGE_LIMIT.default, description: `default ${ARBITRAGE_LIMIT.default}, max ${ARBITRAGE_LIMIT.max}` })),
  },
  { additionalProperties: false },
);
type Query = Static<typeof ArbitrageQuery>;

const DECIMAL = /^-?(\d+(\.\d*)?|\.\d+)$/;
function decimal(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw.trim());
  if (!DECIMAL.test(raw.trim()) || !Number.isFinite(v)) throw badRequest('invalid_parameter', `${name} must be a decimal number, e.g. 1.5; got ${JSON.stringify(raw)}`, { parameter: name });
  return v;
}

/** The filters of a query, parsed once: every value checked before anything is read. */
export function arbitrageFilter(q: Query): (a: ArbitrageT) => boolean {
  const contests = splitList('contest_id', q.contest_id);
  const leagues = splitList('league_id', q.league_id);
  const markets = splitList('market_id', q.market_id);
  const minRoi = decimal('min_roi', q.min_roi);
  const minAfterFee = decimal('min_after_fee_roi', q.min_after_fee_roi);
  const minInvestment = decimal('min_investment', q.min_investment);
  const afterFee = q.after_fee === 'true' || minAfterFee !== undefined;
  const c = contests && new Set(contests);
  const l = leagues && new Set(leagues);
  const m = markets && new Set(markets);
  return (a) =>
    (!c || c.has(a.contest.id)) &&
    (!l || (a.contest.league_id !== null && l.has(a.contest.league_id))) &&
    (!m || m.has(a.market.id)) &&
    (q.partner_id === undefined || a.sides.some((s) => s.options.some((o) => o.partner_id === q.partner_id))) &&
    (minRoi === undefined || a.roi_pct >= minRoi) &&
    (!afterFee || a.profitable_after_fees === true) &&
    (minAfterFee === undefined || (a.after_fee_roi_pct !== null && a.after_fee_roi_pct >= minAfterFee)) &&
    (minInvestment === undefined || a.max_investment >= minInvestment);
}

/** Descending by the chosen figure; unknown after-fee ROI last; ties by arbitrage_id so pages are stable. */
export function arbitrageOrder(sort: 'roi' | 'after_fee_roi'): (x: ArbitrageT, y: ArbitrageT) => number {
  return (x, y) => {
    if (sort === 'after_fee_roi') {
      const a = x.after_fee_roi_pct;
      const b = y.after_fee_roi_pct;
      if ((a === null) !== (b === null)) return a === null ? 1 : -1;
      if (a !== null && b !== null && a !== b) return b - a;
    } else if (x.roi_pct !== y.roi_pct) return y.roi_pct - x.roi_pct;
    return x.arbitrage_id < y.arbitrage_id ? -1 : x.arbitrage_id > y.arbitrage_id ? 1 : 0;
  };
}

/** RFC 8594: the route is deprecated; its successor is the signals feed of type arbitrage. */
export const ARBITRAGE_DEPRECATION = { deprecation: 'true', link: '</flow/v1/signals?type=arbitrage>; rel="successor-version"' } as const;

export function arbitrageRoutes(app: FastifyInstance, ctx: AppContext): void {
  const store = new ArbitrageStore(ctx.redis, ctx.ks);
  app.get<{ Querystring: Query }>(
    '/flow/v1/arbitrages',
    {
      schema: {
        querystring: ArbitrageQuery,
        tags: ['signals'],
        summary: 'Open cross-venue arbitrages (deprecated: use GET /flow/v1/signals?type=arbitrage)',
        description:
          'Every open arbitrage of the detection cache (held at most 120 s, rewritten on every liquidity change: a snapshot). Filters combine as AND. Answers with the RFC 8594 Deprecation header and a Link to the successor. depth_walk is an extra beyond the spec (docs/arbitrage.md).',
        operationId: 'listArbitrages',
        deprecated: true,
        response: { 200: Ok(Type.Array(Arbitrage), 'Matching arbitrages, sorted, at most limit; meta.total counts them before the limit', ArbitrageMeta), 400: Errors.badRequest },
      },
      config: { entitlements: ['arbitrage:read'] },
    },
    async (req, reply) => {
      const keep = arbitrageFilter(req.query);
      const matching = (await store.open()).filter(keep).sort(arbitrageOrder(req.query.sort ?? 'roi'));
      reply.header('deprecation', ARBITRAGE_DEPRECATION.deprecation).header('link', ARBITRAGE_DEPRECATION.link);
      return sendEnvelope(reply, ctx.clock.now(), matching.slice(0, req.query.limit ?? ARBITRAGE_LIMIT.default), { meta: { total: matching.length } });
    },
  );
}
