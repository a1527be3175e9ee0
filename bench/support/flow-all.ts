/**
 * Every role of `flow all` in this process, wired as cli/flow.ts startRoles wires them (history
 * writer, ingest with the simulated venues, compute, api with the simulator control routes,
 * gateway), on its own database, Redis prefix and chDB data dir, listening on ephemeral ports.
 * For benches that drive the service only through its public surfaces (REST, /sim/v1, the stream).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { historyRoutes } from '../../api/rest/history/routes.js';
import { liquidityRoutes } from '../../api/rest/liquidity/routes.js';
import { simRoutes } from '../../api/rest/sim/routes.js';
import { startApi } from '../../cli/roles/api.js';
import { startGatewayRole } from '../../cli/roles/gateway.js';
import { startCompute, startIngest } from '../../cli/roles/market.js';
import type { Runtime } from '../../cli/runtime.js';
import { HotState } from '../../src/store/redis/hot.js';
import { benchRuntime } from './stack.js';

export interface FlowAll {
  rt: Runtime;
  /** http://127.0.0.1:<PORT> (REST and /sim/v1). */
  apiUrl: string;
  /** ws://127.0.0.1:<STREAM_PORT>/flow/v1/stream */
  streamUrl: string;
  /** The operator token /sim/v1 wants in X-Admin-Token. */
  adminToken: string;
  close(): Promise<void>;
}

export async function startFlowAll(name: string, env: Record<string, string> = {}): Promise<FlowAll> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `flow-bench-${name}-`));
  // CLICKHOUSE_URL empty: the embedded chDB in dataDir, whatever the caller's environment says.
  const { rt, close } = await benchRuntime(name, { HOST: '127.0.0.1', PORT: '0', STREAM_PORT: '0', FLOW_DATA_DIR: dataDir, CLICKHOUSE_URL: '', FLOW_VENUES: 'sim', ...env });
  const stops: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error('stopping a role failed:', err));
    // pool.end() resolves before its sockets are closed; a DROP DATABASE ... FORCE can then kill one
    // and the pool re-emits that as an unhandled 'error'. Nothing is running any more.
    rt.pool.on('error', () => undefined);
    await close();
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  };
  try {
    const ingest = await startIngest(rt);
    stops.push(() => ingest.stop());
    // The history writer runs in compute, as `flow all` runs it.
    const compute = await startCompute(rt, { history: true });
    stops.push(() => compute.stop());
    if (!ingest.sim) throw new Error('the simulated venues did not start (FLOW_VENUES must include sim)');
    const api = await startApi(rt, [liquidityRoutes(new HotState(rt.redis, rt.ks)), historyRoutes, simRoutes(ingest.sim)]);
    stops.push(() => api.stop());
    const gateway = await startGatewayRole(rt);
    stops.push(() => gateway.stop());
    return {
      rt,
      apiUrl: `http://127.0.0.1:${api.port}`,
      streamUrl: `ws://127.0.0.1:${gateway.port}/flow/v1/stream`,
      adminToken: rt.config.adminToken,
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
