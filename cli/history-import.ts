/**
 * flow history import <file> [--format csv|jsonl|parquet] [--kind ticks|trades] [--dry-run]
 *
 * Real recorded ticks or trade prints into the history tables (docs/history.md, "Importing recorded
 * history"). Two passes over the file: the first validates every record with the live path's rules
 * and writes nothing; only a file without a single bad record gets the second, which stages the rows
 * and moves them into the table in one statement. A bad file is reported by line (or Parquet row),
 * the first 20 and a count, and exits 1 with nothing written.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import {
  IMPORT_FIELDS,
  IMPORT_KINDS,
  checkColumns,
  detectImportKind,
  importValidator,
  type ImportKind,
} from '../src/domain/history-import.js';
import type { TickRow } from '../src/domain/history.js';
import type { TradePrint } from '../src/domain/stream.js';
import { dropStaleStaging, ImportStaging, parquetColumns, parquetRecords } from '../src/store/clickhouse/import.js';
import { prepareHistoryStore, TABLES } from '../src/store/clickhouse/schema.js';
import { CommandFailed } from './errors.js';
import { UsageError } from './keys.js';
import { FILE_FORMATS, fileEvents, formatFromExtension, type FileEvent, type FileFormat } from './record-files.js';
import type { Runtime } from './runtime.js';

export const IMPORT_USAGE = `usage: flow history import <file> [--format csv|jsonl|parquet] [--kind ticks|trades] [--dry-run]
  the format comes from the extension (.csv, .jsonl, .ndjson, .parquet) unless --format names it;
  the kind from the columns (trades have executed_at, ticks have ts) unless --kind names it.
  File formats: docs/history.md, "Importing recorded history".`;

/** Bad records listed in full; the rest are counted. */
export const MAX_REPORTED_PROBLEMS = 20;
/** Rows per staging insert. */
const BATCH_ROWS = 50_000;
/** Progress lines when stderr is not a terminal. */
const PROGRESS_LINE_MS = 2_000;

type Phase = 'validate' | 'stage' | 'move';

/** How far an import is: a bar on a terminal, a JSON line every 2 s otherwise (logs, CI). */
export interface ImportProgress {
  phase(phase: Phase, total: number, unit: 'bytes' | 'rows'): void;
  update(done: number, rows: number): void;
  end(): void;
}

