import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComputePool } from '../../../pipelines/compute-pool.js';
import { LiquidityProducer } from '../../../pipelines/producers/liquidity.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { buildSimCatalog } from '../../../src/sim/catalog.js';
import type { NormalizedQuote } from '../../../src/venues/types.js';
import { ROOT } from '../../support/cli.js';
import { startStack, type TestStack } from '../../support/stack.js';
import { testProcessor, venueQuote } from '../../support/pipeline.js';

const catalog = buildSimCatalog(1, new Date('2026-11-20T12:00:00Z'));
let s: TestStack;
beforeAll(async () => {
  s = await startStack({ catalog });
});
afterAll(async () => s?.close());

const quote = (partner: string, positionHash: string, price: number, available: number): NormalizedQuote => venueQuote(partner, positionHash, price, available, Date.now());

describe('a killed compute worker', () => {
  it('loses no update: its job runs again on another worker from the venue state as it is now', async () => {
    const positions = catalog.positions.filter((p) => p.market_key === 'moneyline');
    const contestId = positions[0]!.contest_id;
    const [home, away] = positions.filter((p) => p.contest_id === contestId);
    const hot = new HotState(s.rt.redis, s.rt.ks);
    await hot.writeQuotes(contestId, [quote('sim_exchange', home!.position_hash, 0.6, 500), quote('sim_exchange', away!.position_hash, 0.45, 500)]);

    // `node --import tsx`, not the tsx CLI: the CLI forks a second process that SIGKILL would not reach.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support/compute-child.ts')], { cwd: ROOT, env: { ...process.env, ...s.env } });
    const taken = new Promise<void>((resolve) => createInterface({ input: child.stdout! }).on('line', (l) => l === 'taken' && resolve()));
    const producer = new LiquidityProducer(s.env.REDIS_URL!, s.rt.ks);
    await producer.enqueue(contestId);
    await taken;
    // A change lands while the doomed worker holds the job: it must not be lost either.
    await hot.writeQuotes(contestId, [quote('sim_book01', home!.position_hash, 0.5, 500), quote('sim_book01', away!.position_hash, 0.55, 500)]);
    await producer.enqueue(contestId);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(await hot.liquidity(contestId)).toBeNull();

    const compute = new ComputePool(1);
    const processor = testProcessor(s, hot, compute, Date.now, { lockMs: 1_000 });
    try {
      let stored: string | null = null;
      const until = Date.now() + 20_000;
      while (Date.now() < until) {
        stored = await hot.liquidity(contestId);
        if (stored && JSON.parse(stored).find((p: any) => p.position_hash === home!.position_hash)?.partner_liquidities.length === 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const h = JSON.parse(stored!).find((p: any) => p.position_hash === home!.position_hash);
      expect(h.partner_liquidities.map((q: any) => q.partner_id).sort()).toEqual(['sim_book01', 'sim_exchange']);
      // Both venues devig to .571429 and .476190 with equal weight.
      expect(h.consensus_price).toBe(Math.round(((0.6 / 1.05 + 0.5 / 1.05) / 2) * 1e6) / 1e6);
    } finally {
      await processor.close();
      await compute.close();
      await producer.close();
    }
  }, 60_000);
});
