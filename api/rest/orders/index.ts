/** The order routes under /flow/v1/auth/orders (records in PostgreSQL, the system of record). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { buyRoutes } from './buy.js';
import { orderReadRoutes } from './reads.js';

export function orderRoutes(app: FastifyInstance, ctx: AppContext): void {
  buyRoutes(app, ctx);
  orderReadRoutes(app, ctx);
}
