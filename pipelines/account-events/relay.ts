/**
 * The account-event relay: moves the private channels' events (balance, orders) from PostgreSQL's
 * outbox (src/store/pg/outbox.ts), where they are written in the transaction of the change they
 * report, into the Redis event log's feed, where gateways route them to the account's subscribers.
 * Every event a client may need goes through the log; none travels only over pub/sub.
 *
 * One batch is one PostgreSQL transaction:
 *   1. claim up to batchSize rows, oldest first (FOR UPDATE SKIP LOCKED, plus a per-account lock, so
 *      several relays share the work and an account's events stay in order);
 *   2. append them to the feed with their account ids (one Redis script: all or none);
 *   3. delete them, and commit.
 * A crash or a failure after 2 and before the commit leaves the rows in the outbox: they are appended
 * again (a duplicate: balance.update carries balance_version and clients drop a version they have
 * seen), never lost. A failed append deletes nothing and is retried with exponential backoff.
 *
 * Latency: an enqueue NOTIFYs at commit and the relay LISTENs on a connection of its own, so an idle
 * relay moves a new event within a round trip or two; a slow poll covers a lost notification or a
 * dropped LISTEN connection. A backlog is drained batch after batch without waiting.
 *
 * Run by the api role (cli/roles/api.ts): the process that writes account events relays them, and
 * each api process runs one (they share the outbox safely).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { failpoint } from '../../src/failpoints.js';
import type { Logger } from '../../src/log.js';
import { singleMetric } from '../../src/metrics.js';
import { ACCOUNT_OUTBOX_NOTIFY, claimAccountEvents, deleteAccountEvents, type ClaimedAccountEvent } from '../../src/store/pg/outbox.js';
import { inTransaction, type Pool } from '../../src/store/pg/pool.js';
import type { Keyspace, Redis } from '../../src/store/redis/client.js';
import { AccountEventLog } from '../../src/store/redis/eventlog.js';
import { NotifiedLoop } from '../notified-loop.js';

export interface AccountEventRelayOptions {
  pool: Pool;
  /** For the LISTEN session, which holds a connection of its own outside the pool. */
  databaseUrl: string;
  redis: Redis;
  ks: Keyspace;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  metrics?: Registry;
  /** Most rows per transaction (bounds the transaction, the script call and the memory of a batch). */
  batchSize?: number;
  /** The fallback poll while idle. */
  pollMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Wake on NOTIFY (default true); false polls only. */
  listen?: boolean;
}

export const RELAY_DEFAULTS = {
  batchSize: 500,
  pollMs: 5_000,
  retryBaseMs: 100,
  retryMaxMs: 5_000,
} as const;

export interface RelayStats {
  /** Rows appended and deleted (committed). */
  relayed: number;
  batches: number;
  largestBatch: number;
  /** Batches that failed (and were retried). */
  errors: number;
}

interface RelayMetrics {
  relayed: Counter<'channel'>;
  errors: Counter;
  lag: Gauge;
  delay: Histogram;
}

function relayMetrics(registry: Registry): RelayMetrics {
  const registers = [registry];
  return {
    relayed: singleMetric(
      registry,
      'flow_account_events_relayed_total',
      () => new Counter({ name: 'flow_account_events_relayed_total', help: 'Account events moved from the PostgreSQL outbox to the event log, by channel', labelNames: ['channel'] as const, registers }),
    ),
    errors: singleMetric(
      registry,
      'flow_account_events_relay_errors_total',
      () => new Counter({ name: 'flow_account_events_relay_errors_total', help: 'Account-event relay batches that failed (their rows stay in the outbox and are retried)', registers }),
    ),
    lag: singleMetric(
      registry,
      'flow_account_outbox_lag_seconds',
      () => new Gauge({ name: 'flow_account_outbox_lag_seconds', help: 'Age of the oldest account event the relay found waiting in the outbox at its last look (0: none)', registers }),
    ),
    delay: singleMetric(
      registry,
      'flow_account_events_relay_delay_seconds',
      () =>
        new Histogram({
          name: 'flow_account_events_relay_delay_seconds',
          help: 'Time from an account event entering the outbox to its relay taking it',
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60],
          registers,
        }),
    ),
  };
}

export class AccountEventRelay {
  readonly stats: RelayStats = { relayed: 0, batches: 0, largestBatch: 0, errors: 0 };
  private readonly batchSize: number;
  private readonly eventLog: AccountEventLog;
  private readonly m: RelayMetrics | null;
  private readonly loop: NotifiedLoop;

  constructor(private readonly o: AccountEventRelayOptions) {
    this.batchSize = o.batchSize ?? RELAY_DEFAULTS.batchSize;
    this.eventLog = new AccountEventLog(o.redis, o.ks);
    this.m = o.metrics ? relayMetrics(o.metrics) : null;
    this.loop = new NotifiedLoop({
      databaseUrl: o.listen !== false ? o.databaseUrl : null,
      channel: ACCOUNT_OUTBOX_NOTIFY,
      pollMs: o.pollMs ?? RELAY_DEFAULTS.pollMs,
      retryBaseMs: o.retryBaseMs ?? RELAY_DEFAULTS.retryBaseMs,
      retryMaxMs: o.retryMaxMs ?? RELAY_DEFAULTS.retryMaxMs,
      log: o.log,
      // A full batch means a backlog: go again at once.
      step: async () => (await this.relayBatch()) >= this.batchSize,
      onError: (err, failures, retryInMs) => {
        this.stats.errors++;
        this.m?.errors.inc();
        o.log.warn({ err, failures, retry_in_ms: retryInMs }, 'relaying account events failed; they stay in the outbox and are retried');
      },
      onRecovered: (failures) => o.log.info({ failures }, 'relaying account events again'),
    });
  }

  start(): this {
    this.loop.start();
    this.o.log.info({ batch_size: this.batchSize, poll_ms: this.o.pollMs ?? RELAY_DEFAULTS.pollMs, listen: this.loop.listens }, 'account-event relay running');
    return this;
  }

  /** Finishes the batch in flight (if any) and stops. */
  async stop(): Promise<void> {
    await this.loop.stop();
    this.o.log.info({ relayed: this.stats.relayed }, 'account-event relay stopped');
  }

  /** One transaction: claim, append, delete. Returns the rows moved. */
  private async relayBatch(): Promise<number> {
    const rows = await inTransaction(this.o.pool, async (c) => {
      const claimed = await claimAccountEvents(c, this.batchSize);
      this.m?.lag.set(claimed.length ? Math.max(...claimed.map((r) => r.age_ms)) / 1000 : 0);
      if (claimed.length === 0) return claimed;
      await this.eventLog.append(claimed.map((r) => ({ account_id: r.router_account_id, channel: r.channel, event: r.event })));
      failpoint('relay.after-append');
      await deleteAccountEvents(
        c,
        claimed.map((r) => r.seq),
      );
      return claimed;
    });
    if (rows.length) this.committed(rows);
    return rows.length;
  }

  private committed(rows: ClaimedAccountEvent[]): void {
    this.stats.relayed += rows.length;
    this.stats.batches++;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, rows.length);
    if (this.m) {
      const perChannel = new Map<string, number>();
      for (const r of rows) {
        perChannel.set(r.channel, (perChannel.get(r.channel) ?? 0) + 1);
        this.m.delay.observe(r.age_ms / 1000);
      }
      for (const [channel, n] of perChannel) this.m.relayed.inc({ channel }, n);
    }
    this.o.log.debug({ rows: rows.length, oldest_age_ms: Math.round(rows[0]!.age_ms) }, 'account events relayed');
  }
}
