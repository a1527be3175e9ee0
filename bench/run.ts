/**
 * npm run bench -- <scenario> [args]: runs one named benchmark scenario. Each scenario prints its
 * figures, the ratio against a baseline measured in the same run, its targets and PASS or FAIL
 * (bench/support/verdict.ts); the exit code is 1 when a target is missed.
 */
const SCENARIOS: Record<string, string> = {
  rest: './rest.js',
  'rest-liquidity': './rest-liquidity.js',
  ingest: './ingest.js',
  compute: './compute.js',
  'ws-fanout': './ws-fanout.js',
  'stream-latency': './stream-latency.js',
  'history-ingest': './history-ingest.js',
  'history-query': './history-query.js',
  soak: './soak.js',
  wallet: './wallet.js',
  orders: './orders.js',
  'quote-inputs': './quote-inputs.js',
};

const [name, ...args] = process.argv.slice(2);
if (!name || !SCENARIOS[name]) {
  console.error(`usage: npm run bench -- <scenario> [args]\nscenarios: ${Object.keys(SCENARIOS).join(', ')}`);
  process.exit(2);
}
const mod = (await import(SCENARIOS[name]!)) as { default: (args: string[]) => Promise<unknown> };
await mod.default(args);
process.exit(process.exitCode ?? 0);
