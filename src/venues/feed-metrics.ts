/**
 * A venue adapter's feed counters as metric definitions: plain data, because src/venues imports no
 * metrics library. Each venue lists its own (kalshi/metrics.ts, polymarket/metrics.ts); the
 * composition root registers each as a metric read at scrape time from the adapter's feedStats(),
 * so nothing is counted twice and nothing runs on the hot path.
 */
export interface FeedMetric<S> {
  name: string;
  help: string;
  /** Default `counter` (only grows); a `gauge` is a level (connections live now). */
  kind?: 'counter' | 'gauge';
  read(stats: S): number;
}
