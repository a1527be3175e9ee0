/**
 * Catalog reads: leagues, participants, contests, markets, partners (spec "Catalog reads").
 * Served from PostgreSQL through the read cache; unknown ids are 404 not_found. Each read is one
 * function that returns the serialized answer; its route and its MCP tool (api/rest/tools.ts) both
 * call it.
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
import { fromFragment, idArg, toolInput, toolsOf, twin } from '../tools.js';

const CATALOG = { entitlements: ['reference:read'] };
const MARKETS = { entitlements: ['markets:read'] };

const LeagueQuery = Type.Object({ limit: Limit(), cursor: Type.Optional(Cursor) });
const ParticipantQuery = Type.Object({ league_id: { ...Id, description: 'the league’s id (required)' }, limit: Limit(), cursor: Type.Optional(Cursor) });
const ContestQuery = Type.Object({
  q: Type.Optional(Text({ minLength: 2, maxLength: 100, description: 'case-insensitive substring of the title' })),
  league_id: Type.Optional({ ...CommaList(), description: 'league ids, comma-separated' }),
  status: Type.Optional({ ...CommaList(), description: 'statuses, comma-separated; default open' }),
  start_after: Type.Optional(IsoTime('ISO 8601, inclusive: contests starting at or after')),
  start_before: Type.Optional(IsoTime('ISO 8601, inclusive: contests starting at or before')),
  parent_contest_id: Type.Optional({ ...Id, description: 'only the children of this tournament' }),
  limit: Limit(),
  cursor: Type.Optional(Cursor),
});
const PartnerParams = Type.Object({ partner_id: Id });

export function catalogRoutes(app: FastifyInstance, ctx: AppContext, cache: ReadCache): void {
  const now = () => ctx.clock.now();
  const tools = toolsOf(app);

  // ---- the reads (each answers a serialized `"data":...[,"pagination":...]`) ----

  /** `key`: the cache key; the route passes its raw URL so a repeated read answers before any parsing. */
  const listLeagues = (q: Static<typeof LeagueQuery>, key: string) =>
    cache.get(key, async () => {
      const after = q.cursor ? (ctx.cursors.decode('leagues', q.cursor) as [number, string]) : undefined;
      const rows = await catalog.listLeagues(ctx.pool, q.limit + 1, after);
      const { items, pagination } = page(rows, q.limit, (l) => ctx.cursors.encode('leagues', [l._sort, l.id]));
      return serializeFragment(items.map(({ _sort, ...l }) => l), pagination);
    });
  const getLeague = (id: string) =>
    cache.get(`league|${id}`, async () => {
      const l = await catalog.getLeague(ctx.pool, id);
      if (!l) throw notFound('league', id);
      return serializeFragment(l);
    });
  const listParticipants = (q: Static<typeof ParticipantQuery>) => {
    const scope = `participants|${q.league_id}`;
    return cache.get(`${scope}|${q.limit}|${q.cursor ?? ''}`, async () => {
      const after = q.cursor ? (ctx.cursors.decode(scope, q.cursor) as [string, string]) : undefined;
      const rows = await catalog.listParticipants(ctx.pool, q.league_id, q.limit + 1, after);
      const { items, pagination } = page(rows, q.limit, (p) => ctx.cursors.encode(scope, [p.name, p.id]));
      return serializeFragment(items, pagination);
    });
  };
  const getParticipant = (id: string) =>
    cache.get(`participant|${id}`, async () => {
      const p = await catalog.getParticipant(ctx.pool, id);
      if (!p) throw notFound('participant', id);
      return serializeFragment(p);
    });
  /** `key`: as for listLeagues. */
  async function listContests(q: Static<typeof ContestQuery>, key: string): Promise<string> {
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
    return cache.get(key, async () => {
      const after = q.cursor ? (ctx.cursors.decode(scope, q.cursor) as [string, string]) : undefined;
      const rows = await catalog.listContests(ctx.pool, filter, q.limit + 1, after);
      const { items, pagination } = page(rows, q.limit, (c) => ctx.cursors.encode(scope, [c.starts_at, c.id]));
      return serializeFragment(items, pagination);
    });
  }
  const getContest = (id: string) =>
    cache.get(`contest|${id}`, async () => {
      const c = await catalog.getContest(ctx.pool, id);
      if (!c) throw notFound('contest', id);
      return serializeFragment(c);
    });
  const listContestMarkets = (id: string) =>
    cache.get(`contest-markets|${id}`, async () => {
      const c = await catalog.getContest(ctx.pool, id);
      if (!c) throw notFound('contest', id);
      return serializeFragment(await catalog.contestMarkets(ctx.pool, id));
    });
  const listMarkets = () => cache.get('markets', async () => serializeFragment(await catalog.listMarkets(ctx.pool)));
  const getMarket = (id: string) =>
    cache.get(`market|${id}`, async () => {
      const m = await catalog.getMarket(ctx.pool, id);
      if (!m) throw notFound('market', id);
      return serializeFragment(m);
    });
  const listPartners = () => cache.get('partners', async () => serializeFragment(await catalog.listPartners(ctx.pool)));
  const getPartner = (id: string) =>
    cache.get(`partner|${id}`, async () => {
      const p = await catalog.getPartner(ctx.pool, id);
      if (!p) throw notFound('partner', id);
      return serializeFragment(p);
    });

  // ---- the routes ----

  app.get<{ Querystring: Static<typeof LeagueQuery> }>(
    '/flow/v1/leagues',
    { schema: { querystring: LeagueQuery, tags: ['catalog'], summary: 'List leagues', operationId: 'listLeagues', response: { 200: OkPage(League, 'A page of leagues') } }, config: CATALOG },
    (req, reply) => {
      // Keyed by the raw URL: a repeated read answers synchronously (no promise) before any parsing.
      const hit = cache.peek(req.url);
      if (hit !== undefined) return sendFragment(reply, now(), hit);
      return listLeagues(req.query, req.url).then((fragment) => sendFragment(reply, now(), fragment));
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/leagues/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One league', operationId: 'getLeague', response: { 200: Ok(League, 'The league'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => sendFragment(reply, now(), await getLeague(req.params.id)),
  );

  app.get<{ Querystring: Static<typeof ParticipantQuery> }>(
    '/flow/v1/participants',
    { schema: { querystring: ParticipantQuery, tags: ['catalog'], summary: 'Participants of a league', operationId: 'listParticipants', response: { 200: OkPage(Participant, 'A page of the league’s participants, by name') } }, config: CATALOG },
    async (req, reply) => sendFragment(reply, now(), await listParticipants(req.query)),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/participants/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One participant', operationId: 'getParticipant', response: { 200: Ok(Participant, 'The participant'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => sendFragment(reply, now(), await getParticipant(req.params.id)),
  );

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

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/contests/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One contest', operationId: 'getContest', response: { 200: Ok(Contest, 'The contest'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => sendFragment(reply, now(), await getContest(req.params.id)),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/contests/:id/markets',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'Markets of a contest', operationId: 'listContestMarkets', response: { 200: Ok(Type.Array(Market), 'The contest’s market definitions'), 404: Errors.notFound } }, config: MARKETS },
    async (req, reply) => sendFragment(reply, now(), await listContestMarkets(req.params.id)),
  );

  app.get(
    '/flow/v1/markets',
    { schema: { tags: ['catalog'], summary: 'All market definitions', operationId: 'listMarkets', response: { 200: Ok(Type.Array(Market), 'Every market definition') } }, config: MARKETS },
    async (_req, reply) => sendFragment(reply, now(), await listMarkets()),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/flow/v1/markets/:id',
    { schema: { params: IdParams, tags: ['catalog'], summary: 'One market definition', operationId: 'getMarket', response: { 200: Ok(Market, 'The market definition'), 404: Errors.notFound } }, config: MARKETS },
    async (req, reply) => sendFragment(reply, now(), await getMarket(req.params.id)),
  );

  app.get(
    '/flow/v1/partners',
    { schema: { tags: ['catalog'], summary: 'Venues with order_config and credential_fields', operationId: 'listPartners', response: { 200: Ok(Type.Array(Partner), 'Every venue') } }, config: CATALOG },
    async (_req, reply) => sendFragment(reply, now(), await listPartners()),
  );

  app.get<{ Params: Static<typeof PartnerParams> }>(
    '/flow/v1/partners/:partner_id',
    { schema: { params: PartnerParams, tags: ['catalog'], summary: 'One venue', operationId: 'getPartner', response: { 200: Ok(Partner, 'The venue'), 404: Errors.notFound } }, config: CATALOG },
    async (req, reply) => sendFragment(reply, now(), await getPartner(req.params.partner_id)),
  );

  // ---- the same reads as MCP tools ----

  const arg = <T>(a: Record<string, unknown>, name: string) => a[name] as T;
  tools.add({
    name: 'list_leagues',
    description: 'List leagues (a page; pass pagination.next_cursor back as cursor for the next).',
    rest: 'GET /flow/v1/leagues',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({}, LeagueQuery),
    call: async (a) => fromFragment(await listLeagues(a as Static<typeof LeagueQuery>, `leagues|${String(a.limit)}|${String(a.cursor ?? '')}`)),
  });
  tools.add({
    name: 'get_league',
    description: 'One league by id; not_found when there is none.',
    rest: 'GET /flow/v1/leagues/:id',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({ league_id: idArg(Id, 'the league’s id') }),
    call: async (a) => fromFragment(await getLeague(arg(a, 'league_id'))),
  });
  tools.add({
    name: 'list_contests',
    description: 'List contests ordered by start time, filtered by title text (q), league, status (default open) and a start window; a page.',
    rest: 'GET /flow/v1/contests',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({}, ContestQuery),
    call: async (a) => fromFragment(await listContests(a as Static<typeof ContestQuery>, `contests-tool|${JSON.stringify(a)}`)),
  });
  tools.add({
    name: 'get_contest',
    description: 'One contest by id; not_found when there is none.',
    rest: 'GET /flow/v1/contests/:id',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({ contest_id: idArg(Id, 'the contest’s id') }),
    call: async (a) => fromFragment(await getContest(arg(a, 'contest_id'))),
  });
  tools.add({
    name: 'list_contest_markets',
    description: 'The market definitions a contest has; not_found for an unknown contest.',
    rest: 'GET /flow/v1/contests/:id/markets',
    ...twin(MARKETS),
    metered: true,
    input: toolInput({ contest_id: idArg(Id, 'the contest’s id') }),
    call: async (a) => fromFragment(await listContestMarkets(arg(a, 'contest_id'))),
  });
  tools.add({
    name: 'list_markets',
    description: 'Every market definition (the catalog of market types: moneyline, total, spread, ...).',
    rest: 'GET /flow/v1/markets',
    ...twin(MARKETS),
    metered: true,
    input: toolInput({}),
    call: async () => fromFragment(await listMarkets()),
  });
  tools.add({
    name: 'get_market',
    description: 'One market definition by id; not_found when there is none.',
    rest: 'GET /flow/v1/markets/:id',
    ...twin(MARKETS),
    metered: true,
    input: toolInput({ market_id: idArg(Id, 'the market definition’s id') }),
    call: async (a) => fromFragment(await getMarket(arg(a, 'market_id'))),
  });
  tools.add({
    name: 'list_participants',
    description: 'The participants (teams or athletes) of one league, by name; a page.',
    rest: 'GET /flow/v1/participants',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({}, ParticipantQuery),
    call: async (a) => fromFragment(await listParticipants(a as Static<typeof ParticipantQuery>)),
  });
  tools.add({
    name: 'get_participant',
    description: 'One participant by id; not_found when there is none.',
    rest: 'GET /flow/v1/participants/:id',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({ participant_id: idArg(Id, 'the participant’s id') }),
    call: async (a) => fromFragment(await getParticipant(arg(a, 'participant_id'))),
  });
  tools.add({
    name: 'list_partners',
    description: 'Every venue (partner) with its order_config and credential_fields.',
    rest: 'GET /flow/v1/partners',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({}),
    call: async () => fromFragment(await listPartners()),
  });
  tools.add({
    name: 'get_partner',
    description: 'One venue by partner_id; not_found when there is none.',
    rest: 'GET /flow/v1/partners/:partner_id',
    ...twin(CATALOG),
    metered: true,
    input: toolInput({ partner_id: idArg(Id, 'the venue’s partner_id') }),
    call: async (a) => fromFragment(await getPartner(arg(a, 'partner_id'))),
  });
}
