/**
 * The ingest role's cross-venue merge (pipelines/ingest/catalog-merge.ts) on both real adapters
 * replayed over the network (the recorded copies plus the synthetic pair, fixtures/synthetic-pair/):
 * whichever venue connects first is read under its own ids; when the other connects, the game both
 * list becomes one contest, the venue contest it absorbed is retired, and the venue already read is
 * re-keyed (its adapter now speaks the merged ids). A store that refuses leaves everything as it was.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VenueCatalogMerge } from '../../../pipelines/ingest/catalog-merge.js';
import { nativePosition } from '../../../src/venues/kalshi/catalog.js';
import { createKalshiAdapter, type KalshiAdapter } from '../../../src/venues/kalshi/index.js';
import { mergeVenueCatalogs, remappableAdapter, type MergedCatalog } from '../../../src/venues/matching/index.js';
import { createPolymarketAdapter, type PolymarketAdapter } from '../../../src/venues/polymarket/index.js';
import { catalogsFromRecordings, loadRecordings, startReplayServer, type ReplayServer } from '../../../src/venues/replay/index.js';
import { PAIR_KALSHI_CONTEST, PAIR_POLYMARKET_CONTEST, syntheticPairRecordings } from './synthetic-pair.js';

const dir = syntheticPairRecordings();
const expected = mergeVenueCatalogs(catalogsFromRecordings(loadRecordings(dir)));
const GAME = expected.report.decisions.find((d) => d.contest_id === PAIR_KALSHI_CONTEST)!.merged_into!;
const GB_YES = nativePosition('KXNFLGAME-25DEC27BALGB', 'KXNFLGAME-25DEC27BALGB-GB', 'yes');
const GB_NO = nativePosition('KXNFLGAME-25DEC27BALGB', 'KXNFLGAME-25DEC27BALGB-GB', 'no');
const PM_PACKERS = 'pm_ev_900001:yes_no:no:0:pm_m900011:ft';
const PACKERS = expected.position_map.kalshi![GB_YES]!;

let server: ReplayServer;
let k: KalshiAdapter;
let p: PolymarketAdapter;

beforeAll(async () => {
  server = await startReplayServer({ dir });
  const env = server.env();
  k = createKalshiAdapter({ restBaseUrl: env.FLOW_KALSHI_BASE_URL, wsUrl: env.FLOW_KALSHI_WS_URL });
  p = createPolymarketAdapter({ urls: { gamma: env.FLOW_POLYMARKET_GAMMA_URL, clob: env.FLOW_POLYMARKET_CLOB_URL, ws: env.FLOW_POLYMARKET_WS_URL } });
  await Promise.all([k.connect(), p.connect()]);
});

afterAll(async () => {
  await Promise.all([k?.close(), p?.close()]);
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A merge whose store keeps what it was given (or refuses while `refuse` is set). */
function merger() {
  const stored: { catalog: MergedCatalog; retired: readonly string[] }[] = [];
  const o = { refuse: false };
  const merge = new VenueCatalogMerge({
    match: {},
    log: { info: () => undefined },
    async store(catalog, retired) {
      if (o.refuse) throw new Error('PostgreSQL refused');
      stored.push({ catalog, retired });
    },
  });
  return { merge, stored, o, wk: merge.wrap(k), wp: merge.wrap(p) };
}

/** A catalog's identity: its contests, positions and their markets (the adapter stamps update times with its clock). */
const shape = (c: MergedCatalog) => ({
  contests: c.contests.map((x) => [x.id, x.status, x.title]),
  positions: c.positions.map((x) => [x.position_hash, x.group_key]),
  markets: c.markets.map((x) => x.id),
  contest_markets: c.contest_markets,
});

const hashes = async (a: { fetchQuotes(): Promise<{ position_hash: string }[]> }) => (await a.fetchQuotes()).map((q) => q.position_hash);

