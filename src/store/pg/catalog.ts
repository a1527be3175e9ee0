/** Catalog reads and the seeding of a venue catalog (the simulator's on first start). */
import type { Contest, League, Market, Partner, Participant, PositionDefinition } from '../../domain/catalog.js';

export type { PositionDefinition };
import { inTransaction, type Pool, type PoolClient } from './pool.js';

export interface CatalogSeed {
  leagues: League[];
  participants: Participant[];
  contests: Contest[];
  markets: Market[];
  contest_markets: { contest_id: string; market_id: string }[];
  positions: PositionDefinition[];
  partners: Partner[];
}

/** Upserts a whole catalog in one transaction (idempotent; parents before children). */
export async function seedCatalog(pool: Pool, seed: CatalogSeed): Promise<void> {
  await inTransaction(pool, async (c) => {
    const json = (v: unknown) => JSON.stringify(v);
    await c.query(
      `INSERT INTO leagues (id, name, participant_type, status, sort_order)
       SELECT x.id, x.name, x.participant_type, x.status, x.ord FROM jsonb_to_recordset($1::jsonb)
         AS x(id text, name text, participant_type text, status text, ord int)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, participant_type = EXCLUDED.participant_type, status = EXCLUDED.status`,
      [json(seed.leagues.map((l, i) => ({ ...l, ord: i })))],
    );
    await c.query(
      `INSERT INTO participants (id, league_id, name, abbr, image_url, country)
       SELECT x.id, x.league_id, x.name, x.abbr, x.image_url, x.country FROM jsonb_to_recordset($1::jsonb)
         AS x(id text, league_id text, name text, abbr text, image_url text, country text)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, abbr = EXCLUDED.abbr, image_url = EXCLUDED.image_url, country = EXCLUDED.country`,
      [json(seed.participants)],
    );
    // Parents first so the parent_contest_id foreign key holds.
    const ordered = [...seed.contests].sort((a, b) => Number(a.parent_contest_id !== null) - Number(b.parent_contest_id !== null));
    await c.query(
      `INSERT INTO contests (id, league_id, title, type, parent_contest_id, starts_at, status, tags)
       SELECT x.id, x.league_id, x.title, x.type, x.parent_contest_id, x.starts_at, x.status, x.tags FROM jsonb_to_recordset($1::jsonb)
         AS x(id text, league_id text, title text, type text, parent_contest_id text, starts_at timestamptz, status text, tags jsonb)
       ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, starts_at = EXCLUDED.starts_at, status = EXCLUDED.status,
         tags = EXCLUDED.tags, updated_at = now()`,
      [json(ordered)],
    );
    await c.query(
      `INSERT INTO markets (id, key, name, variable_required, allow_multiple_participants, side_keys)
       SELECT x.id, x.key, x.name, x.variable_required, x.allow_multiple_participants,
              ARRAY(SELECT jsonb_array_elements_text(x.side_keys)) FROM jsonb_to_recordset($1::jsonb)
         AS x(id text, key text, name text, variable_required boolean, allow_multiple_participants boolean, side_keys jsonb)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`,
      [json(seed.markets)],
    );
    await c.query(
      `INSERT INTO contest_markets (contest_id, market_id)
       SELECT x.contest_id, x.market_id FROM jsonb_to_recordset($1::jsonb) AS x(contest_id text, market_id text)
       ON CONFLICT DO NOTHING`,
      [json(seed.contest_markets)],
    );
    await c.query(
      `INSERT INTO positions (position_hash, contest_id, market_id, definition)
       SELECT x->>'position_hash', x->>'contest_id', x->>'market_id', x FROM jsonb_array_elements($1::jsonb) AS x
       ON CONFLICT (position_hash) DO UPDATE SET definition = EXCLUDED.definition`,
      [json(seed.positions)],
    );
    await c.query(
      `INSERT INTO partners (partner_id, name, status, orders_allowed, connectable, internal_book, order_config, credential_fields, logo_url, sort_order)
       SELECT x.partner_id, x.name, x.status, x.orders_allowed, x.connectable, x.internal_book, x.order_config, x.credential_fields, x.logo_url, x.ord
         FROM jsonb_to_recordset($1::jsonb)
         AS x(partner_id text, name text, status text, orders_allowed boolean, connectable boolean, internal_book boolean,
              order_config jsonb, credential_fields jsonb, logo_url text, ord int)
       ON CONFLICT (partner_id) DO UPDATE SET name = EXCLUDED.name, status = EXCLUDED.status, orders_allowed = EXCLUDED.orders_allowed,
         connectable = EXCLUDED.connectable, internal_book = EXCLUDED.internal_book, order_config = EXCLUDED.order_config,
         credential_fields = EXCLUDED.credential_fields, logo_url = EXCLUDED.logo_url`,
      [json(seed.partners.map((p, i) => ({ ...p, ord: i })))],
    );
  });
}

