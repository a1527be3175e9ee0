/**
 * The Kalshi adapter wired to the fake venue, for the contract suite and the adapter tests.
 *
 * `withCredentials`: an RSA key the fake verifies, and an account: books stream, orders work.
 * Without: public market data only (polled books, public trades, orders unsupported).
 * The clock is manual (ts_init is exact); waiting for the adapter to have read what the fake sent
 * is by condition (its frame counter), never by a fixed sleep.
 */
import { KalshiAdapter } from '../../../src/venues/kalshi/adapter.js';
import { nativePosition } from '../../../src/venues/kalshi/catalog.js';
import { KALSHI_DEFAULTS } from '../../../src/venues/kalshi/config.js';
import type { ContractHarness } from '../../contract/venue-adapter.contract.js';
import { FakeKalshi } from './fake-kalshi.js';
import { rsaPair } from './support.js';

export const START = 1_790_000_000_000;
export const ACCOUNT = 'acct_contract';
export const MARS_YES = nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'yes');
export const MARS_NO = nativePosition('KXELONMARS-99', 'KXELONMARS-99', 'no');
export const COLONIZE_YES = nativePosition('KXCOLONIZEMARS-50', 'KXCOLONIZEMARS-50', 'yes');

/** Resolves once `cond()` holds; fails after `ms` (a missing event, not a slow one). */
export async function waitFor(cond: () => boolean, what: string, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export interface KalshiHarness extends ContractHarness {
  adapter: KalshiAdapter;
  fake: FakeKalshi;
  clock: { now(): number; advance(ms: number): void };
  /** Waits until the adapter has read `n` more frames than `before` (when it is connected). */
  settle(before: number, n: number): Promise<void>;
}

export async function kalshiHarness(opts: { withCredentials: boolean }): Promise<KalshiHarness> {
  let now = START;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  const keys = rsaPair();
  const fake = new FakeKalshi({ publicKeyPem: opts.withCredentials ? keys.publicKeyPem : null, clock: clock.now });
  await fake.start();
  const adapter = new KalshiAdapter(
    {
      ...KALSHI_DEFAULTS,
      restBaseUrl: fake.url,
      wsUrl: fake.wsUrl,
      ...(opts.withCredentials ? { keyId: 'test-key-id', privateKeyPem: keys.privateKeyPem, accountId: ACCOUNT } : {}),
    },
    { clock: clock.now, reconfirmMs: 0 },
  );
  const frames = () => adapter.feedStats().frames;
  const settle = async (before: number, n: number) => {
    if (!adapter.feedStats().connected || n === 0) return;
    await waitFor(() => frames() >= before + n, `${n} frame(s) read by the adapter`);
  };
  return {
    adapter,
    fake,
    clock,
    settle,
    now: clock.now,
    knownPosition: MARS_YES,
    orderPosition: MARS_YES,
    account: opts.withCredentials ? ACCOUNT : null,
    contestId: 'kalshi-KXELONMARS-99',
    async triggerQuotes() {
      if (!adapter.feedStats().connected) return;
      await waitFor(() => adapter.feedStats().books_synced === 2, 'both books synced');
      const before = frames();
      // One more contract bid at NO 0.88: the YES ask's size changes.
      await settle(before, fake.pushDelta('KXELONMARS-99', 'no', '0.88', '1.00'));
    },
    async triggerTrade(position) {
      if (!adapter.feedStats().connected) return;
      const side = position === MARS_NO ? 'no' : 'yes';
      await waitFor(() => fake.subscribers('trade', 'KXELONMARS-99') > 0, 'the trade subscription');
      const before = frames();
      await settle(before, fake.pushTrade('KXELONMARS-99', side, side === 'yes' ? '0.1200' : '0.8800', '3.00'));
    },
    triggerGameState() {
      throw new Error('kalshi publishes no game state');
    },
    triggerSettlement() {
      throw new Error('kalshi settlements are not wired');
    },
    advance: clock.advance,
    dispose: () => fake.stop(),
  };
}
