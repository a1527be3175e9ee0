/**
 * History reads from ClickHouse (spec "Liquidity, depth, history, state" and "Trades"):
 *   GET /flow/v1/contests/:id/price-history   pricing:history (also written price_history)
 *   GET /flow/v1/trades                        trades:read
 * Bad input is a 400 invalid_parameter naming the parameter; ClickHouse trouble is a 503
 * history_unavailable, never a 500. Rows `flow history synthesize` wrote are left out unless
 * FLOW_HISTORY_INCLUDE_SYNTHETIC is set (docs/history.md). The price history is also the MCP tool
 * get_contest_price_history (api/rest/tools.ts), answered by the same read function.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import {
  DEFAULT_HISTORY_POINTS,
  MAX_HISTORY_POINTS,
  MAX_HISTORY_POSITIONS,
  REQUESTED_RESOLUTIONS,
  effectiveResolution,
  isRequestedResolution,
  resolveHistoryWindow,
} from '../../../src/domain/history.js';
import { API_VERSION } from '../../../src/domain/envelope.js';
import { TRADES_DEFAULT_LIMIT, TRADES_MAX_LIMIT, resolveTradesWindow } from '../../../src/domain/trades.js';
import { ApiError, badRequest } from '../../../src/errors.js';
import type { ClickHouseClient } from '../../../src/store/clickhouse/client.js';
import { HistoryStore } from '../../../src/store/clickhouse/store.js';
import type { RoutePlugin } from '../app.js';
import type { AppContext } from '../context.js';
import { sendEnvelope } from '../reply.js';
import { Id, IdParams, Limit, PositionHash, Text, splitList } from '../schemas.js';
import { Errors, Ok } from '../openapi/responses.js';
import { PriceHistory, TradePrint } from '../openapi/shapes.js';
import { idArg, toolInput, toolsOf, twin } from '../tools.js';

const PRICE_HISTORY = { entitlements: ['pricing:history'] };

const unavailable = (what: string) =>
  new ApiError(503, 'history_unavailable', `${what} is unavailable: the history store (ClickHouse) did not answer; retry shortly`, { retry_after_seconds: 5 }, { 'retry-after': '5' });

const PriceHistoryQuery = Type.Object({
  from: Type.Optional(Text({ maxLength: 32, description: 'unix ms, inclusive; default 1 hour before to' })),
  to: Type.Optional(Text({ maxLength: 32, description: 'unix ms, inclusive; default now' })),
  resolution: Type.Optional(Text({ maxLength: 16, description: `one of ${REQUESTED_RESOLUTIONS.join(', ')}; default auto` })),
  position_hash: Type.Optional(Text({ minLength: 1, maxLength: 60_000, description: `comma-separated, at most ${MAX_HISTORY_POSITIONS}` })),
  partner_id: Type.Optional(Id),
  limit: Limit(MAX_HISTORY_POINTS, DEFAULT_HISTORY_POINTS),
});

const DATA_HEAD = Buffer.from('{"data":');

/** Where a failed query is logged (the request's logger, or the app's for a tool call). */
interface ErrorLog {
  error(obj: object, msg: string): void;
}

const TradesQuery = Type.Object({
  contest_id: Type.Optional(Id),
  position_hash: Type.Optional(PositionHash),
  partner: Type.Optional(Text({ minLength: 1, maxLength: 200, description: 'one venue by partner_id or name' })),
  since: Type.Optional(Text({ maxLength: 64, description: 'ISO 8601 (or unix ms), inclusive; default one hour ago; at most 7 days back' })),
  until: Type.Optional(Text({ maxLength: 64, description: 'ISO 8601 (or unix ms), exclusive' })),
  min_notional_usd: Type.Optional(Text({ maxLength: 32, description: 'only prints at least this large (USD)' })),
  limit: Limit(TRADES_MAX_LIMIT, TRADES_DEFAULT_LIMIT),
});

/**
 * The history routes with an explicit client (or a lazy getter, so a process opens ClickHouse only
 * when a history request arrives). Without one they use ctx.clickhouse.
 */
