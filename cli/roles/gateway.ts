/** The gateway role: the uWebSockets.js stream on STREAM_PORT, fed by the event log (key revocations: the Redis bus). */
import { startGateway } from '../../api/gateway/index.js';
import { createRedis } from '../../src/store/redis/client.js';
import type { Runtime } from '../runtime.js';

export async function startGatewayRole(rt: Runtime): Promise<{ port: number; stop(): Promise<void> }> {
  return startGateway({
    config: rt.config,
    log: rt.log,
    pool: rt.pool,
    redis: rt.redis,
    ks: rt.ks,
    gate: rt.gate,
    clock: rt.clock,
    metrics: rt.metrics,
    createSubscriber: () => createRedis(rt.config.redisUrl, { name: 'flow-gateway' }),
  });
}
