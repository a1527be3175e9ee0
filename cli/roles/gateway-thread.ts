/**
 * The gateway role on a thread of its own, for a process that runs other roles too (`flow all`):
 * the stream's event loop and heap are then its own, so ingest's flushes, compute's writes, API
 * requests and their garbage collections never hold a frame back (bench stream-latency: at 200
 * clients and 50 changes/s, p99 55-73 ms on the shared loop, 29.6 ms on this thread, 28 ms with
 * the gateway in a process of its own).
 *
 * The thread opens its own PostgreSQL pool and Redis connections (the gateway reads only shared
 * state: the event log, the key index, the slots), binds STREAM_PORT, and keeps that port when it
 * is restarted after a crash (an uncaught error in the thread closes its gateway in order and ends
 * the thread): its clients reconnect and resume from their last event_id.
 * Its metrics appear in this process's /metrics (pipelines/thread-host.ts).
 */
import { ThreadHost } from '../../pipelines/thread-host.js';
import { threadFile } from '../../pipelines/thread-file.js';
import type { Config } from '../../src/config.js';
import type { Runtime } from '../runtime.js';

/** What the thread gets: the configuration, with the port to bind (the first start's, once known). */
export interface GatewayThreadData {
  config: Config;
}

export async function startGatewayThread(rt: Runtime): Promise<{ port: number; host: ThreadHost; stop(): Promise<void> }> {
  let port = rt.config.streamPort;
  const host = new ThreadHost({
    file: threadFile(import.meta.url, './gateway-thread-main'),
    name: 'flow-stream-gateway',
    what: 'the stream gateway thread',
    whileAway: 'stream clients can reconnect and resume (resume_from) once it is back on the same port',
    log: rt.log,
    metrics: rt.metrics,
    // Terminating a thread with uWS sockets open aborts the process: a stop waits, a crash in the
    // thread stops its gateway in order (gateway-thread-main.ts) and the thread ends by itself.
    abandonStuck: true,
    data: (): GatewayThreadData => ({ config: { ...rt.config, streamPort: port } }),
  });
  const info = (await host.start()) as { port: number };
  port = info.port;
  return { port, host, stop: () => host.stop() };
}
