/**
 * Enqueues a contest for recomputation. At most one job per contest waits at a time: later changes
 * join it (BullMQ deduplication), and a change that lands while the contest's job is running queues
 * exactly one follow-up (keepLastIfActive), so no change is ever left uncomputed and two jobs of one
 * contest never run at once.
 */
import { Queue } from 'bullmq';
import { StoreUnavailable } from '../../src/errors.js';
import type { Keyspace } from '../../src/store/redis/client.js';
import { QUEUE_NAMES, queueOptions, type JobMap } from '../queues.js';

const ENQUEUE_TIMEOUT_MS = 500;

export class LiquidityProducer {
  readonly queue: Queue<JobMap['liquidity']>;

  constructor(redisUrl: string, ks: Keyspace) {
    this.queue = new Queue(QUEUE_NAMES.liquidity, {
      ...queueOptions(redisUrl, ks),
      defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000, attempts: 3, backoff: { type: 'exponential', delay: 100 } },
    });
  }

  /**
   * BullMQ's connection waits out an outage (its blocking reads need that), so an add in flight when
   * Redis drops would wait for its return: past ENQUEUE_TIMEOUT_MS this rejects instead and the
   * ingester keeps the quotes for its next flush. Should the add still land later, deduplication
   * makes the retry join it.
   */
  async enqueue(contestId: string): Promise<void> {
    const add = this.queue.add('liquidity', { contest_id: contestId }, { deduplication: { id: contestId, keepLastIfActive: true } });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailable('redis', 'queueing the recomputation')), ENQUEUE_TIMEOUT_MS);
    });
    try {
      await Promise.race([add, late]);
    } finally {
      clearTimeout(timer);
      add.catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
