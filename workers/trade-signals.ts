/** Piscina task: the trade-derived signals of one batch of prints. Thin: plain data in, plain data out. */
import { runTradeSignalTask, type TradeSignalTask, type TradeSignalTaskOutput } from '../src/compute/trade-signals.js';

export default function tradeSignalsTask(task: TradeSignalTask): TradeSignalTaskOutput {
  return runTradeSignalTask(task);
}
