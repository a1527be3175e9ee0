/**
 * What the liquidity processor did with a contest's stored quote texts before QuoteInputs
 * (pipelines/processors/quote-inputs.ts): every text parsed and mapped on every read, grouped by
 * position. bench quote-inputs measures against it; the QuoteInputs tests compare with it.
 */
import { venueQuoteOf } from '../../pipelines/processors/quote-inputs.js';
import type { VenueQuote } from '../../src/compute/types.js';
import type { StoredQuote } from '../../src/venues/types.js';

export function parseEveryQuote(texts: readonly string[], names: ReadonlyMap<string, string>): Map<string, VenueQuote[]> {
  const out = new Map<string, VenueQuote[]>();
  for (const t of texts) {
    const q = JSON.parse(t) as StoredQuote;
    let list = out.get(q.position_hash);
    if (!list) out.set(q.position_hash, (list = []));
    list.push(venueQuoteOf(q, names));
  }
  return out;
}
