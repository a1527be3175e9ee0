/**
 * An adapter seen through the merge: the same venue, speaking the merged catalog's position and
 * contest ids. Built after connect (the adapter's catalog is what the matcher read):
 *
 *   const { catalog, position_map, contest_map } = mergeVenueCatalogs({ kalshi: k.catalog()!, ... });
 *   const seen = remapAdapter(k, position_map.kalshi, contest_map.kalshi);
 *
 * Out of the venue: quotes, trades, depth, orders and settlements carry merged position hashes
 * (a quote keeps the venue's own side in `venue_side_key`); a position the merge left unlinked (a
 * complement) is not quoted. Into the venue: a merged hash or contest id is turned back into the
 * venue's own before the adapter sees it. Ids the maps do not name pass through unchanged.
 *
 * `remappableAdapter` is the same with maps that can be replaced while the adapter runs: the ingest
 * role merges the venues' catalogs again whenever one more venue connects, and a venue already
 * being read must then speak the new ids (cli/roles/venues.ts). Every id crossing it is translated
 * with the maps of that moment; a filter given to a subscription is translated when it subscribes.
 */
import { parsePositionHash } from '../../domain/hashes.js';
import type {
  NormalizedQuote,
  NormalizedTrade,
  QuoteFilter,
  Unsubscribe,
  VenueAdapter,
  VenueDepth,
  VenueOrder,
  VenueOrderRequest,
  VenueSettlement,
} from '../types.js';

/** An adapter seen through a merge whose maps may be replaced (setMaps). */
export interface RemappedAdapter extends VenueAdapter {
  /** The venue's own adapter. */
  readonly inner: VenueAdapter;
  /** Replaces the maps; true when they differ from the ones in use. */
  setMaps(positions: Readonly<Record<string, string | null>>, contests: Readonly<Record<string, string>>): boolean;
}

/** The translations one pair of maps gives. */
interface Translation {
  /** Order-independent fingerprint of the maps (to tell whether new ones differ). */
  signature: string;
  out(h: string): string | null;
  into(h: string): string;
  contestOut(c: string): string;
  contestsInto(ids: string[] | undefined): string[] | undefined;
}

function translation(positions: Readonly<Record<string, string | null>>, contests: Readonly<Record<string, string>>): Translation {
  const toNative = new Map<string, string>();
  /** merged contest → the venue contests whose positions moved into it */
  const contestNatives = new Map<string, Set<string>>();
  const addNative = (merged: string, native: string) => {
    let s = contestNatives.get(merged);
    if (!s) contestNatives.set(merged, (s = new Set()));
    s.add(native);
  };
  for (const [native, merged] of Object.entries(positions)) {
    if (merged === null) continue;
    toNative.set(merged, native);
    const mc = parsePositionHash(merged)?.contest_id;
    const nc = parsePositionHash(native)?.contest_id;
    if (mc && nc) addNative(mc, nc);
  }
  for (const [native, merged] of Object.entries(contests)) addNative(merged, native);
  const sorted = (r: Readonly<Record<string, unknown>>) => Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    signature: JSON.stringify([sorted(positions), sorted(contests)]),
    out: (h) => (Object.prototype.hasOwnProperty.call(positions, h) ? positions[h]! : h),
    into: (h) => toNative.get(h) ?? h,
    contestOut: (c) => (Object.prototype.hasOwnProperty.call(contests, c) ? contests[c]! : c),
    contestsInto: (ids) => (ids ? [...new Set(ids.flatMap((c) => [c, ...(contestNatives.get(c) ?? [])]))] : undefined),
  };
}

export function remapAdapter(inner: VenueAdapter, positions: Readonly<Record<string, string | null>> = {}, contests: Readonly<Record<string, string>> = {}): VenueAdapter {
  return remappableAdapter(inner, positions, contests);
}

