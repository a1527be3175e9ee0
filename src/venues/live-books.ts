/**
 * Live order books for verify_liquidity, read through the venue adapters (fetchDepth). Adapters
 * run in the ingest role's process; where none is at hand (an api-only process), or a venue has no
 * depth endpoint, fails, or is slow, a book reads as null: the check then stands on the cached book
 * and the result says it was not verified.
 */
import type { LiveBookReader } from '../domain/order-checks.js';
import type { VenueAdapter } from './types.js';

/** How long a live book read may take before preflight goes on without it. */
export const LIVE_BOOK_TIMEOUT_MS = 2_000;

export function adapterLiveBooks(adapters: readonly VenueAdapter[], timeoutMs = LIVE_BOOK_TIMEOUT_MS): LiveBookReader {
  const byId = new Map(adapters.map((a) => [a.id, a]));
  return {
    async read(partnerId, positionHash) {
      const adapter = byId.get(partnerId);
      if (!adapter || !adapter.describe().capabilities.depth) return null;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs);
        timer.unref();
      });
      try {
        const depth = await Promise.race([adapter.fetchDepth(positionHash), timeout]);
        if (depth === null || depth.liquidity_hash === null) return depth === null ? null : [];
        return depth.levels;
      } catch {
        return null;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** No adapters in this process: nothing is read live. */
export const noLiveBooks: LiveBookReader = { read: async () => null };
