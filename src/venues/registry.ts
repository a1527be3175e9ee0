/**
 * Venue registry: venue id → factory. One line per venue. `createAdapters(['sim'], config)` is
 * what the ingest and execute roles call with FLOW_VENUES split on commas.
 *
 * Venues that share a backend (the sim personalities share one market model) get it from the
 * per-call context, so asking for `sim_exchange,sim_book01` builds one SimMarket, not two.
 */
import { VenueError } from './errors.js';
import { createPolymarketAdapter, type PolymarketAdapterOptions } from './polymarket/index.js';
import { SIM_PARTNER_IDS, SimMarket, type SimPartnerId } from '../sim/index.js';
import { createSimAdapter } from './sim/index.js';
import { createKalshiAdapter, type KalshiSettings } from './kalshi/index.js';
import type { VenueAdapter } from './types.js';

export interface VenuesConfig {
  /** ts_init source for every adapter (default: wall clock). */
  clock?: () => number;
  sim?: {
    /** Seed of the market model (FLOW_SIM_SEED); default 1. */
    seed?: number;
    /** The world's "now"; default the clock. */
    now?: number;
    /** Use this model instead of building one (so the caller can drive /sim/v1 control). */
    market?: SimMarket;
  };
  /** The Kalshi adapter's settings (default: public market data, no orders). */
  kalshi?: Partial<KalshiSettings>;
  /** Polymarket's hosts and catalog scope (Config.polymarket; defaults: the public hosts). */
  polymarket?: Omit<PolymarketAdapterOptions, 'clock'>;
}

export interface VenueFactoryContext {
  config: VenuesConfig;
  /** The shared sim model, built on first use. */
  simMarket(): SimMarket;
}

export type VenueFactory = (ctx: VenueFactoryContext) => VenueAdapter[];

const sim = (id: SimPartnerId): VenueFactory => (ctx) => [createSimAdapter(ctx.simMarket(), id, { clock: ctx.config.clock })];

/** id → factory. `sim` expands to every simulated venue. */
export const VENUE_FACTORIES: Readonly<Record<string, VenueFactory>> = {
  sim: (ctx) => SIM_PARTNER_IDS.map((id) => createSimAdapter(ctx.simMarket(), id, { clock: ctx.config.clock })),
  sim_exchange: sim('sim_exchange'),
  sim_book01: sim('sim_book01'),
  sim_sportsbook: sim('sim_sportsbook'),
  sim_p2p: sim('sim_p2p'),
  sim_quotes: sim('sim_quotes'),
  practice: sim('practice'),
  kalshi: (ctx) => [createKalshiAdapter(ctx.config.kalshi ?? {}, { clock: ctx.config.clock })],
  polymarket: (ctx) => [createPolymarketAdapter({ ...ctx.config.polymarket, clock: ctx.config.clock })],
};

export function knownVenueIds(): string[] {
  return Object.keys(VENUE_FACTORIES);
}

export interface VenueSet {
  adapters: VenueAdapter[];
  /** The sim model when any sim venue was asked for, else null. */
  simMarket: SimMarket | null;
}

/** Builds the adapters for `ids` (deduplicated by partner id, first wins) and the shared sim model. */
export function createVenues(ids: string[], config: VenuesConfig = {}): VenueSet {
  let market: SimMarket | null = config.sim?.market ?? null;
  const ctx: VenueFactoryContext = {
    config,
    simMarket: () => {
      market ??= new SimMarket({ seed: config.sim?.seed ?? 1, now: config.sim?.now ?? (config.clock ?? Date.now)() });
      return market;
    },
  };
  const out: VenueAdapter[] = [];
  const seen = new Set<string>();
  for (const raw of ids) {
    const id = raw.trim();
    if (id.length === 0) continue;
    const factory = Object.prototype.hasOwnProperty.call(VENUE_FACTORIES, id) ? VENUE_FACTORIES[id] : undefined;
    if (!factory) {
      throw new VenueError('fatal', 'unknown_venue', `unknown venue ${JSON.stringify(id)}; known: ${knownVenueIds().join(', ')}`, { details: { venue: id } });
    }
    for (const a of factory(ctx)) {
      if (seen.has(a.id)) continue;
      seen.add(a.id);
      out.push(a);
    }
  }
  return { adapters: out, simMarket: market };
}

/** The adapters for `ids` (see createVenues for the shared sim model). */
export function createAdapters(ids: string[], config: VenuesConfig = {}): VenueAdapter[] {
  return createVenues(ids, config).adapters;
}
