/**
 * The liquidity-refresh relay (the execute role): appends the refreshes fills asked for
 * (src/store/pg/liquidity-refresh.ts) to their contests' event logs as
 * liquidity.update {changed_entries: [], refresh_required: true}, the spec's "changed but no
 * entries to send (for example after a fill)". Clients get it from the log like every liquidity
 * event (live, and on resume); nothing goes only over pub/sub.
 *
 * One batch is one PostgreSQL transaction: take the waiting requests (deleting them), append each
 * contest's event (one Redis script per contest), commit. A failed append rolls the requests back
 * for the retry; a crash after an append and before the commit appends that refresh again, which
 * only asks clients to refetch twice. Woken by the NOTIFY of the fill's commit, with a poll behind it.
 */
import type { Logger } from '../../src/log.js';
import { liquidityUpdateEvents } from '../../src/domain/stream.js';
import { LIQUIDITY_REFRESH_NOTIFY, takeLiquidityRefreshes } from '../../src/store/pg/liquidity-refresh.js';
import { inTransaction, type Pool } from '../../src/store/pg/pool.js';
import type { HotState } from '../../src/store/redis/hot.js';
import { NotifiedLoop } from '../notified-loop.js';

export interface LiquidityRefreshRelayOptions {
  pool: Pool;
  hot: Pick<HotState, 'append'>;
  /** For the LISTEN session; null polls only. */
  databaseUrl: string | null;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** Most contests per transaction (default 100). */
  batchSize?: number;
  pollMs?: number;
}

export class LiquidityRefreshRelay {
  /** Refresh events appended (and committed). */
  relayed = 0;
  private readonly batchSize: number;
  private readonly loop: NotifiedLoop;

  constructor(private readonly o: LiquidityRefreshRelayOptions) {
    this.batchSize = o.batchSize ?? 100;
    this.loop = new NotifiedLoop({
      databaseUrl: o.databaseUrl,
      channel: LIQUIDITY_REFRESH_NOTIFY,
      pollMs: o.pollMs ?? 5_000,
      retryBaseMs: 100,
      retryMaxMs: 5_000,
      log: o.log,
      step: async () => (await this.relayBatch()) >= this.batchSize,
      onError: (err, failures, retryInMs) => o.log.warn({ err, failures, retry_in_ms: retryInMs }, 'appending liquidity refreshes failed; they stay in PostgreSQL and are retried'),
    });
  }

  start(): this {
    this.loop.start();
    return this;
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One transaction: take, append, commit. Returns the refreshes appended. */
  async relayBatch(): Promise<number> {
    const n = await inTransaction(this.o.pool, async (c) => {
      const taken = await takeLiquidityRefreshes(c, this.batchSize);
      for (const r of taken) {
        const events = liquidityUpdateEvents(r.contest_id, [], true, new Date(r.requested_at_ms).toISOString());
        await this.o.hot.append(
          r.contest_id,
          events.map((e) => ({ channel: 'liquidity' as const, league_id: r.league_id, event: JSON.stringify(e) })),
        );
      }
      return taken.length;
    });
    this.relayed += n;
    if (n > 0) this.o.log.debug({ contests: n }, 'liquidity refreshes appended');
    return n;
  }
}
