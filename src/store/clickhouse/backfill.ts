/**
 * Writes a synthetic history into ClickHouse through the project's batch writers (HistoryWriter;
 * the live pipeline goes through the event log and pipelines/history instead), with backpressure:
 * a backfill waits for ClickHouse instead of dropping rows, and fails if ClickHouse keeps refusing. Every row it writes is marked synthetic, so
 * the history reads leave it out unless told otherwise (`flow history synthesize`, docs/history.md).
 */
import type { Registry } from 'prom-client';
import type { ClickHouseClient } from './client.js';
import { prepareHistoryStore } from './schema.js';
import { SyntheticHistory, type SyntheticOptions } from './synthetic.js';
import { HistoryWriter, type BatchWriterOptions } from './writer.js';

export interface BackfillProgress {
  /** Rows ClickHouse acknowledged so far. */
  written: number;
  /** Rows generated so far. */
  generated: number;
  /** Expected total (an estimate). */
  expected: number;
  /** Fraction of the time range generated, 0-1. */
  fraction: number;
  elapsedMs: number;
  done: boolean;
}

export interface BackfillResult {
  ticks: number;
  points: number;
  trades: number;
  elapsedMs: number;
}

export async function runBackfill(
  ch: ClickHouseClient,
  spec: SyntheticOptions,
  opts: { retentionDays?: number; metrics?: Registry; writer?: BatchWriterOptions; onProgress?: (p: BackfillProgress) => void; progressEveryMs?: number } = {},
): Promise<BackfillResult> {
  await prepareHistoryStore(ch, { retentionDays: opts.retentionDays ?? 0 });
  const gen = new SyntheticHistory(spec);
  const est = gen.estimate();
  const expected = est.ticks + est.points + est.trades;
  const batch = opts.writer?.maxBatchRows ?? 100_000;
  const w = new HistoryWriter(ch, {
    maxBatchRows: batch,
    // Bounded well above the backpressure threshold below, so a backfill never sheds rows.
    maxBufferedRows: batch * 16,
    metrics: opts.metrics,
    ...opts.writer,
    trades: { maxBatchRows: Math.min(batch, 20_000) },
    synthetic: true,
  });
  const sink = {
    tick: (r: Parameters<HistoryWriter['writeTick']>[0]) => void w.writeTick(r),
    point: (r: Parameters<HistoryWriter['writePoint']>[0]) => void w.writePoint(r),
    trade: (p: Parameters<HistoryWriter['writeTrade']>[0]) => void w.writeTrade(p),
  };
  const started = Date.now();
  let generated = 0;
  let lastReport = 0;
  const every = opts.progressEveryMs ?? 500;
  const written = () => {
    const s = w.stats();
    return s.ticks.written + s.points.written + s.trades.written;
  };
  const report = (done: boolean, step: number) =>
    opts.onProgress?.({ written: written(), generated, expected, fraction: gen.steps ? step / gen.steps : 1, elapsedMs: Date.now() - started, done });
  try {
    for (let i = 0; i < gen.steps; i++) {
      generated += gen.step(i, sink);
      if (i % 64 === 63) {
        // Backpressure: at most four batches waiting per table, and give the inserts a turn.
        await Promise.all([w.tickWriter.settle(batch * 4, 8), w.pointWriter.settle(batch * 4, 8), w.tradeWriter.settle(batch * 4, 8)]);
        await new Promise((r) => setImmediate(r));
        const now = Date.now();
        if (now - lastReport >= every) {
          lastReport = now;
          report(false, i + 1);
        }
      }
    }
    for (let attempt = 0; attempt < 8 && !(await w.flush()); attempt++) await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
  } finally {
    await w.close(30_000);
  }
  const s = w.stats();
  const lost = [s.ticks, s.points, s.trades].reduce((n, x) => n + Object.values(x.dropped).reduce((a, b) => a + b, 0), 0);
  if (lost > 0) throw new Error(`backfill lost ${lost} rows (last ClickHouse error: ${s.ticks.lastError ?? s.points.lastError ?? s.trades.lastError})`);
  report(true, gen.steps);
  return { ticks: s.ticks.written, points: s.points.written, trades: s.trades.written, elapsedMs: Date.now() - started };
}