export function progressReporter(stream: NodeJS.WritableStream & { isTTY?: boolean }, file: string): ImportProgress {
  if (stream.isTTY === true) {
    let bar: cliProgress.SingleBar | null = null;
    return {
      phase(phase, total, unit) {
        bar?.stop();
        bar = new cliProgress.SingleBar(
          {
            stream,
            format: `${phase.padEnd(8)} |{bar}| {percentage}% | {rows} rows | ${unit === 'bytes' ? '{value_mb}/{total_mb} MB' : '{value}/{total} rows'} | ETA {eta_formatted}`,
            hideCursor: true,
            etaBuffer: 50,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(Math.max(1, total), 0, { rows: 0, value_mb: '0.0', total_mb: (total / 1e6).toFixed(1) });
      },
      update(done, rows) {
        bar?.update(done, { rows, value_mb: (done / 1e6).toFixed(1) });
      },
      end() {
        bar?.stop();
        bar = null;
      },
    };
  }
  let current: { phase: Phase; total: number; unit: string; done: number; rows: number; started: number; last: number } | null = null;
  const line = () => {
    if (!current) return;
    const c = current;
    const elapsed = Date.now() - c.started;
    stream.write(
      JSON.stringify({
        event: 'history_import_progress',
        file,
        phase: c.phase,
        done: c.done,
        total: c.total,
        unit: c.unit,
        percent: c.total > 0 ? Math.round((c.done / c.total) * 1000) / 10 : 100,
        rows: c.rows,
        elapsed_ms: elapsed,
      }) + '\n',
    );
    c.last = Date.now();
  };
  return {
    phase(phase, total, unit) {
      if (current) line();
      current = { phase, total, unit, done: 0, rows: 0, started: Date.now(), last: Date.now() };
    },
    update(done, rows) {
      if (!current) return;
      current.done = done;
      current.rows = rows;
      if (Date.now() - current.last >= PROGRESS_LINE_MS) line();
    },
    end() {
      line();
      current = null;
    },
  };
}

interface Source {
  format: FileFormat;
  /** "line" for text files, "row" for Parquet: what a problem's number counts. */
  unit: 'line' | 'row';
  size: { total: number; unit: 'bytes' | 'rows' };
  events(onDone: (done: number) => void): AsyncGenerator<FileEvent>;
}

async function openSource(rt: Runtime, file: string, format: FileFormat, bytes: number): Promise<Source> {
  if (format !== 'parquet') {
    return { format, unit: 'line', size: { total: bytes, unit: 'bytes' }, events: (onDone) => fileEvents(file, format, onDone) };
  }
  if (rt.config.clickhouseUrl) {
    throw new UsageError(
      'Parquet files are read by the embedded ClickHouse engine, and CLICKHOUSE_URL points at a server (which would look for the file on its own disk); ' +
        'convert the file to CSV or JSONL, or run the import with CLICKHOUSE_URL unset against FLOW_DATA_DIR',
    );
  }
  const ch = rt.clickhouse();
  let meta: { columns: string[]; rows: number };
  try {
    meta = await parquetColumns(ch, file);
  } catch (err) {
    throw new CommandFailed(`${file} could not be read as Parquet: ${(err as Error).message.split('\n')[0]}`);
  }
  return {
    format,
    unit: 'row',
    size: { total: meta.rows, unit: 'rows' },
    async *events(onDone) {
      yield { type: 'columns', line: 0, columns: meta.columns };
      let n = 0;
      for await (const record of parquetRecords(ch, file, meta.rows)) {
        n++;
        if (n % 1000 === 0) onDone(n);
        yield { type: 'record', line: n, record };
      }
      onDone(n);
    },
  };
}

interface Problems {
  count: number;
  shown: string[];
}

/** Records one bad record (or header) at `where` ("line 4", "row 12", "Parquet schema"). */
function addProblem(p: Problems, where: string, problems: readonly string[]): void {
  p.count++;
  if (p.shown.length < MAX_REPORTED_PROBLEMS) p.shown.push(`  ${where}: ${problems.join('; ')}`);
}

const rowTime = (kind: ImportKind, row: TickRow | TradePrint): number =>
  kind === 'ticks' ? (row as TickRow).ts : Date.parse((row as TradePrint).executed_at);

export async function runImportCommand(
  rt: Runtime,
  argv: string[],
  out: (s: string) => void,
  progressStream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { format: { type: 'string' }, kind: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${IMPORT_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError(`name exactly one file to import\n${IMPORT_USAGE}`);
  const file = path.resolve(positionals[0]!);
  const format = (values.format?.toLowerCase() ?? formatFromExtension(file)) as FileFormat | null;
  if (format === null) throw new UsageError(`cannot tell the format of ${file} from its extension; pass --format ${FILE_FORMATS.join('|')}`);
  if (!(FILE_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${FILE_FORMATS.join(', ')}, got ${JSON.stringify(values.format)}`);
  let kind = values.kind as ImportKind | undefined;
  if (kind !== undefined && !(IMPORT_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind must be one of ${IMPORT_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
  let bytes: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new Error('not a regular file');
    bytes = st.size;
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }

  const ch = rt.clickhouse();
  await prepareHistoryStore(ch, { retentionDays: rt.config.historyRetentionDays });
  const source = await openSource(rt, file, format, bytes);
  const now = rt.clock.now();
  const progress = progressReporter(progressStream, file);
  const unit = source.unit;

  // ---- pass 1: validate everything, write nothing --------------------------------------------
  const bad: Problems = { count: 0, shown: [] };
  let rows = 0;
  let oldest = Infinity;
  let newest = -Infinity;
  let tooOld = 0;
  const retentionCut = rt.config.historyRetentionDays > 0 ? now - rt.config.historyRetentionDays * 86_400_000 : -Infinity;
  let known: Set<string> | null = null;
  let validate: ReturnType<typeof importValidator> | null = null;
  let done = 0;
  progress.phase('validate', source.size.total, source.size.unit);
  try {
    for await (const ev of source.events((d) => (done = d))) {
      if (ev.type === 'columns') {
        kind ??= detectImportKind(ev.columns) ?? undefined;
        if (kind === undefined) {
          throw new UsageError(
            `cannot tell whether ${file} holds ticks or trades from its columns (${ev.columns.join(', ') || 'none'}): ` +
              'a trades file has executed_at, a ticks file has ts; pass --kind ticks|trades',
          );
        }
        validate = importValidator(kind);
        known = new Set([...IMPORT_FIELDS[kind].required, ...IMPORT_FIELDS[kind].optional]);
        // A text header (or a Parquet schema) names every column once: a wrong one fails every row.
        if (format !== 'jsonl') {
          const problems = checkColumns(kind, ev.columns);
          if (problems.length) {
            addProblem(bad, format === 'csv' ? `line ${ev.line}` : 'Parquet schema', problems);
            break;
          }
        }
        continue;
      }
      if (ev.type === 'bad') {
        addProblem(bad, `${unit} ${ev.line}`, [ev.problem]);
        continue;
      }
      const unknown = format === 'jsonl' ? Object.keys(ev.record).filter((k) => !known!.has(k)) : [];
      const r = validate!(ev.record, now);
      const problems = [...(r.ok ? [] : r.problems), ...(unknown.length ? [`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`] : [])];
      if (problems.length) addProblem(bad, `${unit} ${ev.line}`, problems);
      else if (r.ok) {
        rows++;
        const t = rowTime(kind!, r.row);
        if (t < oldest) oldest = t;
        if (t > newest) newest = t;
        if (t < retentionCut) tooOld++;
      }
      if ((rows + bad.count) % 1000 === 0) progress.update(done, rows);
    }
  } finally {
    progress.update(done, rows);
    progress.end();
  }

  if (bad.count > 0) {
    const more = bad.count - bad.shown.length;
    throw new CommandFailed(
      `${file}: ${bad.count} bad ${unit}${bad.count > 1 ? 's' : ''} (of ${rows + bad.count}); nothing was imported\n` +
        bad.shown.join('\n') +
        (more > 0 ? `\n  ... and ${more} more` : '') +
        `\nfix or remove ${bad.count > 1 ? 'them' : 'it'} and run the import again (--dry-run checks a file without writing); ` +
        'the columns are described in docs/history.md, "Importing recorded history"',
    );
  }
  if (rows === 0) {
    out(`${file} holds no rows; nothing was imported`);
    return;
  }
  const span = `${new Date(oldest).toISOString()} .. ${new Date(newest).toISOString()}`;
  if (tooOld > 0) {
    out(
      `warning: ${tooOld} of ${rows} rows are older than the retention (FLOW_HISTORY_RETENTION_DAYS=${rt.config.historyRetentionDays}); ` +
        'ClickHouse removes them at its next merge',
    );
  }
  if (values['dry-run']) {
    out(`${file}: ${rows} ${kind} rows are valid (${span}); nothing was imported (--dry-run)`);
    return;
  }

  // ---- pass 2: stage, then move in one statement -----------------------------------------------
  const started = Date.now();
  await dropStaleStaging(ch, now).catch(() => undefined);
  const staging = await ImportStaging.open(ch, kind!, now);
  const table = kind === 'ticks' ? TABLES.ticks : TABLES.trades;
  try {
    progress.phase('stage', source.size.total, source.size.unit);
    let batch: (TickRow | TradePrint)[] = [];
    done = 0;
    for await (const ev of source.events((d) => (done = d))) {
      if (ev.type === 'columns') continue;
      const r = ev.type === 'record' ? validate!(ev.record, now) : null;
      if (!r?.ok) throw new CommandFailed(`${file} changed while it was being imported (${unit} ${ev.line}); nothing was imported: run the import again`);
      batch.push(r.row);
      if (batch.length >= BATCH_ROWS) {
        await staging.insert(batch);
        batch = [];
        progress.update(done, staging.rows);
      }
    }
    await staging.insert(batch);
    progress.update(done, staging.rows);
    progress.end();
    if (staging.rows !== rows) throw new CommandFailed(`${file} changed while it was being imported (${staging.rows} rows now, ${rows} before); nothing was imported: run the import again`);
  } catch (err) {
    progress.end();
    await staging.discard().catch(() => undefined);
    if (err instanceof CommandFailed) throw err;
    throw new CommandFailed(`ClickHouse refused the rows while staging them (${(err as Error).message.split('\n')[0]}); nothing was imported`);
  }
  try {
    progress.phase('move', rows, 'rows');
    await staging.commit();
    progress.update(rows, rows);
    progress.end();
  } catch (err) {
    progress.end();
    await staging.discard().catch(() => undefined);
    throw new CommandFailed(
      `ClickHouse failed while moving the staged rows into ${table} (${(err as Error).message.split('\n')[0]}); ` +
        `part of them may be in ${table}: compare \`flow history status\` with the file before importing it again`,
    );
  }
  out(`imported ${rows} ${kind} from ${file} into ${table} (${span}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
