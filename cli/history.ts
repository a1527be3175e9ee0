/**
 * flow history import <file> [--format csv|jsonl|parquet] [--kind ticks|trades] [--dry-run]
 *     real recorded ticks or trade prints, validated in full before anything is written
 *     (cli/history-import.ts).
 * flow history synthesize --from <ISO|ms> --to <ISO|ms> [--positions N] [--interval-ms N]
 *     writes a deterministic synthetic history (seed FLOW_SIM_SEED) for demos and benchmarks, every
 *     row marked synthetic: the REST history reads leave it out unless
 *     FLOW_HISTORY_INCLUDE_SYNTHETIC=true. Progress on stderr.
 * flow history backfill
 *     refused: it used to write synthetic rows indistinguishable from real ones; the message names
 *     import and synthesize.
 * flow history prune [--before <ISO|ms>] | --synthetic
 *     removes history older than --before, or older than FLOW_HISTORY_RETENTION_DAYS when omitted;
 *     --synthetic removes every synthetic row instead.
 * flow history status [--json]
 *     rows (and synthetic rows) and time range per table.
 * flow history migrate
 *     applies the ClickHouse migrations and the configured retention.
 */
import { parseArgs } from 'node:util';
import { runBackfill, type BackfillProgress } from '../src/store/clickhouse/backfill.js';
import { historyCounts, pruneHistory, pruneSynthetic } from '../src/store/clickhouse/history.js';
import { applyRetention, migrateClickHouse, prepareHistoryStore } from '../src/store/clickhouse/schema.js';
import { syntheticPositions, syntheticVenues, type SyntheticPosition, type SyntheticVenue } from '../src/store/clickhouse/synthetic.js';
import type { Pool } from '../src/store/pg/pool.js';
import { IMPORT_USAGE, runImportCommand } from './history-import.js';
import { UsageError } from './keys.js';
import type { Runtime } from './runtime.js';

const USAGE = `usage:
  flow history import <file> [--format csv|jsonl|parquet] [--kind ticks|trades] [--dry-run]
  flow history synthesize --from <ISO|ms> --to <ISO|ms> [--positions N] [--interval-ms N]
  flow history prune [--before <ISO|ms>] | --synthetic
  flow history status [--json]
  flow history migrate`;

/** Why backfill is gone, and what to run instead. */
export const BACKFILL_REFUSED = `flow history backfill is no longer available: it wrote made-up history into the same tables as real data, with nothing to tell them apart.
  real recorded ticks or trades:  flow history import <file.csv|file.jsonl|file.parquet>
  a synthetic demo or benchmark history (rows marked synthetic, left out of the REST history unless FLOW_HISTORY_INCLUDE_SYNTHETIC=true):
                                  flow history synthesize --from <ISO|ms> --to <ISO|ms> [--positions N] [--interval-ms N]
  see docs/history.md`;

/** A time argument: unix ms (digits) or an ISO 8601 date or date-time. */
export function parseTimeArg(name: string, raw: string | undefined): number {
  if (raw === undefined) throw new UsageError(`--${name} is required\n${USAGE}`);
  if (/^[0-9]{1,16}$/.test(raw)) return Number(raw);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be unix milliseconds or an ISO 8601 time, got ${JSON.stringify(raw)}`);
  return ms;
}

function positiveIntArg(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

async function tableExists(pool: Pool, name: string): Promise<boolean> {
  const { rows } = await pool.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [`public.${name}`]);
  return rows[0]?.ok === true;
}

/** Positions from PostgreSQL (definition jsonb carries position_hash and contest_id); empty when none. */
export async function catalogPositions(pool: Pool, limit: number): Promise<SyntheticPosition[]> {
  if (!(await tableExists(pool, 'positions'))) return [];
  const { rows } = await pool.query<{ position_hash: string | null; contest_id: string | null; market_id: string | null }>(
    `SELECT COALESCE(definition->>'position_hash', position_hash) AS position_hash,
            COALESCE(definition->>'contest_id', contest_id) AS contest_id,
            COALESCE(definition->>'market_id', market_id) AS market_id
       FROM positions ORDER BY contest_id, position_hash LIMIT $1`,
    [limit],
  );
  return rows
    .filter((r) => r.position_hash && r.contest_id)
    .map((r) => ({ position_hash: r.position_hash!, contest_id: r.contest_id!, market_id: r.market_id ?? 'unknown' }));
}

/** Venues from PostgreSQL's partners (not the internal practice book); every other one publishes trades. */
export async function catalogVenues(pool: Pool): Promise<SyntheticVenue[]> {
  if (!(await tableExists(pool, 'partners'))) return [];
  const { rows } = await pool.query<{ partner_id: string; name: string }>(
    'SELECT partner_id, name FROM partners WHERE NOT internal_book ORDER BY sort_order, partner_id',
  );
  return rows.map((r, i) => ({ partner_id: r.partner_id, name: r.name, publishes_trades: i % 2 === 0 }));
}

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function fmtDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '--:--';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}` : `${m}:${String(sec).padStart(2, '0')}`;
}

