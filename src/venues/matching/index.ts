/**
 * Cross-venue matching: several venues' catalogs → one catalog where the same real-world contest is
 * one contest and the same outcome one position (docs/venues.md "Matching venues to one catalog").
 *
 *   const aliases = loadAliasTable(extraAliasFiles);          // the built-in table + operator files
 *   const mapping = mappingPath ? loadMappingFile(mappingPath) : EMPTY_MAPPING;
 *   const { catalog, report, position_map, contest_map } = mergeVenueCatalogs({ kalshi: k.catalog()!, polymarket: p.catalog()! }, { aliases, mapping });
 *   await seedCatalog(pool, catalog);
 *   const adapters = [remapAdapter(k, position_map.kalshi, contest_map.kalshi), remapAdapter(p, position_map.polymarket, contest_map.polymarket)];
 */
export { aliasFileFromText, aliasTable, builtinAliasFile, parseAliasFile, AliasTable, VENUE_LEAGUE_KINDS, type AliasFile, type AliasLeague, type VenueLeagueKind } from './aliases.js';
export { describeCatalog, DRAW } from './describe.js';
export { loadAliasTable, loadMappingFile, matchOptionsFromEnv } from './files.js';
export { mergeVenueCatalogs, MERGED_MARKETS, type MergeOptions } from './merge.js';
export { MATCH_METRICS, type MatchMetric } from './metrics.js';
export { normalizeName, pairingOf, titleTokens } from './normalize.js';
export { EMPTY_MAPPING, mappingFileFromText, parseMappingFile, type MappingFile, type MergeOverride } from './overrides.js';
export { remapAdapter, remappableAdapter, type RemappedAdapter } from './remap.js';
export { formatMatchReport } from './report.js';
export { LOW_CONFIDENCE_FLOOR, MATCH_THRESHOLD, WEIGHTS, WINDOW_MS, scorePair } from './score.js';
export { MatchConfigError } from './strict.js';
export type * from './types.js';
