/**
 * The simulator control API (docs/simulator.md, header X-Admin-Token). Every change goes
 * through the venue adapters and the normal pipeline, exactly as a real venue's would.
 *
 * The simulator runs in the ingest role, maybe in another process: each call becomes a command
 * (src/sim/control.ts) sent to it over Redis (pipelines/producers/sim-commands.ts), and its answer
 * becomes the HTTP answer. Mounted wherever the api role runs with simulated venues in FLOW_VENUES.
 * Given the simulator itself (`{ market, refresh }`, tests), the commands run in this process.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { ApiError } from '../../../src/errors.js';
import { VenueError, venueErrorFromJSON } from '../../../src/venues/errors.js';
import { LIMIT_TYPES, MAX_LIMITS, parseLimits, limitToWire, USER_GRANTS, type UserGrant } from '../../../src/domain/execution-limits.js';
import { getLeague, listPartners } from '../../../src/store/pg/catalog.js';
import { accountExists, recordConnection } from '../../../src/store/pg/partners.js';
import { replaceLimits } from '../../../src/store/pg/policy.js';
import type { Pool } from '../../../src/store/pg/pool.js';
import {
  localSimCommands,
  SIM_PERSONALITIES,
  SIM_SITUATIONS,
  SITUATION_CONFLICTS,
  type SimCommand,
  type SimCommandResults,
  type SimCommandSender,
  type SimControl,
  type SimPartnerId,
  type SimWireBalance,
} from '../../../src/sim/index.js';
import type { AppContext } from '../context.js';
import { Errors, Ok } from '../openapi/responses.js';
import { GameState, Nullable, PriceLevel, SimConnectResult, SimMarketState, SimPolicy, SimSituationResult, simSituationToWire } from '../openapi/shapes.js';
import { sendEnvelope } from '../reply.js';
import { Id, IdRecord, IsoTime, PositionHash, Quantity, Text, UnixMs } from '../schemas.js';

export type { SimControl } from '../../../src/sim/index.js';

/**
 * The simulator names a missing thing `unknown_<thing>`; the API answers 404 `<thing>_not_found`,
 * the spec's not_found family (opportunity_not_found, model_not_found, ...). `unknown_field` is a
 * bad body, not a missing thing.
 */
function toApiError(err: unknown): never {
  if (err instanceof VenueError) {
    const missing = err.code.startsWith('unknown_') && err.code !== 'unknown_field';
    if (missing) throw new ApiError(404, `${err.code.slice('unknown_'.length)}_not_found`, err.message, err.details ?? undefined);
    const status = err.code === 'already_settled' || err.code === 'contest_settled' ? 409 : 400;
    throw new ApiError(status, err.code, err.message, err.details ?? undefined);
  }
  throw err;
}

/**
 * A situation the simulator cannot lay where it was asked (the venue prints no trades, the position
 * has no book there, no room for the move) is 409 with the simulator's code; the body's own
 * refusals are 400 unknown_parameter / invalid_parameter; the rest as every other sim route.
 */
function toSituationError(err: unknown): never {
  if (err instanceof VenueError) {
    if (err.code === 'unknown_parameter' || err.code === 'invalid_parameter') throw new ApiError(400, err.code, err.message, err.details ?? undefined);
    if ((SITUATION_CONFLICTS as readonly string[]).includes(err.code)) throw new ApiError(409, err.code, err.message, err.details ?? undefined);
  }
  toApiError(err);
}

const Price = Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 });
const Level = Type.Object({ price: Price, available: Quantity() }, { additionalProperties: false });
const closed = { additionalProperties: false } as const;

/** The operator answers: the envelope, a wrong token, and for a change the simulator's own refusals. */
const simResponses = (ok: TSchema, change: boolean, refused = 'The request or its values are refused; the code names why', conflict = 'The contest is already settled') => ({
  200: Ok(ok, 'Done'),
  401: Errors.unauthorized,
  ...(change
    ? {
        400: Errors.operator(refused),
        404: Errors.operator('An unknown venue, position, contest or account'),
        409: Errors.operator(conflict),
      }
    : {}),
  // Every call reaches the simulator over Redis: no process running it, or Redis away, is a 503.
  503: Errors.simulatorUnavailable,
});

/**
 * Records a connection the simulator just made in PostgreSQL as the hosted flow would: the
 * connection with its credential status, and the venue's balance read at once as its snapshot
 * (the simulator keeps its own state; this is the service's record of it).
 */
