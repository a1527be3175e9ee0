/**
 * Starts roles in `flow all`'s order and wiring: ingest first (it owns the simulator the api's
 * /sim/v1 drives, and the venue adapters the balance refresher reads and the execute role places
 * orders through), then compute, then execute, then the listeners, then the scheduler. The CLI and the benches that run the whole service in one
 * process share this, so they run what an operator runs.
 *
 * The balance refresh needs the venue adapters: in a process without the ingest role the api
 * serves no POST partners/balance/update and the scheduler has nothing to read (docs/balances.md,
 * "Deployment"). Preflight's live book checks need them too; without them it answers from the
 * cached books and says so (verified false, docs/orders.md).
 */
import { balanceRefreshRoutes } from '../../api/rest/account/partners.js';
import type { RoutePlugin } from '../../api/rest/app.js';
import { historyRoutes } from '../../api/rest/history/routes.js';
import { liquidityRoutes } from '../../api/rest/liquidity/routes.js';
import { preflightRoutes } from '../../api/rest/orders/index.js';
import { simRoutes } from '../../api/rest/sim/routes.js';
import { SimCommandProducer } from '../../pipelines/producers/sim-commands.js';
import { namesSimVenue } from '../../src/sim/index.js';
import type { Role } from '../../src/config.js';
import { HotState } from '../../src/store/redis/hot.js';
import { adapterLiveBooks } from '../../src/venues/live-books.js';
import type { Runtime } from '../runtime.js';
import { startApi } from './api.js';
import { startGatewayRole } from './gateway.js';
import { startGatewayThread } from './gateway-thread.js';
import { systemClock } from '../../src/clock.js';
import { startExecute } from './execute.js';
import { startCompute, startIngest, type ComputeRole, type IngestOptions, type IngestRole } from './market.js';
import { balanceRefresher, startScheduler } from './scheduler.js';

export interface Running {
  name: string;
  stop(): Promise<void>;
}

export interface StartedRoles {
  /** In start order: stop them in reverse. */
  running: Running[];
  ingest: IngestRole | null;
  compute: ComputeRole | null;
  /** The bound ports of the listeners that run (the real ones when configured as 0). */
  apiPort: number | null;
  gatewayPort: number | null;
}

/** Starts `roles`; should one fail to start, those already running are stopped before it throws. */
export async function startRoles(rt: Runtime, roles: readonly Role[], opts: { ingest?: IngestOptions } = {}): Promise<StartedRoles> {
  const out: StartedRoles = { running: [], ingest: null, compute: null, apiPort: null, gatewayPort: null };
  const has = (r: Role) => roles.includes(r);
  try {
    // Ingest and compute append history rows to the event log in Redis with the state they
    // describe; the compute role also runs the history writer that moves them into ClickHouse (one
    // active per deployment, the others standing by).
    if (has('ingest')) out.running.push((out.ingest = await startIngest(rt, opts.ingest)));
    if (has('compute')) out.running.push((out.compute = await startCompute(rt, { history: true })));
    // Both in this process: a moved contest is computed here at once, without a queued job; a
    // computation that does not finish is queued after a grace (the ingester's FastPath).
    if (out.ingest && out.compute) out.ingest.ingester.fastPath = out.compute.processor.fastPath;
    // Real-money legs are placed through the ingest role's adapters (cli/roles/execute.ts).
    if (has('execute')) {
      if (out.ingest) out.running.push(startExecute(rt, out.ingest.adapters));
      else rt.log.warn({ role: 'execute' }, 'the execute role places orders through the venue adapters of the ingest role, which this process does not run; skipped');
    }
    // The api role also runs the account-event relay (PostgreSQL outbox → event log; cli/roles/api.ts).
    const refresher = out.ingest ? balanceRefresher(rt, out.ingest.adapters) : null;
    if (has('api')) {
      // Order routes in every api; preflight's live checks (verify_liquidity) read books through the
      // ingest role's adapters when this process runs it.
      const plugins: RoutePlugin[] = [liquidityRoutes(new HotState(rt.redis, rt.ks)), historyRoutes, preflightRoutes({ adapters: out.ingest?.adapters ?? null })];
      // /sim/v1 wherever the api runs with simulated venues: its commands go straight to the
      // simulator when this process runs it (the ingest role), else over Redis to the ingest
      // process that does (docs/simulator.md). Over Redis a call crosses it four times and waits on
      // two blocking reads, on the path of every injected quote.
      const localSim = out.ingest?.sim ?? null;
      const simCommands = !localSim && namesSimVenue(rt.config.venues) ? new SimCommandProducer({ redis: rt.redis, redisUrl: rt.config.redisUrl, ks: rt.ks }) : null;
      if (localSim) plugins.push(simRoutes(localSim));
      else if (simCommands) plugins.push(simRoutes(simCommands));
      if (refresher) plugins.push(balanceRefreshRoutes(refresher));
      // A buy's verify_liquidity reads live books through the same adapters as preflight's.
      const api = await startApi(rt, plugins, out.ingest ? { live: adapterLiveBooks(out.ingest.adapters) } : {});
      out.apiPort = api.port;
      out.running.push({
        name: 'api',
        async stop() {
          await api.stop();
          await simCommands?.close();
        },
      });
    }
    if (has('gateway')) {
      // With other roles in this process the gateway gets a thread (an event loop and heap) of its
      // own; a runtime with a clock of its own (tests) keeps it here, on that clock.
      const threaded = rt.config.gatewayThread && roles.some((r) => r !== 'gateway') && rt.clock === systemClock;
      const gateway = threaded ? await startGatewayThread(rt) : await startGatewayRole(rt);
      out.gatewayPort = gateway.port;
      out.running.push({ name: 'gateway', stop: gateway.stop });
    }
    if (has('scheduler')) {
      out.running.push(startScheduler(rt, refresher));
    }
  } catch (err) {
    for (const r of [...out.running].reverse()) await r.stop().catch(() => undefined);
    throw err;
  }
  for (const r of roles) {
    if (!['ingest', 'compute', 'execute', 'api', 'gateway', 'scheduler'].includes(r)) rt.log.warn({ role: r }, 'role not available in this build; skipped');
  }
  return out;
}
