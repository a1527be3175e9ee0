/** Piscina task: one contest's liquidity job, whole or as a delta (src/compute/liquidity-task.ts). Thin: plain data in, plain data out. */
import { runLiquidityTask, type LiquidityTask, type LiquidityTaskResult } from '../src/compute/liquidity-task.js';

export default function liquidityTask(task: LiquidityTask): LiquidityTaskResult {
  return runLiquidityTask(task);
}
