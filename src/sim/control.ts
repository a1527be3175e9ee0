/**
 * The operator's control of the simulated world (/sim/v1, docs/simulator.md) as plain commands and
 * answers, so the API can send them to whichever process runs the simulator: over Redis between
 * processes (pipelines/producers/sim-commands.ts → the ingest role), or to a market in the same
 * process (tests). Commands and answers are plain JSON; a refusal travels as the simulator's own
 * VenueError (its stable code), which the API maps to its HTTP answer exactly as before.
 *
 * The HTTP body has been checked against the route's schema before a command is made; what only
 * the world can judge (an unknown position, a settled contest) is judged here.
 */
import { StoreUnavailable } from '../errors.js';
import { serializeVenueError, isVenueError, type SerializedVenueError } from '../venues/errors.js';
import type { GameState } from '../venues/types.js';
import type { ConnectAccountInput, EmitTradeInput, SetQuoteInput, SettleInput, SimAccountConnection, SimMarket, SimMarketState } from './model.js';
import type { SimPartnerId } from './personalities.js';
import type { SituationResult } from './situations.js';
import type { SimWireBalance } from './messages.js';

/** The simulator a control command acts on, with what its process does around a change. */
export interface SimControl {
  market: SimMarket;
  /** Called after a quote change so polled venues are read at once instead of at their next poll. */
  refresh(partnerId: string): Promise<void>;
  /**
   * Called after a settle: resolves once the venues' settlement feeds it caused are recorded in
   * PostgreSQL (the durable trigger of order settlement); false when they could not be yet (they
   * stay queued and are recorded once PostgreSQL is back). Absent where nothing records them.
   */
  settlementsRecorded?(): Promise<boolean>;
}

/** One /sim/v1 call, as data. */
export type SimCommand =
  | { op: 'state' }
  | { op: 'freeze'; frozen: boolean }
  | { op: 'quote'; input: SetQuoteInput }
  | { op: 'trade'; input: EmitTradeInput }
  | { op: 'situation'; input: Record<string, unknown> }
  | { op: 'contest_state'; contest_id: string; fields: Record<string, unknown> }
  | { op: 'settle'; contest_id: string; input: SettleInput }
  | { op: 'connect'; router_account_id: string; input: ConnectAccountInput };

/** What each command answers when it succeeds. */
export interface SimCommandResults {
  state: SimMarketState;
  freeze: { frozen: boolean };
  quote: { partner_id: string; position_hash: string; levels: readonly { price: number; available: number }[]; ts_event: number };
  trade: { venue_trade_id: string; executed_at: string };
  situation: SituationResult;
  contest_state: { contest_id: string; state: GameState };
  settle: { contest_id: string; winner_participant_id: string | null; results: { position_hash: string; result: 'win' | 'lose' | 'push' }[] };
  /** The connection, and the venue's balance read at once (null for a venue that reports none). */
  connect: { connection: SimAccountConnection; balance: SimWireBalance | null };
}

/**
 * A command's answer: its result, the simulator's refusal, or a store the change could not be passed
 * on to (the world changed; the pipeline or PostgreSQL will have it once the store is back).
 */
export type SimAnswer =
  | { ok: true; value: unknown }
  | { ok: false; refused: SerializedVenueError }
  | { ok: false; unavailable: { store: 'redis' | 'postgres'; message: string; retry_after_seconds: number } }
  /** A fault in the simulator's process (not a refusal): the API answers 500. */
  | { ok: false; failed: string };

/** Anything that carries a command to the simulator and brings its answer back. */
export interface SimCommandSender {
  send(cmd: SimCommand): Promise<SimAnswer>;
}

async function execute(sim: SimControl, cmd: SimCommand): Promise<unknown> {
  const m = sim.market;
  switch (cmd.op) {
    case 'state':
      return m.state();
    case 'freeze':
      m.freeze(cmd.frozen);
      return { frozen: m.isFrozen() } satisfies SimCommandResults['freeze'];
    case 'quote': {
      const ev = m.setQuote(cmd.input);
      await sim.refresh(cmd.input.partner_id);
      return { partner_id: cmd.input.partner_id, position_hash: cmd.input.position_hash, levels: ev.levels, ts_event: ev.ts_event } satisfies SimCommandResults['quote'];
    }
    case 'trade': {
      const ev = m.emitTrade(cmd.input);
      return { venue_trade_id: ev.trade_id, executed_at: new Date(ev.executed_at).toISOString() } satisfies SimCommandResults['trade'];
    }
    case 'situation': {
      const result = m.forceSituation(cmd.input);
      // Polled venues are read at once, as after a quote.
      for (const partnerId of new Set((result.details.quotes ?? []).map((q) => q.partner_id))) await sim.refresh(partnerId);
      return result satisfies SimCommandResults['situation'];
    }
    case 'contest_state':
      return { contest_id: cmd.contest_id, state: m.setState(cmd.contest_id, cmd.fields as Partial<GameState>) } satisfies SimCommandResults['contest_state'];
    case 'settle': {
      const ev = m.settle(cmd.contest_id, cmd.input);
      // The answer waits for the settlement's record: a 200 means its orders will settle, crash or not.
      if (sim.settlementsRecorded && !(await sim.settlementsRecorded())) {
        throw new StoreUnavailable('postgres', 'recording the settlement (the simulator settled the contest; its record waits in memory and lands once PostgreSQL is back)');
      }
      return { contest_id: ev.contest_id, winner_participant_id: ev.winner_participant_id, results: ev.results } satisfies SimCommandResults['settle'];
    }
    case 'connect': {
      const connection = m.connectAccount(cmd.router_account_id, cmd.input);
      const balance = m.balance(connection.partner_id as SimPartnerId, connection.router_account_id) ?? null;
      return { connection, balance } satisfies SimCommandResults['connect'];
    }
  }
}

/**
 * Runs one command on the simulator of this process. Never throws for what the simulator refuses or
 * a store that is away: those are answers. Anything else (a bug) is thrown.
 */
export async function runSimCommand(sim: SimControl, cmd: SimCommand): Promise<SimAnswer> {
  try {
    return { ok: true, value: await execute(sim, cmd) };
  } catch (err) {
    if (isVenueError(err)) return { ok: false, refused: serializeVenueError(err) };
    if (err instanceof StoreUnavailable) {
      return { ok: false, unavailable: { store: err.store, message: err.message, retry_after_seconds: Number(err.details?.retry_after_seconds ?? 1) } };
    }
    throw err;
  }
}

/** The simulator of this process as a command sender (tests, and a process that runs both roles without Redis in between). */
export function localSimCommands(sim: SimControl): SimCommandSender {
  return { send: (cmd) => runSimCommand(sim, cmd) };
}
