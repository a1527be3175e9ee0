/**
 * Child process for bench/wallet.ts: the real Flow API (auth, rate limits, validation, the deposit
 * route) listening on its own database, so the load generator in the parent does not share its
 * event loop. argv[2]: how many accounts.
 *
 * Each account is an execution key in its own workspace, with limits far above the load (the bench
 * measures the rate-limit path, not 429s). One more account serves a deposit on a recording pool,
 * whose transaction's statements the raw baseline replays (bench/support/raw-deposit.ts).
 * Prints one JSON line {port, database_url, pool_max, accounts: [{api_key, router_account_id}],
 * statements}, then serves until killed; the database is dropped on exit.
 */
import { Registry } from 'prom-client';
import { buildApp } from '../../api/rest/app.js';
import { appContext } from '../../cli/runtime.js';
import { createKey } from '../../src/store/pg/keys.js';
import { captureDepositStatements, randomCents } from './raw-deposit.js';
import { benchRuntime } from './stack.js';

const count = Number(process.argv[2] ?? 100);
const { rt, close } = await benchRuntime('wallet');
const executionKey = () =>
  createKey(rt.pool, rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test', rateLimitPerMinute: 1_000_000_000, rateLimitPerDay: 2_000_000_000 });

const accounts: { api_key: string; router_account_id: string }[] = [];
for (let i = 0; i < count; i++) {
  const k = await executionKey();
  accounts.push({ api_key: k.api_key, router_account_id: k.router_account_id });
}
const statements = await captureDepositStatements(rt, (await executionKey()).api_key, randomCents());

const built = await buildApp(appContext(rt, { metrics: new Registry() }));
await built.app.listen({ host: '127.0.0.1', port: 0 });
const port = (built.app.server.address() as { port: number }).port;

process.stdout.write(JSON.stringify({ port, database_url: rt.config.databaseUrl, pool_max: rt.pool.options.max, accounts, statements }) + '\n');
const stop = async () => {
  await built.close();
  rt.pool.on('error', () => undefined);
  await close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
