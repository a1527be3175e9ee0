/**
 * First-start work: seed the simulator's catalog and mint the demo key, each exactly once per
 * database (recorded in service_meta, under an advisory lock so concurrent starters agree).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildSimCatalog } from '../src/sim/catalog.js';
import { catalogIsSeeded, seedCatalog, type CatalogSeed } from '../src/store/pg/catalog.js';
import { isWellFormedApiKey } from '../src/domain/api-key.js';
import { createKey, revokeKey } from '../src/store/pg/keys.js';
import { bumpCatalogVersion } from '../src/store/redis/catalog-version.js';
import type { Runtime } from './runtime.js';

/**
 * The simulated world is laid out relative to an epoch; rounding it to the hour makes every process
 * started within the same hour agree on contest times.
 */
export const simEpoch = (nowMs: number): number => Math.floor(nowMs / 3_600_000) * 3_600_000;

/**
 * Upserts the simulator's catalog (first start: seeds it). Re-running at each start keeps contest
 * times and statuses in PostgreSQL in step with the simulated world the ingest role runs.
 */
export async function seedSimCatalog(rt: Runtime): Promise<boolean> {
  const first = !(await catalogIsSeeded(rt.pool));
  const catalog: CatalogSeed = buildSimCatalog(rt.config.simSeed, new Date(simEpoch(rt.clock.now())));
  await seedCatalog(rt.pool, catalog);
  await bumpCatalogVersion(rt.redis, rt.ks);
  rt.log.info(
    { leagues: catalog.leagues.length, contests: catalog.contests.length, partners: catalog.partners.length, seed: rt.config.simSeed },
    first ? 'seeded the simulator catalog' : 'refreshed the simulator catalog',
  );
  return first;
}

export async function ensureDemoKey(rt: Runtime): Promise<void> {
  const client = await rt.pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(727002)');
    const { rows } = await client.query<{ value: { key_id: string; workspace_id: string } }>("SELECT value FROM service_meta WHERE key = 'demo_key'");
    const file = path.join(rt.config.dataDir, 'demo-key.json');
    let replaced: { key_id: string; workspace_id: string } | null = null;
    if (rows[0]) {
      if (!existsSync(file)) {
        rt.log.warn({ file }, 'the demo key was created on an earlier start and its file is gone; mint a key with: npm run --silent flow -- keys create --plan scale --type execution --env test');
        return;
      }
      // A demo key minted before keys carried a checksum is refused by the gate: replace it once.
      const old = JSON.parse(readFileSync(file, 'utf8')) as { api_key?: string };
      if (typeof old.api_key === 'string' && isWellFormedApiKey(old.api_key)) return;
      replaced = rows[0].value;
    }
    // A replacement stays in the demo workspace, so its account and orders carry over.
    const k = await createKey(rt.pool, rt.gate, { plan: 'scale', keyType: 'execution', environment: 'test', workspaceName: 'demo', workspaceId: replaced?.workspace_id });
    await client.query(
      "INSERT INTO service_meta (key, value) VALUES ('demo_key', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
      [JSON.stringify({ key_id: k.key_id, workspace_id: k.workspace_id, router_account_id: k.router_account_id })],
    );
    if (replaced) {
      const hash = await revokeKey(rt.pool, replaced.key_id);
      if (hash) await rt.gate.markRevoked(hash);
    }
    mkdirSync(rt.config.dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(k, null, 2) + '\n', { mode: 0o600 });
    rt.log.warn(
      { api_key: k.api_key, key_id: k.key_id, workspace_id: k.workspace_id, file },
      replaced
        ? 'replaced the demo key minted before keys carried a checksum (the old one is revoked): this execution key (scale plan, test environment) is shown once, and saved to the file'
        : 'created the demo workspace: this execution key (scale plan, test environment) is shown once, and saved to the file',
    );
  } finally {
    await client.query('SELECT pg_advisory_unlock(727002)').catch(() => undefined);
    client.release();
  }
}
