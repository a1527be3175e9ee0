/**
 * Matching test support (not a test file): the recorded catalogs built through the adapters' own
 * parse and catalog functions, the hand-written counterparts (fixtures/README.md), and small
 * structured catalogs (the simulator's shape) for the unit and property tests.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Contest, PositionDefinition } from '../../../src/domain/catalog.js';
import { positionHash } from '../../../src/domain/hashes.js';
import { buildKalshiCatalog } from '../../../src/venues/kalshi/catalog.js';
import { createKalshiAdapter } from '../../../src/venues/kalshi/index.js';
import type { KalshiMarket } from '../../../src/venues/kalshi/messages.js';
import { aliasTable, parseAliasFile, type AliasFile, type AliasTable } from '../../../src/venues/matching/aliases.js';
import type { VenueCatalog } from '../../../src/venues/matching/types.js';
import { buildPolymarketCatalog } from '../../../src/venues/polymarket/catalog.js';
import type { GammaEvent } from '../../../src/venues/polymarket/messages.js';
import { parseGammaEvent } from '../../../src/venues/polymarket/parse.js';
import { kalshiListed, polymarketListed } from '../../../src/venues/replay/catalogs.js';
import { loadRecordings, type Recordings } from '../../../src/venues/replay/recordings.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The repo's copied recordings: test/venues/{kalshi,polymarket}/fixtures. */
export const RECORDINGS = join(HERE, '..');
export const MATCH_FIXTURES = join(HERE, 'fixtures');
export const matchFixture = <T = unknown>(name: string): T => JSON.parse(readFileSync(join(MATCH_FIXTURES, name), 'utf8')) as T;

export function recordings(): Recordings {
  return loadRecordings(RECORDINGS);
}

export const kalshiPartner = () => createKalshiAdapter({}).describe().partner;

/** Kalshi's catalog of the recorded markets (as the adapter lists them), plus `extra` markets. */
export function kalshiCatalog(rec: Recordings, extra: KalshiMarket[] = []): VenueCatalog {
  return buildKalshiCatalog({ series: rec.kalshi!.series, events: rec.kalshi!.events, markets: [...kalshiListed(rec.kalshi!), ...extra], partner: kalshiPartner() });
}

/** Polymarket's catalog of the recorded events (as the adapter lists them), plus `extra` events. */
export function polymarketCatalog(rec: Recordings, extra: GammaEvent[] = []): VenueCatalog {
  return buildPolymarketCatalog([...polymarketListed(rec.polymarket!), ...extra].map(parseGammaEvent));
}

/** The built-in table plus `files` (alias file objects). */
export function aliasesWith(...files: AliasFile[]): AliasTable {
  return aliasTable(files.map((f, i) => ({ file: parseAliasFile(f, `test-aliases-${i}`), source: `test-aliases-${i}` })));
}

// ---- structured catalogs (the simulator's shape) -----------------------------------------------

export interface GameSpec {
  id: string;
  home: string;
  away: string;
  /** ISO start. */
  starts: string;
  /** Home lines (the away side gets the negation). */
  spreads?: number[];
  totals?: number[];
  /** Also list a moneyline (default true). */
  moneyline?: boolean;
}

/** A venue catalog of head-to-head games in `leagueId`, positions as the simulator lists them. */
export function gamesCatalog(partnerId: string, leagueId: string, games: GameSpec[]): VenueCatalog {
  const contests: Contest[] = [];
  const positions: PositionDefinition[] = [];
  const participants = new Map<string, { id: string; league_id: string; name: string; abbr: null; image_url: null; country: null }>();
  const pid = (name: string) => `${partnerId}_${name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;
  const pos = (cid: string, market: string, side: string, variable: number, participant: string, name: string, group: string, ladder: string | null): PositionDefinition => ({
    position_hash: positionHash({ contest_id: cid, market_id: market, side_key: side, variable, participant_id: participant, timeframe: 'ft' }),
    contest_id: cid,
    title: `${name} ${market} ${variable}`,
    market_id: market,
    market_key: market,
    side_key: side,
    variable,
    participant_id: participant,
    participant_name: name,
    participant_image_url: null,
    timeframe: 'ft',
    group_key: group,
    ladder_key: ladder,
  });
  for (const g of games) {
    const cid = `${partnerId}-${g.id}`;
    contests.push({
      id: cid,
      league_id: leagueId,
      title: `${g.away} at ${g.home}`,
      type: 'match',
      parent_contest_id: null,
      starts_at: g.starts,
      status: 'open',
      has_markets: true,
      tags: { source: partnerId },
      created_at: '2025-01-01T00:00:00.000Z',
      updated_at: '2025-01-01T00:00:00.000Z',
    });
    for (const n of [g.home, g.away]) participants.set(pid(n), { id: pid(n), league_id: leagueId, name: n, abbr: null, image_url: null, country: null });
    if (g.moneyline !== false) {
      positions.push(pos(cid, 'moneyline', 'home', 0, pid(g.home), g.home, `${cid}/moneyline`, null));
      positions.push(pos(cid, 'moneyline', 'away', 0, pid(g.away), g.away, `${cid}/moneyline`, null));
    }
    for (const h of g.spreads ?? []) {
      positions.push(pos(cid, 'spread', 'home', h, pid(g.home), g.home, `${cid}/spread/${h}`, `${cid}/spread`));
      positions.push(pos(cid, 'spread', 'away', -h, pid(g.away), g.away, `${cid}/spread/${h}`, `${cid}/spread`));
    }
    for (const t of g.totals ?? []) {
      positions.push(pos(cid, 'total', 'over', t, `${leagueId}_over`, 'Over', `${cid}/total/${t}`, `${cid}/total`));
      positions.push(pos(cid, 'total', 'under', t, `${leagueId}_under`, 'Under', `${cid}/total/${t}`, `${cid}/total`));
    }
  }
  const markets = [...new Set(positions.map((p) => p.market_id))].map((id) => ({ id, key: id, name: id, variable_required: id !== 'moneyline', allow_multiple_participants: false, side_keys: id === 'total' ? ['over', 'under'] : ['home', 'away'] }));
  return {
    leagues: [{ id: leagueId, name: leagueId, participant_type: 'team', status: 'active' }],
    participants: [...participants.values()],
    contests,
    markets,
    contest_markets: [...new Set(positions.map((p) => `${p.contest_id}|${p.market_id}`))].map((k) => ({ contest_id: k.split('|')[0]!, market_id: k.split('|')[1]! })),
    positions,
    partners: [{ ...kalshiPartner(), partner_id: partnerId, name: partnerId }],
  };
}

/** Test venue leagues `<venue>_nfl` → nfl for the structured catalogs. */
export const TEST_LEAGUES: AliasFile = {
  version: 1,
  leagues: { nfl: { name: 'NFL', participant_type: 'team', venue_leagues: { a_nfl: null, b_nfl: null, c_nfl: null } } },
};
