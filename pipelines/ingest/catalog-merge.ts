/**
 * The venues' catalogs as one (docs/venues.md "One catalog across venues"): every venue whose
 * catalog comes from the venue (Kalshi, Polymarket) is read through a remapping adapter, and each
 * time one more of them connects, the catalogs of all connected ones are merged again
 * (mergeVenueCatalogs, with the operator's alias files and mapping file): the same real-world event
 * becomes one contest, the same outcome one position, quoted by each venue that lists it. A
 * low-confidence or unmatched contest stays its venue's own, exactly as listed.
 *
 * A merge may re-key a venue that is already being read (Polymarket connected first; Kalshi lists
 * the same game): its adapter's maps are replaced, the venue contest the merge absorbed is retired
 * (closed in the catalog, its hot state expiring), and the caller re-reads that venue so its quotes
 * arrive under the merged ids. The merge is all or nothing: when the store refuses the merged
 * catalog, nothing changes here and the connector tries again.
 *
 * The simulator's venues are not merged: the simulated world is its own (fictional leagues), seeded
 * at start.
 */
import type { Logger } from '../../src/log.js';
import { mergeVenueCatalogs, remappableAdapter, type MatchReport, type MergeOptions, type MergeResult, type MergedCatalog, type RemappedAdapter, type VenueCatalog } from '../../src/venues/matching/index.js';
import type { VenueAdapter } from '../../src/venues/types.js';

export interface CatalogMergeOptions {
  /** The alias table and mapping file (the operator's FLOW_VENUE_ALIASES, FLOW_VENUE_MAPPING). */
  match: MergeOptions;
  /**
   * Writes the merged catalog (every connected venue's contests, merged or not) and closes the
   * contests the merge absorbed; throws when the store refuses (nothing is applied then).
   */
  store(catalog: MergedCatalog, retired: readonly string[]): Promise<void>;
  log: Pick<Logger, 'info'>;
}

/** What one merge changed. */
export interface MergeChange {
  result: MergeResult;
  /** Contests of the last merged catalog that are not in this one (absorbed into a merged contest). */
  retired: string[];
  /** Adapters already merged before this venue whose maps changed: they must be read again. */
  remapped: RemappedAdapter[];
}

export class VenueCatalogMerge {
  private readonly catalogs = new Map<string, VenueCatalog>();
  private readonly adapters = new Map<string, RemappedAdapter>();
  private last: MergeResult | null = null;
  /** Merges run one at a time: two venues connecting together must not merge from the same old state. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: CatalogMergeOptions) {}

  /** The adapter every caller uses for `a` (the ingester, preflight, execute): it speaks the merged ids. */
  wrap(a: VenueAdapter): RemappedAdapter {
    const w = this.adapters.get(a.id) ?? remappableAdapter(a);
    this.adapters.set(a.id, w);
    return w;
  }

  /** The last merge's report (null before the first venue connected). */
  report(): MatchReport | null {
    return this.last?.report ?? null;
  }

  /** The last merged catalog (null before the first venue connected). */
  catalog(): MergedCatalog | null {
    return this.last?.catalog ?? null;
  }

  /**
   * Adds a connected venue's catalog (replacing the one it had) and merges every connected venue's
   * again. Throws when the catalogs cannot be merged (a mapping file entry naming two contests of
   * one venue) or the store refuses: then nothing changed.
   */
  add(partnerId: string, catalog: VenueCatalog): Promise<MergeChange> {
    const run = this.queue.then(() => this.merge(partnerId, catalog));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async merge(partnerId: string, catalog: VenueCatalog): Promise<MergeChange> {
    const next = new Map(this.catalogs).set(partnerId, catalog);
    const result = mergeVenueCatalogs(Object.fromEntries(next), this.o.match);
    const kept = new Set(result.catalog.contests.map((c) => c.id));
    const retired = (this.last?.catalog.contests ?? []).map((c) => c.id).filter((id) => !kept.has(id));
    await this.o.store(result.catalog, retired);
    // Stored: from here on the adapters speak the merged ids.
    this.catalogs.set(partnerId, catalog);
    this.last = result;
    const remapped: RemappedAdapter[] = [];
    for (const [id, w] of this.adapters) {
      const changed = w.setMaps(result.position_map[id] ?? {}, result.contest_map[id] ?? {});
      if (changed && id !== partnerId && this.catalogs.has(id)) remapped.push(w);
    }
    const r = result.report;
    this.o.log.info(
      { partner_id: partnerId, venues: r.venues, contests: r.contests, matched: r.matched, low_confidence: r.low_confidence, unmatched: r.unmatched, merged_contests: r.merged_contests, aligned_positions: r.aligned_positions, retired: retired.length, remapped: remapped.map((w) => w.id) },
      'merged the venue catalogs',
    );
    return { result, retired, remapped };
  }
}