const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());

export async function listLeagues(pool: Pool, limit: number, after?: [number, string]): Promise<(League & { _sort: number })[]> {
  const { rows } = await pool.query(
    `SELECT id, name, participant_type, status, sort_order AS _sort FROM leagues
      WHERE ($1::int IS NULL OR (sort_order, id) > ($1::int, $2::text))
      ORDER BY sort_order, id LIMIT $3`,
    [after?.[0] ?? null, after?.[1] ?? null, limit],
  );
  return rows;
}

export async function getLeague(pool: Pool, id: string): Promise<League | null> {
  const { rows } = await pool.query('SELECT id, name, participant_type, status FROM leagues WHERE id = $1', [id]);
  return rows[0] ?? null;
}

export async function listParticipants(pool: Pool, leagueId: string, limit: number, after?: [string, string]): Promise<Participant[]> {
  const { rows } = await pool.query(
    `SELECT id, league_id, name, abbr, image_url, country FROM participants
      WHERE league_id = $1 AND ($2::text IS NULL OR (name, id) > ($2::text, $3::text))
      ORDER BY name, id LIMIT $4`,
    [leagueId, after?.[0] ?? null, after?.[1] ?? null, limit],
  );
  return rows;
}

export async function getParticipant(pool: Pool, id: string): Promise<Participant | null> {
  const { rows } = await pool.query('SELECT id, league_id, name, abbr, image_url, country FROM participants WHERE id = $1', [id]);
  return rows[0] ?? null;
}

export interface ContestFilter {
  q?: string;
  league_id?: string[];
  status?: string[];
  start_after?: string;
  start_before?: string;
  parent_contest_id?: string;
}

const CONTEST_COLUMNS = `c.id, c.league_id, c.title, c.type, c.parent_contest_id, c.starts_at, c.status, c.tags, c.created_at, c.updated_at,
  EXISTS (SELECT 1 FROM contest_markets m WHERE m.contest_id = c.id) AS has_markets`;

function contestRow(r: Record<string, unknown>): Contest {
  return {
    id: r.id as string,
    league_id: r.league_id as string,
    title: r.title as string,
    type: r.type as string,
    parent_contest_id: (r.parent_contest_id as string | null) ?? null,
    starts_at: iso(r.starts_at as Date),
    status: r.status as string,
    has_markets: r.has_markets as boolean,
    tags: r.tags as Contest['tags'],
    created_at: iso(r.created_at as Date),
    updated_at: iso(r.updated_at as Date),
  };
}

