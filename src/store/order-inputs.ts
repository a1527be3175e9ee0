/**
 * Everything the per-leg order checks (src/domain/order-checks.ts) need, read in a few round trips
 * and written nowhere: the partner catalog (order_config), the account's venue connections and
 * their expected balances (exact text), the practice wallet, the account's execution-limit policy
 * with the open exposure it counts, each leg's position (open or not, its league), and
 * from the hot state in Redis the venue quotes, books and fee models the liquidity feed serves (the
 * same data the buy uses).
 *
 * A leg named by liquidity_hash finds its contest by looking the hash up in the open contests'
 * stored venue quotes (a liquidity_hash names its venue, not its position): one pipelined read.
 */
import type { Partner } from '../domain/catalog.js';
import { parseMicros } from '../domain/money.js';
import { NO_POLICY, type AccountPolicy } from '../domain/execution-limits.js';
import type { Funds, LegMarket, QuoteView, VenueAccess } from '../domain/order-checks.js';
import type { ResolvedLeg } from '../domain/orders.js';
import type { FeeModel, PriceLevel } from '../domain/quotes.js';
import { listPartners, positionsByHash } from './pg/catalog.js';
import { venueAccess } from './pg/partners.js';
import { accountPolicy } from './pg/policy.js';
import type { Pool } from './pg/pool.js';
import { practiceBalanceReadOnly } from './pg/wallet.js';
import type { HotState } from './redis/hot.js';

/** The fields read of a liquidity feed position and of a depth entry (the REST shapes). */
interface FeedPosition {
  position_hash: string;
  partner_liquidities: (Omit<QuoteView, 'is_stale'> & { is_stale?: boolean })[];
}
interface FeedDepth {
  partners: { partner_id: string; levels: PriceLevel[] }[];
}
/** The fields read of a stored venue quote (ingest's StoredQuote). */
interface StoredQuote {
  position_hash: string;
  fee?: FeeModel;
  stale_after_ms?: number;
}

export interface OrderInputs {
  partners: ReadonlyMap<string, Partner>;
  /** The internal (practice) book, when the catalog has one. */
  practice: Partner | null;
  /** The account's connection per venue named by a real leg. */
  access: ReadonlyMap<string, VenueAccess>;
  /** Known money per funds key (venue partner_id, or the practice book's): absent means no figure. */
  funds: ReadonlyMap<string, Funds>;
  /** Per leg, aligned with the legs asked for. */
  markets: LegMarket[];
  /** The account's execution limits and open exposure; NO_POLICY when no leg is real money (limits bind real money only). */
  policy: AccountPolicy;
}

const parse = <T>(json: string | null | undefined): T | null => {
  if (json === null || json === undefined) return null;
  try {
    return JSON.parse(json) as T;
  } catch {
    return null;
  }
};

