/**
 * The Fastify app: schema-first plugins per resource, one gate for auth and rate limits, one error
 * shape. Built by buildApp() so tests use inject() and the api role listens.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Counter } from 'prom-client';
import { scrapedCounter } from '../../src/metrics.js';
import { accountRoutes } from './account/index.js';
import { aiRoutes } from './ai/routes.js';
import { meRoutes } from './auth/me.js';
import { catalogRoutes } from './catalog/routes.js';
import type { AppContext } from './context.js';
import { healthRoutes } from './health.js';
import { kitRoutes } from './kits/routes.js';
import { OPENAPI_ROUTE, swaggerOptions } from './openapi/document.js';
import { arbitrageRoutes } from './signals/arbitrages.js';
import { signalRoutes } from './signals/signals.js';
import { installErrorHandling, UnroutedRequests } from './plugins/errors.js';
import { Gatekeeper, installGate } from './plugins/gate.js';
import { mcpRoutes } from '../mcp/server.js';
import { installValidation } from './plugins/validation.js';
import { orderRoutes } from './orders/index.js';
import { ReadCache } from './read-cache.js';
import { PrincipalCache } from '../../src/store/principals.js';
import { subscribeBus } from '../../src/store/redis/bus.js';
import { usageId } from '../../src/store/redis/gate.js';

export interface BuiltApp {
  app: FastifyInstance;
  /** Every route the app serves, as registered (method, url, schema, config): a new route is fuzzed and checked automatically. */
  routes: readonly RouteOptions[];
  close(): Promise<void>;
}

/** Extra route plugins later capabilities register (liquidity, history, orders, sim control). */
export type RoutePlugin = (app: FastifyInstance, ctx: AppContext) => void | Promise<void>;

export async function buildApp(ctx: AppContext, plugins: RoutePlugin[] = []): Promise<BuiltApp> {
  const log = ctx.log.child({ component: 'api' });
  // What Fastify refuses before routing answers with the project's error body (gate and count set below).
  const unrouted = new UnroutedRequests(log);
  const app: FastifyInstance = Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    // Per-request logs at this rate would cost more than the request; metrics count them instead.
    logController: new LogController({ disableRequestLogging: true }),
    // A pino child per request costs more than the gate itself at load; errors log their request id.
    childLoggerFactory: (logger) => logger,
    bodyLimit: 1_048_576,
    trustProxy: false,
    return503OnClosing: true,
    routerOptions: { maxParamLength: 500 },
    frameworkErrors: unrouted.frameworkErrors,
    clientErrorHandler: unrouted.clientErrorHandler,
  });
  installValidation(app);
  // Response schemas document the API; they never shape a response. fast-json-stringify would drop
  // any field a schema does not list and coerce types, making the document "true" by mutilating the
  // answer; plain JSON.stringify keeps every response exactly as the handler built it.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app);

  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));

  // swagger-ui's own routes carry no config; mark every route without a /flow/v1 prefix public.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/flow/v1/') || route.url === '/flow/v1/openapi.json') {
      route.config = { ...(route.config ?? {}), public: true };
    }
  });

  await app.register(swagger, swaggerOptions());
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });

  const requests = new Counter({
    name: 'flow_http_requests_total',
    help: 'HTTP responses by route and status class',
    labelNames: ['route', 'status'] as const,
    registers: [ctx.metrics],
  });
  const batching = ctx.gate.batching;
  scrapedCounter(ctx.metrics, 'flow_ratelimit_script_calls_total', 'Rate-limit script calls to Redis; each counts every request queued for its windows', () => batching.calls);
  scrapedCounter(ctx.metrics, 'flow_ratelimit_checks_total', 'Requests counted against the rate-limit windows', () => batching.requests);
  // Counted by a route-level hook holding its route and its children of the counter (prom-client
  // hashes label objects on every inc()), and the caller's error count for /auth/me.
  const countFor = (route: string) => {
    const byClass: { inc(): void }[] = [];
    return (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const cls = Math.floor(reply.statusCode / 100);
      (byClass[cls] ??= requests.labels({ route, status: `${cls}xx` })).inc();
      if (cls >= 4 && req.principal) ctx.gate.countError(usageId(req.principal), ctx.clock.now());
      done();
    };
  };
  app.addHook('onRoute', (route) => {
    const existing = route.onResponse ? (Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]) : [];
    route.onResponse = [countFor(route.url), ...existing] as typeof route.onResponse;
  });
  unrouted.count = countFor('unmatched');

  // Revocations reach every API process through the bus and evict its in-process principal cache.
  const principals = new PrincipalCache(ctx.gate, ctx.pool);
  const subscriber = ctx.redis.duplicate();
  const unsubscribe = await subscribeBus(subscriber, ctx.ks, ['keys-revoked'], (_c, raw) => {
    try {
      principals.evictKeyHash((JSON.parse(raw) as { key_hash: string }).key_hash);
    } catch {
      principals.clear();
    }
  });
  const keeper = new Gatekeeper(ctx, principals);
  unrouted.gate = installGate(app, keeper);
  await unrouted.installNotFound(app);
  const cache = new ReadCache(ctx.redis, ctx.ks);
  await cache.start();

  healthRoutes(app, ctx);
  app.get('/flow/v1/openapi.json', { config: { public: true }, schema: OPENAPI_ROUTE }, async () => app.swagger());
  meRoutes(app, ctx);
  accountRoutes(app, ctx);
  orderRoutes(app, ctx);
  arbitrageRoutes(app, ctx);
  signalRoutes(app, ctx);
  catalogRoutes(app, ctx, cache);
  kitRoutes(app, ctx);
  aiRoutes(app, ctx);
  for (const plugin of plugins) await plugin(app, ctx);
  // The MCP tool server (POST /mcp) serves the reads the routes above registered as tools.
  mcpRoutes(app, { ctx, keeper });

  await app.ready();
  return {
    app,
    routes,
    async close() {
      cache.stop();
      await app.close();
      await unsubscribe().catch(() => undefined);
      subscriber.disconnect();
    },
  };
}
