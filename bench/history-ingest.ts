/**
 * bench history-ingest: tick rows per second into ClickHouse through the project's writer
 * (src/store/clickhouse/writer.ts), against raw @clickhouse/client inserts of the same rows, in the
 * same batches, in the same run. Targets: writer ≥ 0.8 × the raw insert, and ≥ 200,000 ticks/s
 * with chDB.
 *
 * Every run inserts into the real ticks table (with its per-minute materialized view), emptied
 * before each run. Baselines (same rows, same batches, sequential inserts):
 *   raw-tsv   the client's insert with rows hand-encoded as TabSeparated (the fastest raw path we
 *             found; the primary baseline)
 *   raw-json  the client's insert with the row objects as JSONEachRow (the obvious raw path)
 * The writer run includes everything a pipeline pays: per-row validation and encoding in write(),
 * batching, and the inserts; its clock stops when flush() confirms the last row.
 *
 *   npx tsx bench/history-ingest.ts [--rows 1000000] [--batch 50000] [--reps 3]
 *   npm run bench -- history-ingest [...]
 * CLICKHOUSE_URL set: against that server; otherwise chDB in a temporary directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { createClickHouse, type ClickHouseClient } from '../src/store/clickhouse/client.js';
import { prepareHistoryStore, TICK_COLUMNS } from '../src/store/clickhouse/schema.js';
import { SyntheticHistory, syntheticPositions, syntheticVenues } from '../src/store/clickhouse/synthetic.js';
import { BatchWriter, encodeTick, type TickRow } from '../src/store/clickhouse/writer.js';
import { runIfMain } from './support/main.js';

function makeRows(n: number): TickRow[] {
  const rows: TickRow[] = [];
  const gen = new SyntheticHistory({
    from: Date.parse('2026-11-20T00:00:00Z'),
    to: Date.parse('2026-11-21T00:00:00Z'),
    intervalMs: 100,
    seed: 1,
    positions: syntheticPositions(100),
    venues: syntheticVenues(),
    repriceProbability: 0.7,
    tradeProbability: 0,
  });
  const sink = { tick: (r: TickRow) => void rows.push(r), point: () => undefined, trade: () => undefined };
  for (let i = 0; i < gen.steps && rows.length < n; i++) gen.step(i, sink);
  return rows.slice(0, n);
}

async function rawTsv(ch: ClickHouseClient, table: string, rows: TickRow[], batch: number): Promise<void> {
  for (let i = 0; i < rows.length; i += batch) {
    let body = '';
    const end = Math.min(rows.length, i + batch);
    for (let j = i; j < end; j++) {
      const r = rows[j]!;
      body += `${r.ts}\t${r.contest_id}\t${r.position_hash}\t${r.partner_id}\t${r.price}\t${r.available}\t${r.liquidity_hash}\t${r.source ?? 'streaming'}\t${r.outlier ? 1 : 0}\n`;
    }
    await ch.insert({ table, columns: [...TICK_COLUMNS], format: 'TabSeparated', values: Readable.from([body], { objectMode: false }) });
  }
}

async function rawJson(ch: ClickHouseClient, table: string, rows: TickRow[], batch: number): Promise<void> {
  // JSON numbers land in DateTime64(3) as milliseconds, so the row objects go in as they are.
  for (let i = 0; i < rows.length; i += batch) {
    await ch.insert({ table, format: 'JSONEachRow', values: rows.slice(i, i + batch) });
  }
}

async function viaWriter(ch: ClickHouseClient, table: string, rows: TickRow[], batch: number): Promise<void> {
  const w = new BatchWriter(ch, table, TICK_COLUMNS, encodeTick, { maxBatchRows: batch, maxBufferedRows: rows.length + batch, flushIntervalMs: 250 });
  // A producer like the pipeline: rows arrive in bursts, and the event loop turns between them.
  const burst = 5_000;
  for (let i = 0; i < rows.length; i += burst) {
    const end = Math.min(rows.length, i + burst);
    for (let j = i; j < end; j++) w.write(rows[j]!);
    await new Promise((r) => setImmediate(r));
  }
  if (!(await w.flush())) throw new Error(`writer flush failed: ${w.stats().lastError}`);
  await w.close();
  const st = w.stats();
  if (st.written !== rows.length) throw new Error(`writer wrote ${st.written} of ${rows.length}`);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { rows: { type: 'string', default: '1000000' }, batch: { type: 'string', default: '50000' }, reps: { type: 'string', default: '3' } },
  });
  const n = Number(values.rows);
  const batch = Number(values.batch);
  const reps = Number(values.reps);
  const url = process.env.CLICKHOUSE_URL ?? null;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'flow-bench-history-ingest-'));
  const ch = createClickHouse({ url, dataDir });
  try {
    await prepareHistoryStore(ch, { retentionDays: 0 });
    process.stderr.write(`generating ${fmt(n)} tick rows...\n`);
    const rows = makeRows(n);
    const scenarios: [string, (t: string) => Promise<void>][] = [
      ['raw-tsv', (t) => rawTsv(ch, t, rows, batch)],
      ['raw-json', (t) => rawJson(ch, t, rows, batch)],
      ['writer', (t) => viaWriter(ch, t, rows, batch)],
    ];
    const rates: Record<string, number[]> = {};
    // Every run writes the real ticks table, so the per-minute materialized view (ticks_1m) costs
    // the same to each; both are emptied between runs.
    const reset = async () => {
      await ch.command({ query: 'TRUNCATE TABLE ticks' });
      await ch.command({ query: 'TRUNCATE TABLE ticks_1m' });
    };
    // Warm-up (JIT, first parts), then rounds in rotating order so no scenario always goes first.
    for (const [, fn] of scenarios) {
      await reset();
      await fn('ticks');
    }
    for (let rep = 0; rep < reps; rep++) {
      for (let k = 0; k < scenarios.length; k++) {
        const [name, fn] = scenarios[(k + rep) % scenarios.length]!;
        await reset();
        const t0 = performance.now();
        await fn('ticks');
        const rate = n / ((performance.now() - t0) / 1000);
        const rs = await ch.query({ query: 'SELECT count() AS c FROM ticks', format: 'JSONEachRow' });
        const got = Number((await rs.json<{ c: string }>())[0]!.c);
        if (got !== n) throw new Error(`${name}: ${got} rows landed, expected ${n}`);
        (rates[name] ??= []).push(rate);
        process.stderr.write(`  rep ${rep + 1} ${name.padEnd(8)} ${fmt(rate)} rows/s\n`);
      }
    }
    const m = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, median(v)]));
    const ratioTsv = m.writer! / m['raw-tsv']!;
    const ratioJson = m.writer! / m['raw-json']!;
    console.log(`history-ingest: ${fmt(n)} tick rows, batch ${fmt(batch)}, ${reps} reps (median), ${url ? `server ${url}` : 'chDB'}`);
    console.log(`  raw insert, TabSeparated   ${fmt(m['raw-tsv']!).padStart(10)} rows/s   (baseline)`);
    console.log(`  raw insert, JSONEachRow    ${fmt(m['raw-json']!).padStart(10)} rows/s`);
    console.log(`  project writer             ${fmt(m.writer!).padStart(10)} rows/s`);
    console.log(`  ratio writer / raw TSV     ${ratioTsv.toFixed(2)}   (target ≥ 0.80: ${ratioTsv >= 0.8 ? 'met' : 'NOT met'})`);
    console.log(`  ratio writer / raw JSON    ${ratioJson.toFixed(2)}`);
    console.log(`  writer ≥ 200,000 ticks/s   ${m.writer! >= 200_000 ? 'met' : 'NOT met'}`);
  } finally {
    await ch.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
