/** Every simulated venue passes the shared VenueAdapter conformance suite. */
import { createSimAdapter } from '../../src/venues/sim/index.js';
import { SIM_PARTNER_IDS, SIM_PERSONALITIES } from '../../src/sim/index.js';
import { contestOf, manualClock, newMarket, pickPosition } from '../unit/venues/sim/support.js';
import { venueAdapterContract, type ContractHarness } from './venue-adapter.contract.js';

for (const id of SIM_PARTNER_IDS) {
  venueAdapterContract(id, (): ContractHarness => {
    const market = newMarket(42);
    const clock = manualClock(market);
    const adapter = createSimAdapter(market, id, { clock: clock.now });
    const orderPosition = pickPosition(market, id);
    const contestId = contestOf(market, orderPosition);
    let account: string | null = null;
    if (SIM_PERSONALITIES[id].partner.connectable) {
      account = 'acct_contract';
      market.connectAccount(account, { partner_id: id, balance: 100_000 });
    } else if (SIM_PERSONALITIES[id].partner.internal_book) {
      account = 'acct_contract';
    }
    return {
      adapter,
      now: clock.now,
      knownPosition: orderPosition,
      orderPosition,
      account,
      contestId,
      triggerQuotes: () => clock.advance(2_000),
      triggerTrade: (position_hash) => {
        market.emitTrade({ partner_id: id, position_hash, price: 0.42, size_contracts: 7, taker_action: 'buy' });
      },
      triggerGameState: (contest) => {
        market.setState(contest, { game_status: 'live', scores: { home_score: 3, away_score: 0, period_scores: [] } });
      },
      triggerSettlement: () => {
        const p = market.catalog.positions.find((x) => x.position_hash === orderPosition)!;
        market.settle(contestId, { winner_participant_id: p.participant_id });
      },
      advance: (ms) => clock.advance(ms),
    };
  });
}
