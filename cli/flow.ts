#!/usr/bin/env node
/**
 * flow <role...> | flow all | flow start     run roles (FLOW_ROLES when none named)
 * flow keys create|revoke|list ...           API keys (docs/operations.md)
 * flow jwt --account <id> [--ttl 3600]       mint a player JWT
 * flow history import|synthesize|prune|status|migrate  ClickHouse history (docs/history.md)
 * flow migrate                               apply PostgreSQL migrations and exit
 * flow ai-keys set|remove|list ...           an account's own AI provider keys (docs/ai.md)
 * flow kits trace <file>                     which key fetched a kit copy (docs/kits.md)
 * flow venues matches|replay ...             cross-venue matching report, the recorded-venue replay server
 */
import { loadConfig, parseRoles, ConfigError, SECRETS, type Role } from '../src/config.js';
import { createLogger, type Logger } from '../src/log.js';
import { dataDirSecrets, type GeneratedSecret } from '../src/secrets.js';
import { ensureDemoKey, seedSimCatalog } from './bootstrap.js';
import { runAiKeysCommand, runKitsCommand } from './ai-kits.js';
import { CommandFailed } from './errors.js';
import { jwtCommand, runKeysCommand, UsageError } from './keys.js';
import { runHistoryCommand } from './history.js';
import { namesSimVenue } from '../src/sim/index.js';
import { startRoles } from './roles/start.js';
import { runVenuesCommand } from './venues.js';
import { openRuntime, type Runtime } from './runtime.js';

/** Says once, when a secret was generated, where it is kept; the admin token itself is shown (operators need it). */
function announceSecrets(generated: GeneratedSecret[], log: Logger): void {
  for (const g of generated) {
    if (g.name === 'adminToken') {
      log.warn({ admin_token: g.value, file: g.file }, `generated ${SECRETS.adminToken.purpose}: shown once, kept in the file (mode 0600); set FLOW_ADMIN_TOKEN to choose your own`);
    } else log.info({ secret: SECRETS[g.name].variable, file: g.file }, `generated ${SECRETS[g.name].purpose} and kept it in the file (mode 0600)`);
  }
}

async function runRoles(roles: Role[]): Promise<void> {
  // Secrets not set in the environment live in FLOW_DATA_DIR, shared with the CLI commands.
  const secrets = dataDirSecrets();
  const config = loadConfig({ ...process.env, FLOW_ROLES: roles.join(',') }, secrets.source);
  const log = createLogger(config.logLevel);
  announceSecrets(secrets.generated, log);
  const rt = await openRuntime(config, log);
  // Any simulated venue (`sim`, or one by id) runs on the simulator's catalog and comes with the demo key.
  if (namesSimVenue(config.venues)) {
    await seedSimCatalog(rt);
    await ensureDemoKey(rt);
  }
  const { running } = await startRoles(rt, config.roles);
  log.info({ roles: running.map((r) => r.name) }, 'flow started');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: stop accepting, drain, close stores');
    const hard = setTimeout(() => {
      log.error('shutdown took longer than 15 s; exiting');
      process.exit(1);
    }, 15_000);
    hard.unref();
    for (const r of [...running].reverse()) {
      await r.stop().catch((err) => log.error({ err, role: r.name }, 'role failed to stop cleanly'));
    }
    await rt.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function runTool(fn: (rt: Runtime) => Promise<void>): Promise<void> {
  // The same secrets as the service (e.g. `flow jwt` signs with the key the API verifies with).
  const secrets = dataDirSecrets();
  const config = loadConfig(process.env, secrets.source);
  // Announced on stderr: stdout carries the command's answer alone (a token, JSON).
  for (const g of secrets.generated) {
    const shown = g.name === 'adminToken' ? `, shown once: ${g.value}` : '';
    process.stderr.write(`flow: generated ${SECRETS[g.name].purpose} and kept it in ${g.file} (mode 0600)${shown}\n`);
  }
  const log = createLogger(process.env.LOG_LEVEL || 'warn');
  const rt = await openRuntime(config, log, { defaultMetrics: false });
  try {
    await fn(rt);
  } finally {
    await rt.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const out = (s: string): void => void process.stdout.write(s + '\n');
  switch (cmd) {
    case 'keys':
      return runTool((rt) => runKeysCommand(rt, rest, out));
    case 'jwt':
      return runTool(async (rt) => jwtCommand(rt, rest, out));
    case 'history':
      return runTool((rt) => runHistoryCommand(rt, rest, out));
    case 'ai-keys':
      return runTool((rt) => runAiKeysCommand(rt, rest, out));
    case 'kits':
      return runTool((rt) => runKitsCommand(rt, rest, out));
    case 'migrate':
      return runTool(async () => out('migrations applied'));
    case 'venues':
      // Recorded payloads only: no store is opened.
      return runVenuesCommand(rest, out);
    case undefined:
    case 'start':
      return runRoles(parseRoles(process.env.FLOW_ROLES));
    default:
      return runRoles(parseRoles([cmd, ...rest].join(',')));
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || err instanceof ConfigError) {
    process.stderr.write(`flow: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof CommandFailed) {
    process.stderr.write(`flow: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`flow: ${(err as Error).stack ?? String(err)}\n`);
  if ((err as { code?: string }).code === 'ECONNREFUSED') {
    process.stderr.write('flow: a store is unreachable; start Redis and PostgreSQL with: bash infra/services.sh up\n');
  }
  process.exit(1);
});