export function remappableAdapter(inner: VenueAdapter, positions: Readonly<Record<string, string | null>> = {}, contests: Readonly<Record<string, string>> = {}): RemappedAdapter {
  // Read at each call: setMaps replaces it for every id that crosses from then on.
  let t = translation(positions, contests);
  const out = (h: string): string | null => t.out(h);
  const into = (h: string): string => t.into(h);
  const contestOut = (c: string): string => t.contestOut(c);
  const contestsInto = (ids: string[] | undefined): string[] | undefined => t.contestsInto(ids);
  const filterInto = (f?: QuoteFilter): QuoteFilter | undefined =>
    f ? { ...(f.contest_ids ? { contest_ids: contestsInto(f.contest_ids) } : {}), ...(f.position_hashes ? { position_hashes: f.position_hashes.map(into) } : {}) } : undefined;
  /** The caller's filter, on merged ids (the venue was asked more widely). */
  const keep = (f: QuoteFilter | undefined, hash: string): boolean => {
    if (!f) return true;
    if (f.position_hashes && !f.position_hashes.includes(hash)) return false;
    if (f.contest_ids && !f.contest_ids.includes(parsePositionHash(hash)?.contest_id ?? '')) return false;
    return true;
  };
  const quote = (q: NormalizedQuote): NormalizedQuote | null => {
    const h = out(q.position_hash);
    if (h === null) return null;
    // venue_side_key stays the venue's own side: the merged position may name it differently.
    return h === q.position_hash ? q : { ...q, position_hash: h };
  };
  const trade = (t: NormalizedTrade): NormalizedTrade | null => {
    const h = out(t.position_hash);
    return h === null ? null : h === t.position_hash ? t : { ...t, position_hash: h };
  };
  const order = (o: VenueOrder): VenueOrder => {
    const h = out(o.position_hash);
    return h === null || h === o.position_hash ? o : { ...o, position_hash: h };
  };
  const settlement = (s: VenueSettlement): VenueSettlement => ({
    ...s,
    contest_id: contestOut(s.contest_id),
    results: s.results.flatMap((r) => {
      const h = out(r.position_hash);
      return h === null ? [] : [{ ...r, position_hash: h }];
    }),
  });

  const wrapped: RemappedAdapter = {
    id: inner.id,
    inner,
    setMaps(p, c) {
      const next = translation(p, c);
      if (next.signature === t.signature) return false;
      t = next;
      return true;
    },
    describe: () => inner.describe(),
    connect: () => inner.connect(),
    close: () => inner.close(),
    async fetchQuotes(filter) {
      const qs = await inner.fetchQuotes(filterInto(filter));
      return qs.flatMap((q) => {
        const m = quote(q);
        return m && keep(filter, m.position_hash) ? [m] : [];
      });
    },
    subscribeQuotes(listener, filter): Unsubscribe {
      return inner.subscribeQuotes((q) => {
        const m = quote(q);
        if (m && keep(filter, m.position_hash)) listener(m);
      }, filterInto(filter));
    },
    async fetchDepth(positionHash): Promise<VenueDepth> {
      const d = await inner.fetchDepth(into(positionHash));
      return { ...d, position_hash: positionHash };
    },
    async placeOrder(req: VenueOrderRequest) {
      const r = req.position_hash === undefined ? req : { ...req, position_hash: into(req.position_hash) };
      return order(await inner.placeOrder(r));
    },
    async cancelOrder(req) {
      return order(await inner.cancelOrder(req));
    },
    async fetchOrder(accountId, venueOrderId) {
      return order(await inner.fetchOrder(accountId, venueOrderId));
    },
    subscribeOrderUpdates: (listener) => inner.subscribeOrderUpdates((o) => listener(order(o))),
    fetchBalance: (accountId) => inner.fetchBalance(accountId),
    subscribeBalances: (listener) => inner.subscribeBalances(listener),
    subscribeTrades(listener, filter) {
      return inner.subscribeTrades(
        (t) => {
          const m = trade(t);
          if (m && (!filter?.contest_ids || filter.contest_ids.includes(parsePositionHash(m.position_hash)?.contest_id ?? ''))) listener(m);
        },
        filter ? { contest_ids: contestsInto(filter.contest_ids) } : undefined,
      );
    },
    async fetchGameState(contestIds) {
      const recs = await inner.fetchGameState(contestsInto(contestIds) ?? []);
      return recs.map((r) => ({ ...r, contest_id: contestOut(r.contest_id) })).filter((r) => contestIds.includes(r.contest_id));
    },
    subscribeGameState(listener, filter) {
      return inner.subscribeGameState(
        (r) => {
          const m = { ...r, contest_id: contestOut(r.contest_id) };
          if (!filter?.contest_ids || filter.contest_ids.includes(m.contest_id)) listener(m);
        },
        filter ? { contest_ids: contestsInto(filter.contest_ids) } : undefined,
      );
    },
    subscribeSettlements: (listener) => inner.subscribeSettlements((s) => listener(settlement(s))),
  };
  return wrapped;
}
