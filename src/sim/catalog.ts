/**
 * The simulator's world: leagues, participants, contests, markets and positions, built from a
 * seed relative to a `now` so that some contests are live, most are scheduled and a couple are
 * already finished. Same seed and same `now` → the same catalog, byte for byte.
 *
 * Alongside the public catalog the builder returns the hidden parameters the market model runs on
 * (expected margins and totals, player means, outright strengths, durations).
 */
import type { Contest, ContestTags, League, Market, Participant, Partner, PositionDefinition, TeamTag } from '../domain/catalog.js';
import { positionHash } from '../domain/hashes.js';
import { simPartners } from './personalities.js';
import { Rng, hashSeed } from './rng.js';

/** Every sim position is a plain catalog position definition. */
export type SimPosition = PositionDefinition;

export interface SimCatalog {
  leagues: League[];
  participants: Participant[];
  contests: Contest[];
  markets: Market[];
  contest_markets: { contest_id: string; market_id: string }[];
  /** Who takes part in each contest: home/away on head-to-head, entrant on outrights. */
  contest_participants: { contest_id: string; participant_id: string; role: 'home' | 'away' | 'entrant' }[];
  /** Every position of every contest (flat; `contest_id` says which). */
  positions: SimPosition[];
  partners: Partner[];
}

export type SimSport = 'football' | 'basketball' | 'hockey' | 'tennis' | 'mma' | 'awards';
export type SimContestKind = 'team_h2h' | 'athlete_h2h' | 'outright';

export type SimPositionKind = 'ml_home' | 'ml_away' | 'spread_home' | 'spread_away' | 'over' | 'under' | 'pp_over' | 'pp_under' | 'winner';

/** Hidden model facts about a position (parallel to SimCatalog.positions). */
export interface SimPositionMeta {
  kind: SimPositionKind;
  /** Home handicap for spreads, the line for totals/props; 0 otherwise. */
  line: number;
  /** Lines away from the main line (0 = main); 0 for markets without a ladder. */
  line_offset: number;
  /** Index into params.players (props) or params.entrant_ids (outrights); -1 otherwise. */
  index: number;
}

export interface SimPlayerParams {
  participant_id: string;
  name: string;
  team: 'home' | 'away';
  /** Expected points and spread. */
  mu: number;
  sd: number;
}

export interface SimContestParams {
  contest_id: string;
  league_id: string;
  sport: SimSport;
  kind: SimContestKind;
  start_ms: number;
  duration_ms: number;
  home_id: string | null;
  away_id: string | null;
  /** Outright entrants (empty on head-to-head). */
  entrant_ids: string[];
  /** Expected home margin and its SD (σ=1 units for athlete head-to-head). */
  mu0: number;
  sigma: number;
  /** Expected total and its SD (0 when the sport has no totals). */
  tau0: number;
  sigma_t: number;
  strengths: number[];
  players: SimPlayerParams[];
  /** Finished before the catalog's `now` (status closed). */
  closed: boolean;
  /** The outright this contest is part of. */
  parent_contest_id: string | null;
}

export interface SimWorld {
  seed: number;
  now_ms: number;
  catalog: SimCatalog;
  params: SimContestParams[];
  /** meta[i] describes catalog.positions[i]. */
  meta: SimPositionMeta[];
}

export const SIM_TIMEFRAME = 'ft';
const IMG = 'https://static.flow.local';
const HOUR = 3_600_000;
const MINUTE = 60_000;

interface TeamDef {
  city: string;
  name: string;
  abbr: string;
  state: string;
  country: string;
  tz: string;
  arena: string;
}

const FOOTBALL: TeamDef[] = [
  { city: 'Austin', name: 'Armadillos', abbr: 'AUS', state: 'TX', country: 'US', tz: 'America/Chicago', arena: 'Armadillo Field' },
  { city: 'Boston', name: 'Harriers', abbr: 'BOS', state: 'MA', country: 'US', tz: 'America/New_York', arena: 'Harrier Stadium' },
  { city: 'Chicago', name: 'Steel', abbr: 'CHI', state: 'IL', country: 'US', tz: 'America/Chicago', arena: 'Lakeshore Park' },
  { city: 'Denver', name: 'Peaks', abbr: 'DEN', state: 'CO', country: 'US', tz: 'America/Denver', arena: 'Summit Stadium' },
  { city: 'Miami', name: 'Tides', abbr: 'MIA', state: 'FL', country: 'US', tz: 'America/New_York', arena: 'Tideline Stadium' },
  { city: 'Portland', name: 'Lumberjacks', abbr: 'POR', state: 'OR', country: 'US', tz: 'America/Los_Angeles', arena: 'Timber Field' },
  { city: 'Nashville', name: 'Fiddlers', abbr: 'NSH', state: 'TN', country: 'US', tz: 'America/Chicago', arena: 'Music Row Stadium' },
  { city: 'Phoenix', name: 'Firebirds', abbr: 'PHX', state: 'AZ', country: 'US', tz: 'America/Phoenix', arena: 'Desert Dome' },
  { city: 'Toronto', name: 'Huskies', abbr: 'TOR', state: 'ON', country: 'CA', tz: 'America/Toronto', arena: 'Lakefront Stadium' },
  { city: 'Seattle', name: 'Orcas', abbr: 'SEA', state: 'WA', country: 'US', tz: 'America/Los_Angeles', arena: 'Sound Stadium' },
  { city: 'Detroit', name: 'Gears', abbr: 'DET', state: 'MI', country: 'US', tz: 'America/Detroit', arena: 'Motor City Field' },
  { city: 'Atlanta', name: 'Peaches', abbr: 'ATL', state: 'GA', country: 'US', tz: 'America/New_York', arena: 'Peachtree Park' },
  { city: 'San Antonio', name: 'Missions', abbr: 'SAM', state: 'TX', country: 'US', tz: 'America/Chicago', arena: 'Alamo Field' },
  { city: 'Columbus', name: 'Navigators', abbr: 'CLB', state: 'OH', country: 'US', tz: 'America/New_York', arena: 'Scioto Stadium' },
];

