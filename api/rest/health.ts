/** /healthz (process up), /readyz (every store reachable), /metrics (Prometheus). Unauthenticated. */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from './context.js';

const closed = { additionalProperties: false } as const;
const Readiness = (description: string) =>
  Type.Object(
    {
      status: Type.Enum(['ready', 'not_ready']),
      checks: Type.Record(Type.String(), Type.String(), { description: 'per store: ok, or why it failed' }),
    },
    { ...closed, description },
  );

async function probe(name: string, fn: () => Promise<unknown>): Promise<[string, string]> {
  try {
    await Promise.race([fn(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout after 2 s')), 2_000).unref())]);
    return [name, 'ok'];
  } catch (err) {
    return [name, (err as Error).message || 'unreachable'];
  }
}

export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const cfg = (operationId: string, summary: string, response: Record<string, unknown>) => ({ config: { public: true }, schema: { tags: ['service'], operationId, summary, response } });
  app.get('/healthz', cfg('getHealth', 'The process is up', { 200: Type.Object({ status: Type.Literal('ok') }, { ...closed, description: 'Up' }) }), async () => ({ status: 'ok' }));
  app.get('/readyz', cfg('getReadiness', 'Every store is reachable', { 200: Readiness('Every store answered'), 503: Readiness('A store did not answer; checks names it') }), async (_req, reply) => {
    const checks = await Promise.all([
      probe('postgres', () => ctx.pool.query('SELECT 1')),
      probe('redis', () => ctx.redis.ping()),
      ...(ctx.clickhouse ? [probe('clickhouse', () => ctx.clickhouse!.ping().then((r) => { if (!r.success) throw new Error('ping failed'); }))] : []),
    ]);
    const ready = checks.every(([, s]) => s === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(checks) });
  });
  const metricsDoc = { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } } };
  app.get('/metrics', cfg('getMetrics', 'Prometheus metrics', metricsDoc), async (_req, reply) => reply.type(ctx.metrics.contentType).send(await ctx.metrics.metrics()));
}