async function recordSimConnection(pool: Pool, made: SimCommandResults['connect'], scopes: readonly UserGrant[] | undefined, nowMs: number): Promise<UserGrant[]> {
  const { connection: conn, balance } = made;
  const partnerId = conn.partner_id as SimPartnerId;
  const reportsBalance = SIM_PERSONALITIES[partnerId].capabilities.balance;
  const wire: SimWireBalance | null = balance;
  const recorded = await recordConnection(
    pool,
    {
      routerAccountId: conn.router_account_id,
      partnerId,
      credentialStatus: conn.credential_status,
      reportsBalance,
      snapshot: wire ? { balance: wire.available_usd, held: wire.held_usd, ts_event: wire.ts } : null,
      // In the grants' own order, whatever order they were sent in.
      scopes: scopes === undefined ? undefined : USER_GRANTS.filter((g) => scopes.includes(g)),
    },
    nowMs,
  );
  return recorded.scopes;
}

const accountNotFound = (account: string, what: string) =>
  new ApiError(404, 'account_not_found', `no account ${JSON.stringify(account)}: ${what} an account a key or an organization created`, { router_account_id: account });

/**
 * Sends a command and turns its answer into the route's value or its HTTP error: the simulator's
 * refusal through `refused` (its code), a store the change could not be passed on to as 503.
 */
async function ask<K extends SimCommand['op']>(sim: SimCommandSender, cmd: Extract<SimCommand, { op: K }>, refused: (err: VenueError) => never = toApiError): Promise<SimCommandResults[K]> {
  const a = await sim.send(cmd);
  if (a.ok) return a.value as SimCommandResults[K];
  if ('refused' in a) refused(venueErrorFromJSON(a.refused));
  if ('unavailable' in a) {
    const s = a.unavailable.retry_after_seconds;
    throw new ApiError(503, 'service_unavailable', a.unavailable.message, { retry_after_seconds: s }, { 'retry-after': String(s) });
  }
  throw new Error(`the simulator failed to carry out ${cmd.op}: ${a.failed}`);
}

