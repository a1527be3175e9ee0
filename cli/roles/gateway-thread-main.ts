/**
 * Runs inside the stream gateway's thread (cli/roles/gateway-thread.ts starts it): opens the stores
 * the gateway reads, starts it, and stops it when the owner asks.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { startGateway } from '../../api/gateway/index.js';
import { systemClock } from '../../src/clock.js';
import { createLogger } from '../../src/log.js';
import { createPool } from '../../src/store/pg/pool.js';
import { createRedis, Keyspace } from '../../src/store/redis/client.js';
import { RequestGate } from '../../src/store/redis/gate.js';
import { serveThread } from '../../pipelines/thread-host.js';
import type { GatewayThreadData } from './gateway-thread.js';

const port = parentPort;
if (!port) throw new Error('gateway-thread-main runs as a worker thread (see gateway-thread.ts)');
const { config } = workerData as GatewayThreadData;

const log = createLogger(config.logLevel).child({ role: 'gateway', thread: 'stream-gateway' });
// The gateway asks PostgreSQL only for keys the Redis index does not answer: a few connections.
const pool = createPool(config.databaseUrl, 4, log);
const redis = createRedis(config.redisUrl, { name: 'flow-gateway-cmd' });
const ks = new Keyspace(config.redisPrefix);
const gate = new RequestGate(redis, ks);
const metrics = new Registry();
const gateway = await startGateway({
  config,
  log,
  pool,
  redis,
  ks,
  gate,
  clock: systemClock,
  metrics,
  createSubscriber: () => createRedis(config.redisUrl, { name: 'flow-gateway' }),
});

let stopping: Promise<void> | null = null;
const stop = () =>
  (stopping ??= (async () => {
    await gateway.stop().catch((err: unknown) => log.error({ err }, 'stopping the stream gateway failed'));
    await gate.close().catch(() => undefined);
    await Promise.allSettled([pool.end(), redis.quit()]);
  })());

// A bug that throws here must not end the thread abruptly: a worker thread ended with uWS sockets
// open aborts the whole process. The gateway is closed in order instead, the thread ends, and its
// owner starts a new one (its clients reconnect and resume).
process.on('uncaughtException', (err) => {
  log.error({ err }, 'the stream gateway thread failed; closing it to be started again');
  void stop().then(() => port.close());
});

await serveThread(port, {
  metrics,
  info: { port: gateway.port },
  async answer(req) {
    if (req.op === 'stop') await stop();
    // Fault tests: an uncaught error in the thread, as a bug would raise.
    if (req.op === 'fail') setImmediate(() => {
      throw new Error('failure asked for by the owner (fault test)');
    });
    return null;
  },
});
