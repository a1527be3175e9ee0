/**
 * The simulated venues: each one's partner record, order_config, fee model, capabilities and
 * market-making behaviour, declared as data in one place (CCXT `describe()` style).
 *
 * Behaviour knobs are in the venue's own terms (how wide it quotes, how far it lags the true
 * price, how deep its book is, how often it goes stale or misprices), so a reader can see why one
 * venue's quotes differ from another's without reading the model.
 */
import type { CredentialField, OrderConfig, Partner } from '../domain/catalog.js';
import type { FeeModel, VenueCapabilities } from '../venues/types.js';

export type SimPartnerId = 'sim_exchange' | 'sim_book01' | 'sim_sportsbook' | 'sim_p2p' | 'sim_quotes' | 'practice';

export const SIM_PARTNER_IDS: readonly SimPartnerId[] = ['sim_exchange', 'sim_book01', 'sim_sportsbook', 'sim_p2p', 'sim_quotes', 'practice'];

/** Wire dialect the venue's simulated server speaks (see messages.ts). */
export type SimWire = 'exchange' | 'book01' | 'sportsbook' | 'p2p' | 'quotes' | 'internal';

/** Which positions a venue lists. */
export interface SimCoverage {
  markets: readonly string[];
  /** Ladder lines listed: all of them, or only those within `max_line_offset` of the main line. */
  max_line_offset: number;
}

export interface SimEpisodes {
  /** Episodes per venue per hour of simulated time. */
  rate_per_hour: number;
  min_ms: number;
  max_ms: number;
}

/**
 * Market situations (the signal types of the spec) a venue produces on its own, each per hour of
 * simulated time; how big each one is lives in situations.ts. Trade situations need a venue that
 * publishes trades; a price move starts on this venue and moves every venue listing the position.
 */
export interface SimSituationRates {
  price_move: number;
  whale_trade: number;
  block_trade: number;
  flow_imbalance: number;
  trade_through: number;
  volume_spike: number;
  trade_burst: number;
}

export interface SimDynamics {
  /** Overround on a two-way market (each side's ask ≈ fair + vig/2). */
  vig: number;
  /** SD of a listing's persistent bias around fair (why venues disagree with consensus). */
  bias_sd: number;
  /** Time constant (ms) with which the venue's fair value follows the true one. */
  lag_ms: number;
  /** The venue stamps ts_event this long before the message reaches us. */
  net_delay_ms: number;
  /** Reprices per listing per second of simulated time. */
  update_rate: number;
  /** Book shape: number of levels, price step between levels (0-1), USD per level range. */
  levels: number;
  level_step: number;
  level_usd: readonly [number, number];
  coverage: SimCoverage;
  stale: SimEpisodes;
  /** Quotes > 0.15 away from fair on one listing. */
  outlier: (SimEpisodes & { min_offset: number; max_offset: number }) | null;
  /** One side priced below fair by enough to open a real cross-venue arbitrage. */
  arb: (SimEpisodes & { min_edge: number; max_edge: number }) | null;
  /** Situations (price moves, whale prints, one-way flow, ...) per hour, see SimSituationRates. */
  situations: SimSituationRates;
  /** Share of head-to-head contests whose participants the venue lists on the opposite side. */
  flip_contest_share: number;
  /** Random trade prints per second across the venue (0: the venue publishes no trades). */
  trades_per_second: number;
  /** Delay before an accepted market order's fill is confirmed (async-fill venues), else null. */
  async_fill_ms: number | null;
  /** Fees rounded up to the cent per order. */
  fee_round_up_to_cent: boolean;
}

export interface SimPersonality {
  partner: Partner;
  fee: FeeModel;
  capabilities: VenueCapabilities;
  wire: SimWire;
  /** Indicative-only prices (no book behind them). */
  real_book: boolean;
  dynamics: SimDynamics;
}

const LOGO = (id: string) => `https://static.flow.local/partners/${id}.svg`;

const H2H_MARKETS = ['moneyline', 'spread', 'total', 'player_points', 'tournament_winner'] as const;

