/**
 * The operator's controls of the simulated market (/sim/v1, docs/simulator.md): freeze, set a
 * venue's quote and book, print a trade, set game state, settle a contest, connect an account, read
 * the state. Each checks its input and refuses with a non-retryable VenueError and a stable code
 * (`unknown_partner`, `invalid_levels`, `already_settled`, ...) before anything changes.
 */
import { round6 } from '../domain/prices.js';
import type { GameState, PositionResult, PriceLevel } from '../venues/types.js';
import { bad, currentTime, type MarketCore } from './core.js';
import { scheduleReaction } from './dynamics.js';
import { matchResting } from './engine.js';
import type { ConnectAccountInput, CredentialStatus, EmitTradeInput, SetQuoteInput, SettleInput, SimAccountConnection, SimMarketState, SimQuoteEvent, SimSettleEvent, SimTradeEvent } from './events.js';
import { computeResults, finalize, refreshEffective } from './game.js';
import { createListing, detachedListing } from './listings.js';
import { SIM_PARTNER_IDS, isSimPartnerId } from './personalities.js';
import { stamp } from './pricing.js';
import { emitBalance, emitQuote, publishState, publishTrade } from './publish.js';
import type { ContestRt, PosRt, VenueRt } from './runtime.js';
import { settleInternal } from './settlement.js';

const RESULTS: readonly PositionResult[] = ['win', 'lose', 'push'];
const CREDENTIAL_STATUSES: readonly CredentialStatus[] = ['pending', 'connected', 'failed'];

/** Stops (true) or restarts (false) the random dynamics. Restarting releases setQuote pins. */
export function freeze(core: MarketCore, frozen: boolean): void {
  if (typeof frozen !== 'boolean') throw bad('invalid_request', 'frozen must be a boolean');
  if (!frozen && core.frozen) {
    for (const v of core.quoting) for (const l of v.listings) l.pinned = false;
  }
  // A frozen market makes no prints of its own: situations under way stop where they are.
  if (frozen) for (const v of core.quoting) v.scheduled = [];
  core.frozen = frozen;
}

/**
 * Sets one venue's quote and book for a position and publishes it. The listing is pinned:
 * dynamics leave it alone until `freeze(false)`. `levels` is the whole book (best first); it
 * may start with the {price, available} level or hold only deeper levels.
 */
export function setQuote(core: MarketCore, input: SetQuoteInput): SimQuoteEvent {
  const v = venueFor(core, input?.partner_id);
  if (v.pers.wire === 'internal') throw bad('quotes_not_supported', `${v.id} publishes no quotes`);
  const pr = positionFor(core, input.position_hash);
  if (pr.c.settled) throw bad('contest_settled', `contest ${pr.c.p.contest_id} is settled`);
  checkPrice(input.price);
  checkAvailable(input.available);
  let levels: PriceLevel[];
  if (input.levels !== undefined) {
    if (!Array.isArray(input.levels)) throw bad('invalid_levels', 'levels must be an array');
    const given = input.levels.map((x, i) => {
      if (typeof x !== 'object' || x === null) throw bad('invalid_levels', `level ${i} is not an object`);
      checkPrice(x.price);
      checkAvailable(x.available);
      return { price: x.price, available: x.available };
    });
    for (let i = 1; i < given.length; i++) {
      if (!(given[i]!.price > given[i - 1]!.price)) throw bad('invalid_levels', 'levels must be strictly ascending by price (best first)');
    }
    const first = given[0];
    if (first && Math.abs(first.price - input.price) < 1e-12) {
      if (Math.abs(first.available - input.available) > 1e-9) throw bad('invalid_levels', 'first level disagrees with available');
      levels = given;
    } else if (!first || first.price > input.price) {
      levels = [{ price: input.price, available: input.available }, ...given];
    } else {
      throw bad('invalid_levels', 'levels must not be priced better than price');
    }
  } else {
    levels = [{ price: input.price, available: input.available }];
  }
  levels = levels.filter((x) => x.available > 0);
  const now = currentTime(core);
  const l = v.byPosition.get(pr.pos.position_hash) ?? createListing(core, v, pr, now);
  if (input.listed_side !== undefined) {
    if (typeof input.listed_side !== 'string' || !/^[a-z_]{1,32}$/.test(input.listed_side)) {
      throw bad('invalid_listed_side', 'listed_side must be a side key such as home, away, over, under, yes or no');
    }
    l.inst = { ...l.inst, venue_side_key: input.listed_side };
  }
  l.pinned = true;
  l.outlierUntil = 0;
  l.arbUntil = 0;
  l.levels = levels;
  // Keep the last price visible on an emptied book via lag (the wire carries it).
  l.lag = input.price;
  stamp(core, l, now);
  matchResting(core.engine, l);
  return emitQuote(core, l);
}

