/** /healthz (process up), /readyz (every store reachable), /metrics (Prometheus). Unauthenticated. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';

async function probe(name: string, fn: () => Promise<unknown>): Promise<[string, string]> {
  try {
    await Promise.race([fn(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout after 2 s')), 2_000).unref())]);
    return [name, 'ok'];
  } catch (err) {
    return [name, (err as Error).message || 'unreachable'];
  }
}

export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const cfg = { config: { public: true }, schema: { hide: true } };
  app.get('/healthz', cfg, async () => ({ status: 'ok' }));
  app.get('/readyz', cfg, async (_req, reply) => {
    const checks = await Promise.all([
      probe('postgres', () => ctx.pool.query('SELECT 1')),
      probe('redis', () => ctx.redis.ping()),
      ...(ctx.clickhouse ? [probe('clickhouse', () => ctx.clickhouse!.ping().then((r) => { if (!r.success) throw new Error('ping failed'); }))] : []),
    ]);
    const ready = checks.every(([, s]) => s === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(checks) });
  });
  app.get('/metrics', cfg, async (_req, reply) => reply.type(ctx.metrics.contentType).send(await ctx.metrics.metrics()));
}
