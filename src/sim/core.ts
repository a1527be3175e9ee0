/**
 * The simulated market's state, shared by the modules that each do one part of its work (setup,
 * pricing, dynamics, churn, settlement, the operator's controls, publishing): SimMarket (model.ts)
 * owns one and is the only way in from outside.
 */
import { VenueError } from '../venues/errors.js';
import type { SimCatalog, SimWorld } from './catalog.js';
import type { EngineCtx } from './engine.js';
import type { SimChurnOptions } from './events.js';
import type { Feeds } from './feeds.js';
import type { SimPartnerId } from './personalities.js';
import type { Rng } from './rng.js';
import type { ContestRt, PosRt, VenueRt } from './runtime.js';
import type { SituationCtx } from './situations.js';

export interface MarketCore {
  readonly seed: number;
  readonly world: SimWorld;
  readonly catalog: SimCatalog;
  /** The dynamics' random stream. */
  readonly rng: Rng;
  /** The spontaneous situations' own stream, so they leave the rest of the dynamics' sequence as it was. */
  readonly srng: Rng;
  readonly contests: Map<string, ContestRt>;
  readonly positions: PosRt[];
  readonly byHash: Map<string, PosRt>;
  readonly participantNames: Map<string, string>;
  readonly contestParticipants: Map<string, Set<string>>;
  readonly venues: Map<SimPartnerId, VenueRt>;
  /** The venues that publish quotes (every one but the practice book), in catalog order. */
  readonly quoting: VenueRt[];
  /** The wallets prints on book01 name. */
  readonly wallets: string[];
  readonly feeds: Feeds;
  /** Model time: the last tick (or a later book stamp). */
  lastNow: number;
  /** The clock the market runs on once started. */
  externalClock: (() => number) | null;
  frozen: boolean;
  /** Multiplies quote-update and trade rates. */
  activity: number;
  /** Runtime positions get increasing indexes (the world's are 0..n-1). */
  positionSeq: number;
  churn: { opts: SimChurnOptions | null; nextAt: number; seq: number };
  /** What the matching engines and the situations work through (set once, at construction). */
  engine: EngineCtx;
  situations: SituationCtx;
}

/** The model's current time: the last tick, or the attached clock when running. */
export function currentTime(core: MarketCore): number {
  if (core.externalClock) {
    const t = core.externalClock();
    if (t > core.lastNow) return t;
  }
  return core.lastNow;
}

export const nameOf = (core: MarketCore, id: string): string => core.participantNames.get(id) ?? id;

/** A refusal of the operator's or a caller's input: non-retryable, with the simulator's stable code. */
export const bad = (code: string, message: string, details?: Record<string, unknown>): VenueError => new VenueError('non_retryable', code, message, details ? { details } : {});