/** Publishes a trade print on a venue that publishes trades. */
export function emitTrade(core: MarketCore, input: EmitTradeInput): SimTradeEvent {
  const v = venueFor(core, input?.partner_id);
  if (!v.pers.capabilities.trades) throw bad('trades_not_supported', `${v.id} publishes no trades`);
  const pr = positionFor(core, input.position_hash);
  checkPrice(input.price);
  if (!(typeof input.size_contracts === 'number' && Number.isFinite(input.size_contracts) && input.size_contracts > 0)) {
    throw bad('invalid_size', `size_contracts must be a positive number: ${String(input.size_contracts)}`);
  }
  if (input.taker_action !== 'buy' && input.taker_action !== 'sell') throw bad('invalid_taker_action', `taker_action must be buy or sell`);
  if (input.is_block !== undefined && typeof input.is_block !== 'boolean') throw bad('invalid_request', 'is_block must be a boolean');
  if (input.trader_id !== undefined && input.trader_id !== null && typeof input.trader_id !== 'string') throw bad('invalid_request', 'trader_id must be a string');
  let at = currentTime(core);
  if (input.executed_at !== undefined) {
    const t = typeof input.executed_at === 'number' ? input.executed_at : typeof input.executed_at === 'string' ? Date.parse(input.executed_at) : NaN;
    if (!Number.isFinite(t)) throw bad('invalid_executed_at', `executed_at must be unix ms or ISO 8601: ${String(input.executed_at)}`);
    at = t;
  }
  // A settled contest is no longer listed: its late print goes out on a listing that is not kept.
  const l = v.byPosition.get(pr.pos.position_hash) ?? (pr.c.settled ? detachedListing(core, v, pr) : createListing(core, v, pr, currentTime(core)));
  const traderId = input.trader_id ?? null;
  return publishTrade(core, v, l, input.taker_action, input.price, input.size_contracts, input.is_block ?? false, traderId, at);
}