export function createHistoryRoutes(opts: { clickhouse?: ClickHouseClient | (() => ClickHouseClient) } = {}): RoutePlugin {
  return (app: FastifyInstance, ctx: AppContext): void => {
    const now = () => ctx.clock.now();
    let store: HistoryStore | null = null;
    const getStore = (): HistoryStore | null => {
      if (store) return store;
      const ch = typeof opts.clickhouse === 'function' ? opts.clickhouse() : (opts.clickhouse ?? ctx.clickhouse);
      if (!ch) return null;
      store = new HistoryStore(ch, { retentionDays: ctx.config.historyRetentionDays, log: ctx.log });
      // Prepare the schema now so the first request does not pay for it; failures retry per request.
      store.ready().catch(() => undefined);
      return store;
    };
    if (typeof opts.clickhouse !== 'function') getStore();

    async function guarded<T>(what: string, fn: (s: HistoryStore) => Promise<T>, log: ErrorLog): Promise<T> {
      try {
        const s = getStore();
        if (!s) throw unavailable(what);
        return await fn(s);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        log.error({ err }, `${what} query failed`);
        throw unavailable(what);
      }
    }

    /**
     * A contest's price history: the `data` object serialized in pieces, its points array being
     * ClickHouse's own output bytes (no parse, no re-serialization, joined once by the caller).
     */
    async function readPriceHistory(contestId: string, q: Static<typeof PriceHistoryQuery>, log: ErrorLog): Promise<Buffer[]> {
      const window = resolveHistoryWindow(q.from, q.to, now());
      if (!window.ok) throw badRequest('invalid_parameter', window.message, { parameter: window.parameter });
      const requested = q.resolution ?? 'auto';
      if (!isRequestedResolution(requested)) {
        throw badRequest('invalid_parameter', `resolution must be one of ${REQUESTED_RESOLUTIONS.join(', ')}`, {
          parameter: 'resolution',
          allowed: REQUESTED_RESOLUTIONS,
        });
      }
      const hashes = splitList('position_hash', q.position_hash, MAX_HISTORY_POSITIONS);
      const resolution = effectiveResolution(requested, window.to - window.from);
      const result = await guarded(
        'price history',
        (s) =>
          s.priceHistory({
            contestId,
            from: window.from,
            to: window.to,
            resolution,
            positionHashes: hashes,
            partnerId: q.partner_id,
            limit: q.limit,
            includeSynthetic: ctx.config.historyIncludeSynthetic,
          }),
        log,
      );
      const head = `{"contest_id":${JSON.stringify(contestId)},"resolution":"${resolution}","from":${window.from},"to":${window.to},"points":`;
      const tail = `${result.seriesTruncated ? ',"series_truncated":true' : ''}}`;
      return [Buffer.from(head), result.points, Buffer.from(tail)];
    }

    app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof PriceHistoryQuery> }>(
      '/flow/v1/contests/:id/price-history',
      {
        schema: {
          params: IdParams,
          querystring: PriceHistoryQuery,
          tags: ['history'],
          summary: 'Price history of a contest: consensus per position, or one venue with partner_id',
          operationId: 'getContestPriceHistory',
          response: { 200: Ok(PriceHistory, 'The points of every series in the window; an unknown contest has none'), 503: Errors.historyUnavailable },
        },
        config: PRICE_HISTORY,
      },
      async (req, reply) => {
        const data = await readPriceHistory(req.params.id, req.query, req.log);
        return reply
          .code(200)
          .type('application/json; charset=utf-8')
          .send(Buffer.concat([DATA_HEAD, ...data, Buffer.from(`,"meta":{"timestamp":"${new Date(now()).toISOString()}","api_version":"${API_VERSION}"}}`)]));
      },
    );

    toolsOf(app).add({
      name: 'get_contest_price_history',
      description:
        'Price history of a contest (needs pricing:history): consensus per position, or one venue with partner_id; from/to in unix ms (default the last hour), resolution auto by default (read it from the answer).',
      rest: 'GET /flow/v1/contests/:id/price-history',
      ...twin(PRICE_HISTORY),
      metered: true,
      input: toolInput({ contest_id: idArg(Id, 'the contest’s id') }, PriceHistoryQuery),
      call: async (a) => {
        const { contest_id, ...q } = a;
        const parts = await readPriceHistory(contest_id as string, q as Static<typeof PriceHistoryQuery>, ctx.log);
        return { data: JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown };
      },
    });

    app.get<{ Querystring: Static<typeof TradesQuery> }>(
      '/flow/v1/trades',
      {
        schema: {
          querystring: TradesQuery,
          tags: ['trades'],
          summary: 'Trade prints of a contest or a position, newest first',
          operationId: 'listTrades',
          response: { 200: Ok(Type.Array(TradePrint), 'Trade prints, newest first'), 503: Errors.historyUnavailable },
        },
        config: { entitlements: ['trades:read'] },
      },
      async (req, reply) => {
        const q = req.query;
        if (q.contest_id === undefined && q.position_hash === undefined) {
          throw badRequest('invalid_parameter', 'contest_id or position_hash is required', { parameter: 'contest_id' });
        }
        const window = resolveTradesWindow(q.since, q.until, now());
        if (!window.ok) throw badRequest('invalid_parameter', window.message, { parameter: window.parameter });
        let minNotional: number | undefined;
        if (q.min_notional_usd !== undefined) {
          minNotional = /^\s*$/.test(q.min_notional_usd) ? NaN : Number(q.min_notional_usd);
          if (!Number.isFinite(minNotional) || minNotional < 0) {
            throw badRequest('invalid_parameter', 'min_notional_usd must be a non-negative number', { parameter: 'min_notional_usd' });
          }
        }
        const trades = await guarded(
          'trades',
          (s) =>
            s.trades({
              contestId: q.contest_id,
              positionHash: q.position_hash,
              partner: q.partner,
              since: window.since,
              until: window.until,
              minNotionalUsd: minNotional,
              limit: q.limit,
              includeSynthetic: ctx.config.historyIncludeSynthetic,
            }),
          req.log,
        );
        return sendEnvelope(reply, now(), trades);
      },
    );
  };
}

/** The history routes on ctx.clickhouse (cli/roles/api.ts passes rt.clickhouse() there). */
export const historyRoutes: RoutePlugin = createHistoryRoutes();
