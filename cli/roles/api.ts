/** The api role: Fastify REST, docs and health on PORT. */
import { buildApp, type RoutePlugin } from '../../api/rest/app.js';
import type { Runtime } from '../runtime.js';

export async function startApi(rt: Runtime, plugins: RoutePlugin[] = []): Promise<{ stop(): Promise<void>; port: number }> {
  const built = await buildApp(
    {
      config: rt.config,
      log: rt.log,
      clock: rt.clock,
      pool: rt.pool,
      redis: rt.redis,
      ks: rt.ks,
      gate: rt.gate,
      cursors: rt.cursors,
      metrics: rt.metrics,
    },
    plugins,
  );
  await built.app.listen({ host: rt.config.host, port: rt.config.port });
  const addr = built.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : rt.config.port;
  rt.log.info({ role: 'api', url: `http://${rt.config.host}:${port}/flow/v1`, docs: `http://${rt.config.host}:${port}/docs` }, 'api listening');
  return { port, stop: () => built.close() };
}
