/**
 * Counters read at scrape time from a number the code keeps anyway: nothing on the hot path, and the
 * figure cannot drift from the one the code acts on.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export function scrapedCounter(registry: Registry, name: string, help: string, read: () => number): Counter {
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** The registry's metric of that name, made on first use: several instances in one process (roles, tests) share one. */
export function singleMetric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** A gauge read at scrape time (a figure that goes up and down: the last cross-venue merge's counts, say). */
export function scrapedGauge(registry: Registry, name: string, help: string, read: () => number): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}
