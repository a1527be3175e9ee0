/**
 * The history store a process holds: one ClickHouse client, the schema prepared once (migrations and
 * retention), and the reads. A failed preparation (ClickHouse down at start) is retried on the
 * next call instead of failing the process.
 */
import type { Logger } from '../../log.js';
import type { ClickHouseClient } from './client.js';
import { queryPriceHistoryJson, queryTrades, type PriceHistoryJson, type PriceHistoryQuery, type TradesQuery } from './history.js';
import { prepareHistoryStore } from './schema.js';
import type { TradePrint } from '../../domain/stream.js';

export class HistoryStore {
  private prepared: Promise<void> | null = null;

  constructor(
    readonly ch: ClickHouseClient,
    private readonly opts: { retentionDays: number; log?: Pick<Logger, 'warn' | 'error'> },
  ) {}

  /** Applies migrations and retention once; concurrent callers share the attempt. */
  ready(): Promise<void> {
    this.prepared ??= prepareHistoryStore(this.ch, { retentionDays: this.opts.retentionDays }).catch((err: unknown) => {
      this.prepared = null;
      this.opts.log?.error({ err: (err as Error).message }, 'ClickHouse history schema could not be prepared');
      throw err;
    });
    return this.prepared;
  }

  async priceHistory(q: PriceHistoryQuery): Promise<PriceHistoryJson> {
    await this.ready();
    return queryPriceHistoryJson(this.ch, q);
  }

  async trades(q: TradesQuery): Promise<TradePrint[]> {
    await this.ready();
    return queryTrades(this.ch, q);
  }
}
