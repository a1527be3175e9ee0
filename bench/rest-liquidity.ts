/**
 * bench rest-liquidity: GET contests/:id/liquidity over every open contest (auth + rate limit +
 * the per-contest copy of the hot state in Redis), with the simulator and pipeline live so copies
 * keep going stale, against bare Fastify keeping the same per-contest copies and doing the same
 * Redis reads on a miss, without the request pipeline. Targets as `rest` (bench/rest.ts).
 *   npm run bench -- rest-liquidity [--seconds 5] [--rounds 5] [--connections 50]
 */
import { runRestScenario } from './rest.js';
import { runIfMain } from './support/main.js';

export default async function run(args: string[]): Promise<void> {
  return runRestScenario('liquidity', args);
}

runIfMain(import.meta.url, run);
