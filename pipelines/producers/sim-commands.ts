/**
 * Carries /sim/v1 commands from the API to the process that runs the simulator (the ingest role
 * with sim venues), over Redis (src/store/redis/command-channel.ts), so the API and ingest may run
 * in separate processes (docs/simulator.md "Where the simulator runs"). The answer is the
 * simulator's own (src/sim/control.ts); this adds only what the carriage can go wrong with:
 *
 * - no ingest process runs the simulator: 503 `service_unavailable`, saying what to start;
 * - it did not start the command in time: 503, and the command is never carried out;
 * - it did not answer in time after starting: 503 saying the change may have happened (read
 *   GET /sim/v1/state or the catalog before repeating it).
 */
import { ApiError } from '../../src/errors.js';
import type { SimAnswer, SimCommand, SimCommandSender } from '../../src/sim/index.js';
import { CommandChannel } from '../../src/store/redis/command-channel.js';
import type { Keyspace, Redis } from '../../src/store/redis/client.js';

/** The channel's name (its Redis keys are `<prefix>:cmd:sim...`). */
export const SIM_COMMAND_CHANNEL = 'sim';
/** A command not started within this is dropped; one started has this long more to answer (a settle waits for PostgreSQL). */
export const SIM_START_WITHIN_MS = 5_000;
export const SIM_RUN_WITHIN_MS = 15_000;

const unavailable = (message: string) => new ApiError(503, 'service_unavailable', message, { retry_after_seconds: 1 }, { 'retry-after': '1' });

export class SimCommandProducer implements SimCommandSender {
  private readonly channel: CommandChannel;

  constructor(o: { redis: Redis; redisUrl: string; ks: Keyspace }) {
    this.channel = new CommandChannel({ ...o, name: SIM_COMMAND_CHANNEL });
  }

  async send(cmd: SimCommand): Promise<SimAnswer> {
    const r = await this.channel.request(JSON.stringify(cmd), { startWithinMs: SIM_START_WITHIN_MS, runWithinMs: SIM_RUN_WITHIN_MS });
    if ('absent' in r) {
      throw unavailable('no process runs the simulator: start the ingest role with a simulated venue in FLOW_VENUES (FLOW_ROLES=ingest, FLOW_VENUES=sim) against this Redis, then retry');
    }
    if ('timeout' in r) {
      throw unavailable(
        `the simulator did not answer within ${(SIM_START_WITHIN_MS + SIM_RUN_WITHIN_MS) / 1000} s (its ingest process is busy or went away); a command it had not started is dropped, one it started may have taken effect: read GET /sim/v1/state before repeating it`,
      );
    }
    return JSON.parse(r.answer) as SimAnswer;
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}
