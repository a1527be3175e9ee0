/** The account routes under /flow/v1/auth (records in PostgreSQL, the system of record). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { modelRoutes } from './models.js';
import { opportunityRoutes } from './opportunities.js';
import { partnerRoutes } from './partners.js';
import { performanceRoutes } from './performance.js';
import { positionRoutes } from './positions.js';
import { walletRoutes } from './wallet.js';

export function accountRoutes(app: FastifyInstance, ctx: AppContext): void {
  walletRoutes(app, ctx);
  modelRoutes(app, ctx);
  opportunityRoutes(app, ctx);
  partnerRoutes(app, ctx);
  performanceRoutes(app, ctx);
  positionRoutes(app, ctx);
}
