/**
 * The api role: Fastify REST, docs and health on PORT, and the account-event relay that moves the
 * account events those requests write (PostgreSQL outbox) into the event log the gateways read.
 * Every api process runs a relay; they share the outbox safely.
 */
import { buildApp, type RoutePlugin } from '../../api/rest/app.js';
import type { AppContext } from '../../api/rest/context.js';
import { AccountEventRelay } from '../../pipelines/account-events/relay.js';
import { appContext, type Runtime } from '../runtime.js';

export async function startApi(rt: Runtime, plugins: RoutePlugin[] = [], extra: Pick<AppContext, 'live'> = {}): Promise<{ stop(): Promise<void>; port: number }> {
  const built = await buildApp(appContext(rt, { clickhouse: rt.clickhouse(), ...extra }), plugins);
  await built.app.listen({ host: rt.config.host, port: rt.config.port });
  const addr = built.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : rt.config.port;
  const relay = new AccountEventRelay({
    pool: rt.pool,
    databaseUrl: rt.config.databaseUrl,
    redis: rt.redis,
    ks: rt.ks,
    log: rt.log.child({ role: 'api', component: 'account-relay' }),
    metrics: rt.metrics,
  }).start();
  rt.log.info({ role: 'api', url: `http://${rt.config.host}:${port}/flow/v1`, docs: `http://${rt.config.host}:${port}/docs` }, 'api listening');
  return {
    port,
    async stop() {
      // Requests first: what they enqueue before the listener closes is still relayed (or waits in the outbox for the next start).
      await built.close();
      await relay.stop();
    },
  };
}