const BASKETBALL: TeamDef[] = [
  { city: 'Brooklyn', name: 'Bridges', abbr: 'BKN', state: 'NY', country: 'US', tz: 'America/New_York', arena: 'Bridge Center' },
  { city: 'Dallas', name: 'Comets', abbr: 'DAL', state: 'TX', country: 'US', tz: 'America/Chicago', arena: 'Comet Center' },
  { city: 'Oakland', name: 'Owls', abbr: 'OAK', state: 'CA', country: 'US', tz: 'America/Los_Angeles', arena: 'Owl Arena' },
  { city: 'Memphis', name: 'Blues', abbr: 'MEM', state: 'TN', country: 'US', tz: 'America/Chicago', arena: 'Beale Arena' },
  { city: 'Vancouver', name: 'Ravens', abbr: 'VAN', state: 'BC', country: 'CA', tz: 'America/Vancouver', arena: 'Harbour Arena' },
  { city: 'Charlotte', name: 'Sparks', abbr: 'CHA', state: 'NC', country: 'US', tz: 'America/New_York', arena: 'Spark Center' },
  { city: 'Las Vegas', name: 'Jacks', abbr: 'LVJ', state: 'NV', country: 'US', tz: 'America/Los_Angeles', arena: 'Neon Arena' },
  { city: 'Kansas City', name: 'Stampede', abbr: 'KCS', state: 'MO', country: 'US', tz: 'America/Chicago', arena: 'Prairie Arena' },
  { city: 'Baltimore', name: 'Crabs', abbr: 'BAL', state: 'MD', country: 'US', tz: 'America/New_York', arena: 'Harbor Center' },
  { city: 'San Diego', name: 'Surf', abbr: 'SDS', state: 'CA', country: 'US', tz: 'America/Los_Angeles', arena: 'Surfside Arena' },
  { city: 'St. Louis', name: 'Archers', abbr: 'STL', state: 'MO', country: 'US', tz: 'America/Chicago', arena: 'Gateway Arena' },
  { city: 'Pittsburgh', name: 'Forge', abbr: 'PIT', state: 'PA', country: 'US', tz: 'America/New_York', arena: 'Forge Fieldhouse' },
  { city: 'Louisville', name: 'Thoroughbreds', abbr: 'LOU', state: 'KY', country: 'US', tz: 'America/New_York', arena: 'Derby Arena' },
  { city: 'Albuquerque', name: 'Roadrunners', abbr: 'ABQ', state: 'NM', country: 'US', tz: 'America/Denver', arena: 'Mesa Arena' },
  { city: 'Montreal', name: 'Royals', abbr: 'MTL', state: 'QC', country: 'CA', tz: 'America/Toronto', arena: 'Centre Royal' },
  { city: 'Omaha', name: 'Plainsmen', abbr: 'OMA', state: 'NE', country: 'US', tz: 'America/Chicago', arena: 'Platte Arena' },
];