/** Sets live game state fields; the contest then leaves automatic lifecycle (until settled). */
export function setState(core: MarketCore, contestId: string, fields: Partial<GameState>): GameState {
  const c = contestFor(core, contestId);
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw bad('invalid_state', 'state must be an object');
  const allowed = new Set(['game_status', 'clock', 'period', 'contest_result', 'winner_participant_id', 'scores', 'situation', 'leaderboard']);
  for (const k of Object.keys(fields)) if (!allowed.has(k)) throw bad('unknown_field', `unknown state field ${k}`, { field: k });
  const f = fields as Record<string, unknown>;
  const isObj = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);
  if ('game_status' in f && (typeof f.game_status !== 'string' || f.game_status.length === 0)) throw bad('invalid_state', 'game_status must be a string');
  if ('clock' in f && f.clock !== null) {
    const ck = f.clock as Record<string, unknown>;
    if (!isObj(ck) || typeof ck.display !== 'string' || typeof ck.remaining_seconds !== 'number' || typeof ck.is_running !== 'boolean') {
      throw bad('invalid_state', 'clock must be {display, remaining_seconds, is_running}');
    }
  }
  if ('period' in f && f.period !== null) {
    const pd = f.period as Record<string, unknown>;
    if (!isObj(pd) || typeof pd.number !== 'number' || typeof pd.label !== 'string' || typeof pd.type !== 'string') {
      throw bad('invalid_state', 'period must be {number, label, type}');
    }
  }
  if ('scores' in f && f.scores !== null) {
    const sc = f.scores as Record<string, unknown>;
    if (!isObj(sc) || typeof sc.home_score !== 'number' || typeof sc.away_score !== 'number') throw bad('invalid_state', 'scores must be {home_score, away_score, period_scores}');
    if (sc.period_scores !== undefined && !Array.isArray(sc.period_scores)) throw bad('invalid_state', 'period_scores must be an array');
  }
  if ('situation' in f && f.situation !== null && !isObj(f.situation)) throw bad('invalid_state', 'situation must be an object or null');
  if ('leaderboard' in f && f.leaderboard !== null && !Array.isArray(f.leaderboard)) throw bad('invalid_state', 'leaderboard must be an array or null');
  if ('contest_result' in f && f.contest_result !== null && typeof f.contest_result !== 'string') throw bad('invalid_state', 'contest_result must be a string or null');
  if ('winner_participant_id' in f && f.winner_participant_id !== null) {
    if (typeof f.winner_participant_id !== 'string' || !core.contestParticipants.get(contestId)?.has(f.winner_participant_id)) {
      throw bad('unknown_participant', `${String(f.winner_participant_id)} does not take part in ${contestId}`);
    }
  }
  const now = currentTime(core);
  c.manual = true;
  const next: GameState = { ...c.state, ...(structuredClone(fields) as Partial<GameState>) };
  if (next.scores && !('period_scores' in (next.scores as object))) next.scores = { ...next.scores, period_scores: [] };
  if (f.scores && c.p.kind === 'team_h2h') {
    const sc = next.scores!;
    c.home = sc.home_score;
    c.away = sc.away_score;
    c.periodScores = (sc.period_scores ?? []).map((x) => ({ home_score: Number(x.home_score) || 0, away_score: Number(x.away_score) || 0 }));
  }
  if (!c.settled && (next.game_status === 'scheduled' || next.game_status === 'live')) c.phase = next.game_status;
  c.state = next;
  if (!c.settled) {
    refreshEffective(c, now);
    if (!core.frozen) scheduleReaction(core, c, now);
  }
  publishState(core, c, now, true);
  return structuredClone(next);
}

/**
 * Settles a contest: `{winner_participant_id}` (the rest follows from the final score) or
 * `{results: {position_hash: win|lose|push}}` (listed positions; the others of a group a
 * listed winner decides lose, anything still undecided pushes).
 */
export function settle(core: MarketCore, contestId: string, input: SettleInput): SimSettleEvent {
  const c = contestFor(core, contestId);
  if (c.settled) throw bad('already_settled', `contest ${contestId} is already settled`);
  if (typeof input !== 'object' || input === null) throw bad('invalid_request', 'settle needs {winner_participant_id} or {results}');
  const now = currentTime(core);
  if ('winner_participant_id' in input && input.winner_participant_id !== undefined) {
    const w = input.winner_participant_id;
    if (typeof w !== 'string' || !core.contestParticipants.get(contestId)?.has(w)) throw bad('unknown_participant', `${String(w)} does not take part in ${contestId}`);
    finalize(c, core.rng, w);
    c.results = computeResults(c);
  } else if ('results' in input && typeof input.results === 'object' && input.results !== null && !Array.isArray(input.results)) {
    const given = input.results;
    const keys = Object.keys(given);
    if (keys.length === 0) throw bad('invalid_request', 'results must name at least one position');
    const own = new Map(c.positions.map((pr) => [pr.pos.position_hash, pr]));
    for (const k of keys) {
      if (!own.has(k)) throw bad('unknown_position', `${k} is not a position of ${contestId}`, { position_hash: k });
      if (!RESULTS.includes(given[k]!)) throw bad('invalid_result', `result of ${k} must be win, lose or push`, { position_hash: k });
    }
    const results = new Map<string, PositionResult>();
    const decided = new Set<string>();
    for (const k of keys) {
      results.set(k, given[k]!);
      if (given[k] === 'win') decided.add(own.get(k)!.pos.group_key);
    }
    for (const pr of c.positions) {
      if (results.has(pr.pos.position_hash)) continue;
      results.set(pr.pos.position_hash, decided.has(pr.pos.group_key) ? 'lose' : 'push');
    }
    let winner: string | null = null;
    for (const pr of c.positions) {
      if ((pr.pos.market_key === 'moneyline' || pr.pos.market_key === 'tournament_winner') && results.get(pr.pos.position_hash) === 'win') {
        winner = pr.pos.participant_id;
        break;
      }
    }
    c.winner = winner;
    c.result = winner === null ? null : c.p.kind === 'outright' ? 'decided' : winner === c.p.home_id ? 'home_win' : 'away_win';
    c.phase = 'final';
    c.results = results;
  } else {
    throw bad('invalid_request', 'settle needs {winner_participant_id} or {results}');
  }
  return settleInternal(core, c, now);
}

