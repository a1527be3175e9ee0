/**
 * The order routes under /flow/v1/auth/orders (spec "Orders"; records in PostgreSQL, the system of
 * record).
 * - buy, the reads and the cancel are part of the core app (orderRoutes);
 * - preflight is a route plugin (preflightRoutes): verify_liquidity reads venues' live books through
 *   the venue adapters, which run in the ingest role's process (cli/roles/start.ts passes them; an
 *   api without them still serves preflight, whose live checks then report verified false).
 */
import type { FastifyInstance } from 'fastify';
import type { VenueAdapter } from '../../../src/venues/types.js';
import { adapterLiveBooks, noLiveBooks } from '../../../src/venues/live-books.js';
import type { AppContext } from '../context.js';
import { buyRoutes } from './buy.js';
import { cancelRoute } from './cancel.js';
import { preflightRoute } from './preflight.js';
import { orderReadRoutes } from './reads.js';

export function orderRoutes(app: FastifyInstance, ctx: AppContext): void {
  buyRoutes(app, ctx);
  orderReadRoutes(app, ctx);
  cancelRoute(app, ctx);
}

export interface OrderRouteDeps {
  /** The venue adapters of this process; null or empty in a process without the ingest role. */
  adapters: readonly VenueAdapter[] | null;
}

export function preflightRoutes(deps: OrderRouteDeps) {
  const live = deps.adapters && deps.adapters.length > 0 ? adapterLiveBooks(deps.adapters) : noLiveBooks;
  return (app: FastifyInstance, ctx: AppContext): void => {
    preflightRoute(live)(app, ctx);
  };
}
