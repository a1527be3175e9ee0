/**
 * The ingest role's side of the /sim/v1 carriage (pipelines/producers/sim-commands.ts): takes the
 * commands the API processes send over Redis in order, runs each on this
 * process's simulator (src/sim/control.ts: the change, then the refresh of polled venues or the
 * settlement's record) and sends the answer back. A command taken after its caller gave up is
 * dropped, never carried out. While it runs it tells the callers it listens.
 */
import type { Logger } from '../../src/log.js';
import { runSimCommand, type SimAnswer, type SimCommand, type SimControl } from '../../src/sim/index.js';
import { CommandChannel, type CommandServer, type TakenCommand } from '../../src/store/redis/command-channel.js';
import type { Keyspace, Redis } from '../../src/store/redis/client.js';
import { SIM_COMMAND_CHANNEL } from '../producers/sim-commands.js';

/** Commands running at once (their flushes and answers overlap; their changes are made in order). */
const MAX_IN_FLIGHT = 64;

export interface SimCommandConsumerOptions {
  redis: Redis;
  redisUrl: string;
  ks: Keyspace;
  control: SimControl;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  now: () => number;
}

export class SimCommandConsumer {
  private readonly server: CommandServer;
  private running: Promise<void> | null = null;
  private presence: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Commands started and not yet answered. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Commands answered, and dropped because they were taken after their caller gave up. */
  answered = 0;
  expired = 0;
  /** The channel is out of reach (warned once per outage, not at every retry). */
  private down = false;

  constructor(private readonly o: SimCommandConsumerOptions) {
    this.server = new CommandChannel({ redis: o.redis, redisUrl: o.redisUrl, ks: o.ks, name: SIM_COMMAND_CHANNEL }).server();
  }

  /** Starts listening; resolves once callers can see it listens. */
  async start(): Promise<this> {
    await this.server.present();
    // On a timer, not in the loop: a command that runs long (a settle waiting for PostgreSQL) must
    // not make the callers believe nobody listens.
    this.presence = setInterval(() => void this.server.present().catch(() => undefined), 1_000);
    this.presence.unref();
    this.running = this.loop();
    return this;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const taken = await this.server.take(this.o.now, (c) => {
          this.expired++;
          this.o.log.warn({ role: 'ingest', component: 'sim-commands', command_id: c.id, late_ms: this.o.now() - c.start_by }, 'dropped a simulator command taken after its caller gave up');
        });
        if (this.down) {
          this.down = false;
          this.o.log.info({ role: 'ingest', component: 'sim-commands' }, 'simulator command channel back');
        }
        if (!taken || this.stopped) continue;
        // Started in the order taken, not awaited: a command's change to the simulator is made
        // before its first wait (the pipeline's flush, a settlement's record), so the world sees
        // them in order while their flushes and answers overlap, as concurrent HTTP requests did
        // when the API ran the simulator itself. At most MAX_IN_FLIGHT at once.
        const run = this.handle(taken).finally(() => this.inFlight.delete(run));
        this.inFlight.add(run);
        if (this.inFlight.size >= MAX_IN_FLIGHT) await Promise.race(this.inFlight);
      } catch (err) {
        if (this.stopped) return;
        // Redis away: the callers cannot reach us either (they answer 503); try again shortly.
        if (!this.down) this.o.log.warn({ err, role: 'ingest', component: 'sim-commands' }, 'simulator command channel unavailable (Redis out of reach); retrying every 250 ms');
        this.down = true;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  private async handle(taken: TakenCommand): Promise<void> {
    const answer = await this.answer(taken.payload);
    try {
      await this.server.reply(taken, JSON.stringify(answer));
      this.answered++;
    } catch (err) {
      // Redis away: the caller's own wait fails too (it answers 503, saying it may have happened).
      this.o.log.warn({ err, role: 'ingest', component: 'sim-commands', command_id: taken.id }, 'a simulator command ran but its answer could not be sent');
    }
  }

  private async answer(payload: string): Promise<SimAnswer> {
    try {
      return await runSimCommand(this.o.control, JSON.parse(payload) as SimCommand);
    } catch (err) {
      // Not a refusal nor a store away: a fault here. The caller gets it as an internal error.
      this.o.log.error({ err, role: 'ingest', component: 'sim-commands' }, 'a simulator command failed');
      return { ok: false, failed: err instanceof Error ? err.message : String(err) };
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.presence) clearInterval(this.presence);
    await this.server.close();
    await this.running?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
  }
}