/** Escapes LIKE wildcards so `q` is a plain substring. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (m) => `\\${m}`);

export async function listContests(pool: Pool, f: ContestFilter, limit: number, after?: [string, string]): Promise<Contest[]> {
  const { rows } = await pool.query(
    `SELECT ${CONTEST_COLUMNS} FROM contests c
      WHERE ($1::text IS NULL OR c.title ILIKE '%' || $1 || '%')
        AND ($2::text[] IS NULL OR c.league_id = ANY($2))
        AND ($3::text[] IS NULL OR c.status = ANY($3))
        AND ($4::timestamptz IS NULL OR c.starts_at >= $4)
        AND ($5::timestamptz IS NULL OR c.starts_at <= $5)
        AND ($6::text IS NULL OR c.parent_contest_id = $6)
        AND ($7::timestamptz IS NULL OR (c.starts_at, c.id) > ($7::timestamptz, $8::text))
      ORDER BY c.starts_at, c.id LIMIT $9`,
    [
      f.q !== undefined ? likeEscape(f.q) : null,
      f.league_id ?? null,
      f.status ?? null,
      f.start_after ?? null,
      f.start_before ?? null,
      f.parent_contest_id ?? null,
      after?.[0] ?? null,
      after?.[1] ?? null,
      limit,
    ],
  );
  return rows.map(contestRow);
}

export async function getContest(pool: Pool, id: string): Promise<Contest | null> {
  const { rows } = await pool.query(`SELECT ${CONTEST_COLUMNS} FROM contests c WHERE c.id = $1`, [id]);
  return rows[0] ? contestRow(rows[0]) : null;
}

const MARKET_COLUMNS = 'id, key, name, variable_required, allow_multiple_participants, side_keys';

export async function contestMarkets(pool: Pool, contestId: string): Promise<Market[]> {
  const { rows } = await pool.query(
    `SELECT ${MARKET_COLUMNS} FROM markets WHERE id IN (SELECT market_id FROM contest_markets WHERE contest_id = $1) ORDER BY key, id`,
    [contestId],
  );
  return rows;
}

export async function listMarkets(pool: Pool): Promise<Market[]> {
  const { rows } = await pool.query(`SELECT ${MARKET_COLUMNS} FROM markets ORDER BY key, id`);
  return rows;
}

export async function getMarket(pool: Pool, id: string): Promise<Market | null> {
  const { rows } = await pool.query(`SELECT ${MARKET_COLUMNS} FROM markets WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

const PARTNER_COLUMNS = 'partner_id, name, status, orders_allowed, connectable, internal_book, order_config, credential_fields, logo_url';

export async function listPartners(pool: Pool): Promise<Partner[]> {
  const { rows } = await pool.query(`SELECT ${PARTNER_COLUMNS} FROM partners ORDER BY sort_order, partner_id`);
  return rows;
}

export async function getPartner(pool: Pool, id: string): Promise<Partner | null> {
  const { rows } = await pool.query(`SELECT ${PARTNER_COLUMNS} FROM partners WHERE partner_id = $1`, [id]);
  return rows[0] ?? null;
}

export async function catalogIsSeeded(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query('SELECT EXISTS (SELECT 1 FROM partners) AS seeded');
  return rows[0].seeded as boolean;
}


export async function positionsOfContest(pool: Pool, contestId: string): Promise<PositionDefinition[]> {
  const { rows } = await pool.query<{ definition: PositionDefinition }>(
    'SELECT definition FROM positions WHERE contest_id = $1 ORDER BY position_hash',
    [contestId],
  );
  return rows.map((r) => r.definition);
}

export async function partnerNames(pool: Pool): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ partner_id: string; name: string }>('SELECT partner_id, name FROM partners');
  return new Map(rows.map((r) => [r.partner_id, r.name]));
}

/** What the computation of a contest names it by: its league, its label (title) and scheduled start (ms); null when unknown. */
export async function contestFacts(pool: Pool, contestId: string): Promise<{ league_id: string; label: string; starts_at_ms: number } | null> {
  const { rows } = await pool.query<{ league_id: string; label: string; starts_at_ms: string }>(
    'SELECT league_id, title AS label, (extract(epoch FROM starts_at) * 1000)::bigint::text AS starts_at_ms FROM contests WHERE id = $1',
    [contestId],
  );
  const r = rows[0];
  return r ? { league_id: r.league_id, label: r.label, starts_at_ms: Number(r.starts_at_ms) } : null;
}

/** Marks a finished contest closed (no longer in the default `open` list). Returns whether it changed. */
export async function closeContest(pool: Pool, contestId: string): Promise<boolean> {
  const { rowCount } = await pool.query("UPDATE contests SET status = 'closed', updated_at = now() WHERE id = $1 AND status <> 'closed'", [contestId]);
  return (rowCount ?? 0) > 0;
}

/** contest → league and position → market, for routing events without a query per event. */
export async function routingMaps(pool: Pool): Promise<{ leagueOf: Map<string, string>; marketOf: Map<string, string> }> {
  const [c, p] = await Promise.all([
    pool.query<{ id: string; league_id: string }>('SELECT id, league_id FROM contests'),
    pool.query<{ position_hash: string; market_id: string }>('SELECT position_hash, market_id FROM positions'),
  ]);
  return { leagueOf: new Map(c.rows.map((r) => [r.id, r.league_id])), marketOf: new Map(p.rows.map((r) => [r.position_hash, r.market_id])) };
}

/**
 * The catalog's positions among `hashes`: their contest and its league, title, and whether the contest is open
 * (takes orders). Unknown hashes are absent.
 */
export async function positionsByHash(db: Pool | PoolClient, hashes: readonly string[]): Promise<Map<string, { contest_id: string; league_id: string; title: string; open: boolean }>> {
  if (hashes.length === 0) return new Map();
  const { rows } = await db.query<{ position_hash: string; contest_id: string; league_id: string; title: string; open: boolean }>(
    `SELECT p.position_hash, p.contest_id, c.league_id, p.definition->>'title' AS title, c.status = 'open' AS open
       FROM positions p JOIN contests c ON c.id = p.contest_id
      WHERE p.position_hash = ANY($1::text[])`,
    [hashes],
  );
  return new Map(rows.map((r) => [r.position_hash, { contest_id: r.contest_id, league_id: r.league_id, title: r.title, open: r.open }]));
}

/** The venues that are internal books (the practice book): never a source of a live price. */
export async function internalBookPartners(db: Pool | PoolClient): Promise<Set<string>> {
  const { rows } = await db.query<{ partner_id: string }>('SELECT partner_id FROM partners WHERE internal_book');
  return new Set(rows.map((r) => r.partner_id));
}

/** Ids of the open contests (where a liquidity_hash's quote can be). */
export async function openContestIds(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>("SELECT id FROM contests WHERE status = 'open'");
  return rows.map((r) => r.id);
}
