/**
 * First-start work: seed the simulator's catalog and mint the demo key, each exactly once per
 * database (recorded in service_meta, under an advisory lock so concurrent starters agree).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildSimCatalog } from '../src/venues/sim/catalog.js';
import { catalogIsSeeded, seedCatalog, type CatalogSeed } from '../src/store/pg/catalog.js';
import { createKey } from '../src/store/pg/keys.js';
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
    const { rowCount } = await client.query("SELECT 1 FROM service_meta WHERE key = 'demo_key'");
    if (rowCount) {
      const file = path.join(rt.config.dataDir, 'demo-key.json');
      if (!existsSync(file)) {
        rt.log.warn({ file }, 'the demo key was created on an earlier start and its file is gone; mint a key with: npm run --silent flow -- keys create --plan scale --type execution --env test');
      }
      return;
    }
    const k = await createKey(rt.pool, { plan: 'scale', keyType: 'execution', environment: 'test', workspaceName: 'demo' });
    await client.query("INSERT INTO service_meta (key, value) VALUES ('demo_key', $1)", [
      JSON.stringify({ key_id: k.key_id, workspace_id: k.workspace_id, router_account_id: k.router_account_id }),
    ]);
    mkdirSync(rt.config.dataDir, { recursive: true });
    const file = path.join(rt.config.dataDir, 'demo-key.json');
    writeFileSync(file, JSON.stringify(k, null, 2) + '\n', { mode: 0o600 });
    rt.log.warn(
      { api_key: k.api_key, key_id: k.key_id, workspace_id: k.workspace_id, file },
      'created the demo workspace: this execution key (scale plan, test environment) is shown once, and saved to the file',
    );
  } finally {
    await client.query('SELECT pg_advisory_unlock(727002)').catch(() => undefined);
    client.release();
  }
}
