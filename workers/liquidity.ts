/** Piscina task: one contest's liquidity job. Thin: plain data in, plain data out. */
import { runLiquidityJob, type LiquidityJobInput, type LiquidityJobOutput } from '../src/compute/job.js';

export default function liquidityTask(job: LiquidityJobInput): LiquidityJobOutput {
  return runLiquidityJob(job);
}
