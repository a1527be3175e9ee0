/**
 * The scheduler role: periodic account work. Today the balance refresh (docs/balances.md): every
 * connected venue's balance re-read about once a minute, through the venue adapters of this
 * process's ingest role.
 */
import { BalanceRefresher } from '../../pipelines/balances/refresher.js';
import { BalanceScheduler } from '../../pipelines/balances/scheduler.js';
import type { VenueAdapter } from '../../src/venues/types.js';
import type { Runtime } from '../runtime.js';

export interface SchedulerRole {
  name: 'scheduler';
  scheduler: BalanceScheduler;
  stop(): Promise<void>;
}

/** One refresher per process: the scheduler and the refresh route share it. */
export function balanceRefresher(rt: Runtime, adapters: readonly VenueAdapter[]): BalanceRefresher {
  return new BalanceRefresher({ pool: rt.pool, adapters, log: rt.log.child({ component: 'balances' }), now: () => rt.clock.now() });
}

export function startScheduler(rt: Runtime, refresher: BalanceRefresher): SchedulerRole {
  const scheduler = new BalanceScheduler(refresher, rt.log.child({ role: 'scheduler' }));
  scheduler.start();
  return { name: 'scheduler', scheduler, stop: () => scheduler.stop() };
}
