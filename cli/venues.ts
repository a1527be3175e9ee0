/**
 * `flow venues matches` and `flow venues replay` (docs/venues.md "Matching venues to one catalog", docs/venues.md "Replay on recorded data").
 * Neither needs the stores: both read recorded payloads.
 *
 *   flow venues matches [--dir <recordings>] [--aliases <file>]... [--mapping <file>] [--json]
 *   flow venues replay  [--dir <recordings>] [--host 127.0.0.1] [--port 0] [--loop-ms 0]
 */
import { existsSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EMPTY_MAPPING, formatMatchReport, loadAliasTable, loadMappingFile, MatchConfigError, mergeVenueCatalogs } from '../src/venues/matching/index.js';
import { catalogsFromRecordings, loadRecordings, RecordingsError, startReplayServer, type Recordings, type ReplayServer } from '../src/venues/replay/index.js';
import { UsageError } from './keys.js';

/** Where the repository keeps its copied recordings (the default --dir). */
export const DEFAULT_RECORDINGS = 'test/venues';

const USAGE = [
  'usage: flow venues matches [--dir <recordings>] [--aliases <file>]... [--mapping <file>] [--json]',
  '       flow venues replay [--dir <recordings>] [--host <address>] [--port <n>] [--loop-ms <ms>]',
  `<recordings> holds kalshi/ and/or polymarket/ (default ${DEFAULT_RECORDINGS}, the repository's copies)`,
].join('\n');

function recordingsAt(dir: string | undefined): Recordings {
  const d = dir ?? DEFAULT_RECORDINGS;
  if (!existsSync(d)) {
    throw new UsageError(
      dir === undefined
        ? `no recordings at ${d} (run from the repository root, or pass --dir <recordings>: a folder with kalshi/ and/or polymarket/)`
        : `--dir ${d}: no such folder; pass a folder with kalshi/ and/or polymarket/ in it`,
    );
  }
  try {
    return loadRecordings(d);
  } catch (e) {
    if (e instanceof RecordingsError) throw new UsageError(`${e.message}; pass --dir <recordings>`);
    throw e;
  }
}

export async function runVenuesCommand(argv: string[], out: (s: string) => void, opts: { onServer?: (s: ReplayServer) => void } = {}): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'matches') return matchesCommand(rest, out);
  if (sub === 'replay') return replayCommand(rest, out, opts.onServer);
  throw new UsageError(sub === undefined ? USAGE : `unknown venues command ${JSON.stringify(sub)}\n${USAGE}`);
}

function parse<const T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n${USAGE}`);
  }
}

async function matchesCommand(argv: string[], out: (s: string) => void): Promise<void> {
  const { values } = parse(argv, {
    dir: { type: 'string' },
    aliases: { type: 'string', multiple: true },
    mapping: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const rec = recordingsAt(values.dir as string | undefined);
  let result;
  try {
    const aliases = loadAliasTable((values.aliases as string[] | undefined) ?? []);
    const mapping = values.mapping ? loadMappingFile(values.mapping as string) : EMPTY_MAPPING;
    result = mergeVenueCatalogs(catalogsFromRecordings(rec), { aliases, mapping });
  } catch (e) {
    if (e instanceof MatchConfigError) throw new UsageError(`${e.message}\n(fix the file and run again; the format is in docs/venues.md "Matching venues to one catalog")`);
    throw e;
  }
  if (values.json) out(JSON.stringify({ ...result.report, position_map: result.position_map }, null, 2));
  else out(formatMatchReport(result.report));
}

function intFlag(name: string, raw: unknown, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

async function replayCommand(argv: string[], out: (s: string) => void, onServer?: (s: ReplayServer) => void): Promise<void> {
  const { values } = parse(argv, {
    dir: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    'loop-ms': { type: 'string' },
  });
  const rec = recordingsAt(values.dir as string | undefined);
  const port = intFlag('port', values.port, 0, 65_535, 0);
  const loopMs = intFlag('loop-ms', values['loop-ms'], 0, 86_400_000, 0);
  let server: ReplayServer;
  try {
    server = await startReplayServer({ recordings: rec, host: (values.host as string | undefined) ?? '127.0.0.1', port, loopMs });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') throw new UsageError(`cannot listen on ${values.host ?? '127.0.0.1'}:${port} (${code}); pass another --port or --host`);
    throw e;
  }
  const s = server.summary();
  out(`replay of ${rec.dir} listening on ${server.url}`);
  for (const a of s.kalshi) out(`  kalshi ${a.ticker}: book from ${a.from}${a.borrowed_from ? ` (recorded for ${a.borrowed_from}: no recording holds this market's book)` : ''}`);
  for (const a of s.polymarket) out(`  polymarket ${a.token_id}: book from ${a.from}${a.borrowed_from ? ` (recorded for ${a.borrowed_from}: no recording holds this market's book)` : ''}`);
  out('point the service at it with:');
  for (const [k, v] of Object.entries(server.env())) out(`export ${k}=${v}`);
  onServer?.(server);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void server.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
