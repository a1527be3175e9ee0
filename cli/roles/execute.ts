/**
 * The execute role: places real-money legs on their venues (pipelines/processors/execute.ts), one
 * BullMQ queue per venue, through the venue adapters of this process. The adapters run in the
 * ingest role, so execute runs beside it (a simulated venue lives in that process's memory; a real
 * venue's adapter would be opened here just the same). Any number of execute processes may run:
 * legs of one (account, venue) never run at once across them (docs/orders.md "Real-money legs").
 * The role also records what venues report on orders after their decision (later fills, venue
 * cancellations; reconciled at start and periodically) and appends the liquidity refreshes fills
 * ask for to the event log.
 */
import { EXECUTE_DEFAULTS, ExecuteProcessor } from '../../pipelines/processors/execute.js';
import { ORDER_UPDATE_DEFAULTS } from '../../pipelines/processors/order-updates.js';
import { createPool } from '../../src/store/pg/pool.js';
import { logLimits } from '../../src/store/redis/eventlog.js';
import { HotState } from '../../src/store/redis/hot.js';
import type { VenueAdapter } from '../../src/venues/types.js';
import type { Runtime } from '../runtime.js';

export interface ExecuteRole {
  name: 'execute';
  processor: ExecuteProcessor;
  stop(): Promise<void>;
}

export function startExecute(rt: Runtime, adapters: readonly VenueAdapter[]): ExecuteRole {
  const log = rt.log.child({ role: 'execute' });
  // A leg holds a PostgreSQL connection from its lock to its decision (the venue call included):
  // a pool of its own, one connection per job slot, so legs never queue behind the api's requests
  // (or make them queue). Beside them: the order reports being recorded, and the refresh relay.
  const venues = adapters.filter((a) => a.describe().capabilities.orders.place).length;
  const pool = createPool(rt.config.databaseUrl, Math.max(1, venues * EXECUTE_DEFAULTS.concurrency) + ORDER_UPDATE_DEFAULTS.concurrency + 1, rt.log);
  const processor = new ExecuteProcessor({
    redisUrl: rt.config.redisUrl,
    ks: rt.ks,
    pool,
    adapters,
    log,
    now: () => rt.clock.now(),
    intentTtlMs: rt.config.execute.intentTtlMs,
    hot: new HotState(rt.redis, rt.ks, { logLimits: logLimits(rt.config.eventLog) }),
    databaseUrl: rt.config.databaseUrl,
    metrics: rt.metrics,
  });
  log.info({ role: 'execute', venues: processor.venues }, 'execute running');
  return {
    name: 'execute',
    processor,
    async stop() {
      await processor.close();
      await pool.end();
    },
  };
}