/** The simulator the routes drive: a command sender (over Redis), or the simulator itself in this process. */
export function simRoutes(target: SimControl): (app: FastifyInstance, ctx: AppContext) => void;
export function simRoutes(target: SimCommandSender): (app: FastifyInstance, ctx: AppContext) => void;
export function simRoutes(target: SimCommandSender | SimControl) {
  const sim: SimCommandSender = 'market' in target ? localSimCommands(target) : target;
  return (app: FastifyInstance, ctx: AppContext): void => {
    const expected = Buffer.from(ctx.config.adminToken);
    function admin(req: FastifyRequest): void {
      const given = Buffer.from(String(req.headers['x-admin-token'] ?? ''));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new ApiError(401, 'unauthorized', 'send the operator token in X-Admin-Token (FLOW_ADMIN_TOKEN)');
      }
    }
    const now = () => ctx.clock.now();
    /** `doc.refused`, `doc.conflict`: the route's own description of its 400 and 409. */
    const opts = (summary: string, body: unknown, doc: { operationId: string; ok: TSchema; refused?: string; conflict?: string }, params?: unknown) => ({
      schema: {
        tags: ['simulator'],
        summary,
        ...(body ? { body } : {}),
        ...(params ? { params } : {}),
        operationId: doc.operationId,
        security: [{ adminToken: [] }],
        response: simResponses(doc.ok, body !== undefined, doc.refused, doc.conflict),
      },
      config: { public: true },
      onRequest: async (req: FastifyRequest) => admin(req),
    });

    const Freeze = Type.Object({ frozen: Type.Boolean() }, { additionalProperties: false });
    app.post<{ Body: Static<typeof Freeze> }>('/sim/v1/freeze', opts('Stop or restart the random market dynamics', Freeze, { operationId: 'simFreeze', ok: Type.Object({ frozen: Type.Boolean() }, closed) }), async (req, reply) => {
      return sendEnvelope(reply, now(), await ask(sim, { op: 'freeze', frozen: req.body.frozen }));
    });

    const Quote = Type.Object(
      {
        partner_id: Id,
        position_hash: PositionHash,
        price: Price,
        available: Quantity(),
        levels: Type.Optional(Type.Array(Level, { maxItems: 100 })),
        listed_side: Type.Optional(Text({ minLength: 1, maxLength: 32, description: 'the side this venue lists the participant on' })),
      },
      { additionalProperties: false },
    );
    app.post<{ Body: Static<typeof Quote> }>('/sim/v1/quotes', opts("Set one venue's quote and book for a position", Quote, {
      operationId: 'simSetQuote',
      ok: Type.Object({ partner_id: Type.String(), position_hash: Type.String(), levels: Type.Array(PriceLevel), ts_event: Type.Number({ description: 'unix ms' }) }, closed),
    }), async (req, reply) => {
      return sendEnvelope(reply, now(), await ask(sim, { op: 'quote', input: req.body }));
    });

    const Trade = Type.Object(
      {
        partner_id: Id,
        position_hash: PositionHash,
        price: Price,
        size_contracts: Quantity({ exclusiveMinimum: 0 }),
        taker_action: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
        is_block: Type.Optional(Type.Boolean()),
        trader_id: Type.Optional(Type.Union([Text({ maxLength: 200 }), Type.Null()])),
        executed_at: Type.Optional(Type.Union([UnixMs, IsoTime('ISO 8601 date-time with a zone')], { description: 'unix ms or ISO 8601, 1970 to 2286' })),
      },
      { additionalProperties: false },
    );
    app.post<{ Body: Static<typeof Trade> }>('/sim/v1/trades', opts('Emit a trade print on a venue that publishes trades', Trade, {
      operationId: 'simEmitTrade',
      ok: Type.Object({ venue_trade_id: Type.String(), executed_at: Type.String({ format: 'date-time' }) }, closed),
    }), async (req, reply) => {
      return sendEnvelope(reply, now(), await ask(sim, { op: 'trade', input: req.body }));
    });

    const Fraction = (hi: number, description: string) => Type.Number({ exclusiveMinimum: 0, maximum: hi, description });
    const Situation = Type.Object(
      {
        type: Type.Enum([...SIM_SITUATIONS], { description: 'the signal type to produce' }),
        partner_id: Type.Optional(Id),
        position_hash: Type.Optional(PositionHash),
        edge: Type.Optional(Fraction(0.2, 'arbitrage: how far under 1.0 the pair sums (default 0.03)')),
        move: Type.Optional(Fraction(0.5, 'price_move: the move in price points (default 0.1)')),
        direction: Type.Optional(Type.Enum(['up', 'down', 'buy', 'sell'], { description: 'price_move: up or down; whale_trade, block_trade, flow_imbalance: the aggressor, buy or sell' })),
        notional_usd: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 10_000_000, description: 'USD of the situation’s prints together (baseline excluded)' })),
        prints: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'flow_imbalance, volume_spike, trade_burst: how many prints' })),
        through: Type.Optional(Fraction(0.5, 'trade_through: how far above the best ask the buy prints (default 0.04)')),
        window_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 60_000, description: 'trade_burst: the window its prints fall in (default 5000)' })),
        with_baseline: Type.Optional(Type.Boolean({ description: 'whale_trade, volume_spike: lay down the baseline prints first (default true)' })),
      },
      { additionalProperties: false },
    );
    app.post<{ Body: Static<typeof Situation> }>(
      '/sim/v1/situations',
      opts('Make a market situation (a signal type) happen now, exactly', Situation, {
        operationId: 'simForceSituation',
        ok: SimSituationResult,
        refused: 'The body is refused: unknown_parameter (a field the type does not take), invalid_parameter',
        conflict: `The venue or position cannot carry it now: ${SITUATION_CONFLICTS.join(', ')}`,
      }),
      async (req, reply) => {
        // Polled venues whose books changed are read at once, as after POST /sim/v1/quotes (src/sim/control.ts).
        const result = await ask(sim, { op: 'situation', input: req.body }, toSituationError);
        return sendEnvelope(reply, now(), simSituationToWire(result));
      },
    );

    const ContestParams = Type.Object({ id: Id });
    app.post<{ Params: Static<typeof ContestParams>; Body: Record<string, unknown> }>(
      '/sim/v1/contests/:id/state',
      opts('Set live game state (the state fields at top level)', Type.Object({}, { additionalProperties: true }), {
        operationId: 'simSetContestState',
        ok: Type.Object({ contest_id: Type.String(), state: GameState }, closed),
      }, ContestParams),
      async (req, reply) => {
        return sendEnvelope(reply, now(), await ask(sim, { op: 'contest_state', contest_id: req.params.id, fields: req.body }));
      },
    );

    const Settle = Type.Union([
      Type.Object({ winner_participant_id: Id }, { additionalProperties: false }),
      Type.Object({ results: IdRecord(Type.Union([Type.Literal('win'), Type.Literal('lose'), Type.Literal('push')]), 10_000) }, { additionalProperties: false }),
    ]);
    app.post<{ Params: Static<typeof ContestParams>; Body: Static<typeof Settle> }>(
      '/sim/v1/contests/:id/settle',
      opts('Settle a contest', Settle, {
        operationId: 'simSettleContest',
        ok: Type.Object(
          {
            contest_id: Type.String(),
            winner_participant_id: Nullable(Type.String()),
            results: Type.Array(Type.Object({ position_hash: Type.String(), result: Type.Enum(['win', 'lose', 'push']) }, closed)),
          },
          closed,
        ),
      }, ContestParams),
      async (req, reply) => {
        // The answer waits for the settlement's record: a 200 means its orders will settle, crash or not (src/sim/control.ts).
        return sendEnvelope(reply, now(), await ask(sim, { op: 'settle', contest_id: req.params.id, input: req.body }));
      },
    );

    const AccountParams = Type.Object({ router_account_id: Id });
    const Connect = Type.Object(
      {
        partner_id: Id,
        balance: Quantity(),
        credential_status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('connected'), Type.Literal('failed')])),
        scopes: Type.Optional(
          Type.Array(Type.Enum([...USER_GRANTS]), {
            maxItems: USER_GRANTS.length,
            uniqueItems: true,
            description: 'the grants the user gives on this venue; omitted: a new connection gets them all, a reconnected one keeps its own',
          }),
        ),
      },
      { additionalProperties: false },
    );
    app.post<{ Params: Static<typeof AccountParams>; Body: Static<typeof Connect> }>(
      '/sim/v1/accounts/:router_account_id/connect',
      opts('Connect a sim venue to an account with a venue balance and the user’s grants', Connect, { operationId: 'simConnectAccount', ok: SimConnectResult }, AccountParams),
      async (req, reply) => {
        const account = req.params.router_account_id;
        // Checked before the simulator changes: a connection to no account would be recorded nowhere.
        if (!(await accountExists(ctx.pool, account))) throw accountNotFound(account, 'connect venues to');
        const { partner_id, balance, credential_status } = req.body;
        const made = await ask(sim, { op: 'connect', router_account_id: account, input: { partner_id, balance, ...(credential_status ? { credential_status } : {}) } });
        // The grants are between the user and the service (the hosted flow records them), not the venue's.
        const scopes = await recordSimConnection(ctx.pool, made, req.body.scopes, now());
        return sendEnvelope(reply, now(), { ...made.connection, scopes });
      },
    );

    const Limit = Type.Object(
      {
        type: Text({ minLength: 1, maxLength: 64, description: LIMIT_TYPES.join(', ') }),
        params: Type.Optional(
          Type.Object(
            {
              amount: Type.Optional(Quantity({ exclusiveMinimum: 0, description: 'USD, at most 6 decimals' })),
              partner_id: Type.Optional(Id),
              league_id: Type.Optional(Id),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    );
    const Policy = Type.Object({ limits: Type.Array(Limit, { maxItems: MAX_LIMITS }) }, { additionalProperties: false });
    app.post<{ Params: Static<typeof AccountParams>; Body: Static<typeof Policy> }>(
      '/sim/v1/accounts/:router_account_id/policy',
      opts(
        'Replace an account’s execution limits, as the hosted page in manage mode would',
        Policy,
        { operationId: 'simSetPolicy', ok: SimPolicy, refused: 'The limits are refused: unknown_limit_type, invalid_limit_params, duplicate_limit, or the body’s own (unknown_parameter, invalid_parameter)' },
        AccountParams,
      ),
      async (req, reply) => {
        const account = req.params.router_account_id;
        const partners = new Map((await listPartners(ctx.pool)).map((p) => [p.partner_id, p]));
        const leagueIds = [...new Set(req.body.limits.flatMap((l) => (l.params?.league_id !== undefined ? [l.params.league_id] : [])))];
        const leagues = new Set((await Promise.all(leagueIds.map((id) => getLeague(ctx.pool, id)))).flatMap((l) => (l ? [l.id] : [])));
        const parsed = parseLimits(req.body.limits, {
          venue: (id) => {
            const p = partners.get(id);
            return p === undefined ? null : p.internal_book ? 'internal' : 'real';
          },
          league: (id) => leagues.has(id),
        });
        if ('refusal' in parsed) throw new ApiError(400, parsed.refusal.code, parsed.refusal.message, parsed.refusal.details);
        if (!(await replaceLimits(ctx.pool, account, parsed.limits))) throw accountNotFound(account, 'set limits on');
        return sendEnvelope(reply, now(), { router_account_id: account, limits: parsed.limits.map(limitToWire) });
      },
    );

    app.get('/sim/v1/state', opts('Seed, frozen flag and venues', undefined, { operationId: 'simGetState', ok: SimMarketState }), async (_req, reply) => sendEnvelope(reply, now(), await ask(sim, { op: 'state' })));
  };
}
