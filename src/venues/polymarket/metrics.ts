/**
 * The Polymarket feed's counters as metric definitions (plain data: see ../feed-metrics.ts). The
 * ingest role registers each, read at scrape time from adapter.feedStats() (cli/roles/venues.ts).
 */
import type { FeedMetric } from '../feed-metrics.js';
import type { PolymarketFeedStats } from './adapter.js';

export const POLYMARKET_FEED_METRICS: readonly FeedMetric<PolymarketFeedStats>[] = [
  { name: 'flow_polymarket_ws_live_connections', help: 'Polymarket market-channel connections subscribed and heard from within the silence bound', kind: 'gauge', read: (s) => s.live_connections },
  { name: 'flow_polymarket_ws_connections', help: 'Polymarket market-channel connections the adapter keeps (500 tokens each)', kind: 'gauge', read: (s) => s.connections },
  { name: 'flow_polymarket_ws_frames_total', help: 'Polymarket market-channel frames read', read: (s) => s.frames },
  { name: 'flow_polymarket_ws_connects_total', help: 'Polymarket market-channel connections opened (the first included)', read: (s) => s.connects },
  { name: 'flow_polymarket_ws_drops_total', help: 'Polymarket market-channel connections lost (closed, refused or silent); each waits for fresh snapshots', read: (s) => s.drops },
  { name: 'flow_polymarket_parse_errors_total', help: 'Polymarket payloads the adapter could not read', read: (s) => s.parse_errors },
  { name: 'flow_polymarket_book_mismatches_total', help: 'Polymarket price_change touches that disagreed with our book (each drops the book until resynced)', read: (s) => s.book_mismatches },
  { name: 'flow_polymarket_resyncs_total', help: 'Polymarket books re-read from REST after a mismatch', read: (s) => s.resyncs },
  { name: 'flow_polymarket_rest_snapshots_total', help: 'Polymarket snapshot reads answered from REST because the feed was not live', read: (s) => s.rest_snapshots },
  { name: 'flow_polymarket_rest_requests_total', help: 'Polymarket REST requests sent', read: (s) => s.rest_requests },
  { name: 'flow_polymarket_rest_failures_total', help: 'Polymarket REST requests that failed (transport, HTTP error, unreadable answer)', read: (s) => s.rest_failures },
  { name: 'flow_polymarket_rate_limit_waits_total', help: 'Polymarket REST requests that waited for the rate-limit buckets', read: (s) => s.rate_limit_waits },
];
