/**
 * The whole REST surface on the real stores, as `flow all` mounts it (cli/flow.ts): catalog, auth,
 * liquidity (hot state in Redis), history (chDB), the simulator control API, the balance refresh and
 * the order routes (through the simulator's venue adapters), plus a key whose limits a hostile-input test cannot
 * exhaust. The simulator is a real SimMarket that is never started, so nothing moves unless a test
 * tells it to (market.tick(t) moves its clock, and with it the time of a venue's balance reading).
 */
import { historyRoutes } from '../../api/rest/history/routes.js';
import { liquidityRoutes } from '../../api/rest/liquidity/routes.js';
import { preflightRoutes } from '../../api/rest/orders/index.js';
import { balanceRefreshRoutes } from '../../api/rest/account/partners.js';
import { simRoutes } from '../../api/rest/sim/routes.js';
import { BalanceRefresher } from '../../pipelines/balances/refresher.js';
import type { RoutePlugin } from '../../api/rest/app.js';
import { createClickHouse } from '../../src/store/clickhouse/client.js';
import { createKey } from '../../src/store/pg/keys.js';
import { HotState } from '../../src/store/redis/hot.js';
import { createSimAdapters } from '../../src/venues/sim/index.js';
import { SimMarket } from '../../src/sim/index.js';
import { removeDataDir, startStack, type TestStack } from './stack.js';
import { tempDir } from './scratch.js';

export interface FullStack {
  stack: TestStack;
  market: SimMarket;
  /** The refresher behind POST partners/balance/update (the scheduler role's, in `flow all`). */
  refresher: BalanceRefresher;
  /** Headers of a pro key allowed far more requests than any test sends. */
  auth: Record<string, string>;
  admin: Record<string, string>;
  close(): Promise<void>;
}

/** The six rate-limit headers every counted REST answer carries, as Node's http lower-cases them. */
export const RATE_LIMIT_HEADERS = ['limit-minute', 'remaining-minute', 'reset-minute', 'limit-day', 'remaining-day', 'reset-day'].map((h) => `x-ratelimit-${h}`);

/** The full stack listening on an ephemeral port, for requests only a real socket can make. */
export async function startListeningFullStack(): Promise<FullStack & { port: number }> {
  const f = await startFullStack();
  await f.stack.built.app.listen({ host: '127.0.0.1', port: 0 });
  return { ...f, port: (f.stack.built.app.server.address() as { port: number }).port };
}

export async function startFullStack(extra: RoutePlugin[] = []): Promise<FullStack> {
  const dataDir = tempDir('fullstack');
  const ch = createClickHouse({ url: process.env.CLICKHOUSE_URL ?? null, dataDir });
  const market = new SimMarket({ seed: 8, now: Date.now() });
  const liquidity: RoutePlugin = (app, ctx) => liquidityRoutes(new HotState(ctx.redis, ctx.ks))(app, ctx);
  const sim = simRoutes({ market, refresh: async () => undefined });
  const adapters = createSimAdapters(market);
  for (const a of adapters) await a.connect();
  // Built when the app is (it needs the stack's pool and clock), as the liquidity plugin is.
  const built: { refresher?: BalanceRefresher } = {};
  const balances: RoutePlugin = (app, ctx) => {
    built.refresher = new BalanceRefresher({ pool: ctx.pool, adapters, log: ctx.log, now: () => ctx.clock.now() });
    return balanceRefreshRoutes(built.refresher)(app, ctx);
  };
  const stack = await startStack({ plugins: [liquidity, historyRoutes, sim, balances, preflightRoutes({ adapters }), ...extra], clickhouse: ch });
  const key = await createKey(stack.rt.pool, stack.rt.gate, { plan: 'enterprise', keyType: 'execution', environment: 'test', rateLimitPerMinute: 10_000_000, rateLimitPerDay: 100_000_000 });
  return {
    stack,
    market,
    refresher: built.refresher!,
    auth: { 'x-api-key': key.api_key },
    admin: { 'x-admin-token': stack.config.adminToken },
    async close() {
      for (const a of adapters) await a.close();
      await stack.close();
      await ch.close();
      removeDataDir(dataDir);
    },
  };
}
