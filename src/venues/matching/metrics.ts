/**
 * The matcher's figures for /metrics, as data (src/venues imports no metrics library): the
 * composition root registers each as a gauge read from the last report at scrape time.
 *
 *   for (const m of MATCH_METRICS) scrapedGauge(registry, m.name, m.help, () => m.read(report));
 */
import type { MatchReport } from './types.js';

export interface MatchMetric {
  name: string;
  help: string;
  read(r: MatchReport): number;
}

export const MATCH_METRICS: readonly MatchMetric[] = [
  { name: 'flow_venue_match_contests', help: 'Venue contests the cross-venue matcher read at the last merge', read: (r) => r.contests },
  { name: 'flow_venue_match_matched', help: 'Venue contests merged with another venue\'s contest at the last merge', read: (r) => r.matched },
  { name: 'flow_venue_match_low_confidence', help: 'Venue contests kept apart at the last merge because their best candidate scored below the threshold', read: (r) => r.low_confidence },
  { name: 'flow_venue_match_unmatched', help: 'Venue contests with no candidate on another venue (or kept apart by the mapping file) at the last merge', read: (r) => r.unmatched },
  { name: 'flow_venue_match_merged_contests', help: 'Merged contests made at the last merge', read: (r) => r.merged_contests },
  { name: 'flow_venue_match_aligned_positions', help: 'Positions quoted by two or more venues after the last merge', read: (r) => r.aligned_positions },
];
