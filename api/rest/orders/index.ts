/**
 * The order routes under /flow/v1/auth/orders (spec "Orders"). A route plugin rather than part of
 * the core app: verify_liquidity reads venues' live books through the venue adapters, which run in
 * the ingest role's process (cli/roles/start.ts passes them; an api without them still serves every
 * order route, and preflight's live checks then report verified false).
 */
import type { FastifyInstance } from 'fastify';
import type { VenueAdapter } from '../../../src/venues/types.js';
import { adapterLiveBooks, noLiveBooks } from '../../../src/venues/live-books.js';
import type { AppContext } from '../context.js';
import { preflightRoute } from './preflight.js';

export interface OrderRouteDeps {
  /** The venue adapters of this process; null or empty in a process without the ingest role. */
  adapters: readonly VenueAdapter[] | null;
}

export function orderRoutes(deps: OrderRouteDeps) {
  const live = deps.adapters && deps.adapters.length > 0 ? adapterLiveBooks(deps.adapters) : noLiveBooks;
  return (app: FastifyInstance, ctx: AppContext): void => {
    preflightRoute(live)(app, ctx);
  };
}
