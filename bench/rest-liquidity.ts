/**
 * bench rest-liquidity: GET contests/:id/liquidity (auth + rate limit + hot state in Redis) against
 * bare Fastify serving the same bytes. Target ratio ≥ 0.6.
 *   npm run bench -- rest-liquidity [--seconds 10] [--connections 50]
 */
import { runRestScenario } from './rest.js';

export default async function run(args: string[]): Promise<void> {
  return runRestScenario('liquidity', args);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run(process.argv.slice(2)).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
