/**
 * The scheduler role: periodic account work.
 * - Order settlement (docs/orders.md "Settlement"): every order of a contest its venue settled, from
 *   the settlements the ingest role records in PostgreSQL (so it needs no adapters of its own).
 * - The balance refresh (docs/balances.md): every connected venue's balance re-read about once a
 *   minute, through the venue adapters of this process's ingest role (skipped without them).
 * - Retention: Idempotency-Key records past their 24 hours are deleted, in bounded batches.
 * - Market-signal expiry (docs/arbitrage.md, docs/signals.md): arbitrages that outlived their 120 s
 *   and signals past their expires_at are cleared on the stream.
 */
import { BalanceRefresher } from '../../pipelines/balances/refresher.js';
import { BalanceScheduler } from '../../pipelines/balances/scheduler.js';
import { OrderSettler } from '../../pipelines/settlement/settler.js';
import { SignalExpirySweeper } from '../../pipelines/signals/expiry.js';
import { ArbitrageStore } from '../../src/store/redis/arbitrages.js';
import { SignalStore } from '../../src/store/redis/signals.js';
import { logLimits } from '../../src/store/redis/eventlog.js';
import { purgeExpiredIdempotencyKeys } from '../../src/store/pg/idempotency.js';
import type { VenueAdapter } from '../../src/venues/types.js';
import type { Runtime } from '../runtime.js';

export interface SchedulerRole {
  name: 'scheduler';
  /** null when this process runs no ingest role (no adapters to read balances through). */
  scheduler: BalanceScheduler | null;
  settler: OrderSettler;
  expiry: SignalExpirySweeper;
  stop(): Promise<void>;
}

/** How often expired Idempotency-Key records are deleted, and at most how many per pass. */
const PURGE_EVERY_MS = 10 * 60_000;
const PURGE_BATCH = 10_000;

/** One refresher per process: the scheduler and the refresh route share it. */
export function balanceRefresher(rt: Runtime, adapters: readonly VenueAdapter[]): BalanceRefresher {
  return new BalanceRefresher({ pool: rt.pool, adapters, log: rt.log.child({ component: 'balances' }), now: () => rt.clock.now() });
}

export function startScheduler(rt: Runtime, refresher: BalanceRefresher | null): SchedulerRole {
  const log = rt.log.child({ role: 'scheduler' });
  const scheduler = refresher ? new BalanceScheduler(refresher, log) : null;
  if (scheduler) scheduler.start();
  else log.warn('the balance refresh reads venue balances through the venue adapters of the ingest role, which this process does not run; skipped');
  const settler = new OrderSettler({ pool: rt.pool, databaseUrl: rt.config.databaseUrl, log: log.child({ component: 'settlement' }), metrics: rt.metrics }).start();
  const limits = logLimits(rt.config.eventLog);
  const expiry = new SignalExpirySweeper({
    arbitrages: new ArbitrageStore(rt.redis, rt.ks, limits),
    signals: new SignalStore(rt.redis, rt.ks, limits),
    log: log.child({ component: 'signal_expiry' }),
    now: () => rt.clock.now(),
  }).start();
  // A full batch means more may be due: go again at once, until a pass deletes fewer.
  let purging: Promise<void> | null = null;
  const purge = async () => {
    let n = PURGE_BATCH;
    let total = 0;
    while (n === PURGE_BATCH) total += n = await purgeExpiredIdempotencyKeys(rt.pool, PURGE_BATCH);
    if (total > 0) log.info({ task: 'idempotency_purge', deleted: total }, 'expired Idempotency-Key records deleted');
  };
  const purgeTimer = setInterval(() => {
    purging ??= purge()
      .catch((err: unknown) => log.warn({ err, task: 'idempotency_purge' }, 'deleting expired Idempotency-Key records failed; next pass retries'))
      .finally(() => (purging = null));
  }, PURGE_EVERY_MS);
  purgeTimer.unref();
  return {
    name: 'scheduler',
    scheduler,
    settler,
    expiry,
    async stop() {
      clearInterval(purgeTimer);
      await purging;
      await expiry.stop();
      await settler.stop();
      await scheduler?.stop();
    },
  };
}
