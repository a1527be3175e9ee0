/**
 * Enqueues a contest for recomputation. At most one job per contest waits at a time: later changes
 * join it (BullMQ deduplication), and a change that lands while the contest's job is running queues
 * exactly one follow-up (keepLastIfActive), so no change is ever left uncomputed and two jobs of one
 * contest never run at once.
 */
import { Queue } from 'bullmq';
import type { Keyspace } from '../../src/store/redis/client.js';
import { addWithin, QUEUE_NAMES, queueOptions, type JobMap } from '../queues.js';

const ENQUEUE_TIMEOUT_MS = 500;

export class LiquidityProducer {
  readonly queue: Queue<JobMap['liquidity']>;

  constructor(redisUrl: string, ks: Keyspace) {
    this.queue = new Queue(QUEUE_NAMES.liquidity, {
      ...queueOptions(redisUrl, ks),
      defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000, attempts: 3, backoff: { type: 'exponential', delay: 100 } },
    });
  }

  /** Queues the contest; past ENQUEUE_TIMEOUT_MS (addWithin) the ingester keeps the quotes for its next flush. */
  async enqueue(contestId: string): Promise<void> {
    const add = this.queue.add('liquidity', { contest_id: contestId }, { deduplication: { id: contestId, keepLastIfActive: true } });
    await addWithin(add, ENQUEUE_TIMEOUT_MS, 'queueing the recomputation');
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
