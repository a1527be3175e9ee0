/**
 * bench rest-liquidity: GET contests/:id/liquidity (auth + rate limit + hot state in Redis) against
 * bare Fastify serving the same bytes. Target ratio ≥ 0.6.
 *   npm run bench -- rest-liquidity [--seconds 10] [--connections 50]
 */
import { runRestScenario } from './rest.js';
import { runIfMain } from './support/main.js';

export default async function run(args: string[]): Promise<void> {
  return runRestScenario('liquidity', args);
}

runIfMain(import.meta.url, run);