/** Connects a sim venue to an account as the hosted flow would, with a venue balance. */
export function connectAccount(core: MarketCore, routerAccountId: string, input: ConnectAccountInput): SimAccountConnection {
  if (typeof routerAccountId !== 'string' || routerAccountId.length === 0) throw bad('invalid_request', 'router_account_id must be a non-empty string');
  const v = venueFor(core, input?.partner_id);
  if (!v.pers.partner.connectable) throw bad('not_connectable', `${v.id} cannot be connected to an account`);
  if (!(typeof input.balance === 'number' && Number.isFinite(input.balance) && input.balance >= 0)) {
    throw bad('invalid_balance', `balance must be a non-negative number: ${String(input.balance)}`);
  }
  const status = input.credential_status ?? 'connected';
  if (!CREDENTIAL_STATUSES.includes(status)) throw bad('invalid_credential_status', `credential_status must be pending, connected or failed`);
  let a = v.accounts.get(routerAccountId);
  if (a) {
    a.balance = round6(input.balance);
    a.credential_status = status;
  } else {
    a = { account_id: routerAccountId, balance: round6(input.balance), held: 0, credential_status: status, holdings: new Map() };
    v.accounts.set(routerAccountId, a);
  }
  emitBalance(core, v, a, 'REFRESH', null);
  return { router_account_id: routerAccountId, partner_id: v.id, balance: a.balance, held: a.held, credential_status: a.credential_status };
}

/** Seed, frozen flag and the venues. */
export function marketState(core: MarketCore, running: boolean): SimMarketState {
  const now = currentTime(core);
  return {
    seed: core.seed,
    frozen: core.frozen,
    now_ms: now,
    activity: core.activity,
    running,
    listener_errors: core.feeds.errors,
    venues: SIM_PARTNER_IDS.map((id) => {
      const v = core.venues.get(id)!;
      const caps = v.pers.capabilities;
      return {
        partner_id: id,
        name: v.pers.partner.name,
        orders_allowed: v.pers.partner.orders_allowed,
        internal_book: v.pers.partner.internal_book,
        quote_source: caps.quotes.streaming ? 'streaming' : caps.quotes.snapshot ? 'polling' : null,
        poll_interval_ms: caps.quotes.poll_interval_ms,
        publishes_trades: caps.trades,
        listings: v.listings.length,
        stale: now < v.staleUntil,
        accounts: v.accounts.size,
        situations: { ...v.situationsStarted },
      };
    }),
  };
}

function venueFor(core: MarketCore, id: unknown): VenueRt {
  if (typeof id !== 'string' || !isSimPartnerId(id)) throw bad('unknown_partner', `unknown partner ${String(id)}`, { partner_id: id });
  return core.venues.get(id)!;
}

function positionFor(core: MarketCore, hash: unknown): PosRt {
  const pr = typeof hash === 'string' ? core.byHash.get(hash) : undefined;
  if (!pr) throw bad('unknown_position', `unknown position ${String(hash)}`, { position_hash: hash });
  return pr;
}

function contestFor(core: MarketCore, id: unknown): ContestRt {
  const c = typeof id === 'string' ? core.contests.get(id) : undefined;
  if (!c) throw bad('unknown_contest', `unknown contest ${String(id)}`, { contest_id: id });
  return c;
}

function checkPrice(p: unknown): void {
  if (!(typeof p === 'number' && Number.isFinite(p) && p > 0 && p < 1)) throw bad('invalid_price', `price must be strictly between 0 and 1: ${String(p)}`);
}

function checkAvailable(a: unknown): void {
  if (!(typeof a === 'number' && Number.isFinite(a) && a >= 0)) throw bad('invalid_available', `available must be a non-negative number: ${String(a)}`);
}