const HOCKEY: TeamDef[] = [
  { city: 'Quebec', name: 'Voyageurs', abbr: 'QUE', state: 'QC', country: 'CA', tz: 'America/Toronto', arena: 'Colisee Voyageur' },
  { city: 'Hartford', name: 'Wolves', abbr: 'HFD', state: 'CT', country: 'US', tz: 'America/New_York', arena: 'Wolf Den' },
  { city: 'Milwaukee', name: 'Blizzard', abbr: 'MIL', state: 'WI', country: 'US', tz: 'America/Chicago', arena: 'Blizzard Arena' },
  { city: 'Winnipeg', name: 'Bison', abbr: 'WPG', state: 'MB', country: 'CA', tz: 'America/Winnipeg', arena: 'Bison Arena' },
  { city: 'Salt Lake', name: 'Yetis', abbr: 'SLC', state: 'UT', country: 'US', tz: 'America/Denver', arena: 'Yeti Ice Palace' },
  { city: 'Cleveland', name: 'Foxes', abbr: 'CLE', state: 'OH', country: 'US', tz: 'America/New_York', arena: 'Fox Ice Center' },
  { city: 'Halifax', name: 'Mariners', abbr: 'HAL', state: 'NS', country: 'CA', tz: 'America/Halifax', arena: 'Mariner Centre' },
  { city: 'Sacramento', name: 'Gold', abbr: 'SAC', state: 'CA', country: 'US', tz: 'America/Los_Angeles', arena: 'Gold Rush Arena' },
  { city: 'Anchorage', name: 'Glaciers', abbr: 'ANC', state: 'AK', country: 'US', tz: 'America/Anchorage', arena: 'Glacier Ice' },
  { city: 'Providence', name: 'Lighthouse', abbr: 'PRV', state: 'RI', country: 'US', tz: 'America/New_York', arena: 'Beacon Arena' },
];

interface AthleteDef {
  name: string;
  country: string;
}

const TENNIS: AthleteDef[] = [
  { name: 'Mateo Rivas', country: 'ESP' },
  { name: 'Lukas Brandt', country: 'GER' },
  { name: 'Hiro Tanaka', country: 'JPN' },
  { name: 'Oliver Hart', country: 'GBR' },
  { name: 'Andre Costa', country: 'BRA' },
  { name: 'Felix Moreau', country: 'FRA' },
  { name: 'Sam Whitaker', country: 'USA' },
  { name: 'Tomas Novak', country: 'CZE' },
  { name: 'Arjun Mehta', country: 'IND' },
  { name: 'Luca Bianchi', country: 'ITA' },
];

const MMA: AthleteDef[] = [
  { name: 'Diego Santos', country: 'BRA' },
  { name: 'Ivan Volkov', country: 'KAZ' },
  { name: 'Marcus Reed', country: 'USA' },
  { name: 'Kenji Mori', country: 'JPN' },
  { name: 'Aleksander Nowak', country: 'POL' },
  { name: 'Connor Walsh', country: 'IRL' },
  { name: 'Rafael Ortega', country: 'MEX' },
  { name: 'Tariq Haddad', country: 'JOR' },
  { name: 'Emeka Obi', country: 'NGA' },
];

const NOMINEES = ['The Long Meridian', 'Paper Lanterns', 'Salt and Iron', 'Northern Static', 'A Quiet Orbit', 'Glass Harbor'];

const FIRST = ['Jalen', 'Marcus', 'Trey', 'Devon', 'Caleb', 'Isaiah', 'Andre', 'Mason', 'Tyrese', 'Brandon', 'Elijah', 'Noah', 'Darius', 'Gavin', 'Jordan', 'Malik'];
const LAST = ['Brooks', 'Carter', 'Ellis', 'Foster', 'Grant', 'Hayes', 'Irving', 'Jennings', 'Keller', 'Lawson', 'Monroe', 'Nash', 'Owens', 'Pierce', 'Quinn', 'Russell'];
const NETWORKS = ['SNN', 'Sim Sports 1', 'SimCast', 'Channel 8', 'Flow TV'];

interface LeagueDef {
  id: string;
  name: string;
  participant_type: League['participant_type'];
  sport: SimSport;
}

const LEAGUES: LeagueDef[] = [
  { id: 'lg_sfl', name: 'Sim Football League', participant_type: 'team', sport: 'football' },
  { id: 'lg_sba', name: 'Sim Basketball Association', participant_type: 'team', sport: 'basketball' },
  { id: 'lg_shl', name: 'Sim Hockey League', participant_type: 'team', sport: 'hockey' },
  { id: 'lg_stt', name: 'Sim Tennis Tour', participant_type: 'athlete', sport: 'tennis' },
  { id: 'lg_sfc', name: 'Sim Fighting Championship', participant_type: 'athlete', sport: 'mma' },
  { id: 'lg_saw', name: 'Sim Film Awards', participant_type: null, sport: 'awards' },
];

export const SIM_MARKETS: Market[] = [
  { id: 'moneyline', key: 'moneyline', name: 'Moneyline', variable_required: false, allow_multiple_participants: false, side_keys: ['home', 'away'] },
  { id: 'spread', key: 'spread', name: 'Spread', variable_required: true, allow_multiple_participants: false, side_keys: ['home', 'away'] },
  { id: 'total', key: 'total', name: 'Total', variable_required: true, allow_multiple_participants: false, side_keys: ['over', 'under'] },
  { id: 'player_points', key: 'player_points', name: 'Player Points', variable_required: true, allow_multiple_participants: false, side_keys: ['over', 'under'] },
  { id: 'tournament_winner', key: 'tournament_winner', name: 'Tournament Winner', variable_required: false, allow_multiple_participants: true, side_keys: ['yes'] },
];