/** Reads the inputs of `legs` for `routerAccountId` as of `nowMs` (staleness is relative to it); `partners`: the catalog when already read. */
export async function loadOrderInputs(
  pool: Pool,
  hot: HotState,
  q: { routerAccountId: string; legs: readonly ResolvedLeg[]; nowMs: number; partners?: readonly Partner[] },
): Promise<OrderInputs> {
  const { legs, nowMs } = q;
  const partnerList = q.partners ?? (await listPartners(pool));
  const partners = new Map(partnerList.map((p) => [p.partner_id, p]));
  const practice = partnerList.find((p) => p.internal_book) ?? null;

  // Each leg's position: named, or the one its liquidity_hash quotes (ingest's index, one round trip).
  const byHash = [...new Set(legs.flatMap((l) => (l.liquidity_hash !== null ? [l.liquidity_hash] : [])))];
  const indexed = await hot.positionsOfLiquidityHashes(byHash);
  const positionOfHash = new Map(byHash.flatMap((h, i) => (indexed[i] ? [[h, indexed[i]!] as const] : [])));
  // The named quotes' stored form, read below with the contests' hot state.
  const storedByHash = new Map<string, StoredQuote>();
  const positionOf = legs.map((l) => (l.liquidity_hash !== null ? (positionOfHash.get(l.liquidity_hash) ?? null) : l.position_hash));
  const states = await positionsByHash(pool, [...new Set(positionOf.filter((p): p is string => p !== null))]);

  // The hot state of each contest the legs touch: liquidity and depth, then the named quotes' stored form.
  const contests = new Map<string, Set<string>>();
  for (const p of positionOf) {
    const st = p !== null ? states.get(p) : undefined;
    if (st) (contests.get(st.contest_id) ?? contests.set(st.contest_id, new Set()).get(st.contest_id)!).add(p!);
  }
  const feed = new Map<string, FeedPosition>();
  const depth = new Map<string, FeedDepth>();
  await Promise.all(
    [...contests].map(async ([contest, hashes]) => {
      const list = [...hashes];
      const view = await hot.orderView(contest, list);
      for (const pos of parse<FeedPosition[]>(view.liquidity) ?? []) if (hashes.has(pos.position_hash)) feed.set(pos.position_hash, pos);
      list.forEach((h, i) => {
        const d = parse<FeedDepth>(view.depth[i]);
        if (d) depth.set(h, d);
      });
    }),
  );
  const named = legs.map((l, i) => {
    const pos = positionOf[i] !== null ? feed.get(positionOf[i]!) : undefined;
    return pos?.partner_liquidities.find((e) => (l.liquidity_hash !== null ? e.liquidity_hash === l.liquidity_hash : e.partner_id === l.partner_id)) ?? null;
  });
  const missing = new Map<string, string[]>();
  named.forEach((e, i) => {
    if (e === null || storedByHash.has(e.liquidity_hash)) return;
    const contest = states.get(positionOf[i]!)!.contest_id;
    (missing.get(contest) ?? missing.set(contest, []).get(contest)!).push(e.liquidity_hash);
  });
  await Promise.all(
    [...missing].map(async ([contest, hashes]) => {
      const vals = await hot.venueQuotes(contest, hashes);
      hashes.forEach((h, i) => {
        const s = parse<StoredQuote>(vals[i]);
        if (s) storedByHash.set(h, s);
      });
    }),
  );

  const markets: LegMarket[] = legs.map((_l, i) => {
    const hash = positionOf[i]!;
    const state = hash !== null ? states.get(hash) : undefined;
    const pos = state ? feed.get(hash) : undefined;
    const entry = named[i];
    const stored = entry ? storedByHash.get(entry.liquidity_hash) : undefined;
    // The feed's is_stale is as of the contest's last computation; the stored bound says whether it has lapsed since.
    const stale = (e: FeedPosition['partner_liquidities'][number], s?: StoredQuote) => e.is_stale === true || (s?.stale_after_ms !== undefined && nowMs > s.stale_after_ms);
    return {
      position_hash: state ? hash : null,
      open: state?.open ?? false,
      league_id: state?.league_id ?? null,
      quote: entry ? { partner_id: entry.partner_id, liquidity_hash: entry.liquidity_hash, price: entry.price, available: entry.available, is_stale: stale(entry, stored) } : null,
      levels: entry ? (depth.get(hash)?.partners.find((p) => p.partner_id === entry.partner_id)?.levels ?? []) : [],
      fee: stored?.fee ?? null,
      quotes: (pos?.partner_liquidities ?? []).map((e) => ({
        partner_id: e.partner_id,
        liquidity_hash: e.liquidity_hash,
        price: e.price,
        available: e.available,
        is_stale: stale(e),
        internal_book: partners.get(e.partner_id)?.internal_book ?? false,
      })),
    };
  });

  // Connections and money: the venues real legs name, and the practice wallet for practice legs.
  const realVenues = [...new Set(legs.filter((l) => l.mode === 'real').map((l) => l.partner_id))];
  const [rows, policy] = await Promise.all([venueAccess(pool, q.routerAccountId, realVenues, nowMs), realVenues.length > 0 ? accountPolicy(pool, q.routerAccountId) : NO_POLICY]);
  const access = new Map<string, VenueAccess>(rows.map((r) => [r.partner_id, { status: r.status, credential_status: r.credential_status }]));
  const funds = new Map<string, Funds>();
  for (const r of rows) if (r.expected_balance !== null) funds.set(r.partner_id, { available: parseMicros(r.expected_balance, 'floor').micros, synced: !r.is_stale });
  if (practice && legs.some((l) => l.mode === 'paper')) {
    funds.set(practice.partner_id, { available: parseMicros(await practiceBalanceReadOnly(pool, q.routerAccountId), 'floor').micros, synced: true });
  }
  return { partners, practice, access, funds, markets, policy };
}
