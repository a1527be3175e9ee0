/**
 * The price a practice (paper) leg fills at (spec "Orders: place" rule 11): the best live price
 * across real venues, whatever venue the leg named. The whole amount fills at that one price; the
 * book is not walked.
 */
import type { PartnerLiquidity } from '../domain/stream.js';
import { isTradablePrice, MIN_QUOTE_USD } from './quotes.js';

/**
 * The quote a paper leg fills at, or null when none qualifies. A quote counts when its venue is not
 * an internal book, it is not stale, its price is tradable (strictly between 0 and 1) and at least
 * USD 1 is available behind it. Best is the lowest price a buyer pays; ties go to the larger size,
 * then the venue id, so the choice never depends on the order quotes were stored in.
 */
export function paperQuote(quotes: readonly PartnerLiquidity[], isInternalBook: (partnerId: string) => boolean): PartnerLiquidity | null {
  let best: PartnerLiquidity | null = null;
  for (const q of quotes) {
    if (isInternalBook(q.partner_id) || q.is_stale || !isTradablePrice(q.price) || !(q.available >= MIN_QUOTE_USD)) continue;
    if (best === null || q.price < best.price || (q.price === best.price && (q.available > best.available || (q.available === best.available && q.partner_id < best.partner_id)))) best = q;
  }
  return best;
}