interface SportDef {
  duration_ms: number;
  sigma: number;
  mu_sd: number;
  tau: number;
  tau_sd: number;
  sigma_t: number;
  spread_lines: number[];
  total_lines: number[];
  total_step: number;
  players_per_team: number;
  player_mu: [number, number];
  player_sd: number;
  event_title: (i: number) => string;
}

const SPORTS: Record<'football' | 'basketball' | 'hockey', SportDef> = {
  football: {
    duration_ms: 3.25 * HOUR,
    sigma: 13.5,
    mu_sd: 5,
    tau: 44,
    tau_sd: 4,
    sigma_t: 10,
    spread_lines: [-2, -1, 0, 1, 2],
    total_lines: [-2, -1, 0, 1, 2],
    total_step: 1,
    players_per_team: 1,
    player_mu: [6, 14],
    player_sd: 5,
    event_title: (i) => `Week ${11 + Math.floor(i / 3)}`,
  },
  basketball: {
    duration_ms: 2.25 * HOUR,
    sigma: 12,
    mu_sd: 6,
    tau: 222,
    tau_sd: 8,
    sigma_t: 14,
    spread_lines: [-2, -1, 0, 1, 2],
    total_lines: [-2, -1, 0, 1, 2],
    total_step: 2,
    players_per_team: 2,
    player_mu: [16, 30],
    player_sd: 6,
    event_title: () => 'Regular Season',
  },
  hockey: {
    duration_ms: 2.5 * HOUR,
    sigma: 2.3,
    mu_sd: 0.6,
    tau: 6,
    tau_sd: 0.4,
    sigma_t: 2.2,
    spread_lines: [0],
    total_lines: [-1, 0, 1],
    total_step: 1,
    players_per_team: 0,
    player_mu: [0, 0],
    player_sd: 0,
    event_title: () => 'Regular Season',
  },
};

/** Offsets from now (hours) of each league's contests; negative = already started. */
const SCHEDULE = {
  football: { live: [-1.5], future: [20, 44, 72, 144, 228], closed: [-28] },
  basketball: { live: [-1.0, -0.4], future: [5, 26, 50, 98, 194], closed: [-25] },
  hockey: { live: [-0.75], future: [3, 29, 122, 170], closed: [] as number[] },
};

const round5min = (ms: number) => Math.round(ms / (5 * MINUTE)) * 5 * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();
const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
const half = (x: number) => Math.floor(x) + 0.5;
const signed = (v: number) => (v > 0 ? `+${v}` : `${v}`);

