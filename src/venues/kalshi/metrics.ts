/**
 * The Kalshi feed's counters as metric definitions (plain data: src/venues imports no metrics
 * library; see ../feed-metrics.ts). The ingest role registers each, read at scrape time
 * (cli/roles/venues.ts).
 */
import type { FeedMetric } from '../feed-metrics.js';
import type { KalshiFeedStats } from './adapter.js';

export type { FeedMetric };

export const KALSHI_FEED_METRICS: readonly FeedMetric<KalshiFeedStats>[] = [
  { name: 'flow_kalshi_ws_frames_total', help: 'Kalshi WebSocket frames read', read: (s) => s.frames },
  { name: 'flow_kalshi_seq_gaps_total', help: 'Kalshi order-book seq gaps (each drops and resnapshots the subscription)', read: (s) => s.seq_gaps },
  { name: 'flow_kalshi_book_errors_total', help: 'Kalshi deltas that did not fit the book (before its snapshot, or driving a level negative)', read: (s) => s.book_errors },
  { name: 'flow_kalshi_resnapshots_total', help: 'Kalshi order-book resubscriptions for fresh snapshots', read: (s) => s.resnapshots },
  { name: 'flow_kalshi_trade_gaps_total', help: 'Kalshi trade-channel seq gaps (prints missed)', read: (s) => s.trade_gaps },
  { name: 'flow_kalshi_parse_errors_total', help: 'Kalshi payloads the adapter could not read', read: (s) => s.parse_errors },
  { name: 'flow_kalshi_reconnects_total', help: 'Kalshi WebSocket reconnections (after a drop or a silent socket)', read: (s) => s.reconnects },
  { name: 'flow_kalshi_rest_requests_total', help: 'Kalshi REST requests sent', read: (s) => s.rest.requests },
  { name: 'flow_kalshi_rest_rate_limited_total', help: 'Kalshi REST requests answered 429', read: (s) => s.rest.rate_limited },
  { name: 'flow_kalshi_rate_limit_waits_total', help: 'Kalshi REST requests that waited for the token bucket', read: (s) => s.read_waits + s.write_waits },
];
