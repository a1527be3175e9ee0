/** Reading the matcher's operator files from disk (alias tables, the mapping file). */
import { readFileSync } from 'node:fs';
import { aliasFileFromText, aliasTable, type AliasTable } from './aliases.js';
import { EMPTY_MAPPING, mappingFileFromText, type MappingFile } from './overrides.js';
import { MatchConfigError } from './strict.js';

function read(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new MatchConfigError(`${path}: cannot read the ${what} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** The built-in alias table plus the files at `paths`, in order. */
export function loadAliasTable(paths: readonly string[] = []): AliasTable {
  return aliasTable(paths.map((p) => ({ file: aliasFileFromText(read(p, 'alias file'), p), source: p })));
}

/** The mapping file at `path`. */
export function loadMappingFile(path: string): MappingFile {
  return mappingFileFromText(read(path, 'mapping file'), path);
}

/**
 * The operator's matcher files named by the environment (for the composition root):
 *   FLOW_VENUE_ALIASES  alias files added to the built-in table, comma-separated (default none)
 *   FLOW_VENUE_MAPPING  the mapping file (default none)
 * A file that is missing or wrong throws MatchConfigError naming the variable and the file.
 */
export function matchOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): { aliases: AliasTable; mapping: MappingFile } {
  const list = (env.FLOW_VENUE_ALIASES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const mappingPath = env.FLOW_VENUE_MAPPING?.trim() || null;
  const named = (variable: string, fn: () => unknown) => {
    try {
      return fn();
    } catch (e) {
      if (e instanceof MatchConfigError) throw new MatchConfigError(`${variable}: ${e.message}`);
      throw e;
    }
  };
  const aliases = named('FLOW_VENUE_ALIASES', () => loadAliasTable(list)) as AliasTable;
  const mapping = mappingPath ? (named('FLOW_VENUE_MAPPING', () => loadMappingFile(mappingPath)) as MappingFile) : EMPTY_MAPPING;
  return { aliases, mapping };
}