/** Builds the world (public catalog + hidden model parameters). */
export function buildSimWorld(seed: number, now: Date | number): SimWorld {
  const nowMs = typeof now === 'number' ? now : now.getTime();
  if (!Number.isFinite(nowMs)) throw new RangeError('now must be a valid time');
  const rng = new Rng(hashSeed(seed, 'catalog'));
  const createdAt = iso(Math.floor(nowMs / HOUR) * HOUR - 14 * 24 * HOUR);
  const updatedAt = iso(Math.floor(nowMs / HOUR) * HOUR - HOUR);

  const leagues: League[] = LEAGUES.map((l) => ({ id: l.id, name: l.name, participant_type: l.participant_type, status: 'active' }));
  const participants: Participant[] = [];
  const contests: Contest[] = [];
  const contestMarkets: SimCatalog['contest_markets'] = [];
  const contestParticipants: SimCatalog['contest_participants'] = [];
  const positions: SimPosition[] = [];
  const meta: SimPositionMeta[] = [];
  const params: SimContestParams[] = [];
  const participantById = new Map<string, Participant>();

  const addParticipant = (p: Participant) => {
    participants.push(p);
    participantById.set(p.id, p);
    return p;
  };

  const addPosition = (pos: Omit<SimPosition, 'position_hash' | 'timeframe' | 'participant_name' | 'participant_image_url'>, m: SimPositionMeta) => {
    const part = participantById.get(pos.participant_id)!;
    const full: SimPosition = {
      ...pos,
      position_hash: positionHash({
        contest_id: pos.contest_id,
        market_id: pos.market_id,
        side_key: pos.side_key,
        variable: pos.variable,
        participant_id: pos.participant_id,
        timeframe: SIM_TIMEFRAME,
      }),
      timeframe: SIM_TIMEFRAME,
      participant_name: part.name,
      participant_image_url: part.image_url,
    };
    positions.push(full);
    meta.push(m);
  };
  /** A head-to-head between two athletes: the contest, its two participants, its params, its moneyline. */
  const addAthleteH2H = (h: {
    cid: string;
    league_id: string;
    sport: SimSport;
    type: Contest['type'];
    parent_contest_id: string | null;
    start: number;
    duration_ms: number;
    tags: ContestTags;
    home: { id: string; name: string };
    away: { id: string; name: string };
    mu0: number;
  }) => {
    contests.push({
      id: h.cid,
      league_id: h.league_id,
      title: `${h.home.name} vs ${h.away.name}`,
      type: h.type,
      parent_contest_id: h.parent_contest_id,
      starts_at: iso(h.start),
      status: 'open',
      has_markets: true,
      tags: h.tags,
      created_at: createdAt,
      updated_at: updatedAt,
    });
    contestParticipants.push({ contest_id: h.cid, participant_id: h.home.id, role: 'home' }, { contest_id: h.cid, participant_id: h.away.id, role: 'away' });
    params.push({
      contest_id: h.cid,
      league_id: h.league_id,
      sport: h.sport,
      kind: 'athlete_h2h',
      start_ms: h.start,
      duration_ms: h.duration_ms,
      home_id: h.home.id,
      away_id: h.away.id,
      entrant_ids: [],
      mu0: h.mu0,
      sigma: 1,
      tau0: 0,
      sigma_t: 0,
      strengths: [],
      players: [],
      closed: false,
      parent_contest_id: h.parent_contest_id,
    });
    // A moneyline market and nothing else.
    linkMarkets(h.cid, ['moneyline']);
    addPosition(
      { contest_id: h.cid, market_id: 'moneyline', market_key: 'moneyline', side_key: 'home', variable: 0, participant_id: h.home.id, title: `${h.home.name} to win`, group_key: `${h.cid}/moneyline`, ladder_key: null },
      { kind: 'ml_home', line: 0, line_offset: 0, index: -1 },
    );
    addPosition(
      { contest_id: h.cid, market_id: 'moneyline', market_key: 'moneyline', side_key: 'away', variable: 0, participant_id: h.away.id, title: `${h.away.name} to win`, group_key: `${h.cid}/moneyline`, ladder_key: null },
      { kind: 'ml_away', line: 0, line_offset: 0, index: -1 },
    );
  };

  const linkMarkets = (contestId: string, ids: string[]) => {
    for (const id of ids) contestMarkets.push({ contest_id: contestId, market_id: id });
  };

  // Synthetic over/under participants, one pair per league with totals or props.
  for (const l of LEAGUES) {
    if (l.sport === 'football' || l.sport === 'basketball' || l.sport === 'hockey') {
      addParticipant({ id: `${l.id}_over`, league_id: l.id, name: 'Over', abbr: 'O', image_url: null, country: null });
      addParticipant({ id: `${l.id}_under`, league_id: l.id, name: 'Under', abbr: 'U', image_url: null, country: null });
    }
  }

  const teamTag = (t: TeamDef): TeamTag => ({ abbr: t.abbr, name: t.name, full_label: `${t.city} ${t.name}`, market_name: t.city });

  // ---- team sports ----
  for (const league of LEAGUES) {
    if (league.sport !== 'football' && league.sport !== 'basketball' && league.sport !== 'hockey') continue;
    const sport = SPORTS[league.sport];
    const lrng = rng.fork(league.id);
    const short = league.id.slice(3);
    const teams = lrng.shuffle(league.sport === 'football' ? FOOTBALL : league.sport === 'basketball' ? BASKETBALL : HOCKEY);
    const teamIds = new Map<string, string>();
    for (const t of teams) {
      const id = `tm_${short}_${t.abbr.toLowerCase()}`;
      teamIds.set(t.abbr, id);
      addParticipant({
        id,
        league_id: league.id,
        name: `${t.city} ${t.name}`,
        abbr: t.abbr,
        image_url: `${IMG}/teams/${id}.png`,
        country: null,
      });
    }
    const sched = SCHEDULE[league.sport];
    const slots: { offsetH: number; closed: boolean; live: boolean }[] = [
      ...sched.closed.map((o) => ({ offsetH: o, closed: true, live: false })),
      ...sched.live.map((o) => ({ offsetH: o, closed: false, live: true })),
      ...sched.future.map((o) => ({ offsetH: o, closed: false, live: false })),
    ];
    let playerSeq = 0;
    slots.forEach((slot, i) => {
      const home = teams[(2 * i) % teams.length]!;
      const away = teams[(2 * i + 1) % teams.length]!;
      const homeId = teamIds.get(home.abbr)!;
      const awayId = teamIds.get(away.abbr)!;
      const jitter = slot.live || slot.closed ? 0 : lrng.int(-6, 6) * 5 * MINUTE;
      const start = slot.live ? Math.round((nowMs + slot.offsetH * HOUR) / MINUTE) * MINUTE : round5min(nowMs + slot.offsetH * HOUR + jitter);
      const cid = `ct_${short}_${String(i + 1).padStart(3, '0')}`;
      const title = `${away.city} ${away.name} at ${home.city} ${home.name}`;
      const tags: ContestTags = {
        source: 'sim',
        event_title: sport.event_title(i),
        home_team: teamTag(home),
        away_team: teamTag(away),
        venue: { name: home.arena, city: home.city, state: home.state, country: home.country, time_zone: home.tz },
        broadcast: { network: lrng.pick(NETWORKS) },
      };
      contests.push({
        id: cid,
        league_id: league.id,
        title,
        type: 'match',
        parent_contest_id: null,
        starts_at: iso(start),
        status: slot.closed ? 'closed' : 'open',
        has_markets: true,
        tags,
        created_at: createdAt,
        updated_at: updatedAt,
      });
      contestParticipants.push({ contest_id: cid, participant_id: homeId, role: 'home' }, { contest_id: cid, participant_id: awayId, role: 'away' });

      const mu0 = Math.round(lrng.normal() * sport.mu_sd * 10) / 10;
      const tau0 = Math.round((sport.tau + lrng.normal() * sport.tau_sd) * 10) / 10;
      const players: SimPlayerParams[] = [];
      for (const side of ['home', 'away'] as const) {
        const team = side === 'home' ? home : away;
        for (let k = 0; k < sport.players_per_team; k++) {
          const name = `${lrng.pick(FIRST)} ${lrng.pick(LAST)}`;
          const pid = `pl_${short}_${String(++playerSeq).padStart(3, '0')}`;
          addParticipant({
            id: pid,
            league_id: league.id,
            name,
            abbr: team.abbr,
            image_url: lrng.bool(0.7) ? `${IMG}/players/${pid}.png` : null,
            country: null,
          });
          const [lo, hi] = sport.player_mu;
          players.push({ participant_id: pid, name, team: side, mu: Math.round(lrng.float(lo, hi) * 10) / 10, sd: sport.player_sd });
        }
      }
      params.push({
        contest_id: cid,
        league_id: league.id,
        sport: league.sport,
        kind: 'team_h2h',
        start_ms: start,
        duration_ms: sport.duration_ms,
        home_id: homeId,
        away_id: awayId,
        entrant_ids: [],
        mu0,
        sigma: sport.sigma,
        tau0,
        sigma_t: sport.sigma_t,
        strengths: [],
        players,
        closed: slot.closed,
        parent_contest_id: null,
      });

      const markets = ['moneyline', 'spread', 'total'];
      if (players.length > 0) markets.push('player_points');
      linkMarkets(cid, markets);

      // moneyline
      addPosition(
        { contest_id: cid, market_id: 'moneyline', market_key: 'moneyline', side_key: 'home', variable: 0, participant_id: homeId, title: `${home.city} ${home.name} to win`, group_key: `${cid}/moneyline`, ladder_key: null },
        { kind: 'ml_home', line: 0, line_offset: 0, index: -1 },
      );
      addPosition(
        { contest_id: cid, market_id: 'moneyline', market_key: 'moneyline', side_key: 'away', variable: 0, participant_id: awayId, title: `${away.city} ${away.name} to win`, group_key: `${cid}/moneyline`, ladder_key: null },
        { kind: 'ml_away', line: 0, line_offset: 0, index: -1 },
      );
      // spread ladder: home handicap h, away handicap -h
      const h0 = league.sport === 'hockey' ? (mu0 >= 0 ? -1.5 : 1.5) : half(-mu0);
      for (const k of sport.spread_lines) {
        const h = h0 + k;
        const g = `${cid}/spread/${h}`;
        addPosition(
          { contest_id: cid, market_id: 'spread', market_key: 'spread', side_key: 'home', variable: h, participant_id: homeId, title: `${home.city} ${home.name} ${signed(h)}`, group_key: g, ladder_key: `${cid}/spread` },
          { kind: 'spread_home', line: h, line_offset: Math.abs(k), index: -1 },
        );
        addPosition(
          { contest_id: cid, market_id: 'spread', market_key: 'spread', side_key: 'away', variable: -h, participant_id: awayId, title: `${away.city} ${away.name} ${signed(-h)}`, group_key: g, ladder_key: `${cid}/spread` },
          { kind: 'spread_away', line: h, line_offset: Math.abs(k), index: -1 },
        );
      }
      // total ladder
      const l0 = half(tau0);
      for (const k of sport.total_lines) {
        const line = l0 + k * sport.total_step;
        const g = `${cid}/total/${line}`;
        addPosition(
          { contest_id: cid, market_id: 'total', market_key: 'total', side_key: 'over', variable: line, participant_id: `${league.id}_over`, title: `${away.abbr}/${home.abbr} Over ${line}`, group_key: g, ladder_key: `${cid}/total` },
          { kind: 'over', line, line_offset: Math.abs(k), index: -1 },
        );
        addPosition(
          { contest_id: cid, market_id: 'total', market_key: 'total', side_key: 'under', variable: line, participant_id: `${league.id}_under`, title: `${away.abbr}/${home.abbr} Under ${line}`, group_key: g, ladder_key: `${cid}/total` },
          { kind: 'under', line, line_offset: Math.abs(k), index: -1 },
        );
      }
      // player points: one line per player (main line), over/under on the athlete
      players.forEach((pl, idx) => {
        const line = half(pl.mu);
        const g = `${cid}/player_points/${pl.participant_id}/${line}`;
        const ladder = `${cid}/player_points/${pl.participant_id}`;
        addPosition(
          { contest_id: cid, market_id: 'player_points', market_key: 'player_points', side_key: 'over', variable: line, participant_id: pl.participant_id, title: `${pl.name} Over ${line} Points`, group_key: g, ladder_key: ladder },
          { kind: 'pp_over', line, line_offset: 0, index: idx },
        );
        addPosition(
          { contest_id: cid, market_id: 'player_points', market_key: 'player_points', side_key: 'under', variable: line, participant_id: pl.participant_id, title: `${pl.name} Under ${line} Points`, group_key: g, ladder_key: ladder },
          { kind: 'pp_under', line, line_offset: 0, index: idx },
        );
      });
    });
  }

  // ---- tennis: a tournament (outright) with quarterfinal child matches ----
  {
    const league = LEAGUES.find((l) => l.sport === 'tennis')!;
    const trng = rng.fork(league.id);
    const entrants = trng.shuffle(TENNIS).slice(0, 8);
    const ids = entrants.map((a) => {
      const id = `ath_stt_${slug(a.name)}`;
      addParticipant({ id, league_id: league.id, name: a.name, abbr: null, image_url: trng.bool(0.75) ? `${IMG}/athletes/${id}.png` : null, country: a.country });
      return id;
    });
    const tid = 'ct_stt_open';
    const tStart = Math.round((nowMs - 3 * HOUR) / MINUTE) * MINUTE;
    contests.push({
      id: tid,
      league_id: league.id,
      title: 'Sim Open',
      type: 'tournament',
      parent_contest_id: null,
      starts_at: iso(tStart),
      status: 'open',
      has_markets: true,
      tags: { source: 'sim', event_title: 'Sim Open', venue: { name: 'Sim Tennis Park', city: 'Melbourne', state: 'VIC', country: 'AU', time_zone: 'Australia/Melbourne' }, surface: 'hard' },
      created_at: createdAt,
      updated_at: updatedAt,
    });
    const strengths = ids.map(() => Math.round(trng.normal() * 0.8 * 100) / 100);
    for (const id of ids) contestParticipants.push({ contest_id: tid, participant_id: id, role: 'entrant' });
    params.push({
      contest_id: tid,
      league_id: league.id,
      sport: 'tennis',
      kind: 'outright',
      start_ms: tStart,
      duration_ms: 170 * HOUR,
      home_id: null,
      away_id: null,
      entrant_ids: ids,
      mu0: 0,
      sigma: 1,
      tau0: 0,
      sigma_t: 0,
      strengths,
      players: [],
      closed: false,
      parent_contest_id: null,
    });
    linkMarkets(tid, ['tournament_winner']);
    ids.forEach((id, idx) => {
      addPosition(
        { contest_id: tid, market_id: 'tournament_winner', market_key: 'tournament_winner', side_key: 'yes', variable: 0, participant_id: id, title: `${entrants[idx]!.name} to win the Sim Open`, group_key: `${tid}/tournament_winner`, ladder_key: null },
        { kind: 'winner', line: 0, line_offset: 0, index: idx },
      );
    });
    const qfOffsets = [-0.5, 6, 24, 48];
    qfOffsets.forEach((off, i) => {
      const hi = 2 * i;
      const ai = 2 * i + 1;
      const cid = `ct_stt_qf${i + 1}`;
      const start = off < 0 ? Math.round((nowMs + off * HOUR) / MINUTE) * MINUTE : round5min(nowMs + off * HOUR + trng.int(-3, 3) * 5 * MINUTE);
      const home = entrants[hi]!;
      const away = entrants[ai]!;
      addAthleteH2H({
        cid,
        league_id: league.id,
        sport: 'tennis',
        type: 'match',
        parent_contest_id: tid,
        start,
        duration_ms: 2 * HOUR,
        tags: {
          source: 'sim',
          event_title: `Sim Open - Quarterfinal ${i + 1}`,
          round: 'QF',
          competitors: [
            { participant_id: ids[hi], name: home.name, country: home.country },
            { participant_id: ids[ai], name: away.name, country: away.country },
          ],
        },
        home: { id: ids[hi]!, name: home.name },
        away: { id: ids[ai]!, name: away.name },
        mu0: Math.round((strengths[hi]! - strengths[ai]!) * 100) / 100,
      });
    });
  }

  // ---- MMA: fights between athletes (with country) ----
  {
    const league = LEAGUES.find((l) => l.sport === 'mma')!;
    const mrng = rng.fork(league.id);
    const fighters = mrng.shuffle(MMA).slice(0, 8);
    const ids = fighters.map((a) => {
      const id = `ath_sfc_${slug(a.name)}`;
      addParticipant({ id, league_id: league.id, name: a.name, abbr: null, image_url: mrng.bool(0.6) ? `${IMG}/athletes/${id}.png` : null, country: a.country });
      return id;
    });
    const offsets = [50, 50.5, 218, 218.5];
    const cards = ['Sim Fight Night 41', 'Sim Fight Night 41', 'Sim Fight Night 42', 'Sim Fight Night 42'];
    offsets.forEach((off, i) => {
      const hi = 2 * i;
      const ai = 2 * i + 1;
      const cid = `ct_sfc_${String(i + 1).padStart(3, '0')}`;
      const start = round5min(nowMs + off * HOUR);
      const home = fighters[hi]!;
      const away = fighters[ai]!;
      // The tags' random picks come before mu0's draw, as the seeded world has always drawn them.
      const tags: ContestTags = {
        source: 'sim',
        event_title: cards[i],
        venue: { name: 'Sim Garden', city: 'Las Vegas', state: 'NV', country: 'US', time_zone: 'America/Los_Angeles' },
        broadcast: { network: mrng.pick(NETWORKS) },
        weight_class: mrng.pick(['Lightweight', 'Welterweight', 'Middleweight']),
        competitors: [
          { participant_id: ids[hi], name: home.name, country: home.country },
          { participant_id: ids[ai], name: away.name, country: away.country },
        ],
      };
      addAthleteH2H({
        cid,
        league_id: league.id,
        sport: 'mma',
        type: 'fight',
        parent_contest_id: null,
        start,
        duration_ms: 25 * MINUTE,
        tags,
        home: { id: ids[hi]!, name: home.name },
        away: { id: ids[ai]!, name: away.name },
        mu0: Math.round(mrng.normal() * 0.7 * 100) / 100,
      });
    });
  }

  // ---- awards: an outright in a league with no declared participant type ----
  {
    const league = LEAGUES.find((l) => l.sport === 'awards')!;
    const arng = rng.fork(league.id);
    const ids = NOMINEES.map((n) => {
      const id = `nom_saw_${slug(n)}`;
      addParticipant({ id, league_id: league.id, name: n, abbr: null, image_url: `${IMG}/nominees/${id}.png`, country: null });
      return id;
    });
    const cid = 'ct_saw_best_picture';
    const start = round5min(nowMs + 236 * HOUR);
    contests.push({
      id: cid,
      league_id: league.id,
      title: 'Best Picture',
      type: 'award',
      parent_contest_id: null,
      starts_at: iso(start),
      status: 'open',
      has_markets: true,
      tags: { source: 'sim', event_title: 'Sim Film Awards', broadcast: { network: 'Flow TV' } },
      created_at: createdAt,
      updated_at: updatedAt,
    });
    for (const id of ids) contestParticipants.push({ contest_id: cid, participant_id: id, role: 'entrant' });
    params.push({
      contest_id: cid,
      league_id: league.id,
      sport: 'awards',
      kind: 'outright',
      start_ms: start,
      duration_ms: 3 * HOUR,
      home_id: null,
      away_id: null,
      entrant_ids: ids,
      mu0: 0,
      sigma: 1,
      tau0: 0,
      sigma_t: 0,
      strengths: ids.map(() => Math.round(arng.normal() * 0.9 * 100) / 100),
      players: [],
      closed: false,
      parent_contest_id: null,
    });
    linkMarkets(cid, ['tournament_winner']);
    ids.forEach((id, idx) => {
      addPosition(
        { contest_id: cid, market_id: 'tournament_winner', market_key: 'tournament_winner', side_key: 'yes', variable: 0, participant_id: id, title: `${NOMINEES[idx]} to win Best Picture`, group_key: `${cid}/tournament_winner`, ladder_key: null },
        { kind: 'winner', line: 0, line_offset: 0, index: idx },
      );
    });
  }

  // Catalog order: contests by start time (ties by id), positions grouped by contest in that order.
  contests.sort((a, b) => (a.starts_at < b.starts_at ? -1 : a.starts_at > b.starts_at ? 1 : a.id < b.id ? -1 : 1));

  return {
    seed,
    now_ms: nowMs,
    catalog: {
      leagues,
      participants,
      contests,
      markets: SIM_MARKETS.map((m) => ({ ...m, side_keys: [...m.side_keys] })),
      contest_markets: contestMarkets,
      contest_participants: contestParticipants,
      positions,
      partners: simPartners(),
    },
    params,
    meta,
  };
}

/** The simulator's catalog for `seed`, relative to `now`. */
export function buildSimCatalog(seed: number, now: Date | number): SimCatalog {
  return buildSimWorld(seed, now).catalog;
}
