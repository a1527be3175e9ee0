/**
 * Live reads from the hot snapshot in Redis (spec "Liquidity, depth, history, state"):
 * GET contests/:id/liquidity, GET depth/:position_hash, GET contests/:id/state,
 * POST contest-state/batch. Bodies are served as stored: serialized once by the compute worker.
 * The first three are also MCP tools (api/rest/tools.ts), answered by the same read functions.
 */
import type { FastifyInstance } from 'fastify';
import { LRUCache } from 'lru-cache';
import { Type, type Static } from 'typebox';
import { badRequest, notFound } from '../../../src/errors.js';
import { parsePositionHash } from '../../../src/domain/hashes.js';
import { getContest } from '../../../src/store/pg/catalog.js';
import type { HotState } from '../../../src/store/redis/hot.js';
import { logKeys } from '../../../src/store/redis/eventlog.js';
import type { AppContext } from '../context.js';
import { sendCachedData, sendEnvelope, sendFragment } from '../reply.js';
import { Id, IdParams, PositionHash } from '../schemas.js';
import { Errors, Ok } from '../openapi/responses.js';
import { ContestState, ContestStateEntry, Depth, LiquidityMeta, Position } from '../openapi/shapes.js';
import { LiquidityCopies, type LiquidityCopy } from './copies.js';
import { idArg, toolInput, toolsOf, twin } from '../tools.js';

const LIQUIDITY = { entitlements: ['markets:read'] };
const DEPTH = { entitlements: ['depth:read'] };
const STATE = { entitlements: ['gamestate:read'] };
const DepthParams = Type.Object({ position_hash: PositionHash });

