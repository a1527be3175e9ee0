/**
 * Catalog reads: leagues, participants, contests, markets, partners (spec "Catalog reads").
 * Served from PostgreSQL through the read cache; unknown ids are 404 not_found.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { badRequest, notFound } from '../../../src/errors.js';
import * as catalog from '../../../src/store/pg/catalog.js';
import type { AppContext } from '../context.js';
import { page } from '../paging.js';
import type { ReadCache } from '../read-cache.js';
import { sendFragment, serializeFragment } from '../reply.js';
import { CommaList, Cursor, Id, IdParams, IsoTime, Limit, Text, splitList } from '../schemas.js';
import { Errors, Ok, OkPage } from '../openapi/responses.js';
import { Contest, League, Market, Participant, Partner } from '../openapi/shapes.js';

const CATALOG = { entitlements: ['reference:read'] };
const MARKETS = { entitlements: ['markets:read'] };

export function catalogRoutes(app: FastifyInstance, ctx: AppContext, cache: ReadCache): void {
  const now = () => ctx.clock.now();

  const LeagueQuery = Type.Object({ limit: Limit(), cursor: Type.Optional(Cursor) });
  app.get<{ Querystring: Static<typeof LeagueQuery> }>(
    '/flow/v1/leagues',
    { schema: { querystring: LeagueQuery, tags: ['catalog'], summary: 'List leagues', operationId: 'listLeagues', response: { 200: OkPage(League, 'A page of leagues') } }, config: CATALOG },
    (req, reply) => {
      // Keyed by the raw URL: a repeated read answers synchronously (no promise) before any parsing.
      const hit = cache.peek(req.url);
      if (hit !== undefined) return sendFragment(reply, now(), hit);
      const { limit, cursor } = req.query;
      return cache.get(req.url, async () => {
        const after = cursor ? (ctx.cursors.decode('leagues', cursor) as [number, string]) : undefined;
        const rows = await catalog.listLeagues(ctx.pool, limit + 1, after);
        const { items, pagination } = page(rows, limit, (l) => ctx.cursors.encode('leagues', [l._sort, l.id]));
        return serializeFragment(items.map(({ _sort, ...l }) => l), pagination);
      }).then((fragment) => sendFragment(reply, now(), fragment));
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/leagues/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One league', operationId: 'getLeague', response: { 200: Ok(League, 'The league'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => {
      const fragment = await cache.get(`league|${req.params.id}`, async () => {
        const l = await catalog.getLeague(ctx.pool, req.params.id);
        if (!l) throw notFound('league', req.params.id);
        return serializeFragment(l);
      });
      return sendFragment(reply, now(), fragment);
    },
  );

  const ParticipantQuery = Type.Object({ league_id: Id, limit: Limit(), cursor: Type.Optional(Cursor) });
  app.get<{ Querystring: Static<typeof ParticipantQuery> }>(
    '/flow/v1/participants',
    { schema: { querystring: ParticipantQuery, tags: ['catalog'], summary: 'Participants of a league', operationId: 'listParticipants', response: { 200: OkPage(Participant, 'A page of the league’s participants, by name') } }, config: CATALOG },
    async (req, reply) => {
      const { league_id, limit, cursor } = req.query;
      const scope = `participants|${league_id}`;
      const fragment = await cache.get(`${scope}|${limit}|${cursor ?? ''}`, async () => {
        const after = cursor ? (ctx.cursors.decode(scope, cursor) as [string, string]) : undefined;
        const rows = await catalog.listParticipants(ctx.pool, league_id, limit + 1, after);
        const { items, pagination } = page(rows, limit, (p) => ctx.cursors.encode(scope, [p.name, p.id]));
        return serializeFragment(items, pagination);
      });
      return sendFragment(reply, now(), fragment);
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/participants/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One participant', operationId: 'getParticipant', response: { 200: Ok(Participant, 'The participant'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => {
      const fragment = await cache.get(`participant|${req.params.id}`, async () => {
        const p = await catalog.getParticipant(ctx.pool, req.params.id);
        if (!p) throw notFound('participant', req.params.id);
        return serializeFragment(p);
      });
      return sendFragment(reply, now(), fragment);
    },
  );

  const ContestQuery = Type.Object({
    q: Type.Optional(Text({ minLength: 2, maxLength: 100, description: 'case-insensitive substring of the title' })),
    league_id: Type.Optional(CommaList()),
    status: Type.Optional(CommaList()),
    start_after: Type.Optional(IsoTime('ISO 8601, inclusive')),
    start_before: Type.Optional(IsoTime('ISO 8601, inclusive')),
    parent_contest_id: Type.Optional(Id),
    limit: Limit(),
    cursor: Type.Optional(Cursor),
  });
  app.get<{ Querystring: Static<typeof ContestQuery> }>(
    '/flow/v1/contests',
    { schema: { querystring: ContestQuery, tags: ['catalog'], summary: 'List contests, ordered by start time', operationId: 'listContests', response: { 200: OkPage(Contest, 'A page of contests by start time') } }, config: CATALOG },
    (req, reply) => {
      // Keyed by the raw URL: a repeated read answers synchronously (no promise) before any parsing.
      const hit = cache.peek(req.url);
      if (hit !== undefined) return sendFragment(reply, now(), hit);
      return listContests(req.query, req.url).then((fragment) => sendFragment(reply, now(), fragment));
    },
  );

  async function listContests(q: Static<typeof ContestQuery>, url: string): Promise<string> {
    const filter: catalog.ContestFilter = {
      q: q.q,
      league_id: splitList('league_id', q.league_id),
      status: splitList('status', q.status ?? 'open'),
      start_after: q.start_after ? new Date(q.start_after).toISOString() : undefined,
      start_before: q.start_before ? new Date(q.start_before).toISOString() : undefined,
      parent_contest_id: q.parent_contest_id,
    };
    if (filter.start_after && filter.start_before && filter.start_after > filter.start_before) {
      throw badRequest('invalid_parameter', 'start_after is later than start_before', { parameter: 'start_after' });
    }
    // The cursor is bound to the filters: a cursor from another filter set is refused, not misapplied.
    const scope = `contests|${JSON.stringify(filter)}`;
    return cache.get(url, async () => {
      const after = q.cursor ? (ctx.cursors.decode(scope, q.cursor) as [string, string]) : undefined;
      const rows = await catalog.listContests(ctx.pool, filter, q.limit + 1, after);
      const { items, pagination } = page(rows, q.limit, (c) => ctx.cursors.encode(scope, [c.starts_at, c.id]));
      return serializeFragment(items, pagination);
    });
  }

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/contests/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One contest', operationId: 'getContest', response: { 200: Ok(Contest, 'The contest'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => {
      const fragment = await cache.get(`contest|${req.params.id}`, async () => {
        const c = await catalog.getContest(ctx.pool, req.params.id);
        if (!c) throw notFound('contest', req.params.id);
        return serializeFragment(c);
      });
      return sendFragment(reply, now(), fragment);
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/contests/:id/markets',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'Markets of a contest', operationId: 'listContestMarkets', response: { 200: Ok(Type.Array(Market), 'The contest’s market definitions'), 404: Errors.notFound } }, config: MARKETS },
    async (req, reply) => {
      const fragment = await cache.get(`contest-markets|${req.params.id}`, async () => {
        const c = await catalog.getContest(ctx.pool, req.params.id);
        if (!c) throw notFound('contest', req.params.id);
        return serializeFragment(await catalog.contestMarkets(ctx.pool, req.params.id));
      });
      return sendFragment(reply, now(), fragment);
    },
  );

  app.get(
    '/flow/v1/markets',
    { schema: { tags: ['catalog'], summary: 'All market definitions', operationId: 'listMarkets', response: { 200: Ok(Type.Array(Market), 'Every market definition') } }, config: MARKETS },
    async (_req, reply) => sendFragment(reply, now(), await cache.get('markets', async () => serializeFragment(await catalog.listMarkets(ctx.pool)))),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/markets/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One market definition', operationId: 'getMarket', response: { 200: Ok(Market, 'The market definition'), 404: Errors.notFound } }, config: MARKETS },
    async (req, reply) => {
      const fragment = await cache.get(`market|${req.params.id}`, async () => {
        const m = await catalog.getMarket(ctx.pool, req.params.id);
        if (!m) throw notFound('market', req.params.id);
        return serializeFragment(m);
      });
      return sendFragment(reply, now(), fragment);
    },
  );

  app.get(
    '/flow/v1/partners',
    { schema: { tags: ['catalog'], summary: 'Venues with order_config and credential_fields', operationId: 'listPartners', response: { 200: Ok(Type.Array(Partner), 'Every venue') } }, config: CATALOG },
    async (_req, reply) => sendFragment(reply, now(), await cache.get('partners', async () => serializeFragment(await catalog.listPartners(ctx.pool)))),
  );

  const PartnerParams = Type.Object({ partner_id: Id });
  app.get<{ Params: Static<typeof PartnerParams> }>(
    '/flow/v1/partners/:partner_id',
    { schema: { params: PartnerParams, tags: ['catalog'], summary: 'One venue', operationId: 'getPartner', response: { 200: Ok(Partner, 'The venue'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => {
      const fragment = await cache.get(`partner|${req.params.partner_id}`, async () => {
        const p = await catalog.getPartner(ctx.pool, req.params.partner_id);
        if (!p) throw notFound('partner', req.params.partner_id);
        return serializeFragment(p);
      });
      return sendFragment(reply, now(), fragment);
    },
  );
}
