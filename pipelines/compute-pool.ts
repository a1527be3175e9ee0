/** The piscina pool that runs compute tasks off the event loop. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { LiquidityJobInput, LiquidityJobOutput } from '../src/compute/job.js';

/** From the build the compiled task sits beside us; from source, a bootstrap registers tsx first. */
function taskFile(name: string): string {
  const compiled = fileURLToPath(new URL(`../workers/${name}.js`, import.meta.url));
  if (import.meta.url.endsWith('.js') && existsSync(compiled)) return compiled;
  return fileURLToPath(new URL(`../workers/${name}.boot.mjs`, import.meta.url));
}

export class ComputePool {
  private readonly pool: Piscina<LiquidityJobInput, LiquidityJobOutput>;

  constructor(threads = 1) {
    this.pool = new Piscina({ filename: taskFile('liquidity'), minThreads: threads, maxThreads: threads, idleTimeout: 60_000 });
  }

  liquidity(job: LiquidityJobInput): Promise<LiquidityJobOutput> {
    return this.pool.run(job);
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
