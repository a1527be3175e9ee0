/**
 * Mutable runtime structures of the market model (internal to src/sim).
 */
import type { Contest } from '../domain/catalog.js';
import type { GameState, PositionResult, PriceLevel } from '../venues/types.js';
import type { SimContestParams, SimPosition, SimPositionMeta } from './catalog.js';
import type { SimInstrument } from './messages.js';
import type { SimPartnerId, SimPersonality, SimSituationRates } from './personalities.js';

export type Phase = 'scheduled' | 'live' | 'final';

export interface EffectiveParams {
  /** Progress of the contest, 0 before start, 1 at the end. */
  f: number;
  mu: number;
  sigma: number;
  tau: number;
  sigmaT: number;
  /** Player expected final points and SD. */
  pmu: number[];
  psd: number[];
  /** Outright win probabilities (entrant order). */
  win: number[];
}

export interface ContestRt {
  p: SimContestParams;
  contest: Contest;
  phase: Phase;
  /** Latent pre-game expectations (random walks). */
  mu: number;
  tau: number;
  strengths: number[];
  home: number;
  away: number;
  periodScores: { home_score: number; away_score: number }[];
  playerFinal: number[];
  eliminated: Set<string>;
  /** Operator took over the game state (setState): no automatic lifecycle. */
  manual: boolean;
  settled: boolean;
  winner: string | null;
  result: string | null;
  /** How an MMA fight ended (KO/TKO, Submission, Decision). */
  finishMethod: string | null;
  state: GameState;
  stateTs: number;
  lastStateEmit: number;
  situationSeed: number;
  eff: EffectiveParams;
  positions: PosRt[];
  children: ContestRt[];
  parent: ContestRt | null;
  /** Results per position once settled. */
  results: Map<string, PositionResult> | null;
}

export interface PosRt {
  i: number;
  pos: SimPosition;
  meta: SimPositionMeta;
  c: ContestRt;
  /** Complementary position of a two-way group, or null (outrights). */
  complement: PosRt | null;
  listings: Listing[];
  /** A price move's offset on the position's fair value (situations.ts), as of `shiftAt`; it decays. */
  shift: number;
  shiftAt: number;
}

export interface Listing {
  v: VenueRt;
  pr: PosRt;
  inst: SimInstrument;
  levels: PriceLevel[];
  ts_event: number;
  /** The venue's (lagged) view of fair. */
  lag: number;
  lagTs: number;
  outlierOff: number;
  outlierUntil: number;
  arbOff: number;
  arbUntil: number;
  /** When the venue will react to the last game event (reprice), or Infinity. */
  dueAt: number;
  /** Set by setQuote: dynamics leave the listing alone until unfrozen. */
  pinned: boolean;
  /** Contest settled: nothing offered any more. */
  closed: boolean;
  resting: OrderRt[];
  /** The venue's recent prints on this listing, by executed_at (situations.ts recordTape bounds it). */
  tape: TapeEntry[];
  /** Random prints leave the listing alone until then (a one-way flow episode owns its tape). */
  tapeHeldUntil: number;
}

export interface TapeEntry {
  at: number;
  usd: number;
  buy: boolean;
}

/** A print a spontaneous situation has planned for later (situations.ts). */
export interface ScheduledPrint {
  at: number;
  listing: Listing;
  action: 'buy' | 'sell';
  notional: number;
}

export interface Holding {
  contracts: number;
  cost: number;
}

export interface AccountRt {
  account_id: string;
  balance: number;
  held: number;
  credential_status: 'pending' | 'connected' | 'failed';
  holdings: Map<string, Holding>;
}

export type OrderState = 'FILLED' | 'PARTIAL' | 'OPEN' | 'PENDING' | 'REJECTED' | 'CANCELLED';

export interface OrderRt {
  id: string;
  client_order_id: string;
  account_id: string;
  listing: Listing | null;
  position_hash: string | null;
  type: 'market' | 'limit';
  state: OrderState;
  requested_notional: number | null;
  requested_qty: number | null;
  /** Limit as a probability and in native units. */
  limit: number;
  limit_px: number;
  filled_qty: number;
  filled_notional: number;
  fee: number;
  open_qty: number;
  hold: number;
  /** Async-fill venues: the fill waiting for confirmation and when it lands. */
  pending: { qty: number; notional: number; fee: number; final: 'FILLED' | 'PARTIAL'; due: number } | null;
  reject_reason: string | null;
  reject_message: string | null;
  currency: 'USD' | 'ATLAS';
  ts: number;
}

export interface VenueRt {
  id: SimPartnerId;
  pers: SimPersonality;
  listings: Listing[];
  byPosition: Map<string, Listing>;
  byInstrument: Map<string, Listing>;
  /** The venue's persistent opinion per mutually exclusive group (see reprice). */
  groupBias: Map<string, number>;
  /** Listings waiting to react to a game event. */
  due: Set<Listing>;
  /** Async-fill orders waiting for their confirmation. */
  pending: Set<OrderRt>;
  staleUntil: number;
  flipped: Set<string>;
  accounts: Map<string, AccountRt>;
  orders: Map<string, OrderRt>;
  byClientId: Map<string, OrderRt>;
  orderSeq: number;
  tradeSeq: number;
  instrumentSeq: number;
  /** Prints of running situation episodes, by time (bounded: each episode adds at most a few dozen). */
  scheduled: ScheduledPrint[];
  /** Situations the venue started on its own, by kind, since the market was made. */
  situationsStarted: SimSituationRates;
}