export function liquidityRoutes(hot: HotState) {
  return async (app: FastifyInstance, ctx: AppContext): Promise<void> => {
    const now = () => ctx.clock.now();
    // Contest existence is catalog data: remember the answer briefly instead of asking PostgreSQL per read.
    const known = new LRUCache<string, { ok: boolean }>({ max: 10_000, ttl: 10_000, ttlResolution: 0 });
    async function contestExists(id: string): Promise<boolean> {
      const hit = known.get(id);
      if (hit) return hit.ok;
      const ok = (await getContest(ctx.pool, id)) !== null;
      known.set(id, { ok });
      return ok;
    }

    const copies = new LiquidityCopies(hot);
    const sweep = setInterval(() => copies.sweep(), 30_000);
    sweep.unref();
    // Every write that recomputes a contest's liquidity publishes the contest id here.
    const changed = logKeys(ctx.ks).liquidityChanged;
    const subscriber = ctx.redis.duplicate();
    subscriber.on('message', (topic: string, contestId: string) => {
      if (topic === changed) copies.drop(contestId);
    });
    await subscriber.subscribe(changed);
    app.addHook('onClose', async () => {
      clearInterval(sweep);
      await subscriber.unsubscribe(changed).catch(() => undefined);
      subscriber.disconnect();
    });
    const eventIdMeta = (id: string | null) => `"event_id":${id === null ? 'null' : JSON.stringify(id)}`;

    // ---- the reads ----

    /** The contest's stored liquidity (null: nothing quoted yet); 404 for a contest that does not exist. */
    async function readLiquidity(contestId: string): Promise<LiquidityCopy | null> {
      const copy = await copies.get(contestId);
      if (copy !== null) return copy;
      if (!(await contestExists(contestId))) throw notFound('contest', contestId);
      return null;
    }

    /** One position's depth, serialized as stored. */
    async function readDepth(hash: string): Promise<string> {
      if (hash.includes(',')) throw badRequest('invalid_parameter', 'depth takes exactly one position_hash per call', { parameter: 'position_hash' });
      // We minted the hash, so we may read the contest out of it to find its depth.
      const key = parsePositionHash(hash);
      const stored = key ? await hot.depth(key.contest_id, hash) : null;
      if (stored === null) throw notFound('position', hash);
      return stored;
    }

    /** The contest's cached game state, serialized as stored. */
    async function readState(contestId: string): Promise<string> {
      const stored = await hot.contestState(contestId);
      if (stored === null) throw notFound('contest_state', contestId);
      return stored;
    }

    // ---- the routes ----

    app.get<{ Params: Static<typeof IdParams> }>(
      '/flow/v1/contests/:id/liquidity',
      {
        schema: {
          params: IdParams,
          tags: ['liquidity'],
          summary: 'Every bettable position of a contest with venue prices',
          description: 'meta.event_id names the last liquidity event this snapshot reflects: subscribe to the stream with resume_from {contest_id: event_id} to get every change after it (docs/stream.md).',
          operationId: 'getContestLiquidity',
          response: { 200: Ok(Type.Array(Position), 'Every position of the contest; empty while nothing is quoted', LiquidityMeta), 404: Errors.notFound },
        },
        config: LIQUIDITY,
      },
      async (req, reply) => {
        const copy = await readLiquidity(req.params.id);
        if (copy !== null) return sendCachedData(reply, now(), copy.fragment, eventIdMeta(copy.eventId));
        return sendFragment(reply, now(), '"data":[]', eventIdMeta(null));
      },
    );

    app.get<{ Params: Static<typeof DepthParams> }>(
      '/flow/v1/depth/:position_hash',
      { schema: { params: DepthParams, tags: ['liquidity'], summary: 'Order-book depth of one position (URL-encode the hash)', operationId: 'getPositionDepth', response: { 200: Ok(Depth, 'Every venue’s book for the position'), 404: Errors.notFound } }, config: DEPTH },
      async (req, reply) => sendFragment(reply, now(), `"data":${await readDepth(req.params.position_hash)}`),
    );

    app.get<{ Params: Static<typeof IdParams> }>(
      '/flow/v1/contests/:id/state',
      { schema: { params: IdParams, tags: ['liquidity'], summary: 'Live game state of a contest', operationId: 'getContestState', response: { 200: Ok(ContestState, 'The cached game state'), 404: Errors.notFound } }, config: STATE },
      async (req, reply) => sendFragment(reply, now(), `"data":${await readState(req.params.id)}`),
    );

    // ---- the same reads as MCP tools ----

    const tools = toolsOf(app);
    tools.add({
      name: 'get_contest_liquidity',
      description: 'Every bettable position of a contest: consensus price and each venue’s price, size and fees; empty while nothing is quoted; not_found for an unknown contest.',
      rest: 'GET /flow/v1/contests/:id/liquidity',
      ...twin(LIQUIDITY),
      metered: true,
      input: toolInput({ contest_id: idArg(Id, 'the contest’s id') }),
      call: async (a) => {
        const copy = await readLiquidity(a.contest_id as string);
        return { data: copy === null ? [] : (JSON.parse(copy.fragment.toString('utf8')) as unknown) };
      },
    });
    tools.add({
      name: 'get_position_depth',
      description: 'The order-book depth of one position at every venue (needs depth:read); not_found when none is held.',
      rest: 'GET /flow/v1/depth/:position_hash',
      ...twin(DEPTH),
      metered: true,
      input: toolInput({ position_hash: idArg(PositionHash, 'one position_hash, verbatim') }),
      call: async (a) => ({ data: JSON.parse(await readDepth(a.position_hash as string)) as unknown }),
    });
    tools.add({
      name: 'get_contest_state',
      description: 'The live game state of a contest: status, clock, period, scores (needs gamestate:read); not_found when nothing is cached.',
      rest: 'GET /flow/v1/contests/:id/state',
      ...twin(STATE),
      metered: true,
      input: toolInput({ contest_id: idArg(Id, 'the contest’s id') }),
      call: async (a) => ({ data: JSON.parse(await readState(a.contest_id as string)) as unknown }),
    });

    const Batch = Type.Object(
      { contest_ids: Type.Array(Id, { maxItems: 200, description: 'at most 200 contest ids' }) },
      { additionalProperties: false },
    );
    app.post<{ Body: Static<typeof Batch> }>(
      '/flow/v1/contest-state/batch',
      { schema: { body: Batch, tags: ['liquidity'], summary: 'Live game state of up to 200 contests', operationId: 'getContestStates', response: { 200: Ok(Type.Record(Type.String(), ContestStateEntry), 'Keyed by contest_id; contests without cached state are absent') } }, config: STATE },
      async (req, reply) => {
        const ids = [...new Set(req.body.contest_ids)];
        const states = await hot.contestStates(ids);
        const data: Record<string, unknown> = {};
        ids.forEach((id, i) => {
          const s = states[i];
          if (s) {
            const o = JSON.parse(s) as { contest_id: string; state: unknown; refreshed_at: string };
            data[id] = { contest_id: o.contest_id, state: o.state, refreshed_at: o.refreshed_at };
          }
        });
        return sendEnvelope(reply, now(), data);
      },
    );
  };
}
