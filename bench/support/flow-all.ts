/**
 * Every role of `flow all` in this process, started by the CLI's own startRoles (ingest with the
 * simulated venues, compute with the history writer, api with the simulator control routes,
 * gateway), on its own database, Redis prefix and chDB data dir, listening on ephemeral ports.
 * For benches that drive the service only through its public surfaces (REST, /sim/v1, the stream).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRoles, type Running, type StartedRoles } from '../../cli/roles/start.js';
import type { Runtime } from '../../cli/runtime.js';
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
  const closeAll = async (running: Running[]) => {
    for (const r of [...running].reverse()) await r.stop().catch((err: unknown) => console.error('stopping a role failed:', err));
    // pool.end() resolves before its sockets are closed; a DROP DATABASE ... FORCE can then kill one
    // and the pool re-emits that as an unhandled 'error'. Nothing is running any more.
    rt.pool.on('error', () => undefined);
    await close();
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  };
  let started: StartedRoles;
  try {
    started = await startRoles(rt, ['ingest', 'compute', 'api', 'gateway']);
  } catch (err) {
    await closeAll([]);
    throw err;
  }
  try {
    if (!started.ingest?.sim) throw new Error('the simulated venues did not start (FLOW_VENUES must include sim)');
    return {
      rt,
      apiUrl: `http://127.0.0.1:${started.apiPort}`,
      streamUrl: `ws://127.0.0.1:${started.gatewayPort}/flow/v1/stream`,
      adminToken: rt.config.adminToken,
      close: () => closeAll(started.running),
    };
  } catch (err) {
    await closeAll(started.running);
    throw err;
  }
}