function partner(
  id: SimPartnerId,
  name: string,
  order_config: OrderConfig,
  credential_fields: CredentialField[],
  extra: Partial<Pick<Partner, 'connectable' | 'internal_book'>> = {},
): Partner {
  return {
    partner_id: id,
    name,
    status: 'active',
    orders_allowed: order_config.orders_allowed,
    connectable: extra.connectable ?? credential_fields.length > 0,
    internal_book: extra.internal_book ?? false,
    order_config,
    credential_fields,
    logo_url: LOGO(id),
  };
}

const noEpisodes: SimEpisodes = { rate_per_hour: 0, min_ms: 0, max_ms: 0 };

/** A venue that produces no situations of its own (the trade ones need a venue that prints). */
const noSituations: SimSituationRates = { price_move: 0, whale_trade: 0, block_trade: 0, flow_imbalance: 0, trade_through: 0, volume_spike: 0, trade_burst: 0 };


export const SIM_PERSONALITIES: Readonly<Record<SimPartnerId, SimPersonality>> = {
  sim_exchange: {
    partner: partner(
      'sim_exchange',
      'Sim Exchange',
      {
        orders_allowed: true,
        credentials_allowed: true,
        // The venue's real floor is one whole contract (see whole_contracts).
        min_order_amount: 0.01,
        max_order_amount: 25000,
        amount_increment: null,
        whole_contracts: true,
        full_fill_always_allowed: false,
        price_submitted: true,
        price_format: 'cents',
        price_tick: 1,
        min_price: 1,
        max_price: 99,
        cancel_supported: true,
        supported_order_types: ['market', 'limit'],
      },
      [
        { key: 'api_key_id', label: 'API key ID', type: 'text', required: true },
        { key: 'private_key', label: 'Private key', type: 'password', required: true },
      ],
    ),
    fee: { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 },
    capabilities: {
      quotes: { snapshot: true, streaming: true, poll_interval_ms: null, freshness_ms: 30_000 },
      depth: true,
      orders: { place: true, cancel: true, types: ['market', 'limit'], async_fills: false },
      balance: true,
      trades: true,
      game_state: false,
      settlements: true,
    },
    wire: 'exchange',
    real_book: true,
    dynamics: {
      vig: 0.02,
      bias_sd: 0.003,
      lag_ms: 1500,
      net_delay_ms: 40,
      update_rate: 0.3,
      levels: 5,
      level_step: 0.01,
      level_usd: [50, 4000],
      coverage: { markets: H2H_MARKETS, max_line_offset: 99 },
      stale: { rate_per_hour: 1, min_ms: 5_000, max_ms: 15_000 },
      outlier: null,
      arb: null,
      situations: { price_move: 2, whale_trade: 3, block_trade: 2, flow_imbalance: 3, trade_through: 2, volume_spike: 2, trade_burst: 4 },
      flip_contest_share: 0,
      trades_per_second: 2,
      async_fill_ms: null,
      fee_round_up_to_cent: true,
    },
  },
  sim_book01: {
    partner: partner(
      'sim_book01',
      'Sim Book01',
      {
        orders_allowed: true,
        credentials_allowed: true,
        min_order_amount: 1,
        max_order_amount: null,
        amount_increment: 0.01,
        whole_contracts: false,
        full_fill_always_allowed: true,
        price_submitted: true,
        price_format: 'probability',
        price_tick: 0.01,
        min_price: 0.01,
        max_price: 0.99,
        cancel_supported: true,
        supported_order_types: ['market', 'limit'],
      },
      [
        { key: 'wallet_address', label: 'Wallet address', type: 'text', required: true },
        { key: 'api_secret', label: 'API secret', type: 'password', required: true },
        { key: 'api_passphrase', label: 'API passphrase', type: 'password', required: false },
      ],
    ),
    fee: { kind: 'pq', taker_rate: 0.02, maker_rate: 0 },
    capabilities: {
      quotes: { snapshot: true, streaming: true, poll_interval_ms: null, freshness_ms: 30_000 },
      depth: true,
      orders: { place: true, cancel: true, types: ['market', 'limit'], async_fills: false },
      balance: true,
      trades: true,
      game_state: false,
      settlements: true,
    },
    wire: 'book01',
    real_book: true,
    dynamics: {
      vig: 0.01,
      bias_sd: 0.004,
      lag_ms: 4000,
      net_delay_ms: 120,
      update_rate: 0.2,
      levels: 6,
      level_step: 0.01,
      level_usd: [20, 8000],
      coverage: { markets: H2H_MARKETS, max_line_offset: 99 },
      stale: { rate_per_hour: 2, min_ms: 5_000, max_ms: 30_000 },
      outlier: null,
      arb: { rate_per_hour: 20, min_ms: 10_000, max_ms: 60_000, min_edge: 0.015, max_edge: 0.04 },
      // Wallet prints on a chain: no negotiated blocks.
      situations: { price_move: 1, whale_trade: 3, block_trade: 0, flow_imbalance: 3, trade_through: 2, volume_spike: 2, trade_burst: 4 },
      flip_contest_share: 0,
      trades_per_second: 1.5,
      async_fill_ms: null,
      fee_round_up_to_cent: false,
    },
  },
  sim_sportsbook: {
    partner: partner(
      'sim_sportsbook',
      'Sim Sportsbook',
      {
        orders_allowed: true,
        credentials_allowed: true,
        min_order_amount: 5,
        max_order_amount: 1000,
        amount_increment: 1,
        whole_contracts: false,
        full_fill_always_allowed: false,
        price_submitted: false,
        price_format: 'american',
        price_tick: 1,
        // Band as probabilities: +5000 (longest underdog) to -10000 (shortest favourite).
        min_price: 5000,
        max_price: -10000,
        cancel_supported: false,
        supported_order_types: ['market'],
      },
      [
        { key: 'username', label: 'E-mail', type: 'email', required: true },
        { key: 'password', label: 'Password', type: 'password', required: true },
      ],
    ),
    fee: { kind: 'none' },
    capabilities: {
      quotes: { snapshot: true, streaming: false, poll_interval_ms: 5000, freshness_ms: 35_000 },
      depth: true,
      orders: { place: true, cancel: false, types: ['market'], async_fills: false },
      balance: true,
      trades: false,
      game_state: true,
      settlements: true,
    },
    wire: 'sportsbook',
    real_book: true,
    dynamics: {
      vig: 0.045,
      bias_sd: 0.005,
      lag_ms: 20_000,
      net_delay_ms: 300,
      update_rate: 0.1,
      levels: 1,
      level_step: 0,
      level_usd: [250, 2500],
      coverage: { markets: H2H_MARKETS, max_line_offset: 1 },
      stale: { rate_per_hour: 6, min_ms: 10_000, max_ms: 40_000 },
      outlier: null,
      arb: null,
      situations: noSituations,
      flip_contest_share: 0,
      trades_per_second: 0,
      async_fill_ms: null,
      fee_round_up_to_cent: false,
    },
  },
  sim_p2p: {
    partner: partner(
      'sim_p2p',
      'Sim P2P',
      {
        orders_allowed: true,
        credentials_allowed: true,
        min_order_amount: 1,
        max_order_amount: 5000,
        amount_increment: 0.01,
        whole_contracts: false,
        full_fill_always_allowed: false,
        price_submitted: true,
        price_format: 'probability',
        price_tick: 0.001,
        min_price: 0.01,
        max_price: 0.99,
        cancel_supported: false,
        supported_order_types: ['market'],
      },
      [
        { key: 'username', label: 'E-mail', type: 'email', required: true },
        { key: 'password', label: 'Password', type: 'password', required: true },
      ],
    ),
    fee: { kind: 'flat_pct', taker_pct: 1, maker_pct: 0 },
    capabilities: {
      quotes: { snapshot: true, streaming: false, poll_interval_ms: 3000, freshness_ms: 30_000 },
      depth: true,
      orders: { place: true, cancel: false, types: ['market'], async_fills: true },
      balance: true,
      trades: false,
      game_state: false,
      settlements: true,
    },
    wire: 'p2p',
    real_book: true,
    dynamics: {
      vig: 0.015,
      bias_sd: 0.004,
      lag_ms: 8000,
      net_delay_ms: 200,
      update_rate: 0.2,
      levels: 3,
      level_step: 0.005,
      level_usd: [20, 1500],
      coverage: { markets: ['moneyline', 'spread', 'total', 'tournament_winner'], max_line_offset: 0 },
      stale: { rate_per_hour: 4, min_ms: 10_000, max_ms: 30_000 },
      outlier: null,
      arb: { rate_per_hour: 12, min_ms: 10_000, max_ms: 45_000, min_edge: 0.015, max_edge: 0.035 },
      situations: noSituations,
      flip_contest_share: 0.2,
      trades_per_second: 0,
      async_fill_ms: 1500,
      fee_round_up_to_cent: false,
    },
  },
  sim_quotes: {
    partner: partner(
      'sim_quotes',
      'Sim Quotes',
      {
        orders_allowed: false,
        credentials_allowed: false,
        min_order_amount: 0,
        max_order_amount: null,
        amount_increment: null,
        whole_contracts: false,
        full_fill_always_allowed: false,
        price_submitted: false,
        price_format: 'probability',
        price_tick: 0.001,
        min_price: null,
        max_price: null,
        cancel_supported: false,
        supported_order_types: ['market'],
      },
      [],
    ),
    fee: { kind: 'unknown' },
    capabilities: {
      quotes: { snapshot: true, streaming: false, poll_interval_ms: 10_000, freshness_ms: 50_000 },
      depth: false,
      orders: { place: false, cancel: false, types: [], async_fills: false },
      balance: false,
      trades: false,
      game_state: false,
      settlements: false,
    },
    wire: 'quotes',
    real_book: false,
    dynamics: {
      vig: 0.05,
      bias_sd: 0.006,
      lag_ms: 30_000,
      net_delay_ms: 500,
      update_rate: 0.1,
      levels: 1,
      level_step: 0,
      level_usd: [100, 5000],
      coverage: { markets: ['moneyline', 'spread', 'total', 'tournament_winner'], max_line_offset: 0 },
      stale: { rate_per_hour: 4, min_ms: 20_000, max_ms: 60_000 },
      outlier: { rate_per_hour: 60, min_ms: 20_000, max_ms: 90_000, min_offset: 0.17, max_offset: 0.25 },
      arb: null,
      situations: noSituations,
      flip_contest_share: 0,
      trades_per_second: 0,
      async_fill_ms: null,
      fee_round_up_to_cent: false,
    },
  },
  practice: {
    partner: partner(
      'practice',
      'Practice (ATLAS)',
      {
        orders_allowed: true,
        credentials_allowed: false,
        min_order_amount: 1,
        max_order_amount: null,
        amount_increment: 0.01,
        whole_contracts: false,
        full_fill_always_allowed: false,
        price_submitted: false,
        price_format: 'probability',
        price_tick: 0.001,
        min_price: null,
        max_price: null,
        cancel_supported: false,
        supported_order_types: ['market'],
      },
      [],
      { connectable: false, internal_book: true },
    ),
    fee: { kind: 'none' },
    capabilities: {
      quotes: { snapshot: false, streaming: false, poll_interval_ms: null, freshness_ms: null },
      depth: false,
      orders: { place: true, cancel: false, types: ['market'], async_fills: false },
      // The practice wallet is the service's own ledger (balance_source svc_wallet).
      balance: false,
      trades: false,
      game_state: false,
      // The internal book settles every position by the official result.
      settlements: true,
    },
    wire: 'internal',
    real_book: false,
    dynamics: {
      vig: 0,
      bias_sd: 0,
      lag_ms: 0,
      net_delay_ms: 0,
      update_rate: 0,
      levels: 0,
      level_step: 0,
      level_usd: [0, 0],
      coverage: { markets: [], max_line_offset: 0 },
      stale: noEpisodes,
      outlier: null,
      arb: null,
      situations: noSituations,
      flip_contest_share: 0,
      trades_per_second: 0,
      async_fill_ms: null,
      fee_round_up_to_cent: false,
    },
  },
};

export function isSimPartnerId(id: string): id is SimPartnerId {
  return (SIM_PARTNER_IDS as readonly string[]).includes(id);
}

/** Whether a FLOW_VENUES list runs any simulated venue (`sim`, or one by its id). */
export function namesSimVenue(venues: readonly string[]): boolean {
  return venues.some((v) => v === 'sim' || isSimPartnerId(v));
}

/** Partner records of every sim venue, in catalog order. */
export function simPartners(): Partner[] {
  return SIM_PARTNER_IDS.map((id) => structuredClone(SIM_PERSONALITIES[id].partner));
}