describe('merging as the venues connect', () => {
  it('Polymarket first: read under its own ids; Kalshi then merges the game, retires the Polymarket contest and re-keys Polymarket', async () => {
    const { merge, stored, wk, wp } = merger();
    const first = await merge.add('polymarket', p.catalog()!);
    expect(first).toMatchObject({ retired: [], remapped: [] });
    expect(first.result.report).toMatchObject({ venues: ['polymarket'], matched: 0 });
    expect(stored[0]!.catalog.contests.map((c) => c.id)).toContain(PAIR_POLYMARKET_CONTEST);
    expect(await hashes(wp)).toContain(PM_PACKERS);

    const second = await merge.add('kalshi', k.catalog()!);
    expect(second.retired).toEqual([PAIR_POLYMARKET_CONTEST]);
    expect(second.remapped.map((w) => w.id)).toEqual(['polymarket']);
    expect(second.remapped[0]).toBe(wp);
    expect(second.result.report).toMatchObject({ venues: ['kalshi', 'polymarket'], matched: 2, merged_contests: 1 });
    // What the service stores is what the matcher makes of the two catalogs.
    expect(shape(stored[1]!.catalog)).toEqual(shape(expected.catalog));
    expect(stored[1]!.retired).toEqual([PAIR_POLYMARKET_CONTEST]);
    expect(merge.report()).toEqual(expected.report);

    // Both venues now quote Green Bay on the merged position; Kalshi's No is not quoted (unlinked);
    // nothing is quoted on the retired contest.
    const pq = await wp.fetchQuotes();
    const kq = await wk.fetchQuotes();
    expect(pq.find((q) => q.position_hash === PACKERS)).toMatchObject({ partner_id: 'polymarket', price: 0.6, venue_side_key: 'no' });
    expect(kq.find((q) => q.position_hash === PACKERS)).toMatchObject({ partner_id: 'kalshi', price: 0.62, venue_side_key: 'yes' });
    expect(pq.some((q) => q.position_hash.startsWith(`${PAIR_POLYMARKET_CONTEST}:`))).toBe(false);
    expect(kq.some((q) => q.position_hash === GB_NO || q.position_hash === GB_YES)).toBe(false);
    // A merged id given to the adapter reaches the venue as its own.
    expect(await wk.fetchDepth(PACKERS)).toMatchObject({ position_hash: PACKERS, best_price: 0.62 });
    // Unmatched contests are served as listed.
    expect(await hashes(wk)).toContain(nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'yes'));
    expect(stored[1]!.catalog.contests.map((c) => c.id)).toEqual(expect.arrayContaining([GAME, 'kalshi-KXELONMARS-99']));
  });

  it('Kalshi first: the same merged catalog, the Kalshi contest retired and Kalshi re-keyed', async () => {
    const { merge, stored, wk } = merger();
    await merge.add('kalshi', k.catalog()!);
    expect(await hashes(wk)).toContain(GB_YES);
    const second = await merge.add('polymarket', p.catalog()!);
    expect(second.retired).toEqual([PAIR_KALSHI_CONTEST]);
    expect(second.remapped.map((w) => w.id)).toEqual(['kalshi']);
    expect(shape(stored[1]!.catalog)).toEqual(shape(expected.catalog));
    expect(await hashes(wk)).toContain(PACKERS);
  });

  it('merges one venue at a time when both connect together', async () => {
    const { merge, stored } = merger();
    const [a, b] = await Promise.all([merge.add('kalshi', k.catalog()!), merge.add('polymarket', p.catalog()!)]);
    expect(a.result.report.venues).toEqual(['kalshi']);
    expect(b.result.report.venues).toEqual(['kalshi', 'polymarket']);
    expect(stored.map((s) => s.retired)).toEqual([[], [PAIR_KALSHI_CONTEST]]);
    expect(shape(stored[1]!.catalog)).toEqual(shape(expected.catalog));
  });

  it('changes nothing when the store refuses the merged catalog, and merges on the retry', async () => {
    const { merge, o, wp } = merger();
    await merge.add('polymarket', p.catalog()!);
    const before = merge.report();
    o.refuse = true;
    await expect(merge.add('kalshi', k.catalog()!)).rejects.toThrow('PostgreSQL refused');
    expect(merge.report()).toBe(before);
    expect(await hashes(wp)).toContain(PM_PACKERS);
    o.refuse = false;
    const retry = await merge.add('kalshi', k.catalog()!);
    expect(retry.retired).toEqual([PAIR_POLYMARKET_CONTEST]);
    expect(await hashes(wp)).toContain(PACKERS);
  });
});

describe('a remappable adapter', () => {
  it('says whether new maps differ, whatever their key order', () => {
    const w = remappableAdapter(k, { a: 'x', b: null }, { c: 'd' });
    expect(w.inner).toBe(k);
    expect(w.setMaps({ b: null, a: 'x' }, { c: 'd' })).toBe(false);
    expect(w.setMaps({ a: 'y', b: null }, { c: 'd' })).toBe(true);
    expect(w.setMaps({ a: 'y', b: null }, {})).toBe(true);
  });
});
