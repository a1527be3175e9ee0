/**
 * The Polymarket adapter passes the shared VenueAdapter conformance suite, over the network:
 * a local Polymarket (test/venues/polymarket/support.ts) serves the recorded catalog and books
 * over HTTP and the recorded market-channel frames over a WebSocket.
 */
import { buildPolymarketCatalog, createPolymarketAdapter, type PolymarketAdapter } from '../../src/venues/polymarket/index.js';
import { parseGammaEvent } from '../../src/venues/polymarket/parse.js';
import type { NormalizedQuote, NormalizedTrade } from '../../src/venues/types.js';
import { FakePolymarket, TEST_NOW } from '../venues/polymarket/support.js';
import { venueAdapterContract, type ContractHarness } from './venue-adapter.contract.js';

/**
 * Publishes on the fake venue and, while the adapter is connected, resolves once the adapter has
 * handed the result to its listeners (a listener of our own, added after the suite's, is called
 * after it). A closed adapter gets nothing, so there is nothing to wait for.
 */
async function publishAndWait<T>(
  adapter: PolymarketAdapter,
  venue: FakePolymarket,
  subscribe: (listener: (x: T) => void) => () => void,
  matches: (x: T) => boolean,
  publish: () => void,
): Promise<void> {
  let off: (() => void) | null = null;
  const seen = new Promise<void>((resolve) => {
    try {
      off = subscribe((x) => {
        if (matches(x)) resolve();
      });
    } catch {
      resolve(); // not connected: nothing will arrive
    }
  });
  if (off === null) {
    publish();
    return;
  }
  await venue.untilSubscribed();
  publish();
  await seen;
  (off as () => void)();
}

venueAdapterContract('polymarket', async (): Promise<ContractHarness> => {
  const venue = new FakePolymarket();
  await venue.start();
  let now = TEST_NOW;
  const adapter = createPolymarketAdapter({ urls: venue.urls(), clock: () => now, connectWaitMs: 5_000 });
  // The first listed runner (Carolina Hurricanes to win the 2026 Stanley Cup) carries the recorded book.
  const cat = buildPolymarketCatalog(venue.events.map(parseGammaEvent));
  const token = cat.tokens.find((t) => t.token_id === venue.captureToken)!;
  const orderPosition = token.position_hash!;
  return {
    adapter,
    now: () => now,
    knownPosition: orderPosition,
    orderPosition,
    account: null,
    contestId: token.contest_id,
    triggerQuotes: () =>
      publishAndWait<NormalizedQuote>(
        adapter,
        venue,
        (l) => adapter.subscribeQuotes(l),
        (q) => q.position_hash === orderPosition,
        () => venue.broadcast(venue.nextPriceChange()),
      ),
    triggerTrade: (positionHash) => {
      const t = cat.tokens.find((x) => x.position_hash === positionHash)!;
      return publishAndWait<NormalizedTrade>(
        adapter,
        venue,
        (l) => adapter.subscribeTrades(l),
        (x) => x.position_hash === positionHash,
        () => venue.broadcast(venue.tradeFrame(t.token_id)),
      );
    },
    triggerGameState: () => {},
    triggerSettlement: () => {},
    advance: (ms) => {
      now += ms;
    },
    dispose: () => venue.stop(),
  };
});
