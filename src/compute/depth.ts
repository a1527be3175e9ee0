/**
 * Orderbook depth per position (spec "Depth"): every visible venue with its levels best (lowest
 * price) first, their sum and the best price.
 */
import { round6 } from './precision.js';
import type { BookLevel, DepthPartner, PositionDepth, VenueQuote } from './types.js';

/**
 * The depth of one venue's quote.
 *
 * Levels with no USD behind them are dropped. Venues send levels best first; a linear pass checks
 * that and only an out-of-order book pays for a sort. A venue that reports just its top of book
 * (no levels, but USD available on a real book) shows that one level.
 */
export function partnerDepth(quote: VenueQuote): DepthPartner {
  const src = quote.levels;
  let levels: BookLevel[] = [];
  let ordered = true;
  let total = 0;
  for (let i = 0; i < src.length; i++) {
    const l = src[i];
    if (!(l.available > 0)) continue;
    if (levels.length > 0 && l.price < levels[levels.length - 1].price) ordered = false;
    levels.push(l);
    total += l.available;
  }
  if (levels.length === 0 && quote.real_book && quote.available > 0) {
    levels = [{ price: quote.price, available: quote.available }];
    total = quote.available;
  }
  if (!ordered) levels.sort(byPriceAscending);
  return {
    partner_id: quote.partner_id,
    partner_name: quote.partner_name,
    levels,
    total_available: round6(total),
    best_price: levels.length > 0 ? levels[0].price : null,
    fetched_at: quote.as_of,
  };
}

function byPriceAscending(a: BookLevel, b: BookLevel): number {
  return a.price - b.price;
}

/**
 * Depth of one position over its non-withheld quotes. fetched_at is the newest venue fetch (ISO
 * UTC strings compare in time order), or `nowIso` when no venue quotes the position.
 */
export function positionDepth(
  positionHash: string,
  quotes: readonly VenueQuote[],
  withheld: readonly boolean[],
  nowIso: string,
): PositionDepth {
  const partners: DepthPartner[] = [];
  let fetchedAt: string | null = null;
  for (let i = 0; i < quotes.length; i++) {
    if (withheld[i]) continue;
    const d = partnerDepth(quotes[i]);
    partners.push(d);
    if (fetchedAt === null || d.fetched_at > fetchedAt) fetchedAt = d.fetched_at;
  }
  return { position_hash: positionHash, partners, fetched_at: fetchedAt ?? nowIso };
}