/** A progress bar on stderr: rows written, rows/s, ETA. Redrawn in place on a terminal, a line per tick otherwise. */
export function progressLine(p: BackfillProgress, width = 28): string {
  const frac = Math.min(1, Math.max(0, p.done ? 1 : p.fraction));
  const filled = Math.round(frac * width);
  const rate = p.elapsedMs > 0 ? (p.written / p.elapsedMs) * 1000 : 0;
  const eta = p.done ? 0 : frac > 0 ? (p.elapsedMs / frac) * (1 - frac) : Infinity;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(frac * 100).toFixed(1).padStart(5)}%  ${fmtInt(p.written)} rows written  ${fmtInt(rate)} rows/s  ETA ${fmtDuration(eta)}`;
}

export async function runHistoryCommand(rt: Runtime, argv: string[], out: (s: string) => void): Promise<void> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'import':
      if (rest.includes('--help') || rest.includes('-h')) {
        out(IMPORT_USAGE);
        return;
      }
      return runImportCommand(rt, rest, out);
    case 'backfill':
      throw new UsageError(BACKFILL_REFUSED);
    case 'synthesize': {
      const { values } = parseArgs({
        args: rest,
        options: { from: { type: 'string' }, to: { type: 'string' }, positions: { type: 'string' }, 'interval-ms': { type: 'string' } },
        strict: true,
      });
      const from = parseTimeArg('from', values.from);
      const to = parseTimeArg('to', values.to);
      if (to <= from) throw new UsageError('--to must be later than --from');
      const count = positiveIntArg('positions', values.positions, 20);
      const intervalMs = positiveIntArg('interval-ms', values['interval-ms'], 1000);
      if ((to - from) / intervalMs > 50_000_000) throw new UsageError('the range holds more than 50,000,000 steps; raise --interval-ms');
      let positions = await catalogPositions(rt.pool, count);
      const fromCatalog = positions.length > 0;
      if (!fromCatalog) positions = syntheticPositions(count);
      let venues = await catalogVenues(rt.pool);
      if (venues.length === 0) venues = syntheticVenues();
      const seed = rt.config.simSeed;
      out(
        `synthesize ${new Date(from).toISOString()} .. ${new Date(to).toISOString()} every ${intervalMs} ms: ` +
          `${positions.length} positions (${fromCatalog ? 'catalog' : 'synthetic'}), ${venues.length} venues, seed ${seed}; ` +
          `every row is marked synthetic${rt.config.historyIncludeSynthetic ? '' : ' (the REST history leaves such rows out unless FLOW_HISTORY_INCLUDE_SYNTHETIC=true)'}`,
      );
      const tty = process.stderr.isTTY === true;
      let lastLine = 0;
      const result = await runBackfill(
        rt.clickhouse(),
        { from, to, intervalMs, seed, positions, venues },
        {
          retentionDays: rt.config.historyRetentionDays,
          metrics: rt.metrics,
          progressEveryMs: tty ? 250 : 2000,
          onProgress: (p) => {
            if (tty) process.stderr.write(`\r${progressLine(p)}${p.done ? '\n' : ''}`);
            else if (p.done || Date.now() - lastLine >= 2000) {
              lastLine = Date.now();
              process.stderr.write(`${progressLine(p)}\n`);
            }
          },
        },
      );
      const total = result.ticks + result.points + result.trades;
      out(
        `wrote ${fmtInt(result.ticks)} synthetic ticks, ${fmtInt(result.points)} consensus points, ${fmtInt(result.trades)} trades ` +
          `in ${(result.elapsedMs / 1000).toFixed(1)} s (${fmtInt((total / Math.max(1, result.elapsedMs)) * 1000)} rows/s)`,
      );
      return;
    }
    case 'prune': {
      const { values } = parseArgs({ args: rest, options: { before: { type: 'string' }, synthetic: { type: 'boolean', default: false } }, strict: true });
      if (values.synthetic && values.before !== undefined) throw new UsageError('--synthetic removes every synthetic row; it takes no --before');
      const ch = rt.clickhouse();
      await prepareHistoryStore(ch, { retentionDays: rt.config.historyRetentionDays });
      if (values.synthetic) {
        out('removing every synthetic row');
        for (const r of await pruneSynthetic(ch)) out(`  ${r.table}: removed ${fmtInt(r.rowsRemoved)} rows`);
        return;
      }
      let before: number;
      if (values.before !== undefined) before = parseTimeArg('before', values.before);
      else if (rt.config.historyRetentionDays > 0) before = rt.clock.now() - rt.config.historyRetentionDays * 86_400_000;
      else {
        out('retention is 0 (keep forever), so there is nothing to prune; pass --before <ISO|ms> to remove older history');
        return;
      }
      out(`pruning history before ${new Date(before).toISOString()}`);
      for (const r of await pruneHistory(ch, before)) {
        out(`  ${r.table}: removed ${fmtInt(r.rowsRemoved)} rows (${r.partitionsDropped} whole partitions dropped)`);
      }
      return;
    }
    case 'status': {
      const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } }, strict: true });
      const ch = rt.clickhouse();
      await prepareHistoryStore(ch, { retentionDays: rt.config.historyRetentionDays });
      const counts = await historyCounts(ch);
      if (values.json) {
        out(JSON.stringify({ retention_days: rt.config.historyRetentionDays, tables: counts }));
        return;
      }
      out(`retention: ${rt.config.historyRetentionDays === 0 ? 'forever' : `${rt.config.historyRetentionDays} days`}`);
      for (const c of counts) {
        const range = c.min_ms === null ? 'empty' : `${new Date(c.min_ms).toISOString()} .. ${new Date(c.max_ms!).toISOString()}`;
        out(`  ${c.table.padEnd(13)} ${fmtInt(c.rows).padStart(15)} rows (${fmtInt(c.synthetic)} synthetic)  ${range}`);
      }
      return;
    }
    case 'migrate': {
      const ch = rt.clickhouse();
      const applied = await migrateClickHouse(ch);
      const ttl = await applyRetention(ch, rt.config.historyRetentionDays);
      out(applied.length ? `applied ClickHouse migrations ${applied.join(', ')}` : 'ClickHouse migrations up to date');
      for (const t of ttl) out(`  ${t.table}: retention ${t.from} -> ${t.to} days`);
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
