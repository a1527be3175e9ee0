/** The api role: Fastify REST, docs and health on PORT. */
import { buildApp, type RoutePlugin } from '../../api/rest/app.js';
import { appContext, type Runtime } from '../runtime.js';

export async function startApi(rt: Runtime, plugins: RoutePlugin[] = []): Promise<{ stop(): Promise<void>; port: number }> {
  const built = await buildApp(appContext(rt, { clickhouse: rt.clickhouse() }), plugins);
  await built.app.listen({ host: rt.config.host, port: rt.config.port });
  const addr = built.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : rt.config.port;
  rt.log.info({ role: 'api', url: `http://${rt.config.host}:${port}/flow/v1`, docs: `http://${rt.config.host}:${port}/docs` }, 'api listening');
  return { port, stop: () => built.close() };
}
